"""The Detail tab's side of the app: which bullet it shows, and its history read in a
thread worker while the pane shows what the snapshot already knows (never an empty pane)."""

from __future__ import annotations

from datetime import datetime

from textual import on, work
from textual.worker import get_current_worker

from . import reading
from .messages import DetailLoaded
from .panes.bullets import BulletsPane
from .panes.detail import DetailPane
from .refresh import LiveApp
from .screens.compare import CompareScreen


class DetailingApp(LiveApp):
    """Needs from the app: `detail_id`, `snapshot`, `row()`, `show_tab()` and
    `_update_labels()`."""

    detail_id: str | None = None  # the bullet Detail shows (set by the app)
    # Where escape in Detail goes back to: then and now's list (its moment and row), or
    # None for the bullets.
    detail_back: tuple[datetime, str] | None = None
    snapshot: reading.Snapshot | None = None

    @on(BulletsPane.Opened)
    def _opened(self, message: BulletsPane.Opened) -> None:
        self.open_bullet(message.bullet_id)

    @on(CompareScreen.OpenBullet)
    def _open_changed(self, message: CompareScreen.OpenBullet) -> None:
        self.open_bullet(message.bullet_id)
        self.detail_back = (message.since, message.key)

    @on(DetailPane.BackRequested)
    def _back(self) -> None:
        """Escape in Detail: back where the rule was opened from (then and now's list, on
        its row), else to the bullets."""
        back, self.detail_back = self.detail_back, None
        if back is not None:
            since, key = back
            self.push_screen(CompareScreen(self.source, since, select=key))
            return
        self.show_tab("bullets")

    def open_bullet(self, bullet_id: str) -> None:
        """Show a bullet in Detail: what the snapshot knows at once, its history when read."""
        self.detail_back = None
        self.detail_id = bullet_id
        self.query_one(DetailPane).loading(bullet_id, self.row(bullet_id))
        if self.snapshot is not None:
            self._update_labels(self.snapshot)
        self.show_tab("detail")
        self.load_detail(bullet_id)

    def load_detail(self, bullet_id: str) -> None:
        self._detail_worker(bullet_id)

    @work(thread=True, exclusive=True, exit_on_error=False, group="detail")
    def _detail_worker(self, bullet_id: str) -> None:
        detail = reading.load_detail(self.source, bullet_id)
        if not get_current_worker().is_cancelled:
            self.post_message(DetailLoaded(bullet_id, detail))

    @on(DetailLoaded)
    def _detail_loaded(self, message: DetailLoaded) -> None:
        if message.bullet_id == self.detail_id and not self.closing:
            self.query_one(DetailPane).show(message.detail)
