"""Then and now: what changed in the playbook between two moments (`diff_since`), from two
time-travel tables (`review.history.rows_as_of`)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import datetime
from itertools import repeat
from typing import Any

import numpy as np

from ..core.collector import paused
from ..core.errors import InvalidInput
from ..store import PlaybookStore, iso
from ..store.views import BulletRow
from .history import rows_as_of
from .moments import Moments

# The bullets table of now as read at a moment, and that moment (`diff_since`'s `now`).
TableNow = tuple[Sequence[BulletRow], datetime]

MOVERS = 20  # rules listed under "moved most in score"
MOVED = 0.01  # a score change smaller than this is not a move


# ------------------------------------------------------------------ then and now


@dataclass(frozen=True)
class RuleChange:
    """One rule in a diff, then and now (None: it did not exist then)."""

    id: str
    content: str
    type: str
    state_then: str | None
    state_now: str
    maturity_then: str | None
    maturity_now: str
    score_then: float | None
    score_now: float
    successors: tuple[str, ...] = ()  # for a retired rule: what replaced it

    @property
    def delta(self) -> float | None:
        return None if self.score_then is None else self.score_now - self.score_then

    def to_dict(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "content": self.content,
            "type": self.type,
            "state_then": self.state_then,
            "state_now": self.state_now,
            "maturity_then": self.maturity_then,
            "maturity_now": self.maturity_now,
            "score_then": self.score_then,
            "score_now": self.score_now,
            "delta": self.delta,
            "successors": list(self.successors),
        }


@dataclass(frozen=True)
class PlaybookDiff:
    """What changed between `since` and `until`: rules that appeared, were retired, changed
    rung, and the ones whose effective score moved most."""

    since: datetime
    until: datetime
    appeared: list[RuleChange] = field(default_factory=list)
    retired: list[RuleChange] = field(default_factory=list)
    rung_changes: list[RuleChange] = field(default_factory=list)
    movers: list[RuleChange] = field(default_factory=list)  # the largest |delta| first
    counts: dict[str, int] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        return {
            "since": iso(self.since),
            "until": iso(self.until),
            "counts": dict(self.counts),
            "appeared": [c.to_dict() for c in self.appeared],
            "retired": [c.to_dict() for c in self.retired],
            "rung_changes": [c.to_dict() for c in self.rung_changes],
            "movers": [c.to_dict() for c in self.movers],
        }


def diff_since(
    store: PlaybookStore,
    since: datetime,
    *,
    until: datetime | None = None,
    movers: int = MOVERS,
    moments: Moments | None = None,
    then: Sequence[BulletRow] | None = None,
    now: TableNow | None = None,
) -> PlaybookDiff:
    """The playbook at `until` (default now) against the playbook at `since`.

    `appeared`: created after `since` (oldest first); `retired`: live then, retired by
    `until` (with their successors); `rung_changes`: maturity then != maturity at `until`;
    `movers`: rules live at both moments, the `movers` largest score changes (then, now,
    delta). `counts` has every list's full size, `moved` (|delta| >= 0.01) and the live
    rules at each end (`rules_then`, `rules_now`). `moments`: what a long-lived reader
    keeps between moments (`review.moments`). `now`: the bullets table of now as
    `store.views.bullet_rows(at=T)` read it, and T, when the caller knows that nothing was
    written since (a workbench's snapshot of now, its change token unchanged): the diff is
    then until T, the table not read again (the same answer as a read at T). Not with
    `until`; a `since` after T reads the table afresh.
    `then`: likewise, the table as of `since` as `rows_as_of` read it, when the caller
    knows that nothing was written since.
    """
    if now is not None and until is not None:
        raise ValueError("diff_since: `now` is the table at its own moment; not with `until`")
    if now is not None and since > now[1]:
        now = None  # asked about a moment after the kept read: read now afresh
    end = until or (now[1] if now is not None else store.now())
    if since > end:
        raise InvalidInput(f"--since {iso(since)} is after --until {iso(end)}")
    with paused():  # two whole tables, and their diff (`core.collector`)
        before = list(then) if then is not None else rows_as_of(store, since, moments)
        if until is not None:
            after = rows_as_of(store, end, moments)
        else:
            after = list(now[0]) if now is not None else store.views.bullet_rows(at=end)
        return _diff(store, since, end, before, after, movers)


def _diff(
    store: PlaybookStore,
    since: datetime,
    end: datetime,
    then_table: Sequence[BulletRow],
    now_table: Sequence[BulletRow],
    movers: int,
) -> PlaybookDiff:
    """The diff of two tables (each in the store's order): whole columns at once (numpy),
    then `RuleChange`s only for the rules listed."""
    before = {r.id: r for r in then_table}
    after = {r.id: r for r in now_table}
    then_rows, now_rows = list(before.values()), list(after.values())

    def change(now: BulletRow, then: BulletRow | None, next_ids: Sequence[str] = ()) -> RuleChange:
        return RuleChange(
            now.id, now.content, now.type,
            then.state if then else None, now.state,
            then.maturity if then else None, now.maturity,
            then.effective if then else None, now.effective,
            tuple(next_ids),
        )  # fmt: skip

    # each rule of now: its row then (k; -1: none), and the columns compared, as arrays
    n = len(now_rows)
    then_pos = {bid: i for i, bid in enumerate(before)}
    k = np.fromiter(map(then_pos.get, after, repeat(-1)), dtype=np.int64, count=n)
    was = k >= 0
    retired_now = np.fromiter((r.state == "retired" for r in now_rows), bool, n)
    m = len(then_rows)  # the arrays of then end with a row for "none" (k = -1)
    retired_then = np.append(np.fromiter((r.state == "retired" for r in then_rows), bool, m), False)
    maturity_now = np.array([r.maturity for r in now_rows], dtype=object)
    maturity_then = np.array([r.maturity for r in then_rows] + [None], dtype=object)[k]
    eff_now = np.fromiter((r.effective for r in now_rows), np.float64, n)
    eff_then = np.append(np.fromiter((r.effective for r in then_rows), np.float64, m), np.nan)[k]

    new = np.flatnonzero(~was).tolist()
    appeared = sorted(
        (change(now_rows[i], None) for i in new),
        key=lambda c: (after[c.id].created_at, after[c.id].seq),
    )
    retired_then = retired_then[k]  # of each rule of now (False: none then)
    gone = [now_rows[i] for i in np.flatnonzero(retired_now & ~retired_then).tolist()]
    successors = store.past.successors_of([r.id for r in gone], end)
    retired = [change(r, before.get(r.id), successors.get(r.id, ())) for r in gone]
    rungs = [
        change(now_rows[i], then_rows[k[i]])
        for i in np.flatnonzero(was & (maturity_then != maturity_now)).tolist()
    ]
    # every live rule moves a little as its evidence decays: the changes are made only for
    # the movers listed (a RuleChange for each of 100k rules was a second of then-vs-now)
    both = was & ~retired_now & ~retired_then
    delta = np.abs(eff_now - eff_then)
    moved = np.flatnonzero(both & (delta >= MOVED))
    top = _largest(moved, delta, now_rows, max(0, movers))
    return PlaybookDiff(
        since=since,
        until=end,
        appeared=appeared,
        retired=retired,
        rung_changes=rungs,
        movers=[change(now_rows[i], then_rows[k[i]]) for i in top],
        counts={
            "appeared": len(appeared),
            "retired": len(retired),
            "rung_changes": len(rungs),
            "moved": len(moved),
            "rules_then": sum(1 for r in then_rows if r.state != "retired"),
            "rules_now": int(n - retired_now.sum()),
        },
    )


def _largest(
    moved: np.ndarray, delta: np.ndarray, rows: Sequence[BulletRow], count: int
) -> list[int]:
    """The positions of the `count` largest `delta`s among `moved`, the largest first and
    equal ones by id: only the few that can be among them are sorted in Python."""
    if not count or not len(moved):
        return []
    values = delta[moved]
    if len(moved) > count:  # the count-th largest: every one at least as large is a candidate
        floor = np.partition(values, len(values) - count)[len(values) - count]
        moved = moved[values >= floor]
    keyed = sorted((-float(delta[i]), rows[i].id, i) for i in moved.tolist())
    return [i for _, _, i in keyed[:count]]
