"""Then and now: what changed in the playbook between two moments (`diff_since`), from two
time-travel tables (`review.history.rows_as_of`)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from ..core.collector import paused
from ..core.errors import InvalidInput
from ..store import PlaybookStore, iso
from ..store.views import BulletRow
from .history import rows_as_of
from .moments import Moments

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
) -> PlaybookDiff:
    """The playbook at `until` (default now) against the playbook at `since`.

    `appeared`: created after `since` (oldest first); `retired`: live then, retired by
    `until` (with their successors); `rung_changes`: maturity then != maturity at `until`;
    `movers`: rules live at both moments, the `movers` largest score changes (then, now,
    delta). `counts` has every list's full size, `moved` (|delta| >= 0.01) and the live
    rules at each end (`rules_then`, `rules_now`). `moments`: what a long-lived reader
    keeps between moments (`review.moments`).
    """
    end = until or store.now()
    if since > end:
        raise InvalidInput(f"--since {iso(since)} is after --until {iso(end)}")
    with paused():  # two whole tables (`core.collector`)
        before = {r.id: r for r in rows_as_of(store, since, moments)}
        after = {
            r.id: r
            for r in (rows_as_of(store, end, moments) if until else store.views.bullet_rows())
        }

    def change(now: BulletRow, then: BulletRow | None, next_ids: Sequence[str] = ()) -> RuleChange:
        return RuleChange(
            now.id, now.content, now.type,
            then.state if then else None, now.state,
            then.maturity if then else None, now.maturity,
            then.effective if then else None, now.effective,
            tuple(next_ids),
        )  # fmt: skip

    appeared = sorted(
        (change(r, None) for r in after.values() if r.id not in before),
        key=lambda c: (after[c.id].created_at, after[c.id].seq),
    )
    gone = [
        r for r in after.values()
        if r.state == "retired" and (r.id not in before or before[r.id].state != "retired")
    ]  # fmt: skip
    successors = store.past.successors_of([r.id for r in gone], end)
    retired = [change(r, before.get(r.id), successors.get(r.id, ())) for r in gone]
    rungs = [
        change(r, before[r.id])
        for r in after.values()
        if r.id in before and before[r.id].maturity != r.maturity
    ]
    # every live rule moves a little as its evidence decays: the changes are made only for
    # the movers listed (a RuleChange for each of 100k rules was a second of then-vs-now)
    moved = [
        (-abs(delta), r.id)
        for r in after.values()
        if r.state != "retired"
        for b in (before.get(r.id),)
        if b is not None and b.state != "retired"
        for delta in (r.effective - b.effective,)
        if abs(delta) >= MOVED
    ]
    moved.sort()
    return PlaybookDiff(
        since=since,
        until=end,
        appeared=appeared,
        retired=retired,
        rung_changes=rungs,
        movers=[change(after[bid], before[bid]) for _, bid in moved[: max(0, movers)]],
        counts={
            "appeared": len(appeared),
            "retired": len(retired),
            "rung_changes": len(rungs),
            "moved": len(moved),
            "rules_then": sum(1 for r in before.values() if r.state != "retired"),
            "rules_now": sum(1 for r in after.values() if r.state != "retired"),
        },
    )
