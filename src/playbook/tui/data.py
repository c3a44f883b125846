"""Where the workbench's playbook is: `Source` (opened afresh by every read and write, on
the calling thread) and `Watcher` (the one long-lived connection that notices commits).

No Textual here. What is read lives in `reading.py`, the writes in `writes.py`, the
bullets table's filter and order in `filterspec.py` and `ordering.py`.
"""

from __future__ import annotations

from collections.abc import Hashable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from ..core.policy import DEFAULT_POLICY, Policy
from ..store import PlaybookStore, open_store


def target(path: str | Path) -> str | Path:
    """A file as a Path; a database URL as it is (a URL is never a path)."""
    return path if isinstance(path, str) and "://" in path else Path(path)


@dataclass(frozen=True)
class Source:
    """The playbook the workbench shows (a file, or a `postgresql://` URL), scored with the
    policy the workbench was started with (`--policy` / `$PLAYBOOK_POLICY`, as the CLI
    does). Each `open()` is a new connection."""

    path: Path | str
    policy: Policy = DEFAULT_POLICY

    @contextmanager
    def open(self, *, migrate: bool = True) -> Iterator[PlaybookStore]:
        """`migrate=False`: for reading only (never writes, works on a read-only file)."""
        with open_store(self.path, self.policy, mode="write" if migrate else "read") as store:
            yield store

    def watcher(self) -> Watcher:
        return Watcher(self.path)


class Watcher:
    """A long-lived read-only store whose only job is `change_token()`.

    The token changes when anyone commits. SQLite: `PRAGMA data_version` (in WAL mode the
    main file's mtime does not move), microseconds per poll. PostgreSQL: the watcher
    LISTENs to the playbook's channel and the token counts the NOTIFYs every writer sends
    on commit; reading it asks the server nothing. Used by one poll at a time (the app
    never lets polls overlap).
    """

    def __init__(self, path: Path | str) -> None:
        self.store = open_store(path, mode="read")
        self.store.listen()

    def version(self) -> Hashable:
        return self.store.change_token()

    def close(self) -> None:
        self.store.close()
