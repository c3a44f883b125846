"""The tabs' controller: which tab is shown and focused, what opening Detail shows, and
the Proposals tab's "new since you last looked" (a per-user file, see seen.py)."""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime

from textual.app import App
from textual.widgets import TabbedContent

from .detailing import Detail
from .panes.base import Pane
from .panes.bullets import BulletsPane
from .panes.proposals import ProposalsPane
from .reading import Snapshot
from .seen import LastLooked


class Tabs:
    """Given the app (queries, bindings), the panes' classes in tab order, the per-user
    file of what was looked at, the bullets pane, the Detail controller, the snapshot read
    last, and the tab labels to draw again (`relabel`)."""

    def __init__(
        self,
        app: App[None],
        panes: tuple[type[Pane], ...],
        seen: LastLooked,
        *,
        bullets: Callable[[], BulletsPane],
        detail: Detail,
        snapshot: Callable[[], Snapshot | None],
        relabel: Callable[[], None],
    ) -> None:
        self.app = app
        self.panes = panes
        self.seen = seen
        self.seen_at: datetime | None = seen.get()  # the newest proposal looked at
        self.bullets = bullets
        self.detail = detail
        self.snapshot = snapshot
        self.relabel = relabel

    def show(self, tab: str) -> None:
        self.app.query_one(TabbedContent).active = tab
        self.focus(tab)

    def active(self) -> str:
        return self.app.query_one(TabbedContent).active

    def go(self, tab: str) -> None:
        """A tab's key: Detail, never shown yet, opens the bullet under the cursor."""
        if tab == "detail" and self.detail.detail_id is None:
            bid = self.bullets().current_bullet_id()
            if bid:
                self.detail.open_bullet(bid)
                return
        self.show(tab)

    def activated(self, tab: str) -> None:
        if tab != "detail":
            self.detail.detail_back = None  # left Detail another way: escape there means bullets
        self.focus(tab)
        if tab == "proposals":
            pane = self.app.query_one(ProposalsPane)
            pane.badge_since = self.seen_at  # what arrived since the last visit stays marked
            snap = self.snapshot()
            pane.new_ids = pane.new_badges(snap.proposals if snap else [])
            pane.table.refresh_rows()
            self.looked_at_proposals()
        if tab == "detail":
            shown = self.detail.detail_id
            bid = shown or self.bullets().current_bullet_id()
            if bid and bid != shown:
                self.detail.open_bullet(bid)
            elif bid:
                self.detail.load(bid)
        self.app.refresh_bindings()

    def looked_at_proposals(self) -> None:
        """The reviewer sees the queue: remember (per user) the newest proposal time shown,
        so the tab's "new" count starts again from here."""
        pane = self.app.query_one(ProposalsPane)
        newest = pane.newest_shown()
        if newest is not None and (self.seen_at is None or newest > self.seen_at):
            self.seen_at = newest
            self.seen.mark(newest)
        if pane.new_count:
            pane.new_count = 0
            self.relabel()

    def focus(self, tab: str) -> None:
        for pane in self.panes:
            if tab == pane.TAB:
                self.app.query_one(pane.FOCUS).focus()

    def filter_proposals(self, text: str) -> None:
        self.show("proposals")
        self.app.query_one(ProposalsPane).set_filter(text)
