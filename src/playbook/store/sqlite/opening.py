"""Opening a SQLite file in one of the three modes (see `store/sqlite/__init__.py`): the
PRAGMAs every connection gets, the read-only fallback, the WAL switch."""

from __future__ import annotations

import contextlib
import os
import sqlite3
import time
from pathlib import Path
from typing import Any
from urllib.parse import quote

from ...core import errors
from ..schema import MEMORY_LATEST, schema_version
from .dialect import BUSY_TIMEOUT_MS, MODES, Mode, translate
from .executor import SqliteExecutor

_URI_MODE = {"read": "ro", "write": "rw", "create": "rwc"}


def configure(conn: sqlite3.Connection) -> None:
    """The PRAGMAs every connection gets: busy timeout, foreign keys, synchronous."""
    conn.execute(f"PRAGMA busy_timeout={BUSY_TIMEOUT_MS}")
    conn.execute("PRAGMA foreign_keys=ON")
    conn.execute("PRAGMA synchronous=NORMAL")


def _uri(path: Path, **params: str) -> str:
    query = "&".join(f"{k}={v}" for k, v in params.items())
    return f"file:{quote(str(path.absolute()), safe='/')}" + (f"?{query}" if query else "")


def _raw(target: str, *, uri: bool) -> sqlite3.Connection:
    return sqlite3.connect(
        target,
        uri=uri,
        isolation_level=None,
        timeout=BUSY_TIMEOUT_MS / 1000,
        check_same_thread=False,
    )


def _touch(conn: sqlite3.Connection) -> str:
    """Read the header and the schema, so that a file that is not SQLite fails here, and
    return the journal mode."""
    conn.execute("SELECT COUNT(*) FROM sqlite_master").fetchone()
    return str(conn.execute("PRAGMA journal_mode").fetchone()[0]).lower()


def _io_error(exc: sqlite3.Error) -> bool:
    """An I/O error (a full disk makes the lock files fail so)."""
    code = getattr(exc, "sqlite_errorcode", None)
    return isinstance(code, int) and code & 0xFF in (sqlite3.SQLITE_IOERR, sqlite3.SQLITE_FULL)


def _cannot_lock(exc: sqlite3.Error) -> bool:
    """A WAL file in a folder we cannot write: readable only as an immutable file."""
    code = getattr(exc, "sqlite_errorcode", None)
    return code in (sqlite3.SQLITE_READONLY_DIRECTORY, sqlite3.SQLITE_CANTOPEN)


def open_sqlite(path: str | Path, mode: Mode = "create") -> SqliteExecutor:
    """Open `path` as the store expects it (see the module's docstring for the modes).

    Raises the `playbook.core.errors` type for what went wrong: `NoDatabase` (read/write of a
    missing file), `CannotOpen`, `DatabaseOpenError` (not SQLite), `DiskFull`, ...
    """
    if mode not in MODES:
        raise ValueError(f"mode must be one of {', '.join(MODES)}, not {mode!r}")
    label = str(path)
    memory = label == ":memory:" or label.startswith("file::memory:")
    p = Path(path)
    if not memory:
        if mode != "create" and not p.exists():
            raise errors.NoDatabase(f"no playbook at {p}")
        if p.is_dir():
            # The user named a folder, not a file in it: their mistake to mend (exit 1).
            raise errors.NotAPlaybook(
                f"{p} is a directory, not a playbook file",
                hint=f"name a file in it, e.g. --db {p / 'state.sqlite3'}",
            )
        if p.exists() and not p.is_file():  # a FIFO would hang the open; a device, worse
            raise errors.CannotOpen(
                f"cannot open {p}: it is not a regular file (a pipe, a device or a socket), "
                "and a playbook is one"
            )
        if mode == "create" and not p.exists():
            from ...core.files import create_private  # lazy: mark, recall, every hook (a new file)

            # 0600: the log of what agents did is nobody else's (SQLite's own open then says
            # what is wrong, if something is)
            with contextlib.suppress(OSError):
                create_private(p)
    read_only = mode == "read"
    logs = [] if memory else [p.with_name(p.name + s) for s in ("-wal", "-shm")]
    had = [f for f in logs if f.exists()]
    empty_log = not logs or not logs[0].exists() or logs[0].stat().st_size == 0
    try:
        if memory:
            conn = _raw(label, uri=label.startswith("file:"))
        elif read_only:
            conn = _reader(p)
        else:
            conn = _raw(_uri(p, mode=_URI_MODE[mode]), uri=True)
        try:
            configure(conn)
            journal = _touch(conn)
        except sqlite3.Error as exc:
            conn.close()
            if _io_error(exc):  # a full disk: the lock files the open began, taken away
                for made in (f for f in logs if f not in had):
                    with contextlib.suppress(OSError):
                        made.unlink()
            full = read_only and empty_log and _io_error(exc)
            if memory or mode == "create" or not (_cannot_lock(exc) or full):
                raise
            # A WAL playbook in a folder we cannot write: SQLite cannot make its lock files,
            # so read it as an immutable file (nobody can change it there anyway). On a
            # full disk, the same for a read: with no log beside it, or an empty one, the
            # file is all there is.
            conn = _raw(_uri(p, mode="ro", immutable="1"), uri=True)
            configure(conn)
            journal = _touch(conn)
            read_only = True
        if mode == "create" and journal not in ("wal", "memory"):
            journal = _switch_to_wal(conn)
            if journal not in ("wal", "memory", ""):
                conn.close()
                raise errors.DatabaseOpenError(
                    f"{label}: could not switch to WAL journal mode ({journal})"
                )
    except sqlite3.Error as exc:
        err = translate(exc, label)
        if err is None:
            raise
        if type(err) is errors.DatabaseError:  # at open, an unknown failure: say where
            err = errors.DatabaseOpenError(f"{label}: not a usable SQLite database ({exc})")
        raise err from None
    return SqliteExecutor(conn, label=label, read_only=read_only)


