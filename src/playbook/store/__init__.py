"""The store kit: one SQLite file, namespaced migrations, and the PlaybookStore."""

from __future__ import annotations

import sqlite3
from pathlib import Path
from typing import TYPE_CHECKING

from .schema import (
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
        mode = conn.execute("PRAGMA journal_mode=WAL").fetchone()
        conn.execute("PRAGMA foreign_keys=ON")
        conn.execute("PRAGMA synchronous=NORMAL")
        # Touch the schema so that a file which is not SQLite fails here, clearly.
        conn.execute("SELECT COUNT(*) FROM sqlite_master").fetchone()
    except sqlite3.DatabaseError as exc:
        raise DatabaseOpenError(f"{path}: not a usable SQLite database ({exc})") from None
    if mode and str(mode[0]).lower() not in ("wal", "memory"):
        raise DatabaseOpenError(f"{path}: could not switch to WAL journal mode ({mode[0]})")
    return conn


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
