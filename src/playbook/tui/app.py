"""The curation workbench: `Workbench(path, policy=...).run()`.

The app lays out the tabs, applies each snapshot the live refresh reads (`refresh.py`),
and handles what the panes ask for: a pane posts a typed message (`Pane.Requested`,
`BulletsPane.FilterChanged`, ...) and never calls the app. Actions come from one table
(`actions/`): the rule there says what applies, `dialogs.py` asks what the action needs to
know, and the write runs in a thread worker through the same API as the CLI.
"""

from __future__ import annotations

import time
from collections.abc import Hashable
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
from textual.worker import Worker

from ..core.policy import DEFAULT_POLICY, Policy
from ..store.views import BulletRow
from . import data, reading
from . import format as fmt
from .acting import Actions
from .actions.spec import Context
from .commands import PaletteCommand, WorkbenchCommands
from .detailing import Detail
from .filtering import INDEX_FROM, Filter
from .messages import (
    ActionDone,
    ActionFailed,
    DetailLoaded,
    FilterRanked,
    IndexReady,
    LoadFailed,
    PollFinished,
    ServerBack,
    ServerLost,
    SnapshotLoaded,
    TrendsLoaded,
)
from .ordering import RowIndex
from .palette import help_screen, workbench_commands
from .panes import registry
from .panes.base import Pane
from .panes.bullets import BulletsPane
from .panes.detail import DetailPane
from .panes.proposals import ProposalsPane
from .refresh import Refresh
from .screens.compare import CompareScreen
from .screens.help import HelpScreen
from .screens.hidden import HiddenScreen
from .search import find_bullets
from .seen import LastLooked
from .theme import PLAYBOOK_THEME, VARIABLES
from .travel import READ_AHEAD_UP_TO, TRAVEL_BINDINGS, Travel
from .widgets.footer import WorkbenchFooter
from .widgets.table import RowTable
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
    # The styles of Rich text, named in format.py and styled in text.tcss (`_text_styles`).
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
    ) -> None:
        self.policy = policy or DEFAULT_POLICY
        super().__init__()
        self.source = data.Source(_target(path), self.policy)
        self.live = Refresh(
            self, self.source, poll_seconds=poll_seconds, read_changes=self.read_changes
        )
        self.panes: tuple[type[Pane], ...] = registry.PANES  # the tabs, in order
        # 1…9 show the tabs; by id, as a user's keymap names them ("tab-bullets": App.bind
        # takes no id, so the bindings go straight into the app's map).
        for n, pane in enumerate(self.panes[:9], 1):
            self._bindings.key_to_bindings.setdefault(str(n), []).append(
                Binding(str(n), f"tab('{pane.TAB}')", pane.TITLE, show=False, id=f"tab-{pane.TAB}")
            )
        self.label = label or str(path)
        self.label_note = note  # said after the label when the top bar has room
        self.rows_by_id: dict[str, BulletRow] = {}
        self.context = Context({}, self.policy)
        self.acting = Actions(self, self.source, lambda: self.context)
        self.filtering = Filter(
            self,
            self.source,
            bullets=lambda: self.bullets_pane,
            as_of=lambda: self.as_of,
            applied=lambda text: self.filter_applied(text),
        )
        self.travel = Travel(
            self,
            self.source,
            now=lambda: self.now(),
            read_now=self.read_now,
            version=lambda: self.live.version,
        )
        self.detailing = Detail(
            self,
            self.source,
            pane=lambda: self.query_one(DetailPane),
            row=self.row,
            show_tab=self.show_tab,
            relabel=self._relabel,
        )
        self.snapshot: reading.Snapshot | None = None
        self._now_cache: tuple[Hashable, reading.Snapshot] | None = None  # back from travel
        self.loads = 0  # snapshots applied (tests and the bench wait on this)
        self.first_paint: float | None = None
        self._started = time.perf_counter()
        # The theme before the first style pass: set on mount, it restyled every widget.
        self.register_theme(PLAYBOOK_THEME)
        self.theme = "playbook"
        self._styles_pushed = False
        # "New since you last looked" at the Proposals tab (a per-user file, see seen.py).
        self.seen = seen or LastLooked(path)
        self.seen_at = self.seen.get()

    def get_theme_variable_defaults(self) -> dict[str, str]:
        """The colours the .tcss files name beyond Textual's own, for every theme."""
        return {**super().get_theme_variable_defaults(), **VARIABLES}

    def _text_styles(self) -> None:
        """Give the console the named text styles as the theme in use draws them: a
        `Text(style=fmt.MUTED)` anywhere in the workbench is then drawn in `$pb-muted`."""
        styles = fmt.rich_theme(lambda name: self.get_component_styles(name).partial_rich_style)
        if self._styles_pushed:
            self.console.pop_theme()
        self.console.push_theme(styles)
        self._styles_pushed = True

    def _theme_changed(self, _theme: object) -> None:
        """Another theme (ctrl+p, "Change theme"): once its CSS is applied, the named
        styles again, and every table drawn again with them."""

        def restyle() -> None:
            self._text_styles()
            for screen in self.screen_stack:
                for table in screen.query(RowTable):
                    table.refresh_rows()
                screen.refresh(repaint=True)

        self.call_after_refresh(restyle)

    # ---------------------------------------------------------------- layout
    def compose(self) -> ComposeResult:
        self._fit_classes(self.size)  # before the first style pass (each change restyles all)
        self._text_styles()
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
        self.query_one(ProposalsPane).badge_since = self.seen_at  # newer: a "new" badge
        for pane in self.action_panes():
            pane.set_context(self.context)  # the policy, before any row arrives
        self.query_one("#live", Static).update(Text("loading…", style=fmt.MUTED))
        self.query_one("#bullets-table").focus()
        self.theme_changed_signal.subscribe(self, self._theme_changed)
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
        self._relabel()

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

    @on(ActionDone)
    def _action_done(self, message: ActionDone) -> None:
        self.acting.done(message)
        self.live.poll()  # show it at once, not at the next tick

    @on(ActionFailed)
    def _action_failed(self, message: ActionFailed) -> None:
        self.acting.failed(message)

    # ---------------------------------------------------------------- filter
    @on(BulletsPane.FilterChanged)
    def _filter_changed(self, message: BulletsPane.FilterChanged) -> None:
        self.filtering.rank(message.text)

    @on(IndexReady)
    def _index_ready(self, message: IndexReady) -> None:
        self.filtering.index_ready(message)

    @on(FilterRanked)
    def _filter_ranked(self, message: FilterRanked) -> None:
        self.filtering.ranked(message)

    @on(BulletsPane.TrendsWanted)
    def _trends_wanted(self, message: BulletsPane.TrendsWanted) -> None:
        self.filtering.want_trends(message.ids)

    @on(TrendsLoaded)
    def _trends_loaded(self, message: TrendsLoaded) -> None:
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

    @on(DetailLoaded)
    def _detail_loaded(self, message: DetailLoaded) -> None:
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

    @on(ServerLost)
    def _server_lost(self, message: ServerLost) -> None:
        self.live.server_lost(message)

    @on(ServerBack)
    def _server_back(self) -> None:
        self.live.server_back()

    # A message, not `call_from_thread`: that blocks the thread until the UI runs it, and
    # an app shutting down (waiting for its threads) would never run it.
    @on(PollFinished)
    def _poll_finished(self) -> None:
        self.live.poll_done()

    def read_changes(self, version: Hashable, worker: Worker[None]) -> bool:
        as_of = self.as_of
        history = None if as_of is None else self.travel.history_at(version, len(self.rows_by_id))
        snapshot = reading.load_snapshot(
            self.source, last_looked=self.seen_at, as_of=as_of, history=history
        )
        rows = snapshot.rows_by_id
        prepared = {pane.TAB: pane.prepare(snapshot) for pane in self.action_panes()}
        if worker.is_cancelled:
            return False
        self.post_message(SnapshotLoaded(snapshot, version, prepared))
        if len(rows) >= INDEX_FROM:  # next: make filtering and sorting fast
            self.post_message(IndexReady(RowIndex(rows)))
        return True

    @on(SnapshotLoaded)
    def _snapshot_loaded(self, message: SnapshotLoaded) -> None:
        if self.closing:
            return
        snap = message.snapshot
        if snap.as_of != self.as_of:  # read for another moment: read again for this one
            self.live.poll_done()
            self.read_now()
            return
        self.snapshot = snap
        if snap.as_of is None:
            self._now_cache = (message.version, snap)
        self.rows_by_id = snap.rows_by_id
        self.context = ctx = Context(snap.rows_by_id, self.policy, snap.as_of)
        with self.batch_update():
            for pane in self.action_panes():
                pane.apply(snap, ctx, message.prepared.get(pane.TAB))
            if self.query_one(TabbedContent).active == "proposals" and snap.as_of is None:
                self.looked_at_proposals()
            self._update_labels(snap)
        self.live.version = message.version
        self.loads += 1
        if self.first_paint is None:
            self.first_paint = self.elapsed()
            if len(snap.rows_by_id) <= READ_AHEAD_UP_TO:
                self.travel.read_ahead()
        if snap.as_of is not None:
            self.travel.read_ahead()  # the next moment from the log read once
        detail_id = self.detailing.detail_id
        if detail_id and self.query_one(TabbedContent).active == "detail":
            self.detailing.load(detail_id)
        if isinstance(self.screen, HiddenScreen):
            self.screen.set_context(ctx)  # an action taken there: read its list again
        self.refresh_bindings()
        self.live.poll_done()
        self.snapshot_applied()

    def elapsed(self) -> float:
        """Seconds since the app was constructed."""
        return time.perf_counter() - self._started

    def read_now(self) -> None:
        """Read the playbook at once (time travel moved), whatever the change token says.
        Back at now, the last snapshot of now shows at once, and the poll reads again only
        if anyone wrote since."""
        cached = self._now_cache
        if self.as_of is None and cached is not None:
            self.live.version = cached[0]
            self.post_message(SnapshotLoaded(cached[1], cached[0]))
            self.live.poll()
            return
        self.live.version = None
        self.live.poll()

    def snapshot_applied(self) -> None:
        """Called after each snapshot reached the screen (a hook for benchmarks)."""

    def _relabel(self) -> None:
        if self.snapshot is not None:
            self._update_labels(self.snapshot)

    def _update_labels(self, snap: reading.Snapshot) -> None:
        tabs = self.query_one(TabbedContent)
        for pane in self.action_panes():
            tabs.get_tab(pane.TAB).label = pane.label(snap, self.narrow)
        live = Text()
        live.append("live ", style=fmt.GOOD)
        live.append(f"{time.strftime('%H:%M:%S')}", style=fmt.MUTED)
        if not self.narrow:
            live.append(f"  read in {snap.seconds * 1000:.0f} ms ", style=fmt.MUTED)
        self.query_one("#live", Static).update(live)

    @on(CommandPalette.Opened)
    def _palette_opened(self) -> None:
        # Textual's search icon is an emoji, which many terminal fonts draw as a box.
        def plain_icon() -> None:
            for icon in self.screen.query(SearchIcon):
                icon.icon = ">"

        self.call_after_refresh(plain_icon)

    @on(LoadFailed)
    def _load_failed(self, message: LoadFailed) -> None:
        self.notify(message.text, severity="error", title="Read failed")

    # ---------------------------------------------------------------- navigation
    def show_tab(self, tab: str) -> None:
        self.query_one(TabbedContent).active = tab
        self._focus_tab(tab)

    def action_tab(self, tab: str) -> None:
        if tab == "detail" and self.detailing.detail_id is None:
            bid = self.bullets_pane.current_bullet_id()
            if bid:
                self.open_bullet(bid)
                return
        self.show_tab(tab)

    @on(TabbedContent.TabActivated)
    def _tab_activated(self, event: TabbedContent.TabActivated) -> None:
        tab = event.pane.id or ""
        if tab != "detail":
            self.detailing.detail_back = None  # left Detail another way: escape there means bullets
        self._focus_tab(tab)
        if tab == "proposals":
            pane = self.query_one(ProposalsPane)
            pane.badge_since = self.seen_at  # what arrived since the last visit stays marked
            pane.new_ids = pane.new_badges(self.snapshot.proposals if self.snapshot else [])
            pane.table.refresh_rows()
            self.looked_at_proposals()
        if tab == "detail":
            shown = self.detailing.detail_id
            bid = shown or self.bullets_pane.current_bullet_id()
            if bid and bid != shown:
                self.open_bullet(bid)
            elif bid:
                self.detailing.load(bid)
        self.refresh_bindings()

    def looked_at_proposals(self) -> None:
        """The reviewer sees the queue: remember (per user) the newest proposal time shown,
        so the tab's "new" count starts again from here."""
        pane = self.query_one(ProposalsPane)
        newest = pane.newest_shown()
        if newest is not None and (self.seen_at is None or newest > self.seen_at):
            self.seen_at = newest
            self.seen.mark(newest)
        if pane.new_count:
            pane.new_count = 0
            self._relabel()

    def _focus_tab(self, tab: str) -> None:
        for pane in self.panes:
            if tab == pane.TAB:
                self.query_one(pane.FOCUS).focus()

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
        self.show_tab("proposals")
        self.query_one(ProposalsPane).set_filter(text)

    # ---------------------------------------------------------------- lookups
    def row(self, bullet_id: str | None) -> BulletRow | None:
        return self.rows_by_id.get(bullet_id) if bullet_id else None

    def find_bullets(self, query: str, limit: int = 12) -> list[tuple[BulletRow, float]]:
        return find_bullets(self.rows_by_id, query, limit)

    def palette_commands(self) -> list[PaletteCommand]:
        return workbench_commands(self)


def _target(path: str | Path) -> str | Path:
    """A file as a Path; a database URL as it is (a URL is never a path)."""
    return path if isinstance(path, str) and "://" in path else Path(path)
