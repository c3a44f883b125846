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
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..core.record import Record

if TYPE_CHECKING:
    from ..core.policy import Policy
    from ..store import PlaybookStore, Target
    from ..store.sqlite.dialect import Mode

EXIT_OK = 0
EXIT_USER = 1  # the request cannot be carried out: bad id, bad input, no database yet
EXIT_USAGE = 2  # the command line is wrong: unknown option, missing argument
EXIT_DATABASE = 3  # the database cannot be used: not SQLite, newer schema, damaged, locked,
# read-only (for a write), disk full
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
    "not_a_playbook": EXIT_USER,
    "backend_unavailable": EXIT_USER,
    "database_not_empty": EXIT_USER,
    "refused": EXIT_USER,
    "permission_denied": EXIT_USER,
    "nothing_applied": EXIT_USER,
    "not_pending": EXIT_USER,
    "stale_proposal": EXIT_USER,
    "reflector_failed": EXIT_USER,
    "not_installed": EXIT_USER,
    "schema_too_new": EXIT_DATABASE,
    "not_a_database": EXIT_DATABASE,
    "database_error": EXIT_DATABASE,
    "database_damaged": EXIT_DATABASE,
    "read_only": EXIT_DATABASE,
    "disk_full": EXIT_DATABASE,
    "cannot_open": EXIT_DATABASE,
    "connection_lost": EXIT_DATABASE,
    "schema_too_old": EXIT_DATABASE,
    "internal": EXIT_INTERNAL,
}


# Hints the CLI adds to a library error of this code (the library's own hint wins).
_CLI_HINTS = {
    "database_not_empty": "import into a new file: playbook --db NEW.sqlite3 import FILE",
    "not_a_database": "check --db / $PLAYBOOK_DB points at a playbook file",
}


class _State(Record):
    db: str | None
    json: bool
    policy: str | None
    read_db: str | None  # --read-db (else $PLAYBOOK_READ_DB, read by `read_target`)

    def __init__(
        self,
        db: str | None = None,
        json: bool = False,
        policy: str | None = None,
        read_db: str | None = None,
    ) -> None:
        self.db = db
        self.json = json
        self.policy = policy
        self.read_db = read_db


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
        self.data: Any = None  # with --json, sent beside the error (a batch's outcomes)

    @classmethod
    def from_exception(cls, exc: BaseException) -> CliError | None:
        """The CliError for a known library error, or None (a bug: keep the traceback).

        Errors are classified by type: every `playbook.core.errors.PlaybookError` carries its
        stable `code` (and maybe a hint)."""
        from ..core.errors import PlaybookError  # lazy: --help
        from ..store import driver_error  # lazy: --help, every typer command

        if not isinstance(exc, PlaybookError):
            exc = driver_error(exc) or exc  # a driver error that escaped the store
        if isinstance(exc, PlaybookError):
            message = str(exc)
            if exc.code == "database_not_empty":
                message = f"{message}: {target()}"  # a URL's password masked
            return cls(exc.code, message, exc.hint or _CLI_HINTS.get(exc.code))
        pydantic = sys.modules.get("pydantic")
        if pydantic is not None and isinstance(exc, pydantic.ValidationError):
            # pydantic, on an argument such as --offset -1 or --session with invalid UTF-8
            first = exc.errors(include_url=False)[0]
            where = ".".join(str(p) for p in first["loc"])
            return cls("invalid_input", f"invalid {exc.title}: {where}: {first['msg']}")
        if isinstance(exc, UnicodeEncodeError):  # text that is not UTF-8 (bytes from argv)
            return cls("invalid_input", f"not valid Unicode text: {exc.reason}")
        if isinstance(exc, OSError):
            where = f": {exc.filename}" if exc.filename else ""
            return cls("file_error", f"{exc.strerror or exc}{where}")
        return None


def _error_body(err: CliError) -> dict[str, Any]:
    return {"code": err.code, "message": err.message, "hint": err.hint}


def fail(err: CliError) -> int:
    """Report a user error (JSON on stdout with --json; one line on stderr always)."""
    from ..core.inert import dumps, inert  # lazy: --help

    if state.json:
        doc: dict[str, Any] = {"ok": False, "error": _error_body(err)}
        if err.data is not None:  # e.g. a failed batch's per-delta outcomes
            doc["data"] = err.data
        sys.stdout.write(dumps(doc) + "\n")
        sys.stdout.flush()
    line = f"playbook: error: {inert(err.message, one_line=True)}"
    if err.hint:
        line += f" ({inert(err.hint, one_line=True)})"
    sys.stderr.write(line + "\n")
    return err.exit_code


def emit(data: Any, human: str | None = None) -> None:
    """Print a command's result: the JSON envelope, or the human text."""
    from ..core.inert import dumps  # lazy: --help

    if state.json:
        sys.stdout.write(dumps({"ok": True, "data": data}) + "\n")
    elif human is not None:
        sys.stdout.write(human if human.endswith("\n") else human + "\n")


def note(message: str) -> None:
    """A diagnostic for people (stderr), never part of the data."""
    from ..core.inert import inert  # lazy: --help

    sys.stderr.write(inert(message) + "\n")


