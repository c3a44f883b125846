"""What the workbench shows: the playbook read for the panes in the poll worker
(`read_changes`), applied on the UI thread (`apply`), read again at once when the moment
shown moves (`read_now`), and the tab labels and the top bar's "live" mark drawn from it.

The proposals' nearest existing bullets (the Proposals pane's box beside a new rule) are
not on the first paint's path: once a snapshot is on screen, a worker of their own reads
them (`read_similar`) and `similar_read` swaps them in, unless another snapshot is shown
by then. Meanwhile a proposal shows those read for it in the snapshot before, or that
they are being looked for. A refresh that changed nothing the search reads (an agent's
mark, most of the time: no bullet added, no proposal changed) searches again only for the
proposals new to the queue (`Snapshot.carry_similar`)."""

from __future__ import annotations

import time
from collections.abc import Callable, Hashable
from datetime import datetime
from functools import partial
from typing import TYPE_CHECKING

from rich.text import Text
from textual.app import App
from textual.widgets import Static, TabbedContent
from textual.worker import Worker, get_current_worker

from ..core.collector import paused
from ..core.policy import Policy
from ..store.views import BulletRow
from . import format as fmt
from . import reading
from .actions.spec import Context
from .data import Source, TableNow
from .detailing import Detail
from .filtering import INDEX_FROM
from .messages import IndexReady, LoadFailed, SimilarRead, SnapshotLoaded
from .ordering import RowIndex
from .panes.base import Pane
from .panes.proposals import ProposalsPane
from .refresh import Refresh
from .screens.hidden import HiddenScreen
from .threads import in_thread
from .travel import Travel

if TYPE_CHECKING:
    from ..review.proposals import Proposal


