"""SQL of the review queue (the `proposals` table). The rules live in `playbook.review.queue`."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from .records import where_equal
from .schema import next_seq

if TYPE_CHECKING:
    from .store import PlaybookStore

COLUMNS = (
    "id, delta, session_ref, byte_offset, status, origin, created_at, decided_at, "
    "decided_by, reason, edited_delta, result"
)


def seen(store: PlaybookStore, delta: str, session_ref: str | None, offset: int | None) -> bool:
    """Is this delta pending already, or was it decided for the same provenance?"""
    same = store.sql.dialect.same
    row = store.sql.execute(
        "SELECT 1 FROM proposals WHERE delta = ? AND (status = 'pending' OR "
        f"(session_ref {same} ? AND byte_offset {same} ?))",
        (delta, session_ref, offset),
    ).fetchone()
    return row is not None


def insert(
    store: PlaybookStore,
    proposal_id: str,
    delta: str,
    session_ref: str | None,
    offset: int | None,
    origin: str,
    created_at: str,
) -> None:
    store.sql.execute(
        "INSERT INTO proposals (id, delta, session_ref, byte_offset, status, origin, "
        f"created_at, seq) VALUES (?,?,?,?, 'pending', ?, ?, {next_seq('proposals')})",
        (proposal_id, delta, session_ref, offset, origin, created_at),
    )


def get(store: PlaybookStore, proposal_id: str) -> tuple[Any, ...] | None:
    return store.sql.execute(
        f"SELECT {COLUMNS} FROM proposals WHERE id = ?", (proposal_id,)
    ).fetchone()


def rows(
    store: PlaybookStore,
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
    return store.sql.execute(sql, args).fetchall()


def count(
    store: PlaybookStore,
    status: str = "pending",
    *,
    since: str | None = None,
    origin: str | None = None,
) -> int:
    where, args = where_equal(status=status, origin=origin)
    if since is not None:
        where += " AND created_at > ?"
        args.append(since)
    return int(store.sql.execute(f"SELECT COUNT(*) FROM proposals{where}", args).fetchone()[0])


def decide(
    store: PlaybookStore,
    proposal_id: str,
    status: str,
    *,
    decided_at: str,
    decided_by: str,
    reason: str | None = None,
    edited_delta: str | None = None,
    result: str | None = None,
) -> None:
    store.sql.execute(
        "UPDATE proposals SET status = ?, decided_at = ?, decided_by = ?, reason = ?, "
        "edited_delta = ?, result = ? WHERE id = ? AND status = 'pending'",
        (status, decided_at, decided_by, reason, edited_delta, result, proposal_id),
    )
