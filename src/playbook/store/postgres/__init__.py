"""The PostgreSQL backend: a team's shared playbook (psycopg 3, the `postgres` extra).

`opening.py` (connecting, modes, the playbook's schema), `executor.py` (the executor: `?`
parameters, the write lock, the commit counter, LISTEN/NOTIFY), `light.py` with `libpq.py`
and `values.py` (the one-shot commands' connection: libpq itself, without psycopg;
`preference.py` says when), `dialect.py` (driver errors as `playbook.core.errors`),
`schema.py` (the DDL of each migration step), `roles.py` (the agent and human roles, and
the guard that keeps agents from approving), `loading.py` (indexes and constraints set
aside while millions of rows go in, made again after), `cluster.py` (a throwaway local
server, for the tests and the benches).

psycopg is imported only when a `postgresql://` target is opened, and not by the
launcher's one-shot commands: `playbook --help` and every SQLite command run without it.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from .preference import light_preferred, prefer_light

if TYPE_CHECKING:
    from ..sqlite import Mode
    from .executor import PostgresExecutor


def open_postgres(url: str, mode: Mode, label: str) -> PostgresExecutor:
    """A `PostgresExecutor` on the playbook at `url` (`store/postgres/opening.py`)."""
    # (a SQLite command loads this package, for `schema.py`, and never opens a server)
    from .opening import open_postgres as opener  # lazy: mark, recall, every hook (~0.4 ms)

    return opener(url, mode, label)


__all__ = ["light_preferred", "open_postgres", "prefer_light"]
