"""Rows of whole tables (`store.tables`): appending many at once (`COPY` on PostgreSQL,
`executemany` on SQLite), and a whole playbook copied from another (`playbook copy`).

    store.tables.append_rows("feedback", ("bullet_id", "kind", "at", ...), rows) -> int

A multi-row `INSERT` sends every value as a parameter and makes the server plan each
statement; `COPY ... FROM STDIN` streams the rows in one statement, several times faster
for millions of rows (a team-year's log: `bench/team_year.py` writes its ten million
events this way). The rows go into the store's current write transaction (one is opened
when there is none), after any write the store still holds back (`Executor.later`), so
they land in the order the caller asked for, and roll back with the transaction.

It writes exactly the rows given, no more: no evidence fold, no maturity pass, no decision
logged. A caller that appends feedback runs `store.sync_evidence()` before the transaction
ends (the cache then agrees with the log, as after any write). Tables and columns are
checked against the playbook's schema (`tables.TABLES`), never taken from outside.

On PostgreSQL this reaches into the executor (its connection and its waiting writes):
when the executors are reorganised this belongs on them, as `Executor.copy_rows`.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Sequence
from typing import TYPE_CHECKING, Any

from ..core.errors import DatabaseNotEmptyError, UsageError
from .checks import well_formed
from .interchange import INTEGER_KEYS
from .postgres import loading
from .tables import PAGE, TABLES
from .vouch import vouched_tables

if TYPE_CHECKING:
    from .base import Transaction
    from .executor import Executor
    from .interchange import Interchange


class TableRows:
    """Whole tables' rows, written verbatim: no evidence fold, no maturity pass, no
    decision logged (`store.tables`)."""

    def __init__(self, sql: Executor, transaction: Transaction, bulk: Interchange) -> None:
        self.sql = sql
        self.transaction = transaction
        self.bulk = bulk

    def append_rows(self, table: str, columns: Sequence[str], rows: Iterable[Sequence[Any]]) -> int:
        """Append `rows` (tuples in the order of `columns`) to `table`; returns how many."""
        known = TABLES.get(table)
        if known is None:
            raise UsageError(f"no playbook table named {table!r}")
        unknown = [c for c in columns if c not in known[0]]
        if unknown or len(set(columns)) != len(columns) or not columns:
            raise UsageError(f"not columns of {table}: {', '.join(unknown) or 'repeated or none'}")
        with self.transaction():
            ex = self.sql
            if str(ex.dialect) == "postgresql":
                return _copy(ex, table, columns, rows)
            marks = ", ".join("?" * len(columns))
            rows = list(rows)
            ex.executemany(f"INSERT INTO {table} ({', '.join(columns)}) VALUES ({marks})", rows)
            return len(rows)

    def copy_from(
        self,
        source: TableRows,
        destination: str,
        progress: Callable[[str, int], None] | None = None,
    ) -> dict[str, int]:
        """Every table of `source`'s playbook into this (empty) one, in one transaction,
        read in one snapshot; the rows copied, by table. `destination` names this
        playbook in the refusal."""
        counts: dict[str, int] = {}
        with self.sql.bulk(), source.sql.snapshot(), self.transaction():
            if not self.bulk.is_empty():
                raise DatabaseNotEmptyError(
                    f"{destination} already holds a playbook; a copy goes into an empty "
                    "one only (it brings its own ids and history), and nothing was written"
                )
            self.sql.execute("DELETE FROM meta")  # what opening it wrote: the source's own
            copying = str(self.sql.dialect) == "postgresql"
            # PostgreSQL: indexes and foreign keys made once the rows are in, the checks
            # kept (`postgres/loading.py`), by a role that may; in this transaction either way.
            remake = (
                loading.set_aside(self.sql, list(TABLES))
                if copying and loading.may_set_aside(self.sql, list(TABLES))
                else []
            )
            vouched = vouched_tables(source.sql)  # rows the source's own rules kept
            for table, (columns, key) in TABLES.items():
                told = [0]  # rows read so far (the pages are counted as they are written)

                def paged(
                    table: str = table,
                    cols: tuple[str, ...] = columns,
                    key: tuple[str, ...] = key,
                    told: list[int] = told,
                ) -> Iterator[list[Any]]:
                    for page in source.pages(table, cols, key, checked=table not in vouched):
                        yield page
                        told[0] += len(page)
                        if progress is not None:
                            progress(table, told[0])

                if copying:  # one COPY per table, streamed page by page: no row kept
                    _copy(self.sql, table, columns, (row for page in paged() for row in page))
                else:
                    insert = (
                        f"INSERT INTO {table} ({', '.join(columns)}) "
                        f"VALUES ({', '.join('?' * len(columns))})"
                    )
                    for page in paged():
                        self.sql.executemany(insert, page)
                n = counts[table] = told[0]
                if n and table in INTEGER_KEYS:
                    self.sql.keys_written(table, INTEGER_KEYS[table])
            loading.make_again(self.sql, remake)
        return counts

    def pages(
        self, table: str, columns: tuple[str, ...], key: tuple[str, ...], *, checked: bool = True
    ) -> Iterator[list[tuple[Any, ...]]]:
        """The rows of `table` in key order, a page at a time (keyset paging: each page
        starts after the last key of the one before, the same SQL on both backends);
        `checked`: a row that breaks a rule of `store/checks.py` is left out (and noted),
        which a table the database vouches for (`vouch.vouched_tables`) need not be."""
        select = f"SELECT {', '.join(columns)} FROM {table}"
        order = f" ORDER BY {', '.join(key)} LIMIT {PAGE}"
        at = [columns.index(k) for k in key]
        after: list[Any] | None = None
        while True:
            if after is None:
                rows = self.sql.all(select + order)
            else:
                marks = ", ".join("?" * len(key))
                rows = self.sql.all(f"{select} WHERE ({', '.join(key)}) > ({marks}){order}", after)
            if not rows:
                return
            if checked:
                yield [tuple(r) for r in rows if well_formed(table, columns, r)]
            else:
                yield [tuple(r) for r in rows]
            after = [rows[-1][i] for i in at]


def _copy(ex: Any, table: str, columns: Sequence[str], rows: Iterable[Sequence[Any]]) -> int:
    """`COPY table (columns) FROM STDIN` on the executor's connection, inside its write
    transaction, after the writes it holds back."""
    import psycopg  # lazy: the postgres extra (a SQLite playbook's copy and appends need none)
    from psycopg import sql  # lazy: the postgres extra, as above

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
