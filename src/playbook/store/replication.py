"""Where a PostgreSQL database stands in streaming replication: read-your-own-writes for a
long-lived process that reads a replica (`replica.py`, the workbench's `Source`).

After a write on the primary, `write_position()` is the primary's WAL position; a replica
has that write once `replayed(position)`. A database that is no standby replays nothing and
never counts as having it (its reader keeps reading the primary); SQLite has no WAL
position (None).
"""

from __future__ import annotations

from .executor import Executor


class Replication:
    """`store.replication`: built with the store's executor."""

    def __init__(self, sql: Executor) -> None:
        self.sql = sql

    def write_position(self) -> str | None:
        """The primary's WAL position now, after this process's writes (None on SQLite)."""
        if self.sql.dialect.name != "postgresql":
            return None
        found = self.sql.scalar("SELECT pg_current_wal_lsn()::text")
        return str(found) if found is not None else None

    def replayed(self, position: str) -> bool:
        """Whether this database (a standby) has replayed the primary's WAL up to `position`
        (False when it is no standby, and on SQLite)."""
        if self.sql.dialect.name != "postgresql":
            return False
        found = self.sql.scalar(
            "SELECT pg_last_wal_replay_lsn() >= CAST(? AS pg_lsn)", (position,), default=None
        )
        return bool(found)
