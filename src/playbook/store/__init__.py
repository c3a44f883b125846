"""The store kit: one SQLite file, namespaced migrations, and the PlaybookStore."""

from __future__ import annotations

import sqlite3
import time
from pathlib import Path
from typing import TYPE_CHECKING

from .schema import (
    MEMORY_LATEST,
    Migration,
    SchemaError,
    SchemaTooNewError,
    memory_migration,
    run_migrations,
    schema_version,
)
from .store import (
    BlockedPattern,
    Conflict,
    Decision,
    Evidence,
    Lineage,
    PlaybookStore,
    StoreError,
    iso,
    new_batch_id,
    parse_iso,
)

if TYPE_CHECKING:
    from sqlite_utils import Database

BUSY_TIMEOUT_MS = 30_000


class DatabaseOpenError(SchemaError):
    """The file is not a usable SQLite database (not SQLite, corrupt, unreadable)."""


def connect(path: str | Path) -> sqlite3.Connection:
    """A raw connection configured as the store expects: WAL, busy timeout, foreign keys.

    Transactions are explicit (`isolation_level=None`): the store issues BEGIN IMMEDIATE.
    """
    try:
        conn = sqlite3.connect(
            str(path), isolation_level=None, timeout=BUSY_TIMEOUT_MS / 1000, check_same_thread=False
        )
        conn.execute(f"PRAGMA busy_timeout={BUSY_TIMEOUT_MS}")
        mode = _switch_to_wal(conn)
        conn.execute("PRAGMA foreign_keys=ON")
        conn.execute("PRAGMA synchronous=NORMAL")
        # Touch the schema so that a file which is not SQLite fails here, clearly.
        conn.execute("SELECT COUNT(*) FROM sqlite_master").fetchone()
    except sqlite3.DatabaseError as exc:
        raise DatabaseOpenError(f"{path}: not a usable SQLite database ({exc})") from None
    if mode and str(mode[0]).lower() not in ("wal", "memory"):
        raise DatabaseOpenError(f"{path}: could not switch to WAL journal mode ({mode[0]})")
    return conn


def _switch_to_wal(conn: sqlite3.Connection) -> tuple[str] | None:
    """`PRAGMA journal_mode=WAL`, waiting out other processes that switch at the same time.

    On a new file the switch needs an exclusive lock, and SQLite reports "database is
    locked" at once, without its busy handler, when several processes open the file
    together; so retry (for up to the busy timeout) instead of calling the file unusable.
    """
    deadline = time.monotonic() + BUSY_TIMEOUT_MS / 1000
    delay = 0.001
    while True:
        try:
            row = conn.execute("PRAGMA journal_mode").fetchone()
            if row and str(row[0]).lower() == "wal":
                return row  # already WAL (every open but the first): no lock needed
            if schema_version(conn) > MEMORY_LATEST:
                # A newer Playbook's file: the journal mode is written into the file, so
                # leave it as it is; PlaybookStore / run_migrations refuse to use it.
                return None
            return conn.execute("PRAGMA journal_mode=WAL").fetchone()
        except sqlite3.OperationalError as exc:
            if "locked" not in str(exc) or time.monotonic() > deadline:
                raise
            time.sleep(delay)
            delay = min(delay * 2, 0.05)


def open_database(path: str | Path) -> Database:
    """Open (or create) a playbook file as a `sqlite_utils.Database`."""
    from sqlite_utils import Database

    return Database(connect(path), execute_plugins=False)


__all__ = [
    "BlockedPattern",
    "Conflict",
    "DatabaseOpenError",
    "Decision",
    "Evidence",
    "Lineage",
    "Migration",
    "PlaybookStore",
    "SchemaError",
    "SchemaTooNewError",
    "StoreError",
    "connect",
    "iso",
    "memory_migration",
    "new_batch_id",
    "open_database",
    "parse_iso",
    "run_migrations",
    "schema_version",
]