class Snapshots:
    """Given the app (messages, batch updates, the top bar, the screen shown), the playbook,
    the policy, the panes (kept from mount), the live refresh, time travel, the Detail
    controller, when the proposals were last looked at (`seen_at`) and what marks them
    looked at, and whether the screen is narrow."""

    def __init__(
        self,
        app: App[None],
        source: Source,
        policy: Policy,
        *,
        panes: Callable[[], list[Pane]],
        live: Refresh,
        travel: Travel,
        detail: Detail,
        seen_at: Callable[[], datetime | None],
        looked_at_proposals: Callable[[], None],
        narrow: Callable[[], bool],
    ) -> None:
        self.app = app
        self.source = source
        self.policy = policy
        self.panes = panes
        self.live = live
        self.travel = travel
        self.detail = detail
        self.seen_at = seen_at
        self.looked_at_proposals = looked_at_proposals
        self.narrow = narrow
        self.snapshot: reading.Snapshot | None = None
        self.rows_by_id: dict[str, BulletRow] = {}
        self.context = Context({}, policy)
        self._now_cache: tuple[Hashable, reading.Snapshot] | None = None  # back from travel
        self._then_cache: tuple[Hashable, reading.Snapshot] | None = None  # last moment back
        self.loads = 0  # snapshots applied (tests and the bench wait on this)
        self.first_paint = False  # the first snapshot is on screen
        source.keep_tables(self.kept_table)  # then-vs-now reads them (`CompareScreen`)

    def read_changes(self, version: Hashable, worker: Worker[None]) -> bool:
        """In the poll worker: the playbook as of the moment shown, each pane's part."""
        as_of = self.travel.as_of
        with paused():  # a whole playbook's rows, read and ordered (`core.collector`)
            snapshot = reading.load_snapshot(self.source, last_looked=self.seen_at(), as_of=as_of)
            snapshot.same_texts(self.snapshot)  # here, not on the UI thread (`carry_similar`)
            prepared = {pane.TAB: pane.prepare(snapshot) for pane in self.panes()}
        if worker.is_cancelled:
            return False
        self.app.post_message(SnapshotLoaded(snapshot, version, prepared))
        return True

    def apply(self, message: SnapshotLoaded) -> bool:
        """On the UI thread: what was read, on every pane. False when it was read for
        another moment (then read again for this one)."""
        app, snap = self.app, message.snapshot
        if snap.as_of != self.travel.as_of:
            self.live.poll_done()
            self.read_now()
            return False
        snap.carry_similar(self.snapshot)
        self.snapshot = snap
        if snap.as_of is None:
            self._now_cache = (message.version, snap)
        else:
            self._then_cache = (message.version, snap)
        self.rows_by_id = snap.rows_by_id
        self.context = ctx = Context(snap.rows_by_id, self.policy, snap.as_of)
        tabs = app.query_one(TabbedContent)
        with app.batch_update():
            for pane in self.panes():
                pane.apply(snap, ctx, message.prepared.get(pane.TAB))
            if tabs.active == "proposals" and snap.as_of is None:
                self.looked_at_proposals()
            self.labels(snap)
        self.live.version = message.version
        self.loads += 1
        self.first_paint = True
        if self.detail.detail_id and tabs.active == "detail":
            self.detail.load(self.detail.detail_id)
        if isinstance(app.screen, HiddenScreen):
            app.screen.set_context(ctx)  # an action taken there: read its list again
        app.refresh_bindings()
        self.live.poll_done()
        app.call_after_refresh(self.travel.read_ahead)  # after this frame, as below
        app.workers.cancel_group(app, "similar")  # read for a snapshot no longer shown
        if len(snap.rows_by_id) >= INDEX_FROM:  # after this frame, as below
            app.call_after_refresh(self._build_index, snap)
        due = snap.similar_due()
        if due:  # after this frame: the first paint does not wait for them
            app.call_after_refresh(self._read_similar, snap, due)
        return True

    def _build_index(self, snap: reading.Snapshot) -> None:
        """The bullets' index (fast filtering and sorting), in a worker once the snapshot
        is on screen: built beside the read, it held the interpreter while the first frame
        of a step back waited (1.5 s at 100k rules on a busy machine)."""
        if snap is self.snapshot and not self.live.closing:
            in_thread(self.app, partial(self._index_worker, snap.rows_by_id), "index")

    def _index_worker(self, rows: dict[str, BulletRow]) -> None:
        with paused():
            index = RowIndex(rows)
        self.app.post_message(IndexReady(index))

    def _read_similar(self, snap: reading.Snapshot, due: list[Proposal]) -> None:
        if snap is self.snapshot and not self.live.closing:
            in_thread(self.app, partial(self._similar_worker, snap, due), "similar")

    def _similar_worker(self, snap: reading.Snapshot, due: list[Proposal]) -> None:
        worker = get_current_worker()
        try:
            found = reading.read_similar(self.source, due, lambda: worker.is_cancelled)
        except Exception as exc:  # said; the next snapshot reads them again
            self.app.post_message(LoadFailed(f"could not read the rules near proposals: {exc}"))
            return
        if found is not None and not worker.is_cancelled:
            self.app.post_message(SimilarRead(snap, found))

    def similar_read(self, message: SimilarRead) -> None:
        """On the UI thread: the proposals' nearest bullets, into the snapshot they were
        read for (kept for coming back to now) and the Proposals pane, if it is still the
        snapshot shown (one shown again later reads them again)."""
        snap = message.snapshot
        if snap is not self.snapshot:
            return
        snap.similar_found(message.found)
        for pane in self.panes():
            if isinstance(pane, ProposalsPane):
                pane.similar_read(snap.proposals, snap.similar_unknown)

    def kept_table(self, as_of: datetime | None) -> TableNow | None:
        """The rows of the last snapshot of now (`as_of` None) or of the moment `as_of`,
        with the moment they were scored at, if nothing has been written since its read
        began: the watcher's change token is still the one read before it
        (`Refresh.unchanged_since`) and no write of this workbench has closed since. From
        any thread (then-vs-now's worker); None when in doubt."""
        cached = self._now_cache if as_of is None else self._then_cache
        if cached is None:
            return None
        version, snap = cached
        at = snap.read_at if as_of is None else snap.as_of
        if at is None or snap.as_of != as_of or snap.writes != self.source.writes:
            return None
        if not self.live.unchanged_since(version):
            return None
        return snap.rows, at

    def read_now(self) -> None:
        """Read the playbook at once (time travel moved), whatever the change token says.
        Back at now, the last snapshot of now shows at once, and the poll reads again only
        if anyone wrote since."""
        cached = self._now_cache
        if self.travel.as_of is None and cached is not None:
            self.live.version = cached[0]
            self.app.post_message(SnapshotLoaded(cached[1], cached[0]))
            self.live.poll()
            return
        self.live.version = None
        self.live.poll()

    def relabel(self) -> None:
        if self.snapshot is not None:
            self.labels(self.snapshot)

    def labels(self, snap: reading.Snapshot) -> None:
        """The tabs' labels (their counts) and the top bar's "live" mark."""
        narrow = self.narrow()
        tabs = self.app.query_one(TabbedContent)
        for pane in self.panes():
            tabs.get_tab(pane.TAB).label = pane.label(snap, narrow)
        live = Text()
        live.append("live ", style=fmt.GOOD)
        live.append(f"{time.strftime('%H:%M:%S')}", style=fmt.MUTED)
        if not narrow:
            live.append(f"  read in {snap.seconds * 1000:.0f} ms ", style=fmt.MUTED)
        self.app.query_one("#live", Static).update(live)
