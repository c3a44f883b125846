"""The SQLite executor: the store's only handle on a connection (see `store/executor.py`)."""

from __future__ import annotations

import sqlite3
from collections.abc import Iterable, Iterator, Sequence
from contextlib import contextmanager, suppress
from typing import Any

from ...core import errors
from ..dialect import SQLITE
from ..executor import ExecutorBase
from .dialect import translate
from .foreign_keys import foreign_key_problems


class Rows:
    """A cursor's results, with driver errors translated (what `Executor.execute` returns)."""

    __slots__ = ("_cur", "_label")

    def __init__(self, cur: sqlite3.Cursor, label: str) -> None:
        self._cur = cur
        self._label = label

    @property
    def rowcount(self) -> int:
        return self._cur.rowcount

    @property
    def lastrowid(self) -> int:
        return int(self._cur.lastrowid or 0)

    def fetchone(self) -> Any:
        try:
            return self._cur.fetchone()
        except sqlite3.Error as exc:
            raise _translated(exc, self._label) from exc

    def fetchall(self) -> list[Any]:
        try:
            return self._cur.fetchall()
        except sqlite3.Error as exc:
            raise _translated(exc, self._label) from exc

    def __iter__(self) -> Iterator[Any]:
        cur = self._cur
        while True:
            try:
                batch = cur.fetchmany(512)
            except sqlite3.Error as exc:
                raise _translated(exc, self._label) from exc
            if not batch:
                return
            yield from batch


NUL_REFUSED = "text with a NUL character (\\x00) cannot be stored"


def _refuse_nul(params: Sequence[Any]) -> Sequence[Any]:
    """`params`, unless a text among them holds a NUL character (SQLite would store it, but
    PostgreSQL cannot, so a playbook holding one could never be copied there) or a number
    is beyond a 64-bit integer (`--limit 10**30`): refused as invalid input, the same way
    on both backends."""
    for value in params:
        if type(value) is str and "\x00" in value:
            raise errors.InvalidInput(f"{NUL_REFUSED} ({value[:40]!r})")
        if type(value) is int and not -(1 << 63) <= value < 1 << 63:
            raise errors.InvalidInput(f"{str(value)[:40]}: a number too large to use")
    return params


def _translated(exc: sqlite3.Error, label: str) -> BaseException:
    return translate(exc, label) or exc


