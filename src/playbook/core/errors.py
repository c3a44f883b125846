"""Playbook's own error types, each with a stable `code`.

Every error a user can cause, or a database state a user must act on, is a `PlaybookError`.
Its `code` is the `error.code` of the CLI's JSON errors (README, "Error codes") and the key
by which each surface (CLI, MCP, workbench) decides how to report it: by type and code, never
by the text of the message. Driver errors (sqlite3, later psycopg) never leave the store
package; it translates them into the `DatabaseError` family below.

Subclasses in other modules (`InvalidDelta`, `QueueError`, `InvalidImport`, ...) pick their
code by their base class.
"""

from __future__ import annotations

from typing import ClassVar


class PlaybookError(Exception):
    """Base of every error Playbook reports to a person or an agent as one plain line."""

    code: ClassVar[str] = "error"
    hint: str | None = None

    def __init__(self, message: str = "", *, hint: str | None = None) -> None:
        super().__init__(message)
        if hint is not None:
            self.hint = hint


# ------------------------------------------------------------------ the request is wrong


class UsageError(PlaybookError, ValueError):
    """The way Playbook was called is wrong (an empty --db, an unknown URL scheme)."""

    code = "usage"


class InvalidInput(PlaybookError, ValueError):
    """A value is rejected (a bad delta, a bad outcome report, a wrong state)."""

    code = "invalid_input"


class StoreError(InvalidInput):
    """A request the store cannot carry out (unknown id, wrong state): a user error."""


class NotFound(StoreError):
    """No bullet, block, conflict or proposal with that id."""

    code = "not_found"


class Refused(StoreError):
    """An action reserved to a human was asked by an agent."""

    code = "refused"


class PermissionDenied(Refused):
    """The database itself refused the write: the connection's role may not do it (an
    agent's role approving, pinning or blocking, say, on a PostgreSQL playbook)."""

    code = "permission_denied"
    hint = "connect as a reviewer's role to do this (see 'playbook pg roles')"


class InvalidImportError(InvalidInput):
    """A file cannot be imported; nothing was written."""

    code = "invalid_import"


class DatabaseNotEmptyError(StoreError):
    """An import that needs an empty database found a playbook in it."""

    code = "database_not_empty"


# ------------------------------------------------------------- the database is unusable


class DatabaseError(PlaybookError, RuntimeError):
    """The database cannot be used as asked (also importable as `SchemaError`)."""

    code = "database_error"


class SchemaTooNewError(DatabaseError):
    """Written by a newer Playbook: left untouched."""

    code = "schema_too_new"
    hint = "upgrade Playbook: git pull in its clone, then pip install -e . into its venv"


class DatabaseOpenError(DatabaseError):
    """The file is not a usable SQLite database (not SQLite, corrupt, unreadable)."""

    code = "not_a_database"
    hint = "check --db / $PLAYBOOK_DB points at a playbook file"


class DatabaseDamaged(DatabaseOpenError):
    """SQLite found a damaged page or index: `playbook doctor` says what and how to recover."""

    code = "database_damaged"
    hint = "run 'playbook doctor' to check it and see how to recover"


class NoDatabase(DatabaseError):
    """A command that needs an existing playbook found no file."""

    code = "no_database"
    hint = "run 'playbook init' or pass --db / set $PLAYBOOK_DB"


class NotAPlaybook(DatabaseError):
    """A database that holds no playbook (another program's file): never written to."""

    code = "not_a_playbook"
    hint = "run 'playbook init' to add a playbook to it, or check --db / $PLAYBOOK_DB"


class ReadOnlyPlaybook(DatabaseError):
    """The playbook can be read but not written (read-only file, folder or mount)."""

    code = "read_only"
    hint = "read commands still work; copy the file somewhere writable to change it"


class DiskFull(DatabaseError):
    """The disk (or the quota) is full; the failed write changed nothing."""

    code = "disk_full"
    hint = "free some space and run the command again"


class CannotOpen(DatabaseError):
    """The database cannot be opened or created (a missing folder, no permission, a
    PostgreSQL server that does not answer or refuses the login)."""

    code = "cannot_open"


class DatabaseBusy(DatabaseError):
    """Another process held the database past the busy timeout."""

    code = "database_error"
    hint = "another process holds the database"


class ConnectionLost(DatabaseError):
    """The connection to the database server broke (a restart, a terminated backend): what
    was under way failed whole (a transaction is never half-applied), and the next request
    connects again."""

    code = "connection_lost"
    hint = "run it again once the server is back (an outcome's receipt makes that safe)"


class ConstraintError(DatabaseError):
    """A write broke a rule of the schema (a duplicate key, the append-only log)."""


class SchemaTooOld(DatabaseError):
    """A read-only open met a playbook whose schema must be upgraded first."""

    code = "schema_too_old"
    hint = "run 'playbook init' (or any write command) to upgrade it"


class BackendUnavailable(DatabaseError):
    """The target names a database backend this installation cannot use."""

    code = "backend_unavailable"


SchemaError = DatabaseError  # the name SPEC-era code catches: every unusable-database error

__all__ = [
    "BackendUnavailable",
    "CannotOpen",
    "ConnectionLost",
    "ConstraintError",
    "DatabaseBusy",
    "DatabaseDamaged",
    "DatabaseError",
    "DatabaseNotEmptyError",
    "DatabaseOpenError",
    "DiskFull",
    "InvalidImportError",
    "InvalidInput",
    "NoDatabase",
    "NotAPlaybook",
    "NotFound",
    "PermissionDenied",
    "PlaybookError",
    "ReadOnlyPlaybook",
    "Refused",
    "SchemaError",
    "SchemaTooNewError",
    "SchemaTooOld",
    "StoreError",
    "UsageError",
]


def install_hint(extra: str) -> str:
    """How to add an optional extra (`postgres`, `mcp`), as the README's install steps say:
    Playbook is installed from its clone (it is not on PyPI), into the venv it runs from."""
    return f"in Playbook's clone, into the venv it runs from: pip install -e '.[{extra}]'"
