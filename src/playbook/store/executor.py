"""What the store needs of a database: the `Executor` protocol.

The store (and only the store package) runs SQL through one of these; the connection
behind it stays private. `store/sqlite.py` implements it for SQLite; a PostgreSQL executor
implements the same methods. SQL is written with `?` parameters; a list is bound as one
parameter through the dialect's `IN_LIST` / `list_param`. Driver errors come out as
`playbook.errors` types (`DatabaseBusy`, `ReadOnlyPlaybook`, `DatabaseDamaged`,
`DiskFull`, `ConstraintError`, ...).
"""

from __future__ import annotations

from collections.abc import Hashable, Iterable, Iterator, Sequence
from contextlib import AbstractContextManager
from typing import Any, Protocol


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
    dialect: str  # "sqlite" (later "postgresql")
    label: str  # where the database is, for messages (a path; a URL without password)
    read_only: bool  # opened for reading only: `transaction()` raises ReadOnlyPlaybook

    def execute(self, sql: str, params: Sequence[Any] = ()) -> Result: ...

    def executemany(self, sql: str, rows: Iterable[Sequence[Any]]) -> int: ...

    def one(self, sql: str, params: Sequence[Any] = ()) -> Any: ...

    def all(self, sql: str, params: Sequence[Any] = ()) -> list[Any]: ...

    def scalar(self, sql: str, params: Sequence[Any] = (), default: Any = None) -> Any: ...

    def column(self, sql: str, params: Sequence[Any] = ()) -> list[Any]: ...

    def insert(self, sql: str, params: Sequence[Any] = ()) -> int: ...

    def transaction(self) -> AbstractContextManager[None]: ...

    @property
    def in_transaction(self) -> bool: ...

    def change_token(self) -> Hashable: ...

    def integrity_problems(self, limit: int = 100) -> list[str]: ...

    def damaged_tables(self) -> list[str]: ...

    def foreign_key_problems(self) -> list[tuple[Any, ...]]: ...

    def close(self) -> None: ...
