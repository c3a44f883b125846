"""Reads of the playbook's past: what the logs say stood at a moment (time travel), and a
retired bullet's evidence at its retirement. The rules live in `playbook.review.history`.

Nothing here is stored for the past: every answer is read from the append-only logs
(feedback with its `recorded_at`, `maturity_log`, `edges`, the decision log) and the
interval columns (`valid_from`, `valid_to`, `created_at`/`resolved_at`/`decided_at`).
"""

from __future__ import annotations

from collections.abc import Iterable
from datetime import datetime
from typing import TYPE_CHECKING, Any

from ..core import scoring
from .evidence_days import day_start
from .evidence_rule import INEXACT, lags, row_answers
from .log_replay import Edge, History, LogBullet, LogEvent, MaturityEntry
from .proposals import COLUMNS
from .records import event_point, iso, parse_iso

if TYPE_CHECKING:
    from ..core.policy import Policy
    from .evidence import EvidenceRepo
    from .executor import Executor

# The columns of a bullets-table row as of a moment (the facts that do not change, plus the
# interval and half-life the past needs). Positions are named in `review.history`.
ROW_COLUMNS = (
    "id, content, type, maturity, state, pinned, category, tags, scope, source, created_at, "
    "half_life_days, valid_to, seq, valid_from"
)
# What no write changes once a bullet is stored (`bullet_facts`).
FACT_COLUMNS = (
    "id, content, type, category, tags, scope, source, created_at, half_life_days, seq, valid_from"
)
# A bullet's checkpoint of the evidence cache's days, after ROW_COLUMNS (`store/evidence_days.py`).
CHECKPOINT_COLUMNS = "d.half_life, d.ref, d.helpful, d.harmful, d.count, d.last_at"


