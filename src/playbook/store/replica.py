"""Reads from a streaming replica of a PostgreSQL playbook (`--read-db`, `$PLAYBOOK_READ_DB`).

A team's hot reads (recall, the prompt hook, the workbench's snapshots, exports) can be
served by a hot standby of the primary while every write goes to the primary. This module
is the store's side of it; which surface reads where is the surfaces' choice (README,
"Reading from a replica").

* `check_read_target(primary, replica)`: the pair as a surface was given it, refused with a
  `UsageError` when it cannot work: the replica must be a `postgresql://` URL (a file is no
  replica), and so must the primary (a SQLite playbook has no replica).
* `open_replica(replica, ...)`: the playbook on the replica, opened read-only (`mode="read"`:
  every transaction read-only, `default_transaction_read_only`; a hot standby refuses writes
  anyway), with a short connection timeout (`REPLICA_CONNECT_TIMEOUT`, unless the URL sets
  `connect_timeout`) so that an unreachable replica costs a hook little before the caller
  falls back to the primary. `Unreachable` is the errors that mean "read the primary
  instead"; any other (no playbook there, a newer schema) is the caller's to report.
* `store.replication` (`replication.py`): read-your-own-writes for a long-lived process (the
  workbench): after a write on the primary, its WAL position; a replica has the write once
  it has replayed that far.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from datetime import datetime
from typing import TYPE_CHECKING
from urllib.parse import parse_qsl, urlsplit, urlunsplit

from ..core import errors
from .target import Target, open_store, resolve_target

if TYPE_CHECKING:
    from ..core.policy import Policy
    from .store import PlaybookStore

__all__ = [
    "REPLICA_CONNECT_TIMEOUT",
    "Unreachable",
    "check_read_target",
    "open_replica",
]

REPLICA_CONNECT_TIMEOUT = 2  # seconds (libpq's smallest useful value), unless the URL says
# A replica that cannot be reached: read the primary instead.
Unreachable = (errors.CannotOpen, errors.ConnectionLost)


def check_read_target(
    primary: str | os.PathLike[str] | Target, replica: str | os.PathLike[str] | Target
) -> Target:
    """The replica as a `Target`, after the checks of the module doc (`UsageError`)."""
    if isinstance(replica, str) and not replica.strip():
        raise errors.UsageError(
            'the read replica\'s URL is empty (--read-db "" or an empty $PLAYBOOK_READ_DB)'
        )
    read = resolve_target(replica)
    if read.backend != "postgresql":
        raise errors.UsageError(
            f"--read-db must be the postgresql:// URL of a streaming replica, not a file ({read})"
        )
    if resolve_target(primary).backend != "postgresql":
        raise errors.UsageError(
            "--read-db needs a PostgreSQL playbook (--db postgresql://...): a SQLite "
            "playbook has no replica"
        )
    return read


def _with_timeout(url: str) -> str:
    parts = urlsplit(url)
    if any(k == "connect_timeout" for k, _ in parse_qsl(parts.query)):
        return url
    query = f"{parts.query}&" if parts.query else ""
    return urlunsplit(parts._replace(query=f"{query}connect_timeout={REPLICA_CONNECT_TIMEOUT}"))


def open_replica(
    replica: Target,
    policy: Policy | None = None,
    clock: Callable[[], datetime] | None = None,
) -> PlaybookStore:
    """The playbook on the replica, read-only (module doc); `Unreachable` when it cannot be
    reached. Messages name the URL as given (password masked), not the timeout added."""
    timed = Target("postgresql", _with_timeout(replica.location))
    try:
        return open_store(timed, policy, clock, mode="read")
    except errors.PlaybookError as exc:  # named as the user gave it, without the timeout
        exc.args = (str(exc).replace(str(timed), str(replica)), *exc.args[1:])
        raise
