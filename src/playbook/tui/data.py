"""Where the workbench's playbook is: `Source` (opened afresh by every read and write, on
the calling thread) and `Watcher` (the one long-lived connection that notices commits).

No Textual here. What is read lives in `reading.py`, the writes in `writes.py`, the
bullets table's filter and order in `filterspec.py` and `ordering.py`.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING

from ..core.policy import DEFAULT_POLICY, Policy
from ..store import PlaybookStore, open_store, resolve_target
from ..store.replica import Unreachable, open_replica

if TYPE_CHECKING:
    from ..review.moments import Moments
    from ..store.views import BulletRow

# The bullets table of now as read at a moment, and that moment (`review.diff_since`'s `now`).
TableNow = tuple[Sequence["BulletRow"], datetime]


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
    # A streaming replica of the playbook (`--read-db`): what is opened for reading only
    # reads it, unless this workbench wrote something the replica has not replayed yet.
    read_path: str | None = None
    # The primary's WAL position after this workbench's last write, until the replica has it.
    wrote_at: list[str] = field(default_factory=list, compare=False, repr=False)
    _moments: list[Moments] = field(default_factory=list, compare=False, repr=False)
    # One entry per write context closed (`open()` for writing): a snapshot read before the
    # last one may not hold it (`writes`).
    _writes: list[None] = field(default_factory=list, compare=False, repr=False)
    # What answers `table_now` and `table_as_of` (the workbench's snapshots; none: nothing
    # is kept).
    _kept: list[Callable[[datetime | None], TableNow | None]] = field(
        default_factory=list, compare=False, repr=False
    )

    @property
    def moments(self) -> Moments:
        """What time travel keeps between moments for this playbook (`review.moments`)."""
        if not self._moments:
            from ..review.moments import Moments  # lazy: numpy: the workbench's first frame

            self._moments.append(Moments())
        return self._moments[0]

    @property
    def writes(self) -> int:
        """How many times this workbench has opened the playbook for writing and closed it
        since it started (a snapshot read before a write has closed may not hold it)."""
        return len(self._writes)

    def table_now(self) -> TableNow | None:
        """The bullets table of now this workbench holds, and the moment it was read at,
        when nothing has been written since (None: none kept, or read it again)."""
        return self._kept[0](None) if self._kept else None

    def table_as_of(self, when: datetime) -> Sequence[BulletRow] | None:
        """The bullets table as of `when` (`review.rows_as_of`) this workbench holds, when
        nothing has been written since it was read (None: none kept, or read it again)."""
        kept = self._kept[0](when) if self._kept else None
        return kept[0] if kept is not None else None

    def keep_tables(self, kept: Callable[[datetime | None], TableNow | None]) -> None:
        """What `table_now` (asking None) and `table_as_of` ask from now on (the
        workbench's snapshots)."""
        self._kept[:] = [kept]

    @contextmanager
    def open(self, *, migrate: bool = True, reads: bool = False) -> Iterator[PlaybookStore]:
        """`migrate=False`: for reading only (never writes, works on a read-only file). Either
        that or `reads` (a snapshot: opened as for writing when there is no replica): from
        the replica when there is one that has every write of this workbench."""
        wanted = reads or not migrate
        replica = self._replica() if wanted and self.read_path is not None else None
        if replica is not None:
            with replica:
                yield replica
            return
        try:
            with open_store(self.path, self.policy, mode="write" if migrate else "read") as store:
                yield store
                if migrate and not reads and self.read_path is not None:  # its reads wait
                    position = store.replication.write_position()
                    self.wrote_at[:] = [position] if position else []
        finally:
            if migrate and not reads:  # committed or not: a kept table is read again
                self._writes.append(None)

    def _replica(self) -> PlaybookStore | None:
        """The replica, when it can be reached and has replayed this workbench's writes."""
        try:
            store = open_replica(resolve_target(str(self.read_path)), self.policy)
        except Unreachable:
            return None  # the primary is read instead (the top bar says when it is lost)
        after = list(self.wrote_at)
        if after and not store.replication.replayed(after[0]):
            store.close()
            return None
        if after and self.wrote_at == after:
            self.wrote_at.clear()
        return store

    def watcher(self) -> Watcher:
        return Watcher(self.path, self.read_path)


class Watcher:
    """A long-lived read-only store whose only job is `change_token()`.

    The token changes when anyone commits. SQLite: `PRAGMA data_version` (in WAL mode the
    main file's mtime does not move), microseconds per poll. PostgreSQL: the watcher
    LISTENs to the playbook's channel and the token counts the NOTIFYs every writer sends
    on commit; reading it asks the server nothing. On a replica (which can neither LISTEN
    nor hear the primary's NOTIFYs) it reads the commit counter each poll, one short query:
    the token moves once the replica has replayed a commit, when a read would see it. Used
    by one poll at a time (the app never lets polls overlap).
    """

    def __init__(self, path: Path | str, read_path: str | None = None) -> None:
        if read_path is not None:
            try:
                self.store = open_replica(resolve_target(read_path))
                return
            except Unreachable:
                pass  # the primary is read instead: listen to it
        self.store = open_store(path, mode="read")
        self.store.listen()

    def version(self) -> Hashable:
        return self.store.change_token()

    def close(self) -> None:
        self.store.close()
