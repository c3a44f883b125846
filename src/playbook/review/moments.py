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


_FACT_COLUMNS = 11  # store.history.FACT_COLUMNS: id, ..., created_at (7), half_life_days
_SEQ = 9  # (8), seq (9), valid_from


class _Facts:
    """The facts of every bullet read so far (`store.history.FACT_COLUMNS`), each column an
    array indexed by the bullet's seq (its key: never reused, never changed), with what a
    table derives from them alone: the creation in epoch days and the bullet's own
    half-life (NaN: the policy's). A moment's rows are picked out by their seqs."""

    def __init__(self) -> None:
        self.size = 0
        self.columns = [np.empty(0, dtype=object) for _ in range(_FACT_COLUMNS)]
        self.created = np.empty(0)
        self.half_life = np.empty(0)
        self.seq_of: dict[str, int] = {}

    def add(self, rows: list[tuple[Any, ...]]) -> None:
        if not rows:
            return
        seqs = np.fromiter(map(itemgetter(_SEQ), rows), np.int64, len(rows))
        size = max(self.size, int(seqs.max()) + 1)
        if size > self.size:  # room for the new seqs: a gap holds None / NaN
            grow = size - self.size
            self.columns = [np.concatenate([c, np.full(grow, None, dtype=object)])
                            for c in self.columns]  # fmt: skip
            self.created = np.concatenate([self.created, np.full(grow, np.nan)])
            self.half_life = np.concatenate([self.half_life, np.full(grow, np.nan)])
            self.size = size
        for k in range(_FACT_COLUMNS):
            self.columns[k][seqs] = [r[k] for r in rows]
        self.created[seqs] = epoch_days([r[7] for r in rows])
        # a half-life of None or 0: the policy's, as `h or default` reads it
        self.half_life[seqs] = [r[8] or np.nan for r in rows]
        self.seq_of.update(zip(map(itemgetter(0), rows), seqs.tolist(), strict=True))

    def unknown(self, ids: list[str], seqs: np.ndarray) -> list[str]:
        """Those of `ids` (with their `seqs`) whose facts are not kept under that seq."""
        inside = seqs < self.size
        known = np.zeros(len(ids), dtype=bool)
        known[inside] = self.columns[0][seqs[inside]] == np.array(ids, dtype=object)[inside]
        return [ids[i] for i in np.flatnonzero(~known).tolist()]


class _Day:
    """One day's checkpoints: a row for each seq (NaN: none), the last row NaN (a seq past
    the bullets known when they were read: none)."""

    __slots__ = ("events", "mark", "values")

    def __init__(self, mark: int, found: list[tuple[Any, ...]], facts: _Facts) -> None:
        self.mark = mark
        self.events: list[tuple[str, str, float, float, str]] | None = None  # read on use
        self.values = np.full((facts.size + 1, 6), np.nan)
        if found:
            seqs = np.fromiter(map(facts.seq_of.__getitem__, map(itemgetter(0), found)),
                               np.int64, len(found))  # fmt: skip
            self.values[seqs] = np.array([r[1:] for r in found], dtype=np.float64)

    def of(self, seqs: np.ndarray) -> np.ndarray:
        """The checkpoint rows of `seqs`, in that order (NaN: none)."""
        past = len(self.values) - 1
        rows: np.ndarray = self.values[np.where(seqs < past, seqs, past)]
        return rows


class Moments:
    """Facts and checkpoints kept for one playbook (thread-safe: the workbench reads and
    warms from worker threads)."""

    def __init__(self, keep_days: int = KEEP_DAYS) -> None:
        self.keep_days = keep_days
        self._lock = threading.Lock()
        self._facts = _Facts()
        self._days: OrderedDict[int, _Day] = OrderedDict()

    def columns(self, store: PlaybookStore, when: datetime, day: int) -> tuple[
        list[Sequence[Any]], np.ndarray, list[tuple[str, str, float, float, str]], np.ndarray
    ]:  # fmt: skip
        """The columns of `store.past.bullets_created_by(when)` (ROW_COLUMNS, one sequence
        each), each bullet's checkpoint before `day` (an n x 6 array, NaN: none), the
        events recorded on `day` (`store.past.events_of_day`; a day before today's is
        settled as the checkpoints are), and each bullet's creation (epoch days) and own
        half-life (NaN: the policy's) as arrays, from what is kept."""
        states = store.past.bullet_states(when)
        if not states:
            return [], np.zeros((0, 6)), [], np.zeros((2, 0))
        ids, maturity, state, pinned, valid_to = (
            list(map(itemgetter(k), states)) for k in range(5)
        )
        seqs = np.fromiter(map(itemgetter(5), states), np.int64, len(states))
        with self._lock:
            facts = self._facts
            missing = facts.unknown(ids, seqs)
            if missing:
                facts.add(store.past.bullet_facts(None if len(missing) > 1000 else missing))
            f = [ids, *(facts.columns[k][seqs].tolist() for k in range(1, _FACT_COLUMNS))]
            derived = np.stack([facts.created[seqs], facts.half_life[seqs]])
            kept_day = self._day(store, day)
            kept = kept_day.of(seqs)
            events = self._events(store, kept_day, day)
        # ROW_COLUMNS' order, from FACT_COLUMNS (f) and the states
        return [ids, f[1], f[2], maturity, state, pinned, f[3], f[4], f[5], f[6], f[7], f[8],
                valid_to, f[9], f[10]], kept, events, derived  # fmt: skip

    def warm(self, store: PlaybookStore, moments: Iterable[datetime]) -> None:
        """Read ahead what a read of each of `moments` keeps: the facts of every bullet and
        the checkpoints of each one's day (kept ones checked), one day at a time, so that a
        read asked meanwhile waits for one day at most. Nothing when the days cannot answer
        (they lag the log, or the schema has none: a read then goes to the raw events)."""
        if not store.past.days_answer():
            return
        with self._lock:
            if not self._facts.size:
                self._facts.add(store.past.bullet_facts())
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
        found = past.checkpoints_before(day)
        facts = self._facts
        missing = [r[0] for r in found if r[0] not in facts.seq_of]
        if missing:  # a bullet stored since the facts were read
            facts.add(past.bullet_facts(None if len(missing) > 1000 else missing))
        kept = self._days[day] = _Day(mark, found, facts)
        while len(self._days) > self.keep_days:
            self._days.popitem(last=False)
        return kept
