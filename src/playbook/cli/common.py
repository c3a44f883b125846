"""What every command shares: where the database is, the JSON contract, errors."""

from __future__ import annotations

import os
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from ..store import PlaybookStore

EXIT_OK = 0
EXIT_USER = 1
EXIT_USAGE = 2
EXIT_DATABASE = 3


@dataclass
class _State:
    db: str | None = None
    json: bool = False


state = _State()


class CliError(Exception):
    """A user error: printed as one plain line (or a JSON error), never a traceback."""

    def __init__(
        self, code: str, message: str, hint: str | None = None, exit_code: int = EXIT_USER
    ) -> None:
        super().__init__(message)
        self.code = code
        self.message = message
        self.hint = hint
        self.exit_code = exit_code

    @classmethod
    def from_exception(cls, exc: BaseException) -> CliError | None:
        from ..store import DatabaseOpenError, SchemaTooNewError, StoreError

        if isinstance(exc, SchemaTooNewError):
            return cls("schema_too_new", str(exc), "upgrade playbook-workbench", EXIT_DATABASE)
        if isinstance(exc, DatabaseOpenError):
            return cls(
                "not_a_database",
                str(exc),
                "check --db / $PLAYBOOK_DB points at a playbook file",
                EXIT_DATABASE,
            )
        if isinstance(exc, StoreError):
            return cls("not_found" if "no " in str(exc) else "invalid_input", str(exc))
        import sqlite3

        if isinstance(exc, sqlite3.DatabaseError):
            return cls("database_error", f"database error: {exc}", None, EXIT_DATABASE)
        if isinstance(exc, OSError):
            return cls("file_error", f"{exc.strerror or exc}: {exc.filename or ''}".strip(": "))
        return None


def fail(err: CliError) -> int:
    from ..inert import dumps, inert

    if state.json:
        body = {"code": err.code, "message": err.message, "hint": err.hint}
        sys.stdout.write(dumps({"ok": False, "error": body}) + "\n")
    line = f"playbook: error: {inert(err.message, one_line=True)}"
    if err.hint:
        line += f" ({inert(err.hint, one_line=True)})"
    sys.stderr.write(line + "\n")
    return err.exit_code


def emit(data: Any, human: str | None = None) -> None:
    """Print a command's result: the JSON envelope, or the human text."""
    from ..inert import dumps

    if state.json:
        sys.stdout.write(dumps({"ok": True, "data": data}) + "\n")
    elif human is not None:
        sys.stdout.write(human if human.endswith("\n") else human + "\n")


def default_db_path() -> Path:
    base = os.environ.get("XDG_DATA_HOME") or str(Path.home() / ".local" / "share")
    return Path(base) / "playbook" / "state.sqlite3"


def db_path() -> Path:
    if state.db:
        return Path(state.db).expanduser()
    return default_db_path()


@contextmanager
def open_store(*, create: bool = True) -> Iterator[PlaybookStore]:
    """The store at the resolved path. Reads of a missing file are a user error."""
    from ..store import PlaybookStore, connect

    path = db_path()
    if not path.exists():
        if not create:
            raise CliError(
                "no_database",
                f"no playbook at {path}",
                "run 'playbook init' or pass --db / set $PLAYBOOK_DB",
            )
        path.parent.mkdir(parents=True, exist_ok=True)
    conn = connect(path)
    try:
        yield PlaybookStore(conn)
    finally:
        conn.close()
