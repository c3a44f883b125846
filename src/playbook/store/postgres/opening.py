"""Connecting to a PostgreSQL playbook in one of the three modes (see `store/target.py`).

A playbook lives in one schema of one database: the first schema of the connection's
`search_path` (`public` by default; another one with `?options=-csearch_path%3Dteam` in
the URL). `create` makes that schema when it does not exist yet (the user needs the
CREATE privilege on the database); `read` and `write` never create anything.
"""

from __future__ import annotations

import re
from typing import Any

from ... import errors
from ..sqlite import Mode
from .dialect import translate

BUSY_TIMEOUT = "30s"  # how long a writer waits for the write lock (SQLite: its busy timeout)
CONNECT_TIMEOUT = 10  # seconds, unless the URL says otherwise


def _psycopg() -> Any:
    try:
        import psycopg
    except ImportError:
        raise errors.BackendUnavailable(
            "PostgreSQL playbooks need psycopg: pip install 'playbook-workbench[postgres]'"
        ) from None
    return psycopg


def connect(url: str, label: str, *, read_only: bool = False) -> Any:
    """A psycopg connection as the executor expects it (autocommit, timeouts set)."""
    psycopg = _psycopg()
    from psycopg.conninfo import conninfo_to_dict

    from ..target import scrub

    try:
        given = conninfo_to_dict(url)
    except psycopg.ProgrammingError as exc:
        detail = scrub(" ".join(str(exc).split()), url)
        raise errors.UsageError(f"not a valid PostgreSQL URL: {label} ({detail})") from None
    options: dict[str, Any] = {"autocommit": True}
    if "connect_timeout" not in given:
        options["connect_timeout"] = CONNECT_TIMEOUT
    if "application_name" not in given:
        options["application_name"] = "playbook"
    try:
        conn = psycopg.connect(url, **options)
    except psycopg.Error as exc:
        raise _connect_error(exc, label, url) from None
    try:
        conn.execute(f"SET lock_timeout = '{BUSY_TIMEOUT}'")
        if read_only:
            conn.execute("SET default_transaction_read_only = on")
    except psycopg.Error as exc:
        conn.close()
        raise translate(exc, label) or exc from None
    return conn


def _connect_error(exc: Exception, label: str, url: str) -> errors.PlaybookError:
    from ..target import scrub

    text = scrub(str(exc).strip(), url)
    reason = text.split("FATAL:", 1)[-1].strip().splitlines()[0] if text else type(exc).__name__
    if re.search(r'database ".*" does not exist', text):
        return errors.NoDatabase(
            f"no database at {label} ({reason})",
            hint="create it first (createdb NAME, or CREATE DATABASE in psql)",
        )
    return errors.CannotOpen(f"cannot connect to {label}: {reason}")


def playbook_schema(conn: Any, label: str, mode: Mode) -> tuple[str, bool]:
    """The schema the playbook lives in (made in `create` mode when it does not exist), and
    whether the connection's role leaves what is derived from the log to the database: it
    may not write the evidence cache (the agent role of `playbook pg roles`)."""
    current, path, restricted = conn.execute(
        "SELECT current_schema(), current_setting('search_path'), "
        "to_regclass('evidence') IS NOT NULL AND NOT has_table_privilege('evidence', 'INSERT')"
    ).fetchone()
    if current is not None:
        return str(current), bool(restricted)
    wanted = [s.strip().strip('"') for s in path.split(",") if s.strip() and "$user" not in s]
    if not wanted:
        raise errors.CannotOpen(f"{label}: the connection's search_path names no schema")
    if mode != "create":
        raise errors.NotAPlaybook(
            f"{label} holds no playbook (the schema {wanted[0]!r} does not exist)"
        )
    psycopg = _psycopg()
    from psycopg import sql

    try:
        conn.execute(sql.SQL("CREATE SCHEMA IF NOT EXISTS {}").format(sql.Identifier(wanted[0])))
    except psycopg.errors.UniqueViolation:
        pass  # another process made it a moment ago
    except psycopg.Error as exc:
        raise translate(exc, label) or exc from None
    return wanted[0], False


def open_postgres(url: str, mode: Mode, label: str) -> Any:
    """A `PostgresExecutor` on the playbook at `url` (see the module's docstring)."""
    _psycopg()  # BackendUnavailable without it
    from .executor import PostgresExecutor

    conn = connect(url, label, read_only=mode == "read")
    try:
        schema, restricted = playbook_schema(conn, label, mode)
    except BaseException:
        conn.close()
        raise
    ex = PostgresExecutor(conn, schema=schema, label=label, read_only=mode == "read")
    ex.derived_by_database = restricted
    ex.reopen = lambda: connect(url, label, read_only=mode == "read")
    return ex
