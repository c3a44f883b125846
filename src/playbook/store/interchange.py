"""The SQL behind export and import: every fact table read out verbatim, and written back.

Only the facts travel: bullets, the feedback log, edges, the maturity history, blocked
patterns, receipts, proposals, conflicts, decisions and session watermarks. Derived data
(the token index, the evidence cache, embeddings, maturity due times) is rebuilt by the
importer. Rows keep their ids and their stored timestamps, so a database exported and
restored into an empty file exports to the same bytes.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable, Iterator, Sequence
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from .store import PlaybookStore

# table -> columns, in the order they are exported. JSON-encoded columns are decoded.
TABLES: dict[str, tuple[str, ...]] = {
    "bullets": (
        "id", "content", "category", "tags", "scope", "scope_key", "type", "kind", "source",
        "state", "maturity", "pinned", "pinned_reason", "half_life_days", "session_ref",
        "byte_offset", "created_at", "valid_from", "valid_to", "content_hash", "batch_id",
    ),
    "feedback": (
        "id", "bullet_id", "kind", "at", "recorded_at", "weight", "reason", "context",
        "session_ref", "byte_offset", "actor", "receipt", "batch_id",
    ),
    "edges": ("id", "kind", "src", "dst", "at", "batch_id"),
    "maturity_log": ("id", "bullet_id", "at", "maturity", "batch_id"),
    "blocked_patterns": (
        "id", "pattern", "normalized", "reason", "actor", "created_at", "active", "unblocked_at",
    ),
    "receipts": ("receipt", "recorded_at", "outcome", "batch_id"),
    "proposals": (
        "id", "delta", "session_ref", "byte_offset", "status", "origin", "created_at",
        "decided_at", "decided_by", "reason", "edited_delta", "result",
    ),
    "conflicts": (
        "id", "a", "b", "reason", "created_at", "status", "resolved_at", "resolution", "batch_id",
    ),
    "decisions": (
        "id", "at", "batch_id", "actor", "action", "bullet_id", "status", "reason", "detail",
    ),
    "watermarks": ("session_ref", "byte_offset", "updated_at"),
}  # fmt: skip

# Insertion order: each table after the ones it references.
ORDER = tuple(TABLES)
JSON_COLUMNS = {
    ("bullets", "tags"),
    ("proposals", "delta"),
    ("proposals", "edited_delta"),
    ("proposals", "result"),
    ("decisions", "detail"),
}
BOOL_COLUMNS = {("bullets", "pinned"), ("blocked_patterns", "active")}
# Rowid order is insertion order; tables without an integer key keep it through `rowid`.
_ORDER_BY = {"receipts": "rowid", "watermarks": "rowid"}


def read_table(store: PlaybookStore, table: str) -> Iterator[dict[str, Any]]:
    """Every row of one fact table as a dict, in insertion order, JSON columns decoded."""
    cols = TABLES[table]
    order = _ORDER_BY.get(table, "rowid")
    for row in store.sql.execute(f"SELECT {', '.join(cols)} FROM {table} ORDER BY {order}"):
        out: dict[str, Any] = {}
        for col, value in zip(cols, row, strict=True):
            if (table, col) in JSON_COLUMNS and value is not None:
                value = json.loads(value)
            elif (table, col) in BOOL_COLUMNS:
                value = bool(value)
            out[col] = value
        yield out


def count_rows(store: PlaybookStore) -> dict[str, int]:
    return {t: int(store.sql.execute(f"SELECT COUNT(*) FROM {t}").fetchone()[0]) for t in ORDER}


def is_empty(store: PlaybookStore) -> bool:
    """No facts at all: a fresh or `init`-only database (what an import may go into)."""
    return not any(
        store.sql.execute(f"SELECT 1 FROM {t} LIMIT 1").fetchone() is not None for t in ORDER
    )


def _encode(table: str, col: str, value: Any) -> Any:
    if (table, col) in JSON_COLUMNS and value is not None:
        if table == "bullets":
            return json.dumps(value)  # as PlaybookStore.insert_bullet writes tags
        # Deltas are stored canonically (the queue compares them as text); the other
        # documents keep their key order, so a restored database exports the same bytes.
        return json.dumps(value, ensure_ascii=False, sort_keys=col.endswith("delta"))
    if (table, col) in BOOL_COLUMNS:
        return int(bool(value))
    return value


def insert_rows(
    store: PlaybookStore,
    table: str,
    rows: Iterable[dict[str, Any]],
    *,
    on_row: Callable[[], None] | None = None,
) -> int:
    """Insert rows verbatim (ids included) into one fact table; bullets are also indexed
    for recall. The caller holds the transaction. Returns how many rows were written."""
    cols = TABLES[table]
    sql = f"INSERT INTO {table} ({', '.join(cols)}) VALUES ({', '.join('?' * len(cols))})"
    n = 0
    for row in rows:
        store.sql.execute(sql, [_encode(table, c, row.get(c)) for c in cols])
        if table == "bullets":
            store._index_bullet(row["id"], row["content"], list(row.get("tags") or []))
        n += 1
        if on_row is not None:
            on_row()
    return n


def insert_events(
    store: PlaybookStore, events: Sequence[dict[str, Any]], *, on_row: Callable[[], None] | None
) -> list[int]:
    """Append feedback events with their own `at` and `recorded_at` (ids assigned by the
    log), for importers from other formats. The caller holds the transaction."""
    cols = [c for c in TABLES["feedback"] if c != "id"]
    sql = f"INSERT INTO feedback ({', '.join(cols)}) VALUES ({', '.join('?' * len(cols))})"
    ids: list[int] = []
    for ev in events:
        cur = store.sql.execute(sql, [ev.get(c) for c in cols])
        ids.append(int(cur.lastrowid or 0))
        if on_row is not None:
            on_row()
    return ids
