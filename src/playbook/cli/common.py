"""What every command shares: where the database is, the JSON contract, errors.

The contract (README, "JSON output and exit codes"):

* With `--json`, a command prints exactly one JSON document on stdout:
  `{"ok": true, "data": ...}` or `{"ok": false, "error": {"code", "message", "hint"}}`.
* Without it, results go to stdout as text and every diagnostic to stderr.
* A user error is one plain line on stderr (`playbook: error: ...`), never a traceback.
* Exit codes: see EXIT_*; error codes: see ERROR_CODES.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from ..policy import Policy
    from ..store import PlaybookStore

EXIT_OK = 0
EXIT_USER = 1  # the request cannot be carried out: bad id, bad input, no database yet
EXIT_USAGE = 2  # the command line is wrong: unknown option, missing argument
EXIT_DATABASE = 3  # the database cannot be used: not SQLite, newer schema, corrupt, locked
EXIT_INTERNAL = 4  # a bug in Playbook: a traceback follows on stderr
EXIT_INTERRUPTED = 130

# Stable error codes (the `error.code` of a JSON error), with their exit code.
ERROR_CODES: dict[str, int] = {
    "usage": EXIT_USAGE,
    "not_found": EXIT_USER,
    "invalid_input": EXIT_USER,
    "invalid_json": EXIT_USER,
    "invalid_import": EXIT_USER,
    "invalid_policy": EXIT_USER,
    "file_not_found": EXIT_USER,
    "file_error": EXIT_USER,
    "no_database": EXIT_USER,
    "database_not_empty": EXIT_USER,
    "refused": EXIT_USER,
    "nothing_applied": EXIT_USER,
    "not_pending": EXIT_USER,
    "stale_proposal": EXIT_USER,
    "reflector_failed": EXIT_USER,
    "not_installed": EXIT_USER,
    "schema_too_new": EXIT_DATABASE,
    "not_a_database": EXIT_DATABASE,
    "database_error": EXIT_DATABASE,
    "internal": EXIT_INTERNAL,
}


# Library errors that are a user's mistake, by class name (so this module imports none of
# their modules): each becomes one plain line with this code.
_KNOWN_ERRORS = {
    "InvalidDelta": "invalid_input",
    "InvalidOutcome": "invalid_input",
    "TooLong": "invalid_input",
    "InvalidImport": "invalid_import",
    "SnapshotError": "invalid_import",
    "CassImportError": "invalid_import",
}


@dataclass
class _State:
    db: str | None = None
    json: bool = False
    policy: str | None = None


state = _State()


class CliError(Exception):
    """A user error: printed as one plain line (or a JSON error), never a traceback."""

    def __init__(
        self, code: str, message: str, hint: str | None = None, exit_code: int | None = None
    ) -> None:
        super().__init__(message)
        self.code = code
        self.message = message
        self.hint = hint
        self.exit_code = ERROR_CODES.get(code, EXIT_USER) if exit_code is None else exit_code

    @classmethod
    def from_exception(cls, exc: BaseException) -> CliError | None:
        """The CliError for a known library error, or None (a bug: keep the traceback)."""
        from ..store import DatabaseOpenError, SchemaTooNewError, StoreError

        if isinstance(exc, SchemaTooNewError):
            return cls("schema_too_new", str(exc), "upgrade playbook-workbench")
        if isinstance(exc, DatabaseOpenError):
            return cls(
                "not_a_database", str(exc), "check --db / $PLAYBOOK_DB points at a playbook file"
            )
        if isinstance(exc, StoreError):
            text = str(exc)
            code = "not_found" if text.startswith("no ") or " no " in text else "invalid_input"
            if type(exc).__name__ == "DatabaseNotEmpty":
                return cls(
                    "database_not_empty",
                    f"{text}: {db_path()}",
                    "import into a new file: playbook --db NEW.sqlite3 import FILE",
                )
            if type(exc).__name__ == "ApprovalRefused":
                code = "refused"
            return cls(code, text)
        if type(exc).__name__ == "ValidationError" and hasattr(exc, "errors"):
            # pydantic, on an argument such as --offset -1 or --session with invalid UTF-8
            first = exc.errors(include_url=False)[0]
            where = ".".join(str(p) for p in first["loc"])
            return cls("invalid_input", f"invalid {exc.title}: {where}: {first['msg']}")
        if isinstance(exc, UnicodeEncodeError):  # text that is not UTF-8 (bytes from argv)
            return cls("invalid_input", f"not valid Unicode text: {exc.reason}")
        by_name = _KNOWN_ERRORS.get(type(exc).__name__)
        if by_name is not None and isinstance(exc, ValueError):
            return cls(by_name, str(exc))
        import sqlite3

        if isinstance(exc, sqlite3.DatabaseError):
            hint = "another process holds the database" if "locked" in str(exc) else None
            return cls("database_error", f"database error: {exc}", hint)
        if isinstance(exc, OSError):
            where = f": {exc.filename}" if exc.filename else ""
            return cls("file_error", f"{exc.strerror or exc}{where}")
        return None


def _error_body(err: CliError) -> dict[str, Any]:
    return {"code": err.code, "message": err.message, "hint": err.hint}


def fail(err: CliError) -> int:
    """Report a user error (JSON on stdout with --json; one line on stderr always)."""
    from ..inert import dumps, inert

    if state.json:
        doc: dict[str, Any] = {"ok": False, "error": _error_body(err)}
        if getattr(err, "data", None) is not None:  # e.g. a failed batch's per-delta outcomes
            doc["data"] = err.data  # type: ignore[attr-defined]
        sys.stdout.write(dumps(doc) + "\n")
        sys.stdout.flush()
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


def note(message: str) -> None:
    """A diagnostic for people (stderr), never part of the data."""
    from ..inert import inert

    sys.stderr.write(inert(message) + "\n")


def default_db_path() -> Path:
    base = os.environ.get("XDG_DATA_HOME") or str(Path.home() / ".local" / "share")
    return Path(base) / "playbook" / "state.sqlite3"


def db_path() -> Path:
    if state.db:
        return Path(state.db).expanduser()
    return default_db_path()


def load_policy_option() -> Policy | None:
    """The policy named by --policy / $PLAYBOOK_POLICY, or None for the defaults."""
    if not state.policy:
        return None
    import tomllib

    from pydantic import ValidationError

    from ..policy import load_policy

    path = Path(state.policy).expanduser()
    try:
        return load_policy(path)
    except FileNotFoundError:
        raise CliError("file_not_found", f"no such policy file: {path}") from None
    except tomllib.TOMLDecodeError as exc:
        raise CliError("invalid_policy", f"{path}: not valid TOML ({exc})") from None
    except ValidationError as exc:
        err = exc.errors(include_url=False)[0]
        loc = ".".join(str(p) for p in err["loc"])
        raise CliError(
            "invalid_policy",
            f"{path}: {loc}: {err['msg']}",
            "see 'playbook policy show' for every setting",
        ) from None


@contextmanager
def open_store(*, create: bool = True) -> Iterator[PlaybookStore]:
    """The store at the resolved path. Reads of a missing file are a user error; writes
    create the file and its folder."""
    from ..store import PlaybookStore, connect

    path = db_path()
    policy = load_policy_option()
    if not path.exists():
        if not create:
            raise CliError(
                "no_database",
                f"no playbook at {path}",
                "run 'playbook init' or pass --db / set $PLAYBOOK_DB",
            )
        path.parent.mkdir(parents=True, exist_ok=True)
    elif path.is_dir():
        raise CliError("file_error", f"{path} is a directory, not a playbook file")
    conn = connect(path)
    try:
        yield PlaybookStore(conn, policy=policy) if policy else PlaybookStore(conn)
    finally:
        conn.close()


def json_option() -> Any:
    import typer

    return typer.Option(False, "--json", help="Print one JSON document on stdout.")


def set_json(flag: bool) -> None:
    state.json = flag
