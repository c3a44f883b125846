"""Appending many rows to one table at once: `COPY` on PostgreSQL, `executemany` on SQLite.

    append_rows(store, "feedback", ("bullet_id", "kind", "at", ...), rows) -> int

A multi-row `INSERT` sends every value as a parameter and makes the server plan each
statement; `COPY ... FROM STDIN` streams the rows in one statement, several times faster
for millions of rows (a team-year's log: `bench/team_year.py` writes its ten million
events this way). The rows go into the store's current write transaction (one is opened
when there is none), after any write the store still holds back (`Executor.later`), so
they land in the order the caller asked for, and roll back with the transaction.

It writes exactly the rows given, no more: no evidence fold, no maturity pass, no decision
logged. A caller that appends feedback runs `store.sync_evidence()` before the transaction
ends (the cache then agrees with the log, as after any write). Tables and columns are
checked against the playbook's schema (`copying.TABLES`), never taken from outside.

On PostgreSQL this reaches into the executor (its connection and its waiting writes):
when the executors are reorganised this belongs on them, as `Executor.copy_rows`.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import TYPE_CHECKING, Any

from ..core.errors import UsageError
from .copying import TABLES

if TYPE_CHECKING:
    from .store import PlaybookStore


def append_rows(
    store: PlaybookStore, table: str, columns: Sequence[str], rows: Iterable[Sequence[Any]]
) -> int:
    """Append `rows` (tuples in the order of `columns`) to `table`; returns how many."""
    known = TABLES.get(table)
    if known is None:
        raise UsageError(f"no playbook table named {table!r}")
    unknown = [c for c in columns if c not in known[0]]
    if unknown or len(set(columns)) != len(columns) or not columns:
        raise UsageError(f"not columns of {table}: {', '.join(unknown) or 'repeated or none'}")
    with store.transaction():
        ex = store.sql
        if str(ex.dialect) == "postgresql":
            return _copy(ex, table, columns, rows)
        marks = ", ".join("?" * len(columns))
        rows = list(rows)
        ex.executemany(f"INSERT INTO {table} ({', '.join(columns)}) VALUES ({marks})", rows)
        return len(rows)


def _copy(ex: Any, table: str, columns: Sequence[str], rows: Iterable[Sequence[Any]]) -> int:
    """`COPY table (columns) FROM STDIN` on the executor's connection, inside its write
    transaction, after the writes it holds back."""
    import psycopg
    from psycopg import sql

    statement = sql.SQL("COPY {} ({}) FROM STDIN").format(
        sql.Identifier(table), sql.SQL(", ").join(map(sql.Identifier, columns))
    )
    n = 0
    try:
        if ex._later:
            ex._send_later()
        with ex._conn.cursor() as cur, cur.copy(statement) as copy:
            for row in rows:
                copy.write_row(row)
                n += 1
    except psycopg.Error as exc:
        raise ex._error(exc) from exc
    ex._wrote = True  # the commit bumps the change counter and notifies listeners
    ex._writes += 1
    return n
