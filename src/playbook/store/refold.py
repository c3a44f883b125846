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
from .evidence_rows import UPSERT
from .records import event_point

if TYPE_CHECKING:
    from .evidence import EvidenceRepo
    from .executor import Executor

# The rules whose rows of a cache table (alias `e`, joined to `bullets b`) are kept at
# another half-life than they are read with (one parameter: the default half-life).
_ANOTHER = "e.half_life != COALESCE(b.half_life_days, ?)"
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
            rows = _rules_kept_at_another(sql, "evidence", default)
            states = self._states(rows)
            if days:  # the log read once: each of `rows`' events folded as the days read it
                evidence.days.rebuild(days, lambda bid, events: self._fold(states, bid, events))
            d = sql.dialect
            rest = [bid for bid in rows if not states[bid][0].count]  # not read above
            for eid, bid, kind, at, weight, recorded in (
                sql.execute(
                    "SELECT id, bullet_id, kind, at, weight, recorded_at FROM feedback "
                    f"WHERE {d.in_list('bullet_id')} ORDER BY bullet_id, id",
                    (d.list_param(rest),),
                )
                if rest
                else ()
            ):
                point = event_point(eid, at, weight, recorded)
                if point is not None:
                    self._fold(states, bid, [(0, eid, kind, *point)])
            self._write(states)
        return len(set(days) | set(rows))

    def _states(self, ids: list[str]) -> dict[str, tuple[scoring.DecayAccumulator, float, int]]:
        """A new accumulator for each of `ids` at the half-life it is read with, with its
        latest `at` and last event id."""
        if not ids:
            return {}
        d = self.sql.dialect
        hl_of = dict(
            self.sql.all(
                f"SELECT id, half_life_days FROM bullets WHERE {d.in_list('id')}",
                (d.list_param(ids),),
            )
        )
        half_life = self.evidence.half_life
        return {
            bid: (scoring.DecayAccumulator(half_life(value=hl_of.get(bid))), -math.inf, 0)
            for bid in ids
        }

    @staticmethod
    def _fold(
        states: dict[str, tuple[scoring.DecayAccumulator, float, int]],
        bid: str,
        events: list[tuple[int, int, str, float, float]],
    ) -> None:
        """Fold `events` (day, id, kind, at, weight; in id order, as `EvidenceRepo.sync`
        folds them) into the accumulator of `bid`, if it is one of the rules refolded."""
        state = states.get(bid)
        if state is None:
            return
        acc, last_at, last_id = state
        for _, eid, kind, t, w in events:
            acc.fold(kind, t, w)
            last_at, last_id = max(last_at, t), eid
        states[bid] = (acc, last_at, last_id)

    def _write(self, states: dict[str, tuple[scoring.DecayAccumulator, float, int]]) -> None:
        """The evidence cache's rows of the rules refolded (a rule none of whose events is
        well formed, noted by its readers, keeps no row)."""
        sql, d = self.sql, self.sql.dialect
        out: list[tuple[Any, ...]] = []
        empty = []
        for bid, (acc, last_at, last_id) in states.items():
            if not acc.count:
                empty.append(bid)
                continue
            out.append((bid, acc.half_life, acc.ref, acc.helpful, acc.harmful, acc.count, last_at,
                        last_id))  # fmt: skip
            if len(out) >= _FLUSH:
                sql.later(UPSERT, out)
                out = []
        if out:
            sql.later(UPSERT, out)
        if empty:
            gone = d.list_param(empty)
            sql.execute(f"DELETE FROM evidence WHERE {d.in_list('bullet_id')}", (gone,))
