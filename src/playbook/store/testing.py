"""Raw SQL for tests of the store: look at rows, break rules on purpose, compare dumps.

Tests use these instead of a connection, so that they say what they look at and stay
independent of the backend's driver. Not for application code (the store's methods are).
"""

from __future__ import annotations

import sqlite3
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from .sqlite import SqliteExecutor

if TYPE_CHECKING:
    from .store import PlaybookStore


def rows(store: PlaybookStore, sql: str, params: Sequence[Any] = ()) -> list[tuple[Any, ...]]:
    """The rows of a query, as tuples."""
    return [tuple(r) for r in store.sql.all(sql, params)]


def value(store: PlaybookStore, sql: str, params: Sequence[Any] = ()) -> Any:
    """The first column of the first row of a query (None when there is no row)."""
    return store.sql.scalar(sql, params)


def run(store: PlaybookStore, sql: str, params: Sequence[Any] = ()) -> int:
    """Run one statement outside the store's methods (to test what the schema refuses);
    returns the number of rows changed."""
    return store.sql.execute(sql, params).rowcount


def tables(store: PlaybookStore) -> list[str]:
    """The names of every table, sorted."""
    if store.sql.dialect == "sqlite":
        sql = "SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name"
    else:  # pragma: no cover - PostgreSQL
        sql = "SELECT tablename FROM pg_tables WHERE schemaname = current_schema() ORDER BY 1"
    return [str(t) for t in store.sql.column(sql)]


def dump(store: PlaybookStore) -> dict[str, list[tuple[Any, ...]]]:
    """The schema and every row of every table (sequence counters included), in a stable
    order: for "nothing changed" assertions."""
    out: dict[str, list[tuple[Any, ...]]] = {}
    if store.sql.dialect == "sqlite":
        out["(schema)"] = rows(store, "SELECT type, name, sql FROM sqlite_master ORDER BY 1, 2")
    for table in tables(store):
        out[table] = sorted(rows(store, f'SELECT * FROM "{table}"'), key=repr)
    return out


def wrap_connection(store: PlaybookStore, wrap: Callable[[Any], Any]) -> None:
    """Put `wrap(connection)` between the executor and its connection (a test that stops a
    process at a chosen statement, say). SQLite only."""
    sql = store.sql
    if not isinstance(sql, SqliteExecutor):
        raise TypeError(f"wrap_connection is for a SQLite playbook, not {sql.dialect}")
    sql._conn = wrap(sql._conn)


def damage_table(path: Path, table: str) -> None:
    """Overwrite the root page of `table` in a (checkpointed, closed) SQLite file with
    garbage, as a failing disk would; the schema page stays readable."""
    conn = sqlite3.connect(path)
    root = conn.execute("SELECT rootpage FROM sqlite_master WHERE name = ?", (table,)).fetchone()
    size = conn.execute("PRAGMA page_size").fetchone()[0]
    conn.close()
    data = bytearray(path.read_bytes())
    start = (root[0] - 1) * size
    data[start : start + size] = bytes((i * 37 + 11) % 256 for i in range(size))
    path.write_bytes(bytes(data))
