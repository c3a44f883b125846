"""The review queue's table (`proposals`). The rules live in `playbook.review.queue`."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, cast

from .records import where_equal
from .schema import next_seq

if TYPE_CHECKING:
    from .executor import Executor

COLUMNS = (
    "id, delta, session_ref, byte_offset, status, origin, created_at, decided_at, "
    "decided_by, reason, edited_delta, result"
)


class ProposalRepo:
    """The review queue's table (`proposals`): what `review.queue` stages, lists and decides."""

    def __init__(self, sql: Executor) -> None:
        self.sql = sql

    def seen(self, delta: str, session_ref: str | None, offset: int | None) -> bool:
        """Is this delta pending already, or was it decided for the same provenance?"""
        same = self.sql.dialect.same
        row = self.sql.execute(
            "SELECT 1 FROM proposals WHERE delta = ? AND (status = 'pending' OR "
            f"(session_ref {same} ? AND byte_offset {same} ?))",
            (delta, session_ref, offset),
        ).fetchone()
        return row is not None

    def insert(
        self,
        proposal_id: str,
        delta: str,
        session_ref: str | None,
        offset: int | None,
        origin: str,
        created_at: str,
    ) -> None:
        self.sql.execute(
            "INSERT INTO proposals (id, delta, session_ref, byte_offset, status, origin, "
            f"created_at, seq) VALUES (?,?,?,?, 'pending', ?, ?, {next_seq('proposals')})",
            (proposal_id, delta, session_ref, offset, origin, created_at),
        )

    def get(self, proposal_id: str) -> tuple[Any, ...] | None:
        row = self.sql.one(f"SELECT {COLUMNS} FROM proposals WHERE id = ?", (proposal_id,))
        return cast("tuple[Any, ...] | None", row)  # a row of the database (or no row)

    def rows(
        self,
        *,
        status: str | None = None,
        origin: str | None = None,
        limit: int | None = None,
        since: str | None = None,
        newest_first: bool = False,
        session_ref: str | None = None,
    ) -> list[tuple[Any, ...]]:
        where, args = where_equal(status=status, origin=origin, session_ref=session_ref)
        if since is not None:
            where += (" AND " if where else " WHERE ") + "created_at > ?"
            args.append(since)
        order = "created_at DESC, seq DESC" if newest_first else "created_at, seq"
        sql = f"SELECT {COLUMNS} FROM proposals{where} ORDER BY {order}"
        if limit is not None:
            sql += " LIMIT ?"
            args.append(int(limit))
        return self.sql.execute(sql, args).fetchall()

    def count(
        self,
        status: str = "pending",
        *,
        since: str | None = None,
        origin: str | None = None,
    ) -> int:
        where, args = where_equal(status=status, origin=origin)
        if since is not None:
            where += " AND created_at > ?"
            args.append(since)
        return int(self.sql.execute(f"SELECT COUNT(*) FROM proposals{where}", args).fetchone()[0])

    def decide(
        self,
        proposal_id: str,
        status: str,
        *,
        decided_at: str,
        decided_by: str,
        reason: str | None = None,
        edited_delta: str | None = None,
        result: str | None = None,
    ) -> None:
        self.sql.execute(
            "UPDATE proposals SET status = ?, decided_at = ?, decided_by = ?, reason = ?, "
            "edited_delta = ?, result = ? WHERE id = ? AND status = 'pending'",
            (status, decided_at, decided_by, reason, edited_delta, result, proposal_id),
        )

    def may_decide(self) -> bool:
        """Whether this connection's login may decide proposals, as PostgreSQL itself says:
        an agent's login (a member of the agents' role `playbook pg roles` makes, under
        whatever name) may not; only the reviewers' role, the schema's owner and superusers
        may update `proposals`. That right is the one asked, so the answer holds for any
        role names. A SQLite file has no logins: whoever opens it is its owner."""
        if self.sql.dialect != "postgresql":
            return True
        schema = self.sql.schema
        return bool(
            self.sql.scalar(
                "SELECT has_table_privilege(quote_ident(?) || '.proposals', 'UPDATE')", (schema,)
            )
        )
