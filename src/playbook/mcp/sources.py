"""Where `playbook mcp`'s tools read and write: the playbook (`--db`), and the streaming
replica named by `--read-db` / `$PLAYBOOK_READ_DB`, when there is one.

Every call opens a fresh connection (it sees other processes' latest writes). The writing
tools go to the primary. The reads an agent makes before and between tasks (`recall`,
`list_rules`, `playbook_stats`, the AGENTS.md resource) go to the replica, as the CLI's
`recall`, `stats` and exports do; `show_bullet` and `pending_proposals`, the reads that look
at what was just done, go to the primary, as the CLI's `show` and `proposals` do. A server
lives long, so it also reads its own writes as the workbench does: after a write it notes
the primary's WAL position, and its replica reads go to the primary until the replica has
replayed that far. A replica that cannot be reached is said on stderr (the client's log of
the server), once an outage, and the primary read instead; it is tried again `RETRY_AFTER`
seconds later, so that a replica that is down costs a call its connection timeout once, not
every time.
"""

from __future__ import annotations

import sys
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager, contextmanager
from typing import TYPE_CHECKING

from ..store.replica import Unreachable, open_replica

if TYPE_CHECKING:
    from ..core.policy import Policy
    from ..store import PlaybookStore, Target

RETRY_AFTER = 30.0  # seconds before a replica that could not be reached is tried again

# How a call opens the primary: `mcp.tools._store` (its checks and its answer to an older
# schema), given the target, the policy, and whether the call may create the playbook.
Opener = Callable[..., AbstractContextManager["PlaybookStore"]]


class Sources:
    """The primary and, when given, its replica (module doc)."""

    def __init__(self, db: Target, read: Target | None, policy: Policy | None) -> None:
        self.db = db
        self.read = read
        self.policy = policy
        self._lock = threading.Lock()
        self._wrote_at: str | None = None  # the primary's WAL position after our last write
        self._down_until = 0.0  # the replica could not be reached: not before then
        self._said = False

    @contextmanager
    def replica_or(self, primary: Opener, **how: bool) -> Iterator[PlaybookStore]:
        """The replica when there is one that has this server's writes; else `primary`."""
        store = self._replica() if self.read is not None else None
        if store is None:
            with primary(self.db, self.policy, **how) as store:
                yield store
            return
        with store:
            yield store

    @contextmanager
    def writing(self, store: PlaybookStore) -> Iterator[PlaybookStore]:
        """Around a write on the primary's `store`: then its WAL position is noted."""
        yield store
        if self.read is not None:
            position = store.replication.write_position()
            with self._lock:
                self._wrote_at = position

    def _replica(self) -> PlaybookStore | None:
        with self._lock:
            after, down = self._wrote_at, time.monotonic() < self._down_until
        if down or self.read is None:
            return None
        try:
            store = open_replica(self.read, self.policy)
        except Unreachable as exc:
            with self._lock:
                self._down_until = time.monotonic() + RETRY_AFTER
                said, self._said = self._said, True
            if not said:
                sys.stderr.write(
                    f"playbook mcp: the read replica is unreachable ({exc}); reading the "
                    f"primary (tried again every {RETRY_AFTER:.0f} s)\n"
                )
            return None
        with self._lock:
            self._said = False  # reached: a later outage is said again
        if after is not None:
            if not store.replication.replayed(after):
                store.close()
                return None
            with self._lock:
                if self._wrote_at == after:
                    self._wrote_at = None
        return store
