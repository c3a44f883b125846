"""What the store needs of a database: the `Executor` protocol.

The store (and only the store package) runs SQL through one of these; the connection
behind it stays private. `store/sqlite/` implements it for SQLite, `store/postgres/` for
PostgreSQL. SQL is written with `?` parameters; a list is bound as one parameter through
the dialect's `in_list` / `list_param` (`store/dialect.py`). Driver errors come out as
`playbook.core.errors` types (`DatabaseBusy`, `ReadOnlyPlaybook`, `DatabaseDamaged`,
`DiskFull`, `ConstraintError`, `PermissionDenied`, ...).

The guarantees every executor gives: `transaction()` is one write transaction, and write
transactions of every connection to the same playbook run one at a time (SQLite's write
lock; a transaction-scoped advisory lock on PostgreSQL), so that the store's
read-then-write steps (receipts, the evidence watermark, the maturity pass) see no other
writer between their read and their write. `change_token()` moves whenever anyone commits.
"""

from __future__ import annotations

from collections.abc import Hashable, Iterable, Iterator, Sequence
from contextlib import AbstractContextManager, contextmanager
from typing import TYPE_CHECKING, Any, Protocol

from ..core import errors

if TYPE_CHECKING:
    from .dialect import Dialect


class Result(Protocol):
    """One statement's results: iterate, or fetch; `rowcount` and `lastrowid` for writes."""

    @property
    def rowcount(self) -> int: ...

    @property
    def lastrowid(self) -> int: ...

    def fetchone(self) -> Any: ...

    def fetchall(self) -> list[Any]: ...

    def __iter__(self) -> Iterator[Any]: ...


class Executor(Protocol):
    dialect: Dialect  # the SQL fragments that differ (`store/dialect.py`)
    schema: str  # the schema that holds the playbook's tables (PostgreSQL's; SQLite: "main")
    label: str  # where the database is, for messages (a path; a URL without password)
    read_only: bool  # opened for reading only: `transaction()` raises ReadOnlyPlaybook
    # The connection may not write what is derived from the log (the evidence cache, a
    # rule's maturity): the database computes it (PostgreSQL's agent role, `roles.py`).
    derived_by_database: bool

    def execute(self, sql: str, params: Sequence[Any] = ()) -> Result: ...

    def executemany(self, sql: str, rows: Iterable[Sequence[Any]]) -> int: ...

    def later(self, sql: str, rows: Iterable[Sequence[Any]] = ((),)) -> None:
        """Run a write, once per row of parameters, whose result nobody reads (no row count,
        no key). Inside a write transaction a server's executor may hold it and send it with
        the next statement that needs an answer, or with the commit: many writes in one
        round trip. An error it meets is raised there, and rolls the transaction back.
        Outside a transaction, the rows are written in one of their own.
        The rows of one call may go as one multi-row statement: an upsert's rows must not
        repeat a key."""

    def all_of(self, queries: Sequence[tuple[str, Sequence[Any]]]) -> list[list[Any]]:
        """The rows of each of several reads that do not depend on each other (on
        PostgreSQL, sent together: one round trip)."""

    def call(self, sql: str, params: Sequence[Any] = ()) -> list[Any]:
        """The rows of a SELECT of a database function that writes (inside a write
        transaction: it counts as a write, for the commit and `change_token`)."""

    def one(self, sql: str, params: Sequence[Any] = ()) -> Any: ...

    def all(self, sql: str, params: Sequence[Any] = ()) -> list[Any]: ...

    def scalar(self, sql: str, params: Sequence[Any] = (), default: Any = None) -> Any: ...

    def column(self, sql: str, params: Sequence[Any] = ()) -> list[Any]: ...

    def insert(self, sql: str, params: Sequence[Any] = ()) -> int: ...

    def insert_row(self, table: str, sql: str, params: Sequence[Any], returning: str) -> Any:
        """Run an INSERT of one row into `table`; return the `returning` columns of the row
        it made, or None when it made none (`ON CONFLICT ... DO NOTHING`)."""

    def keys_written(self, table: str, column: str) -> None: ...

    def bulk(self) -> AbstractContextManager[None]: ...

    def transaction(self) -> AbstractContextManager[None]: ...

    def snapshot(self) -> AbstractContextManager[None]: ...

    @property
    def in_transaction(self) -> bool: ...

    def change_token(self) -> Hashable: ...

    def listen(self) -> None: ...

    def integrity_problems(self, limit: int = 100, *, full: bool = True) -> list[str]: ...

    def damaged_tables(self) -> list[str]: ...

    def foreign_key_problems(self) -> list[tuple[Any, ...]]: ...

    def close(self) -> None: ...


class ExecutorBase:
    """What every executor does the same way: `scalar` and `column` from its own `one` and
    `all`, and the shape of a write transaction (re-entrant, refused on a read-only store,
    rolled back on any exception) around its own `_begin_write`, `_commit`, `_rollback`."""

    label: str
    read_only: bool
    _depth: int

    def one(self, sql: str, params: Sequence[Any] = ()) -> Any:
        raise NotImplementedError

    def all(self, sql: str, params: Sequence[Any] = ()) -> list[Any]:
        raise NotImplementedError

    def _begin_write(self) -> None:
        raise NotImplementedError

    def _commit(self) -> None:
        raise NotImplementedError

    def _rollback(self) -> None:
        raise NotImplementedError

    def scalar(self, sql: str, params: Sequence[Any] = (), default: Any = None) -> Any:
        """The first column of the first row (`default` when there is no row or it is NULL)."""
        row = self.one(sql, params)
        return default if row is None or row[0] is None else row[0]

    def column(self, sql: str, params: Sequence[Any] = ()) -> list[Any]:
        """The first column of every row."""
        return [r[0] for r in self.all(sql, params)]

    @contextmanager
    def transaction(self) -> Iterator[None]:
        """One write transaction, holding the playbook's write lock (re-entrant: an inner
        block joins the outer one)."""
        if self._depth:
            self._depth += 1
            try:
                yield
            finally:
                self._depth -= 1
            return
        if self.read_only:
            raise errors.ReadOnlyPlaybook(
                f"the playbook at {self.label or 'the database'} was opened read-only"
            )
        self._begin_write()
        self._depth = 1
        try:
            yield
        except BaseException:
            self._depth = 0
            self._rollback()
            raise
        self._depth = 0
        self._commit()
