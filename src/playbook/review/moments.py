"""What time travel reads once and keeps between moments (`Moments`), so that a step back
in a long-lived reader (the workbench) reads only what can have changed.

Two things of the past never change once read, and are kept:

- a bullet's facts (`store.history.FACT_COLUMNS`: its text, type, tags, creation, ...):
  no write changes them once the bullet is stored;
- each bullet's checkpoint of the evidence cache's days before a day D
  (`store.past.checkpoints_before(D)`), and the events recorded on D once it is over:
  feedback is recorded now, so what was recorded by the end of a past day is settled. The
  exceptions (an import of feedback recorded in the past, a writer whose clock runs
  behind) are caught at every use: what was kept for D is dropped when any event after the
  days' mark at the time it was read was recorded before D's end (`recorded_before_after`).

What writes do change (a bullet's rung, state, pin, retirement) is read at every moment,
with the day's events on top of the kept checkpoints (`review.history`). A moment read
from `Moments` is the same table as one read without it (tests compare both).

`warm` reads the checkpoints of the days a reader is likely to ask next (a week back, a
month back: the workbench does it after its first frame, in the background), so the step
itself only folds a day of events onto them.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Iterable, Sequence
from datetime import datetime
from operator import itemgetter
from typing import Any

import numpy as np

from ..store import PlaybookStore
from .history_fold import epoch_days, moment_day

KEEP_DAYS = 6  # the days whose checkpoints are kept (each ~5 MB at 100k rules)
_NONE = np.full((1, 6), np.nan)  # a bullet without a checkpoint then


class Facts:
    """The facts of the bullets of one read, in its order (`store.history.FACT_COLUMNS`, a
    list each), and what the table derives from them alone: each one's row position by id,
    its creation in epoch days, its own half-life (NaN: the policy's). Kept for the next
    read of the same bullets (never changed: the caller reads them only)."""

    __slots__ = ("columns", "created", "half_life", "ids", "pos")

    def __init__(self, ids: list[str], found: list[tuple[Any, ...]]) -> None:
        self.ids = ids
        self.columns = [list(map(itemgetter(k), found)) if k else ids for k in range(11)]
        self.pos = dict(zip(ids, range(len(ids)), strict=True))
        self.created = epoch_days(self.columns[7])
        own = self.columns[8]  # a half-life of None or 0: the policy's (`h or default`)
        self.half_life = np.array([h or np.nan for h in own], dtype=np.float64)


class _Day:
    """One day's checkpoints: row positions by bullet id, and the rows (n+1) x 6, the last
    one NaN (a bullet with none)."""

    __slots__ = ("_of", "events", "index", "mark", "values")

    def __init__(self, mark: int, found: list[tuple[Any, ...]]) -> None:
        self.mark = mark
        self.events: list[tuple[str, str, float, float, str]] | None = None  # read on use
        self.index = {r[0]: i for i, r in enumerate(found)}
        values = np.array([r[1:] for r in found], dtype=np.float64).reshape(len(found), 6)
        self.values = np.concatenate([values, _NONE])
        self._of: tuple[list[str], np.ndarray] | None = None  # the last ids asked, their rows

    def of(self, ids: list[str]) -> np.ndarray:
        """The checkpoint rows of `ids`, in that order (NaN: none); the positions kept for
        the same list asked again (a `Facts`' ids)."""
        last = self._of
        if last is not None and last[0] is ids:
            rows: np.ndarray = self.values[last[1]]
            return rows
        none = len(self.values) - 1
        get = self.index.get
        at = np.fromiter((get(i, none) for i in ids), dtype=np.int64, count=len(ids))
        self._of = (ids, at)
        return self.values[at]


class Moments:
    """Facts and checkpoints kept for one playbook (thread-safe: the workbench reads and
    warms from worker threads)."""

    def __init__(self, keep_days: int = KEEP_DAYS) -> None:
        self.keep_days = keep_days
        self._lock = threading.Lock()
        self._facts: dict[str, tuple[Any, ...]] = {}
        self._last: Facts | None = None  # of the last read's bullets
        self._days: OrderedDict[int, _Day] = OrderedDict()

    def columns(
        self, store: PlaybookStore, when: datetime, day: int
    ) -> tuple[
        list[Sequence[Any]], np.ndarray, list[tuple[str, str, float, float, str]], Facts | None
    ]:
        """The columns of `store.past.bullets_created_by(when)` (ROW_COLUMNS, one sequence
        each), each bullet's checkpoint before `day` (an n x 6 array, NaN: none), the
        events recorded on `day` (`store.past.events_of_day`; a day before today's is
        settled as the checkpoints are), and the bullets' `Facts`, from what is kept."""
        states = store.past.bullet_states(when)
        if not states:
            return [], np.zeros((0, 6)), [], None
        ids, maturity, state, pinned, valid_to = (
            list(map(itemgetter(k), states)) for k in range(5)
        )
        with self._lock:
            facts = self._facts_of(store, ids)
            kept_day = self._day(store, day)
            kept = kept_day.of(facts.ids)
            events = self._events(store, kept_day, day)
        f = facts.columns
        # ROW_COLUMNS' order, from FACT_COLUMNS (f) and the states
        return [f[0], f[1], f[2], maturity, state, pinned, f[3], f[4], f[5], f[6], f[7], f[8],
                valid_to, f[9], f[10]], kept, events, facts  # fmt: skip

    def _facts_of(self, store: PlaybookStore, ids: list[str]) -> Facts:
        """The `Facts` of `ids` (in that order): the last read's, when it read the same
        bullets (a step in time, most of the time: no rule created between the moments)."""
        last = self._last
        if last is not None and last.ids == ids:
            return last
        facts = self._facts
        missing = [bid for bid in ids if bid not in facts]
        if missing:
            for row in store.past.bullet_facts(None if len(missing) > 1000 else missing):
                facts[row[0]] = row
        self._last = Facts(ids, list(map(facts.__getitem__, ids)))
        return self._last

    def warm(self, store: PlaybookStore, moments: Iterable[datetime]) -> None:
        """Read ahead what a read of each of `moments` keeps: the facts of every bullet and
        the checkpoints of each one's day (kept ones checked), one day at a time, so that a
        read asked meanwhile waits for one day at most. Nothing when the days cannot answer
        (they lag the log, or the schema has none: a read then goes to the raw events)."""
        if not store.past.days_answer():
            return
        with self._lock:
            if not self._facts:
                self._facts = {f[0]: f for f in store.past.bullet_facts()}
        for day in dict.fromkeys(map(moment_day, moments)):
            with self._lock:
                self._events(store, self._day(store, day), day)

    def kept_days(self) -> list[int]:
        """The days whose checkpoints are kept, oldest kept first."""
        with self._lock:
            return list(self._days)

    @staticmethod
    def _events(
        store: PlaybookStore, kept: _Day, day: int
    ) -> list[tuple[str, str, float, float, str]]:
        """The events recorded on `day`: kept with its checkpoints once the day is over
        (today's are still being written), read each time before."""
        if kept.events is not None:
            return kept.events
        found = store.past.events_of_day(day)
        if day < moment_day(store.now()):
            kept.events = found
        return found

    def _day(self, store: PlaybookStore, day: int) -> _Day:
        past = store.past
        kept = self._days.get(day)
        # settled unless the log has since had an event recorded before the day's end
        if kept is not None and not past.recorded_before_after(day + 1, kept.mark):
            self._days.move_to_end(day)
            return kept
        mark = past.days_mark() or 0  # read before the checkpoints: a later event is checked
        kept = self._days[day] = _Day(mark, past.checkpoints_before(day))
        while len(self._days) > self.keep_days:
            self._days.popitem(last=False)
        return kept
