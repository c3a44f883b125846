"""The curation workbench: `Workbench(path, policy=...).run()`.

One App holding plain controllers (`controllers.py` says which is given what): the live
refresh (`refresh.py`), actions (`acting.py`), the filter (`filtering.py`), time travel
(`travel.py`), Detail (`detailing.py`), the tabs (`tabs.py`) and what is on screen
(`snapshots.py`). The app lays out the tabs and keeps what Textual looks for on it (message
handlers, bindings, `action_*` methods), each forwarding to a controller. A pane posts a
typed message (`Pane.Requested`, `BulletsPane.FilterChanged`, ...) and never calls the app.
Actions come from one table (`actions/`): the rule there says what applies, `dialogs.py`
asks what the action needs to know, and the write runs in a thread worker through the same
API as the CLI.
"""

from __future__ import annotations

import time
from datetime import UTC, datetime
from pathlib import Path, PurePath
from typing import Any, ClassVar

from rich.text import Text
from textual import events, on
from textual.app import App, ComposeResult
from textual.binding import Binding, BindingType
from textual.command import CommandPalette, SearchIcon
from textual.containers import Horizontal
from textual.geometry import Size
from textual.widgets import Input, Static, TabbedContent, TabPane, TextArea

from ..core.policy import DEFAULT_POLICY, Policy
from ..store.views import BulletRow
from . import data, reading
from . import format as fmt
from . import messages as msg
from .actions.spec import Context
from .commands import PaletteCommand, WorkbenchCommands
from .controllers import build
from .palette import help_screen, workbench_commands
from .panes import registry
from .panes.base import Pane
from .panes.bullets import BulletsPane
from .panes.detail import DetailPane
from .panes.proposals import ProposalsPane
from .screens.compare import CompareScreen
from .screens.help import HelpScreen
from .search import find_bullets
from .seen import LastLooked
from .styles import TextStyles
from .theme import PLAYBOOK_THEME, VARIABLES
from .travel import TRAVEL_BINDINGS
from .widgets.footer import WorkbenchFooter
from .widgets.topbar import TopLabel

HERE = Path(__file__).parent
POLL_SECONDS = 0.5
NARROW_BELOW = 110  # columns: compact tabs and layouts below this width
SHORT_BELOW = 34  # rows: compact dialogs and a shorter chart below this height


