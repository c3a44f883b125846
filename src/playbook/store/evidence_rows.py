"""The evidence cache's rows (`evidence`): a rule's decayed sums as the fold keeps them
(`Agg`), read for many rules at once (`load_aggs`), folded again from the log up to an
event (`rebuild_agg`), and written whole (`UPSERT`: `EvidenceRepo.sync`, `refold.py`)."""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING

from ..core import scoring
from ..core.record import Record
from .records import event_point

if TYPE_CHECKING:
    from .executor import Executor

UPSERT = (
    "INSERT INTO evidence (bullet_id, half_life, ref, helpful, harmful, count, last_at, "
    "last_event_id) VALUES (?,?,?,?,?,?,?,?) ON CONFLICT(bullet_id) DO UPDATE SET "
    "half_life = excluded.half_life, ref = excluded.ref, helpful = excluded.helpful, "
    "harmful = excluded.harmful, count = excluded.count, last_at = excluded.last_at, "
    "last_event_id = excluded.last_event_id"
)


class Agg(Record):
    """One rule's row of the cache while it is folded."""

    bullet_id: str
    acc: scoring.DecayAccumulator
    last_at: float
    last_event_id: int

    def __init__(
        self, bullet_id: str, acc: scoring.DecayAccumulator, last_at: float, last_event_id: int
    ) -> None:
        self.bullet_id = bullet_id
        self.acc = acc
        self.last_at = last_at
        self.last_event_id = last_event_id


def load_aggs(sql: Executor, ids: Iterable[str]) -> dict[str, Agg]:
    """The cache's rows of `ids` (a rule without one is absent)."""
    out: dict[str, Agg] = {}
    d = sql.dialect
    for bid, hl, ref, h, x, n, last_at, last_id in sql.execute(
        "SELECT bullet_id, half_life, ref, helpful, harmful, count, last_at, "
        f"last_event_id FROM evidence WHERE {d.in_list('bullet_id')}",
        (d.list_param(ids),),
    ):
        acc = scoring.DecayAccumulator(hl, ref, h, x, n)
        out[bid] = Agg(bid, acc, last_at, last_id)
    return out


def rebuild_agg(sql: Executor, bullet_id: str, half_life: float, upto: int) -> Agg:
    """A rule's row folded from the log, every event of it up to event `upto`."""
    acc = scoring.DecayAccumulator(half_life)
    last_at = float("-inf")
    last_id = 0
    for eid, kind, at, weight, recorded in sql.execute(
        "SELECT id, kind, at, weight, recorded_at FROM feedback "
        "WHERE bullet_id = ? AND id <= ? ORDER BY id",
        (bullet_id, upto),
    ):
        point = event_point(eid, at, weight, recorded)
        if point is None:
            continue
        t, w = point
        acc.fold(kind, t, w)
        last_at = max(last_at, t)
        last_id = eid
    return Agg(bullet_id, acc, last_at, last_id)
