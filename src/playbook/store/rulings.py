"""What reviewers decide and what they read: lineage edges, blocked patterns, conflict flags,
and the decision log (the workbench's audit trail; its writer is `StoreBase.log_decision`).
Edges and decisions are append-only in the database (triggers in the schema)."""

from __future__ import annotations

from ..core.authority import require_human
from ..core.errors import NotFound, StoreError
from ..core.text import normalize
from . import ids
from .base import StoreBase
from .records import (
    EPOCH,
    BlockedPattern,
    Conflict,
    Decision,
    Lineage,
    iso,
    parse_iso,
    stored_json,
    stored_time,
    where_equal,
)
from .schema import next_seq


class ReviewMixin(StoreBase):
    # ---------------------------------------------------------------- edges & lineage
    def add_edge(self, kind: str, src: str, dst: str, *, batch_id: str | None = None) -> None:
        self.sql.execute(
            "INSERT INTO edges (kind, src, dst, at, batch_id) VALUES (?,?,?,?,?)",
            (kind, src, dst, iso(self.now()), batch_id),
        )

    def lineage(self, bullet_id: str) -> Lineage:
        preds = self.sql.all("SELECT kind, dst FROM edges WHERE src = ? ORDER BY id", (bullet_id,))
        succs = self.sql.all("SELECT kind, src FROM edges WHERE dst = ? ORDER BY id", (bullet_id,))
        return Lineage([(k, b) for k, b in preds], [(k, b) for k, b in succs])

    # ---------------------------------------------------------------- blocked patterns
    def block(self, pattern: str, reason: str, *, actor: str = "human") -> str:
        """Block a pattern: adds near it are refused. Returns the block's id. Human only."""
        require_human(actor, "block a pattern")
        if not normalize(pattern):
            raise StoreError("a blocked pattern needs at least one word")
        pid = ids.new_id("p")
        with self.transaction():
            self.sql.execute(
                "INSERT INTO blocked_patterns (id, pattern, normalized, reason, actor, "
                f"created_at, seq) VALUES (?,?,?,?,?,?, {next_seq('blocked_patterns')})",
                (pid, pattern, normalize(pattern), reason, actor, iso(self.now())),
            )
            self.log_decision(None, actor, "block", None, "applied", reason, {"pattern": pattern})
        return pid

    def unblock(self, block_id: str, *, actor: str = "human") -> None:
        require_human(actor, "unblock a pattern")
        with self.transaction():
            changed = self.sql.execute(
                "UPDATE blocked_patterns SET active = 0, unblocked_at = ? "
                "WHERE id = ? AND active = 1",
                (iso(self.now()), block_id),
            ).rowcount
            if changed == 0:
                raise NotFound(f"no active blocked pattern with id {block_id!r}")
            self.log_decision(None, actor, "unblock", None, "applied", None, {"id": block_id})

    def blocked(self, *, include_inactive: bool = False) -> list[BlockedPattern]:
        sql = (
            "SELECT id, pattern, reason, actor, created_at, active, unblocked_at "
            "FROM blocked_patterns"
        )
        if not include_inactive:
            sql += " WHERE active = 1"
        return [
            BlockedPattern(
                r[0],
                r[1],
                r[2],
                r[3],
                parse_iso(r[4]),
                bool(r[5]),
                parse_iso(r[6]) if r[6] else None,
            )
            for r in self.sql.execute(sql + " ORDER BY created_at, id")
        ]

    # ---------------------------------------------------------------- conflicts
    def flag_conflict(self, a: str, b: str, reason: str, *, batch_id: str | None = None) -> int:
        return self.sql.insert(
            "INSERT INTO conflicts (a, b, reason, created_at, batch_id) VALUES (?,?,?,?,?)",
            (a, b, reason, iso(self.now()), batch_id),
        )

    def conflicts(self, *, include_resolved: bool = False) -> list[Conflict]:
        sql = "SELECT id, a, b, reason, created_at, status, resolution FROM conflicts"
        if not include_resolved:
            sql += " WHERE status = 'open'"
        return [
            Conflict(r[0], r[1], r[2], r[3], parse_iso(r[4]), r[5], r[6])
            for r in self.sql.execute(sql + " ORDER BY id")
        ]

    def resolve_conflict(self, conflict_id: int, resolution: str, *, actor: str = "human") -> None:
        with self.transaction():
            changed = self.sql.execute(
                "UPDATE conflicts SET status = 'resolved', resolved_at = ?, resolution = ? "
                "WHERE id = ? AND status = 'open'",
                (iso(self.now()), resolution, conflict_id),
            ).rowcount
            if changed == 0:
                raise NotFound(f"no open conflict with id {conflict_id}")
            self.log_decision(
                None, actor, "resolve-conflict", None, "applied", resolution, {"id": conflict_id}
            )

    # ---------------------------------------------------------------- decision log (reads)
    def decisions(
        self, *, bullet_id: str | None = None, batch_id: str | None = None, limit: int = 200
    ) -> list[Decision]:
        where, args = where_equal(bullet_id=bullet_id, batch_id=batch_id)
        sql = "SELECT id, at, batch_id, actor, action, bullet_id, status, reason, detail "
        sql += f"FROM decisions{where} ORDER BY id DESC LIMIT ?"
        rows = self.sql.all(sql, [*args, limit])
        return [
            Decision(
                r[0],
                stored_time(r[1], "decisions", r[0]) or EPOCH,
                *r[2:8],
                detail=stored_json(r[8], "decisions", r[0], {}),
            )
            for r in reversed(rows)
        ]