class SqliteExecutor(ExecutorBase):
    """The store's only handle on a SQLite connection (which it keeps private).

    `execute` / `executemany` / `one` / `all` / `scalar` / `column` / `insert` run SQL with
    `?` parameters; `transaction()` is one write transaction (re-entrant: an inner block
    joins the outer one); `change_token()` changes whenever anyone commits.
    """

    dialect = SQLITE
    schema = "main"  # SQLite's name for the file's own tables (`Executor.schema`)
    derived_by_database = False  # no roles: whoever writes the file writes everything

    def __init__(
        self, conn: sqlite3.Connection, *, label: str = "", read_only: bool = False
    ) -> None:
        self._conn = conn
        self.label = label
        self.read_only = read_only
        self._depth = 0

    # -------------------------------------------------------------- running SQL
    def execute(self, sql: str, params: Sequence[Any] = ()) -> Rows:
        _refuse_nul(params)
        try:
            return Rows(self._conn.execute(sql, params), self.label)
        except sqlite3.Error as exc:
            raise _translated(exc, self.label) from exc

    def executemany(self, sql: str, rows: Iterable[Sequence[Any]]) -> int:
        rows = [_refuse_nul(row) for row in rows]
        try:
            return self._conn.executemany(sql, rows).rowcount
        except sqlite3.Error as exc:
            raise _translated(exc, self.label) from exc

    def later(self, sql: str, rows: Iterable[Sequence[Any]] = ((),)) -> None:
        """`Executor.later`: in-process, there is no round trip to save; it runs now (all
        the rows in one transaction, as on PostgreSQL)."""
        with self.transaction():
            self.executemany(sql, rows)

    def all_of(self, queries: Sequence[tuple[str, Sequence[Any]]]) -> list[list[Any]]:
        """`Executor.all_of`: one after the other."""
        return [self.all(sql, params) for sql, params in queries]

    def call(self, sql: str, params: Sequence[Any] = ()) -> list[Any]:
        """`Executor.call` (SQLite has no functions that write: its commits are counted by
        the file itself)."""
        return self.all(sql, params)

    def one(self, sql: str, params: Sequence[Any] = ()) -> Any:
        """The first row, or None."""
        _refuse_nul(params)
        try:
            return self._conn.execute(sql, params).fetchone()
        except sqlite3.Error as exc:
            raise _translated(exc, self.label) from exc

    def all(self, sql: str, params: Sequence[Any] = ()) -> list[Any]:
        _refuse_nul(params)
        try:
            return self._conn.execute(sql, params).fetchall()
        except sqlite3.Error as exc:
            raise _translated(exc, self.label) from exc

    def insert(self, sql: str, params: Sequence[Any] = ()) -> int:
        """Run an INSERT into a table with an integer key; return the new row's key."""
        return self.execute(sql, params).lastrowid

    def insert_row(self, table: str, sql: str, params: Sequence[Any], returning: str) -> Any:
        """`Executor.insert_row`: the row read back by its rowid (RETURNING needs SQLite
        3.35)."""
        cur = self.execute(sql, params)
        if cur.rowcount == 0:
            return None
        return self.one(f"SELECT {returning} FROM {table} WHERE rowid = ?", (cur.lastrowid,))

    def keys_written(self, table: str, column: str) -> None:
        """Rows with explicit integer keys were inserted into `table`: SQLite's next key
        follows the largest by itself."""

    @contextmanager
    def bulk(self, kib: int = 256 * 1024) -> Iterator[None]:
        """A larger page cache for one bulk import (SQLite's default is 2 MiB), so the
        indexes a large import grows stay in memory instead of spilling pages to the WAL
        again and again; the connection's own setting comes back afterwards."""
        before = self.scalar("PRAGMA cache_size")
        self.execute(f"PRAGMA cache_size = {-int(kib)}")
        try:
            yield
        finally:
            self.execute(f"PRAGMA cache_size = {int(before)}")

    # -------------------------------------------------------------- transactions
    def _begin_write(self) -> None:
        self.execute("BEGIN IMMEDIATE")

    def _commit(self) -> None:
        self.execute("COMMIT")

    @contextmanager
    def snapshot(self) -> Iterator[None]:
        """Many reads that see one state of the database (a read transaction: in WAL
        mode, writers go on meanwhile and are not seen)."""
        if self._depth:
            yield
            return
        self.execute("BEGIN")
        try:
            yield
        finally:
            self._rollback()

    def _rollback(self) -> None:
        # SQLite may have rolled back already (a full disk, an I/O error).
        with suppress(sqlite3.Error):
            self._conn.execute("ROLLBACK")

    @property
    def in_transaction(self) -> bool:
        return self._depth > 0

    # -------------------------------------------------------------- live refresh
    def listen(self) -> None:
        """Follow other connections' commits: `change_token()` already does, for free."""

    def data_version(self) -> int:
        """Moves when another connection commits (PRAGMA data_version)."""
        return int(self.scalar("PRAGMA data_version", default=0))

    def change_token(self) -> tuple[int, int]:
        """A value that changes whenever anyone commits: another connection (data_version)
        or this one (total_changes). Cheap: microseconds, for polling."""
        return (self.data_version(), self._conn.total_changes)

    # -------------------------------------------------------------- the file
    def integrity_problems(self, limit: int = 100, *, full: bool = True) -> list[str]:
        """SQLite's integrity check: [] when the file is sound. Not `full`: its quick check
        (each page read once; index entries not looked up row by row: see store/doctor.py)."""
        check = "integrity_check" if full else "quick_check"
        rows = self.column(f"PRAGMA {check}({int(limit)})")
        return [] if rows == ["ok"] else [str(r) for r in rows]

    def damaged_tables(self) -> list[str]:
        """Each table (with its indexes) whose pages SQLite cannot read, one line each: for
        when the whole-file check stops at the first damage."""
        out: list[str] = []
        for name in self.column("SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY 1"):
            try:
                found = self.column(f"PRAGMA quick_check('{name}')")
            except errors.DatabaseError:
                out.append(f"table {name}: damaged")
                continue
            if found != ["ok"]:
                out.append(f"table {name}: " + "; ".join(str(f) for f in found[:3]))
        return out

    def foreign_key_problems(self) -> list[tuple[Any, ...]]:
        """`PRAGMA foreign_key_check`'s rows (`foreign_keys.py`: found from the keys'
        distinct values, not a look-up per row)."""
        try:
            return foreign_key_problems(self._conn)
        except sqlite3.Error as exc:
            raise _translated(exc, self.label) from exc

    def close(self) -> None:
        self._conn.close()