class Past:
    """Reads of the playbook as it stood at a moment, and of its whole history: `store.past`."""

    def __init__(self, sql: Executor, policy: Policy, evidence: EvidenceRepo) -> None:
        self.sql = sql
        self.policy = policy
        self.evidence = evidence

    def bullets_created_by(
        self, when: datetime, ids: list[str] | None = None, *, day: int | None = None
    ) -> list[tuple[Any, ...]]:
        """ROW_COLUMNS of every bullet (or of those of `ids`) that existed at `when` (created
        by then), in seq order. With `day`, each row goes on with the bullet's latest
        checkpoint of a day before `day` (`CHECKPOINT_COLUMNS`; NULLs: none), read with it."""
        d = self.sql.dialect
        args: list[Any] = [iso(when)]
        if day is None:
            sql = f"SELECT {ROW_COLUMNS} FROM bullets WHERE valid_from <= ?"
        else:
            sql = (
                f"SELECT {ROW_COLUMNS}, {CHECKPOINT_COLUMNS} FROM bullets b "
                "LEFT JOIN evidence_days d ON d.bullet_id = b.id AND d.day = "
                "(SELECT MAX(x.day) FROM evidence_days x WHERE x.bullet_id = b.id AND x.day < ?) "
                "WHERE b.valid_from <= ?"
            )
            args.insert(0, day)
        if ids is None:
            return self.sql.all(sql + " ORDER BY seq", args)
        return self.sql.all(f"{sql} AND {d.in_list('id')} ORDER BY seq", [*args, d.list_param(ids)])

    def bullet_states(self, when: datetime) -> list[tuple[Any, ...]]:
        """(id, maturity, state, pinned, valid_to, seq) of every bullet that existed at
        `when` (created by then), in seq order: the columns of a bullet that writes change,
        and its key."""
        return self.sql.all(
            "SELECT id, maturity, state, pinned, valid_to, seq FROM bullets "
            "WHERE valid_from <= ? ORDER BY seq",
            (iso(when),),
        )

    def bullet_facts(self, ids: list[str] | None = None) -> list[tuple[Any, ...]]:
        """FACT_COLUMNS of every bullet (or of `ids`'): what no write changes once the
        bullet is stored (`review.moments` keeps them between reads)."""
        d = self.sql.dialect
        if ids is None:
            return self.sql.all(f"SELECT {FACT_COLUMNS} FROM bullets")
        return self.sql.all(
            f"SELECT {FACT_COLUMNS} FROM bullets WHERE {d.in_list('id')}", (d.list_param(ids),)
        )

    def checkpoints_before(self, day: int) -> list[tuple[Any, ...]]:
        """(bullet_id, CHECKPOINT_COLUMNS) of each bullet's latest checkpoint of a day
        before `day` (bullets without one left out). PostgreSQL seeks each bullet's by its
        key (LATERAL); its planner otherwise hashed every checkpoint of the year (5 s)."""
        if self.sql.dialect == "postgresql":
            return self.sql.all(
                f"SELECT b.id, {CHECKPOINT_COLUMNS} FROM bullets b CROSS JOIN LATERAL "
                "(SELECT * FROM evidence_days x WHERE x.bullet_id = b.id AND x.day < ? "
                "ORDER BY x.day DESC LIMIT 1) d",
                (day,),
            )
        return self.sql.all(
            f"SELECT b.id, {CHECKPOINT_COLUMNS} FROM bullets b JOIN evidence_days d "
            "ON d.bullet_id = b.id AND d.day = "
            "(SELECT MAX(x.day) FROM evidence_days x WHERE x.bullet_id = b.id AND x.day < ?)",
            (day,),
        )

    def days_mark(self) -> int | None:
        """The last event folded into the evidence cache's days (None: never built)."""
        return self.evidence.days.watermark()

    def recorded_before_after(self, day: int, event_id: int) -> bool:
        """Whether an event later than `event_id` in the log was recorded on a day before
        `day` (an import of older feedback): then the checkpoints before `day` may have
        changed since the days held `event_id`."""
        return (
            self.sql.scalar(
                "SELECT 1 FROM feedback WHERE id > ? AND recorded_at < ? LIMIT 1",
                (event_id, iso(day_start(day))),
            )
            is not None
        )

    def events_recorded_by(
        self, when: datetime, ids: list[str] | None = None
    ) -> list[tuple[str, str, Any, float]]:
        """(bullet_id, kind, at, weight) of every feedback event (or of those of `ids`'
        bullets) recorded by `when`."""
        d = self.sql.dialect
        sql = (
            "SELECT bullet_id, kind, at, weight, id, recorded_at FROM feedback "
            "WHERE recorded_at <= ?"
        )
        if ids is None:
            rows = self.sql.all(sql, (iso(when),))
        else:
            rows = self.sql.all(
                f"{sql} AND {d.in_list('bullet_id')}",
                (iso(when), d.list_param(ids)),
            )
        return [r[:4] for r in rows if event_point(r[4], r[2], r[3], r[5]) is not None]

    def days_answer(self) -> bool:
        """Whether the evidence cache's days hold the whole log (`store/evidence_days.py`):
        then `checkpoints_before` and `events_between` answer an as-of read."""
        return self.evidence.days_answer()

    def events_between(
        self, start: datetime, when: datetime, ids: list[str] | None = None
    ) -> list[tuple[str, str, float, float]]:
        """(bullet_id, kind, at in epoch days, weight) of the events recorded in
        [start, when], in id order."""
        return self.evidence.days.events_between(start, when, ids)

    def events_of_day(self, day: int) -> list[tuple[str, str, float, float, str]]:
        """(bullet_id, kind, at in epoch days, weight, recorded_at) of the events recorded
        on `day`, in id order."""
        return self.evidence.days.events_of_day(day)

    def maturities_as_of(self, when: datetime, ids: list[str] | None = None) -> dict[str, str]:
        """The maturity of each bullet (of `ids`, or any) whose rung changed after `when`,
        as it stood at `when` (its maturity log's latest entry by then; none: it had no
        entry by then). Every other bullet's rung then is its rung now: each change of rung
        is logged with it (`set_maturity`), so a bullet without an entry after `when` kept
        since then the rung of its last entry. Only the bullets with entries after `when`
        are read (the log by `at`: schema step 4's index), each one's entry by then found
        by its own (bullet_id, at) index in one statement (a month back at a team-year:
        16k bullets, 25k entries read and ordered before)."""
        at = iso(when)
        d = self.sql.dialect
        only, args = "", [at, at]
        if ids is not None:
            only, args = f" AND {d.in_list('bullet_id')}", [*args, d.list_param(ids)]
        rows = self.sql.execute(
            "SELECT c.bullet_id, (SELECT x.maturity FROM maturity_log x "
            "WHERE x.bullet_id = c.bullet_id AND x.at <= ? ORDER BY x.at DESC, x.id DESC LIMIT 1) "
            f"FROM (SELECT DISTINCT bullet_id FROM maturity_log WHERE at > ?{only}) c",
            args,
        )
        return {bid: maturity for bid, maturity in rows if maturity is not None}

    def maturity_histories(self, ids: Iterable[str]) -> dict[str, list[tuple[datetime, str]]]:
        """Every rung each bullet has held, with when it took it, oldest first."""
        d = self.sql.dialect
        out: dict[str, list[tuple[datetime, str]]] = {}
        for bid, at, maturity in self.sql.execute(
            f"SELECT bullet_id, at, maturity FROM maturity_log WHERE {d.in_list('bullet_id')} "
            "ORDER BY at, id",
            (d.list_param(ids),),
        ):
            out.setdefault(bid, []).append((parse_iso(at), maturity))
        return out

    def pin_changes(self) -> list[tuple[str, str, str]]:
        """(bullet_id, "pin" | "unpin", at ISO) of every applied pin decision, oldest first."""
        return self.sql.all(
            "SELECT bullet_id, action, at FROM decisions WHERE action IN ('pin', 'unpin') "
            "AND status = 'applied' AND bullet_id IS NOT NULL ORDER BY id"
        )

    def conflicts_open_at(self, when: datetime) -> list[tuple[Any, ...]]:
        """(id, a, b, reason, created_at) of the conflict flags open at `when`: flagged by
        then and not resolved by then."""
        at = iso(when)
        return self.sql.all(
            "SELECT id, a, b, reason, created_at FROM conflicts WHERE created_at <= ? "
            "AND (resolved_at IS NULL OR resolved_at > ?) ORDER BY id",
            (at, at),
        )

    def proposals_pending_at(self, when: datetime) -> list[tuple[Any, ...]]:
        """The queue's rows (`self.proposals.COLUMNS`) pending at `when`: staged by then and
        not decided by then, oldest first."""
        at = iso(when)
        return self.sql.all(
            f"SELECT {COLUMNS} FROM proposals WHERE created_at <= ? "
            "AND (decided_at IS NULL OR decided_at > ?) ORDER BY created_at, seq",
            (at, at),
        )

    def successors_of(self, ids: Iterable[str], when: datetime) -> dict[str, list[str]]:
        """The bullets that replaced, merged or inverted each of `ids`, by `when`."""
        d = self.sql.dialect
        out: dict[str, list[str]] = {}
        for dst, src in self.sql.execute(
            f"SELECT dst, src FROM edges WHERE {d.in_list('dst')} AND at <= ? ORDER BY id",
            (d.list_param(ids), iso(when)),
        ):
            out.setdefault(dst, []).append(src)
        return out

    def frozen_evidence(self) -> dict[str, tuple[float, float, bool]]:
        """(helpful, harmful, stale) of every retired bullet at the moment it was retired.

        A retired bullet's score is frozen at its retirement (README "How scoring works"): its
        evidence observed by `valid_to`, decayed to `valid_to`. The evidence cache answers
        exactly when every event of the bullet is at or before `valid_to` and its half-life is
        unchanged; a retired successor (inherited evidence), a lagging read-only cache or a
        later event goes through `evidence.many_at`, each at its own retirement, in one pass
        (one call per retirement moment made 240 round trips at a team's year).
        """
        policy = self.policy
        rows = self.sql.all(
            "SELECT b.id, b.valid_to, b.created_at, "
            f"e.half_life, e.ref, e.helpful, e.harmful, e.last_at, {INEXACT} "
            "FROM bullets b LEFT JOIN evidence e ON e.bullet_id = b.id "
            "WHERE b.state = 'retired' AND b.valid_to IS NOT NULL",
            (policy.half_life_days,),
        )
        if not rows:
            return {}
        lagging = lags(self.sql.read_only, self.evidence.behind)
        out: dict[str, tuple[float, float, bool]] = {}
        slow: dict[str, list[str]] = {}
        for bid, valid_to, created, e_hl, ref, h, x, last_at, inexact in rows:
            end = scoring.days(parse_iso(valid_to))
            if not row_answers(inexact, ref, end, lagging):
                slow.setdefault(valid_to, []).append(bid)
                continue
            last = scoring.days(parse_iso(created))
            if ref is None:
                out[bid] = (0.0, 0.0, scoring.is_stale(last, end, policy))
                continue
            h, x = scoring.sums_at(ref, h, x, e_hl, end)
            last = max(last, last_at)
            out[bid] = (h, x, scoring.is_stale(last, end, policy))
        moments = {bid: parse_iso(valid_to) for valid_to, ids in slow.items() for bid in ids}
        for bid, ev in self.evidence.many_at(moments).items():
            end = scoring.days(moments[bid])
            out[bid] = (ev.helpful, ev.harmful, scoring.is_stale(ev.last_activity, end, policy))
        return out

    def read_history(self) -> History:
        """Everything the replay needs, read in one pass per table (a read: nothing written)."""
        conn = self.sql
        bullets = list(
            map(
                LogBullet._make,
                conn.execute(
                    "SELECT seq, id, type, maturity, half_life_days, valid_from, valid_to "
                    "FROM bullets ORDER BY seq"
                ),
            )
        )
        events = [
            LogEvent._make(r)
            for r in conn.execute(
                "SELECT id, bullet_id, kind, at, recorded_at, weight, context, session_ref, "
                "batch_id FROM feedback ORDER BY recorded_at, id"
            )
            if event_point(r[0], r[3], r[5], r[4]) is not None
        ]
        maturity = list(
            map(
                MaturityEntry._make,
                conn.execute(
                    "SELECT id, bullet_id, at, maturity FROM maturity_log ORDER BY at, id"
                ),
            )
        )
        edges = list(
            map(
                Edge._make,
                conn.execute(
                    "SELECT id, src, dst, at FROM edges WHERE kind = 'supersedes' ORDER BY at, id"
                ),
            )
        )
        return History(bullets, events, maturity, edges)
