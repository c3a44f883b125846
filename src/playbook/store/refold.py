"""What is derived from the log, folded again at the half-life the playbook is read with.

The evidence cache (`evidence`) and its days (`evidence_days`) keep each rule's decayed
sums at the half-life they were folded with: the rule's own `half_life_days`, else the
default of the policy of the process that folded them (the migration to schema step 4, or
a write). A reader whose policy sets another default (`--policy` / `$PLAYBOOK_POLICY`)
gets the same answers from the raw events of every rule kept at the old one
(`evidence_rule.py`), so more slowly; a write folds again only the rules it touches.

`store.refold()` (`Refold`) folds again, in one write transaction, the rows of every rule
kept at another half-life than the store's policy gives it: a reader sees them all at the
old half-life or all at the new, never a mix. `doctor` notes them (`doctor_days.py`);
`doctor --fix` calls `store.refold()`. No write does it on its own when it finds the
default changed: two processes on one playbook with different policies (a hook without
`$PLAYBOOK_POLICY`, say) would then each fold the whole log again on every write, minutes
a time on a team's year.
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING, Any

from ..core import scoring
from ..core.errors import PermissionDenied, ReadOnlyPlaybook
from .records import event_point

if TYPE_CHECKING:
    from .evidence import EvidenceRepo
    from .executor import Executor

# The rules whose rows of a cache table (alias `e`, joined to `bullets b`) are kept at
# another half-life than they are read with (one parameter: the default half-life).
_ANOTHER = "e.half_life != COALESCE(b.half_life_days, ?)"
_UPSERT = (
    "INSERT INTO evidence (bullet_id, half_life, ref, helpful, harmful, count, last_at, "
    "last_event_id) VALUES (?,?,?,?,?,?,?,?) ON CONFLICT(bullet_id) DO UPDATE SET "
    "half_life = excluded.half_life, ref = excluded.ref, helpful = excluded.helpful, "
    "harmful = excluded.harmful, count = excluded.count, last_at = excluded.last_at, "
    "last_event_id = excluded.last_event_id"
)
_FLUSH = 20_000  # cache rows written at a time


def _rules_kept_at_another(ex: Executor, table: str, default: float) -> list[str]:
    return list(
        ex.column(
            f"SELECT DISTINCT e.bullet_id FROM {table} e JOIN bullets b ON b.id = e.bullet_id "
            f"WHERE {_ANOTHER} ORDER BY e.bullet_id",
            (default,),
        )
    )


class Refold:
    """`store.refold()`: the evidence cache's rows and days folded again at the half-life
    each rule is read with under the store's policy."""

    def __init__(self, sql: Executor, evidence: EvidenceRepo) -> None:
        self.sql = sql
        self.evidence = evidence

    def __call__(self) -> int:
        """Fold again from the log, at the half-life each rule is read with under the
        store's policy, the evidence cache's rows and days of every rule kept at another;
        one write transaction. Returns how many rules were folded again (0: none was)."""
        sql, evidence = self.sql, self.evidence
        if sql.read_only:
            raise ReadOnlyPlaybook("the playbook is open for reading only: nothing folded again")
        if sql.derived_by_database:
            raise PermissionDenied(
                "the evidence cache is the database's to write for this role (pg roles): "
                "fold it again as the schema's owner or a reviewer"
            )
        default = evidence.policy.half_life_days
        with evidence.transaction():
            evidence.sync()  # every event folded first: the rules are folded again up to it
            has_days = evidence.days_answer()  # (False: a schema before the days)
            days = _rules_kept_at_another(sql, "evidence_days", default) if has_days else []
            if days:
                evidence.days.rebuild(days)
            rows = _rules_kept_at_another(sql, "evidence", default)
            if rows:
                self._rebuild_rows(rows)
        return len(set(days) | set(rows))

    def _rebuild_rows(self, ids: list[str]) -> None:
        """The evidence cache's rows of `ids`, folded again from the log (each rule's events
        in id order, as `EvidenceRepo.sync` folds them) up to the cache's watermark."""
        sql, evidence = self.sql, self.evidence
        d = sql.dialect
        ids_param = d.list_param(ids)
        hl_of = dict(
            sql.all(f"SELECT id, half_life_days FROM bullets WHERE {d.in_list('id')}", (ids_param,))
        )
        mark = evidence.evidence_watermark()
        states = {
            bid: (scoring.DecayAccumulator(evidence.half_life(value=hl_of.get(bid))), -math.inf, 0)
            for bid in ids
        }
        out: list[tuple[Any, ...]] = []
        for eid, bid, kind, at, weight, recorded in sql.execute(
            "SELECT id, bullet_id, kind, at, weight, recorded_at FROM feedback "
            f"WHERE {d.in_list('bullet_id')} AND id <= ? ORDER BY bullet_id, id",
            (ids_param, mark),
        ):
            point = event_point(eid, at, weight, recorded)
            if point is None:
                continue
            acc, last_at, _ = states[bid]
            t, w = point
            acc.fold(kind, t, w)
            states[bid] = (acc, max(last_at, t), eid)
        empty = []  # every event of the rule malformed (noted by its readers): no row
        for bid, (acc, last_at, last_id) in states.items():
            if not acc.count:
                empty.append(bid)
                continue
            out.append((bid, acc.half_life, acc.ref, acc.helpful, acc.harmful, acc.count, last_at,
                        last_id))  # fmt: skip
            if len(out) >= _FLUSH:
                sql.later(_UPSERT, out)
                out = []
        if out:
            sql.later(_UPSERT, out)
        if empty:
            gone = d.list_param(empty)
            sql.execute(f"DELETE FROM evidence WHERE {d.in_list('bullet_id')}", (gone,))
