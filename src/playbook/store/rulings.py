"""What reviewers decide: lineage edges, blocked patterns, conflict flags (the decision log
they write to is `base.DecisionLog`). Edges are append-only in the database (triggers in
the schema)."""

from __future__ import annotations

from collections.abc import Iterable
from datetime import datetime
from typing import Any

from ..core.authority import require_human
from ..core.errors import NotFound, StoreError
from ..core.text import normalize
from . import ids
from .base import DecidingPart, Part
from .records import (
    BlockedPattern,
    Conflict,
    Lineage,
    iso,
    parse_iso,
)
from .schema import next_seq


class EdgeRepo(Part):
    """Lineage edges (supersedes, derived-from, ...) between bullets."""

    def add(self, kind: str, src: str, dst: str, *, batch_id: str | None = None) -> None:
        self.sql.execute(
            "INSERT INTO edges (kind, src, dst, at, batch_id) VALUES (?,?,?,?,?)",
            (kind, src, dst, iso(self.now()), batch_id),
        )

    def lineage(self, bullet_id: str) -> Lineage:
        preds = self.sql.all("SELECT kind, dst FROM edges WHERE src = ? ORDER BY id", (bullet_id,))
        succs = self.sql.all("SELECT kind, src FROM edges WHERE dst = ? ORDER BY id", (bullet_id,))
        return Lineage([(k, b) for k, b in preds], [(k, b) for k, b in succs])

    def supersedes_map(self, *, as_of: datetime | None = None) -> dict[str, list[str]]:
        """successor id -> ids it directly supersedes."""
        sql = "SELECT src, dst FROM edges WHERE kind = 'supersedes'"
        args: list[Any] = []
        if as_of is not None:
            sql += " AND at <= ?"
            args.append(iso(as_of))
        out: dict[str, list[str]] = {}
        for src, dst in self.sql.execute(sql + " ORDER BY id", args):
            out.setdefault(src, []).append(dst)
        return out

    def ancestors(self, bullet_id: str, smap: dict[str, list[str]] | None = None) -> list[str]:
        """Every bullet this one supersedes, transitively (its evidence is inherited)."""
        smap = self.supersedes_map() if smap is None else smap
        seen: dict[str, None] = {}
        stack = list(smap.get(bullet_id, ()))
        while stack:
            b = stack.pop()
            if b in seen or b == bullet_id:
                continue
            seen[b] = None
            stack.extend(smap.get(b, ()))
        return list(seen)

    def ancestors_many(self, ids: Iterable[str]) -> dict[str, list[str]]:
        """Every bullet each of `ids` supersedes, transitively (whose evidence it inherits),
        nearest first; ids with none are absent. One recursive query, not the whole edge map."""
        d = self.sql.dialect
        out: dict[str, list[str]] = {}
        for root, bid in self.sql.execute(
            "WITH RECURSIVE up(root, id, depth) AS ("
            f" SELECT src, dst, 1 FROM edges WHERE kind = 'supersedes' AND {d.in_list('src')}"
            " UNION SELECT up.root, e.dst, up.depth + 1 FROM up"
            " JOIN edges e ON e.src = up.id AND e.kind = 'supersedes' WHERE up.depth < 1000"
            ") SELECT root, id FROM up ORDER BY root, depth",
            (d.list_param(ids),),
        ):
            seen = out.setdefault(root, [])
            if bid != root and bid not in seen:
                seen.append(bid)
        return out


# ------------------------------------------------------------------ a retired bullet's score


class BlockRepo(DecidingPart):
    """Blocked patterns: adds near an active one are refused."""

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
            self.decisions.log(None, actor, "block", None, "applied", reason, {"pattern": pattern})
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
            self.decisions.log(None, actor, "unblock", None, "applied", None, {"id": block_id})

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


class ConflictRepo(DecidingPart):
    """Conflict flags between two bullets; `store.conflicts()` lists the open ones."""

    def flag(self, a: str, b: str, reason: str, *, batch_id: str | None = None) -> int:
        return self.sql.insert(
            "INSERT INTO conflicts (a, b, reason, created_at, batch_id) VALUES (?,?,?,?,?)",
            (a, b, reason, iso(self.now()), batch_id),
        )

    def __call__(self, *, include_resolved: bool = False) -> list[Conflict]:
        sql = "SELECT id, a, b, reason, created_at, status, resolution FROM conflicts"
        if not include_resolved:
            sql += " WHERE status = 'open'"
        return [
            Conflict(r[0], r[1], r[2], r[3], parse_iso(r[4]), r[5], r[6])
            for r in self.sql.execute(sql + " ORDER BY id")
        ]

    def resolve(self, conflict_id: int, resolution: str, *, actor: str = "human") -> None:
        with self.transaction():
            changed = self.sql.execute(
                "UPDATE conflicts SET status = 'resolved', resolved_at = ?, resolution = ? "
                "WHERE id = ? AND status = 'open'",
                (iso(self.now()), resolution, conflict_id),
            ).rowcount
            if changed == 0:
                raise NotFound(f"no open conflict with id {conflict_id}")
            self.decisions.log(
                None, actor, "resolve-conflict", None, "applied", resolution, {"id": conflict_id}
            )