def default_db_path() -> Path:
    from ..project.config import default_playbook_path  # lazy: --help, every typer command

    return default_playbook_path()


def db_target() -> str:
    """Where the playbook is: --db, else $PLAYBOOK_DB, else the project's config (found
    from the working folder: `project.config`), else the default path (a file path, or a
    `postgresql://` URL). An empty --db or $PLAYBOOK_DB is a usage error, never a silent
    fallback to the default; so is a project config that cannot be used."""
    if state.db is not None:  # --db comes first (`locate_playbook`): no project to look for
        given = state.db
    else:
        from ..project.config import (  # lazy: --help, mark, recall, every typer command
            ProjectConfigError,
            locate_playbook,
        )

        try:
            given = locate_playbook(None, Path.cwd()).target
        except ProjectConfigError as exc:
            raise CliError("invalid_input", str(exc)) from None
    if not given.strip():
        raise CliError(
            "usage",
            'the playbook location is empty (--db "" or an empty $PLAYBOOK_DB)',
            "give a file path or a postgresql:// URL, or unset $PLAYBOOK_DB for the default",
            EXIT_USAGE,
        )
    if given == ":memory:" or given.startswith("file::memory:"):
        raise CliError(
            "usage",
            f"{given} is a playbook in memory: it would be gone when the command ends, "
            "with whatever it wrote",
            "give a file path or a postgresql:// URL",
            EXIT_USAGE,
        )
    return given


def policy_path() -> str | None:
    """The policy file named by --policy, else $PLAYBOOK_POLICY, else None; an empty one is
    a usage error (as for --db), never a silent "no policy"."""
    given = state.policy
    if given is None and "PLAYBOOK_POLICY" in os.environ:
        given = os.environ["PLAYBOOK_POLICY"]
    if given is None:
        return None
    if not given.strip():
        raise CliError(
            "usage",
            'the policy file is empty (--policy "" or an empty $PLAYBOOK_POLICY)',
            "name a playbook.toml, or unset $PLAYBOOK_POLICY for the defaults",
            EXIT_USAGE,
        )
    return given


def target() -> Target:
    """Where the playbook is, resolved: a file or a database URL (never a URL taken for a
    path; an unknown scheme is a usage error). `str(target())` hides a URL's password."""
    from ..store import resolve_target  # lazy: --help, every typer command

    return resolve_target(db_target())


def db_path() -> Path:
    """The playbook file, for a command that needs a file (a URL is a usage error here)."""
    where = target()
    if not where.is_file:
        raise CliError("usage", f"this command needs a playbook file, not a database URL ({where})")
    return where.path


def load_policy_option() -> Policy | None:
    """The policy named by --policy / $PLAYBOOK_POLICY, or None for the defaults."""
    given = policy_path()
    if given is None:
        return None
    import tomllib  # lazy: --help, mark, recall, every typer command

    from pydantic import ValidationError  # lazy: --help, mark, recall, every typer command

    from ..core.policy_file import load_policy  # lazy: --help

    path = Path(given).expanduser()
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


def read_target() -> Target | None:
    """The read replica named by --read-db, else $PLAYBOOK_READ_DB, else None; refused (a
    usage error) when it is empty, a file, or beside a playbook that is not on PostgreSQL
    (`store.replica.check_read_target`). Checked by every command that opens the playbook,
    so a wrong pair is said at once, not only by the commands that read the replica."""
    given = state.read_db
    if given is None:
        given = os.environ.get("PLAYBOOK_READ_DB")
    if given is None:
        return None
    from ..store.replica import check_read_target  # lazy: --help, every typer command

    return check_read_target(db_target(), given)


@contextmanager
def open_store(
    *, create: bool = True, read_only: bool = False, replica: bool = False
) -> Iterator[PlaybookStore]:
    """The store at --db / $PLAYBOOK_DB / the default path, with --policy.

    `create` (writes such as add, mark, curate): make the folder and the file if needed.
    `create=False`: an existing playbook (else `no_database` / `not_a_playbook`).
    `read_only` (recall, show, stats...): an existing playbook, opened for reading only; it
    never writes, and works on a read-only file or folder.
    `replica` (with `read_only`: recall, stats, stale, diff, exports): read from the
    --read-db replica when one is given; one it cannot reach is said in one line on stderr
    and the primary read instead.
    """
    from ..store import open_store as open_target  # lazy: --help, every typer command

    policy = load_policy_option()
    mode: Mode = "read" if read_only else "create" if create else "write"
    read = read_target()
    if read is not None and replica and read_only:
        from ..store.replica import Unreachable, open_replica  # lazy: --help, every typer command

        try:
            opened = open_replica(read, policy)
        except Unreachable as exc:
            note(f"playbook: the read replica is unreachable ({exc}); reading the primary")
        else:
            with opened as store:
                yield store
            return
    with open_target(db_target(), policy, mode=mode) as store:
        yield store


def json_option() -> Any:
    import typer  # lazy: --help, mark, recall

    return typer.Option(False, "--json", help="Print one JSON document on stdout.")


def set_json(flag: bool) -> None:
    state.json = flag