class Workbench(App[None]):
    """Review, approve, pin and block: the human side of the playbook."""

    TITLE = "Playbook"
    SUB_TITLE = "curation workbench"
    CSS_PATH: ClassVar[list[str | PurePath]] = [HERE / "app.tcss", HERE / "text.tcss"]
    COMMANDS = App.COMMANDS | {WorkbenchCommands}
    # The styles of Rich text, named in format.py and styled in text.tcss (`styles.py`).
    COMPONENT_CLASSES: ClassVar[set[str]] = set(fmt.STYLE_NAMES)
    BINDINGS: ClassVar[list[BindingType]] = [
        *TRAVEL_BINDINGS,
        Binding(
            "ctrl+q",
            "quit",
            "Quit",
            tooltip="Quit, even while typing",
            show=False,
            priority=True,
            id="quit",
        ),
        Binding("q", "leave", "Quit", tooltip="Leave the workbench (ctrl+q anywhere)", id="leave"),
        Binding(
            "question_mark", "help", "Help", tooltip="Keys and what the numbers mean", id="help"
        ),
    ]

    def __init__(
        self,
        path: str | Path,
        *,
        policy: Policy | None = None,
        poll_seconds: float = POLL_SECONDS,
        label: str | None = None,
        note: str | None = None,
        seen: LastLooked | None = None,
        read_path: str | None = None,  # a streaming replica (--read-db): see `data.Source`
    ) -> None:
        self.policy = policy or DEFAULT_POLICY
        super().__init__()
        self.source = data.Source(data.target(path), self.policy, read_path)
        self.panes: tuple[type[Pane], ...] = registry.PANES  # the tabs, in order
        # 1…9 show the tabs; by id, as a user's keymap names them ("tab-bullets": App.bind
        # takes no id, so the bindings go straight into the app's map).
        for n, pane in enumerate(self.panes[:9], 1):
            self._bindings.key_to_bindings.setdefault(str(n), []).append(
                Binding(str(n), f"tab('{pane.TAB}')", pane.TITLE, show=False, id=f"tab-{pane.TAB}")
            )
        self.label = label or str(path)
        self.label_note = note  # said after the label when the top bar has room
        c = build(self, self, self.source, seen or LastLooked(path), poll_seconds=poll_seconds)
        self.live, self.acting, self.filtering = c.live, c.acting, c.filtering
        self.travel, self.detailing = c.travel, c.detailing
        self.tabs, self.snapshots = c.tabs, c.snapshots
        self._started = time.perf_counter()
        # The theme before the first style pass: set on mount, it restyled every widget.
        self.register_theme(PLAYBOOK_THEME)
        self.theme = "playbook"
        self.text_styles = TextStyles(self)

    def get_theme_variable_defaults(self) -> dict[str, str]:
        """The colours the .tcss files name beyond Textual's own, for every theme."""
        return {**super().get_theme_variable_defaults(), **VARIABLES}

    # ---------------------------------------------------------------- layout
    def compose(self) -> ComposeResult:
        self._fit_classes(self.size)  # before the first style pass (each change restyles all)
        self.text_styles.push()
        with Horizontal(id="topbar"):
            yield Static(" PLAYBOOK ", id="brand")
            yield TopLabel(self.label, self.label_note, id="dbpath")
            yield Static("", id="asof")
            yield Static("", id="live")
        with TabbedContent(id="tabs", initial=self.panes[0].TAB):
            for pane in self.panes:
                with TabPane(pane.TITLE, id=pane.TAB):
                    yield pane(id=f"{pane.TAB}-pane")
        yield WorkbenchFooter()

    def on_mount(self) -> None:
        self._bullets_pane = self.query_one(BulletsPane)
        self._panes = [self.query_one(f"#{pane.TAB}-pane", Pane) for pane in self.panes]
        self.query_one(ProposalsPane).badge_since = self.tabs.seen_at  # newer: a "new" badge
        for pane in self.action_panes():
            pane.set_context(self.context)  # the policy, before any row arrives
        self.query_one("#live", Static).update(Text("loading…", style=fmt.MUTED))
        self.query_one("#bullets-table").focus()
        self.theme_changed_signal.subscribe(self, self.text_styles.theme_changed)
        self.start()

    def start(self) -> None:
        """Begin showing the playbook (the demo builds it first)."""
        self.live.start()

    def _fit_classes(self, size: Size, *, update: bool = False) -> None:
        """The size classes, both in one style pass (and none when neither changes)."""
        self.update_classes(
            {"-narrow": size.width < NARROW_BELOW, "-short": size.height < SHORT_BELOW},
            update=update,
        )

    def on_resize(self, event: events.Resize) -> None:
        self._fit_classes(event.size, update=True)
        self.refresh_bindings()  # the footer fits its keys to the new width
        self.snapshots.relabel()

    def action_panes(self) -> list[Pane]:
        """The tabs' panes, in order (kept from mount: a worker reads them without a DOM
        query)."""
        return self._panes

    @property
    def narrow(self) -> bool:
        return self.size.width < NARROW_BELOW

    @property
    def bullets_pane(self) -> BulletsPane:
        """Kept from mount: workers read its (immutable) rows and view without a DOM query."""
        return self._bullets_pane

    # ---------------------------------------------------------------- actions
    @on(Pane.Requested)
    def _requested(self, message: Pane.Requested) -> None:
        self.perform(message.action, message.subject)

    def perform(self, name: str, subject: Any) -> None:
        self.acting.perform(name, subject)

    async def run_action(
        self, action: Any, default_namespace: Any = None, namespaces: Any = None
    ) -> bool:
        """A dimmed key, pressed, says why it does nothing here (instead of nothing)."""
        if isinstance(action, str):
            target, name, params = self._parse_action(
                action, self if default_namespace is None else default_namespace, namespaces
            )
            if self.acting.refused_key(target, name, params):
                return True
        return await super().run_action(action, default_namespace, namespaces)

    @on(msg.ActionDone)
    def _action_done(self, message: msg.ActionDone) -> None:
        self.acting.done(message)
        self.live.poll()  # show it at once, not at the next tick

    @on(msg.ActionFailed)
    def _action_failed(self, message: msg.ActionFailed) -> None:
        self.acting.failed(message)

    # ---------------------------------------------------------------- filter
    @on(BulletsPane.FilterChanged)
    def _filter_changed(self, message: BulletsPane.FilterChanged) -> None:
        self.filtering.rank(message.text)

    @on(msg.IndexReady)
    def _index_ready(self, message: msg.IndexReady) -> None:
        self.filtering.index_ready(message)

    @on(msg.FilterRanked)
    def _filter_ranked(self, message: msg.FilterRanked) -> None:
        self.filtering.ranked(message)

    @on(BulletsPane.TrendsWanted)
    def _trends_wanted(self, message: BulletsPane.TrendsWanted) -> None:
        self.filtering.want_trends(message.ids)

    @on(msg.TrendsLoaded)
    def _trends_loaded(self, message: msg.TrendsLoaded) -> None:
        if not self.closing:
            self.filtering.trends_loaded(message)

    def filter_applied(self, text: str) -> None:
        """Called after a filter's ranking reached the table (a hook for benchmarks)."""

    def set_filter(self, text: str) -> None:
        self.show_tab("bullets")
        self.query_one("#filter", Input).value = text

    def action_filter(self) -> None:
        self.show_tab("bullets")
        self.bullets_pane.action_focus_filter()

    # ---------------------------------------------------------------- time travel
    @property
    def as_of(self) -> datetime | None:
        """The moment shown (time travel), None: now."""
        return self.travel.as_of

    def now(self) -> datetime:
        return datetime.now(UTC)

    def travel_to(self, when: datetime | None) -> None:
        self.travel.travel_to(when)

    def action_time_travel(self) -> None:
        self.travel.ask_moment()

    def action_step(self, days: int) -> None:
        self.travel.step(days)

    def action_step_months(self, months: int) -> None:
        self.travel.step_months(months)

    def action_now(self) -> None:
        self.travel.travel_to(None)

    def action_compare(self) -> None:
        self.travel.compare()

    def action_hidden(self) -> None:
        self.travel.hidden(self.bullets_pane.view.spec.words, self.context)

    # ---------------------------------------------------------------- detail
    @on(BulletsPane.Opened)
    def _opened(self, message: BulletsPane.Opened) -> None:
        self.open_bullet(message.bullet_id)

    @on(CompareScreen.OpenBullet)
    def _open_changed(self, message: CompareScreen.OpenBullet) -> None:
        self.detailing.open_changed(message)

    @on(DetailPane.BackRequested)
    def _back(self) -> None:
        self.detailing.back()

    @on(msg.DetailLoaded)
    def _detail_loaded(self, message: msg.DetailLoaded) -> None:
        if not self.closing:
            self.detailing.loaded(message)

    def open_bullet(self, bullet_id: str) -> None:
        self.detailing.open_bullet(bullet_id)

    # ---------------------------------------------------------------- live refresh
    def on_unmount(self) -> None:
        self.live.close()

    @property
    def closing(self) -> bool:
        """The app is shutting down (`Refresh.closing`)."""
        return self.live.closing

    @on(msg.ServerLost)
    def _server_lost(self, message: msg.ServerLost) -> None:
        self.live.server_lost(message)

    @on(msg.ServerBack)
    def _server_back(self) -> None:
        self.live.server_back()

    # A message, not `call_from_thread`: that blocks the thread until the UI runs it, and
    # an app shutting down (waiting for its threads) would never run it.
    @on(msg.PollFinished)
    def _poll_finished(self) -> None:
        self.live.poll_done()

    @on(msg.SnapshotLoaded)
    def _snapshot_loaded(self, message: msg.SnapshotLoaded) -> None:
        if not self.closing and self.snapshots.apply(message):
            self.snapshot_applied()

    @on(msg.SimilarRead)
    def _similar_read(self, message: msg.SimilarRead) -> None:
        if not self.closing:
            self.snapshots.similar_read(message)

    @property
    def snapshot(self) -> reading.Snapshot | None:
        """The playbook read last, on screen."""
        return self.snapshots.snapshot

    @property
    def loads(self) -> int:
        """Snapshots applied (tests and the bench wait on this)."""
        return self.snapshots.loads

    @property
    def context(self) -> Context:
        """The rows and the policy at the moment shown, as the action rule reads them."""
        return self.snapshots.context

    def elapsed(self) -> float:
        """Seconds since the app was constructed."""
        return time.perf_counter() - self._started

    def snapshot_applied(self) -> None:
        """Called after each snapshot reached the screen (a hook for benchmarks)."""

    @on(CommandPalette.Opened)
    def _palette_opened(self) -> None:
        # Textual's search icon is an emoji, which many terminal fonts draw as a box.
        def plain_icon() -> None:
            for icon in self.screen.query(SearchIcon):
                icon.icon = ">"

        self.call_after_refresh(plain_icon)

    @on(msg.LoadFailed)
    def _load_failed(self, message: msg.LoadFailed) -> None:
        self.notify(message.text, severity="error", title="Read failed")

    # ---------------------------------------------------------------- navigation
    def show_tab(self, tab: str) -> None:
        self.tabs.show(tab)

    def action_tab(self, tab: str) -> None:
        self.tabs.go(tab)

    @on(TabbedContent.TabActivated)
    def _tab_activated(self, event: TabbedContent.TabActivated) -> None:
        self.tabs.activated(event.pane.id or "")

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        if action == "leave":  # q types a letter in a text box; it quits from everywhere else
            return not isinstance(self.focused, Input | TextArea)
        travel = self.travel.check_action(action)
        if travel is not None:
            return travel
        return super().check_action(action, parameters)

    def action_leave(self) -> None:
        self.exit()

    def action_help(self) -> None:
        if not isinstance(self.screen, HelpScreen):
            self.push_screen(help_screen(self))

    def filter_proposals(self, text: str) -> None:
        self.tabs.filter_proposals(text)

    # ---------------------------------------------------------------- lookups
    def row(self, bullet_id: str | None) -> BulletRow | None:
        return self.snapshots.rows_by_id.get(bullet_id) if bullet_id else None

    def find_bullets(self, query: str, limit: int = 12) -> list[tuple[BulletRow, float]]:
        return find_bullets(self.snapshots.rows_by_id, query, limit)

    def palette_commands(self) -> list[PaletteCommand]:
        return workbench_commands(self)
