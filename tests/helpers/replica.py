"""A primary and a "replica" for the read-replica tests (tests/test_read_replica*.py): two
playbooks on the test server with different content, so that every answer says which
database it came from, and a URL where nothing listens (a replica that is down)."""

from __future__ import annotations

import socket

from playbook.curation import curate
from playbook.store import open_store

from .pg import fresh_target

PRIMARY_RULE = "Pin npm to 11 in release jobs"
REPLICA_RULE = "Cache the npm folder in release jobs"


def playbook_with(url: str, content: str) -> str:
    """Add one rule tagged npm to the playbook at `url` (made if needed); its id."""
    with open_store(url) as store:
        return curate(store, [{"type": "add", "content": content, "tags": ["npm"]}]).added[0]


def make_pair(pg_server: str, worker_id: str) -> tuple[str, str, str]:
    """(primary URL, "replica" URL, the primary's rule id): two playbooks, one rule each."""
    primary, replica = fresh_target(pg_server, worker_id), fresh_target(pg_server, worker_id)
    bid = playbook_with(primary, PRIMARY_RULE)
    playbook_with(replica, REPLICA_RULE)
    return primary, replica, bid


def closed_url() -> str:
    """A PostgreSQL URL on this machine where nothing listens (refused at once)."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    return f"postgresql://nobody@127.0.0.1:{port}/playbook"


def helpful_marks(url: str, bid: str) -> int:
    with open_store(url, mode="read") as store:
        return sum(1 for e in store.timeline(bid) if e.kind == "helpful")
