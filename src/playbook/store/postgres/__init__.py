"""The PostgreSQL backend: a team's shared playbook (psycopg 3, the `postgres` extra).

`opening.py` (connecting, modes, the playbook's schema), `executor.py` (the executor: `?`
parameters, the write lock, the commit counter, LISTEN/NOTIFY), `dialect.py` (psycopg
errors as `playbook.core.errors`), `schema.py` (the DDL of each migration step), `roles.py`
(the agent and human roles, and the guard that keeps agents from approving), `loading.py`
(indexes and constraints set aside while millions of rows go in, made again after),
`cluster.py` (a throwaway local server, for the tests and the benches).

psycopg is imported only when a `postgresql://` target is opened: `playbook --help` and
every SQLite command run without it.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from ..sqlite import Mode
    from .executor import PostgresExecutor


def open_postgres(url: str, mode: Mode, label: str) -> PostgresExecutor:
    """A `PostgresExecutor` on the playbook at `url` (`store/postgres/opening.py`)."""
    # (a SQLite command loads this package, for `schema.py`, and never opens a server)
    from .opening import open_postgres as opener  # lazy: mark, recall, every hook (~0.4 ms)

    return opener(url, mode, label)


__all__ = ["open_postgres"]
