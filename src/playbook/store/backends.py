"""Which executor runs a database handle: the chooser above both backends.

`executor_of` takes what the SPEC §2 API hands the store (an executor already, a
`sqlite_utils.Database`, a `sqlite3.Connection`) and gives the `Executor` for it. It sits
above `store/executor.py` (the protocol both executors implement) and the backends, so that
neither backend's package needs the other or the chooser.
"""

from __future__ import annotations

from typing import Any, TypeGuard

from .executor import Executor
from .sqlite import executor_of as sqlite_executor_of


def executor_of(db: Any) -> Executor:
    """An executor for what the SPEC §2 API hands the store: an executor already, a
    `sqlite_utils.Database` or a `sqlite3.Connection`."""
    if _is_executor(db):
        return db
    return sqlite_executor_of(db)


def _is_executor(db: object) -> TypeGuard[Executor]:
    """Whether `db` is an executor already: it has three of the protocol's names, which no
    connection or database object has together (the others are not looked up: a fast
    test, the one this chooser always made)."""
    return hasattr(db, "change_token") and hasattr(db, "transaction") and hasattr(db, "dialect")