def _reader(path: Path) -> sqlite3.Connection:
    """A connection that reads `path` and leaves nothing behind.

    A `mode=ro` reader of a WAL file makes the `-wal` and `-shm` files and cannot remove
    them when it closes, so a read command would leave two files beside the playbook. When
    there is no `-wal` (nobody is writing), a read-write connection with `query_only`
    writes nothing and, as the last one to close, removes the two files it made. When
    there is one (a writer is at work, or died leaving its log), `mode=ro` adds nothing to
    the files that are there and never checkpoints the log into the playbook; so it is
    too where the file cannot be written."""
    if not path.with_name(path.name + "-wal").exists():
        if not os.access(path, os.W_OK):
            # Nobody may write it (a read-only file: chmod 444, a backup): with no log
            # beside it, the file is all there is. Read as immutable: `mode=ro` would make
            # -wal and -shm files it cannot remove, read-only too, and every write after
            # the file is made writable again would fail on them.
            return _raw(_uri(path, mode="ro", immutable="1"), uri=True)
        try:
            conn = _raw(_uri(path, mode="rw"), uri=True)
            conn.execute("PRAGMA query_only=ON")
            return conn
        except sqlite3.Error:
            pass
    return _raw(_uri(path, mode="ro"), uri=True)


def _switch_to_wal(conn: sqlite3.Connection) -> str:
    """`PRAGMA journal_mode=WAL`, waiting out other processes that switch at the same time.

    On a new file the switch needs an exclusive lock, and SQLite reports "database is
    locked" at once, without its busy handler, when several processes open the file
    together; so retry (for up to the busy timeout) instead of calling the file unusable.
    A file written by a newer Playbook is left as it is (the journal mode is written into
    the file): the store refuses to use it. Returns the journal mode now ("" if left).
    """
    deadline = time.monotonic() + BUSY_TIMEOUT_MS / 1000
    delay = 0.001
    while True:
        try:
            mode = str(conn.execute("PRAGMA journal_mode").fetchone()[0]).lower()
            if mode == "wal":
                return mode
            if schema_version(SqliteExecutor(conn)) > MEMORY_LATEST:
                return ""
            return str(conn.execute("PRAGMA journal_mode=WAL").fetchone()[0]).lower()
        except sqlite3.OperationalError as exc:
            busy = getattr(exc, "sqlite_errorcode", 0) & 0xFF in (
                sqlite3.SQLITE_BUSY,
                sqlite3.SQLITE_LOCKED,
            )
            if not busy or time.monotonic() > deadline:
                raise
            time.sleep(delay)
            delay = min(delay * 2, 0.05)


def connect(path: str | Path) -> sqlite3.Connection:
    """A raw connection configured as the store expects (WAL, busy timeout, foreign keys),
    for the SPEC §2 API (`open_database`) and for tests; creates the file."""
    return open_sqlite(path, "create")._conn


def executor_of(db: Any) -> SqliteExecutor:
    """An executor for what the SPEC §2 API hands the store: a `sqlite_utils.Database`, a
    `sqlite3.Connection`, or an executor already."""
    if isinstance(db, SqliteExecutor):
        return db
    conn = db if isinstance(db, sqlite3.Connection) else getattr(db, "conn", None)
    if not isinstance(conn, sqlite3.Connection):
        raise TypeError(f"expected a playbook database, not {type(db).__name__}")
    label = ""
    try:
        row = conn.execute("PRAGMA database_list").fetchone()
        label = row[2] if row and row[2] else ""
    except sqlite3.Error:
        pass
    return SqliteExecutor(conn, label=label)
