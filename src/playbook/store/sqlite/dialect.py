"""SQLite's dialect (the fragments are `store.dialect.SQLITE`), and the translation of
`sqlite3` errors into Playbook's own (`playbook.core.errors`)."""

from __future__ import annotations

import os
import sqlite3
from pathlib import Path
from typing import Literal

from ...core import errors

Mode = Literal["read", "write", "create"]
MODES: tuple[Mode, ...] = ("read", "write", "create")
BUSY_TIMEOUT_MS = 30_000

# ------------------------------------------------------------------ errors
_FOLLOW_UP = {  # primary result code -> the Playbook error for it
    sqlite3.SQLITE_BUSY: errors.DatabaseBusy,
    sqlite3.SQLITE_LOCKED: errors.DatabaseBusy,
    sqlite3.SQLITE_READONLY: errors.ReadOnlyPlaybook,
    sqlite3.SQLITE_CORRUPT: errors.DatabaseDamaged,
    sqlite3.SQLITE_FULL: errors.DiskFull,
    sqlite3.SQLITE_CANTOPEN: errors.CannotOpen,
    sqlite3.SQLITE_NOTADB: errors.DatabaseOpenError,
    sqlite3.SQLITE_CONSTRAINT: errors.ConstraintError,
}


def translate(exc: sqlite3.Error, label: str) -> errors.PlaybookError | None:
    """The Playbook error for a sqlite3 error met on `label` (a path), or None for a bug
    (misuse of the driver: a closed connection, a wrong parameter count)."""
    if not isinstance(exc, sqlite3.DatabaseError) or isinstance(exc, sqlite3.ProgrammingError):
        return None
    code = getattr(exc, "sqlite_errorcode", None)
    kind = _FOLLOW_UP.get(code & 0xFF) if isinstance(code, int) else None
    detail = str(exc)
    where = label or "the database"
    if kind is errors.DatabaseBusy:
        return errors.DatabaseBusy(f"{where}: {detail}")
    if kind is errors.ReadOnlyPlaybook:
        return errors.ReadOnlyPlaybook(f"the playbook at {where} is read-only ({detail})")
    if kind is errors.DatabaseDamaged:
        return errors.DatabaseDamaged(f"the playbook at {where} is damaged ({detail})")
    if kind is errors.DiskFull:
        return errors.DiskFull(f"the disk is full: could not write {where} ({detail})")
    if kind is errors.CannotOpen:
        return errors.CannotOpen(_cannot_open(label, detail))
    if kind is errors.DatabaseOpenError:
        return errors.DatabaseOpenError(f"{where}: not a usable SQLite database ({detail})")
    if kind is errors.ConstraintError:
        return errors.ConstraintError(detail)
    if code is None and isinstance(exc, sqlite3.IntegrityError):
        return errors.ConstraintError(detail)
    if isinstance(code, int) and code & 0xFF == sqlite3.SQLITE_IOERR and _disk_full(label):
        # SQLite says "disk I/O error" when its lock or log file cannot grow on a full disk
        return errors.DiskFull(f"the disk is full: could not write {where} ({detail})")
    return errors.DatabaseError(f"database error: {detail}")


def _disk_full(label: str) -> bool:
    """Whether the file system of `label` has (next to) no space left."""
    import shutil  # lazy: every hook (only a disk I/O error asks)

    if not label or label == ":memory:":
        return False
    try:
        return shutil.disk_usage(Path(label).parent).free < 64 * 1024
    except OSError:
        return False


def driver_error(exc: BaseException) -> errors.PlaybookError | None:
    """The Playbook error for a driver exception that escaped the store, or None."""
    return translate(exc, "") if isinstance(exc, sqlite3.Error) else None


def _cannot_open(label: str, detail: str) -> str:
    """Say what stands in the way of opening `label`, as far as the file system tells."""
    if not label or label == ":memory:":
        return f"cannot open the database ({detail})"
    path = Path(label)
    if not path.parent.exists():
        return f"cannot open {path}: the folder {path.parent} does not exist"
    if path.is_dir():
        return f"cannot open {path}: it is a directory, not a playbook file"
    if not path.exists() and not os.access(path.parent, os.W_OK):
        return f"cannot create {path}: the folder {path.parent} is not writable"
    return f"cannot open {path} ({detail})"
