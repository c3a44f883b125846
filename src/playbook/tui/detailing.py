"""The Detail tab's controller: which bullet it shows, and its history read in a thread
worker while the pane shows what the snapshot already knows (never an empty pane)."""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime
from functools import partial

from textual.app import App
from textual.worker import get_current_worker

from ..store.views import BulletRow
from . import reading
from .data import Source
from .messages import DetailLoaded
from .panes.detail import DetailPane
from .screens.compare import CompareScreen
from .threads import in_thread


class Detail:
    """Given the app (screens, workers), the playbook, the Detail pane, the rows read last
    (`row`), the tabs (`show_tab`) and the tab labels to draw again (`relabel`)."""

    def __init__(
        self,
        app: App[None],
        source: Source,
        *,
        pane: Callable[[], DetailPane],
        row: Callable[[str], BulletRow | None],
        show_tab: Callable[[str], None],
        relabel: Callable[[], None],
    ) -> None:
        self.app = app
        self.source = source
        self.pane = pane
        self.row = row
        self.show_tab = show_tab
        self.relabel = relabel
        self.detail_id: str | None = None  # the bullet Detail shows
        # Where escape in Detail goes back to: then and now's list (its moment and row), or
        # None for the bullets.
        self.detail_back: tuple[datetime, str] | None = None

    def open_bullet(self, bullet_id: str) -> None:
        """Show a bullet in Detail: what the snapshot knows at once, its history when read."""
        self.detail_back = None
        self.detail_id = bullet_id
        self.pane().show_loading(bullet_id, self.row(bullet_id))
        self.relabel()
        self.show_tab("detail")
        self.load(bullet_id)

    def open_changed(self, message: CompareScreen.OpenBullet) -> None:
        """A rule opened from then and now's list: escape comes back to it."""
        self.open_bullet(message.bullet_id)
        self.detail_back = (message.since, message.key)

    def back(self) -> None:
        """Escape in Detail: back where the rule was opened from (then and now's list, on
        its row), else to the bullets."""
        back, self.detail_back = self.detail_back, None
        if back is not None:
            since, key = back
            self.app.push_screen(CompareScreen(self.source, since, select=key))
            return
        self.show_tab("bullets")

    def load(self, bullet_id: str) -> None:
        in_thread(self.app, partial(self._load, bullet_id), "detail", exclusive=True)

    def _load(self, bullet_id: str) -> None:
        detail = reading.load_detail(self.source, bullet_id)
        if not get_current_worker().is_cancelled:
            self.app.post_message(DetailLoaded(bullet_id, detail))

    def loaded(self, message: DetailLoaded) -> None:
        if message.bullet_id == self.detail_id:
            self.pane().show(message.detail)
