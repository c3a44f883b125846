"""The curation workbench: `Workbench(path).run()`.

Threads and connections: every read and write runs in a thread worker on a connection of
its own (`Source.open()`); a single long-lived read-only store (`Watcher`) answers
`change_token()` for the live refresh. Polls never overlap (a flag, and the `poll`
worker group is exclusive) and are skipped while a modal is open; a change reloads a
snapshot, which the panes apply as keyed diffs inside `batch_update()`.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any, ClassVar

from rich.text import Text
from textual import on, work
from textual.app import App, ComposeResult
from textual.binding import Binding, BindingType
from textual.command import CommandPalette, SearchIcon
from textual.containers import Horizontal
from textual.screen import ModalScreen
from textual.widgets import Footer, Input, Static, TabbedContent, TabPane
from textual.worker import get_current_worker

from .. import queue
from ..errors import PlaybookError
from ..store.views import BulletRow
from . import data
from . import format as fmt
from .commands import WorkbenchCommands
from .data import ConflictView, Source
from .messages import (
    ActionDone,
    ActionFailed,
    DetailLoaded,
    FilterRanked,
    IndexReady,
    LoadFailed,
    SnapshotLoaded,
)
from .panes.blocked import BlockedPane
from .panes.bullets import BulletsPane
from .panes.conflicts import ConflictsPane
from .panes.detail import DetailPane
from .panes.proposals import ProposalsPane
from .screens.help import HelpScreen
from .screens.modals import ConfirmModal, Field, FormModal, HarmfulModal
from .theme import PLAYBOOK_THEME

TABS = ("bullets", "detail", "proposals", "conflicts", "blocked")
TAB_TITLES = {
    "bullets": "Bullets",
    "detail": "Detail",
    "proposals": "Proposals",
    "conflicts": "Conflicts",
    "blocked": "Blocked",
}
POLL_SECONDS = 0.5
INDEX_FROM = 5_000  # bullets from which sorting and ranking use a numpy index


class Workbench(App[None]):
    """Review, approve, pin and block: the human side of the playbook."""

    TITLE = "Playbook"
    SUB_TITLE = "curation workbench"
    CSS_PATH = Path(__file__).parent / "app.tcss"
    COMMANDS = App.COMMANDS | {WorkbenchCommands}
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("ctrl+q", "quit", "Quit", tooltip="Leave the workbench", id="quit", priority=True),
        Binding(
            "question_mark", "help", "Help", tooltip="Keys and what the numbers mean", id="help"
        ),
        Binding("1", "tab('bullets')", "Bullets", show=False, id="tab-bullets"),
        Binding("2", "tab('detail')", "Detail", show=False, id="tab-detail"),
        Binding("3", "tab('proposals')", "Proposals", show=False, id="tab-proposals"),
        Binding("4", "tab('conflicts')", "Conflicts", show=False, id="tab-conflicts"),
        Binding("5", "tab('blocked')", "Blocked", show=False, id="tab-blocked"),
    ]

    def __init__(
        self, path: str | Path, *, poll_seconds: float = POLL_SECONDS, label: str | None = None
    ) -> None:
        super().__init__()
        self.source = Source(Path(path))
        self.label = label or str(path)
        self.poll_seconds = poll_seconds
        self.rows_by_id: dict[str, BulletRow] = {}
        self.snapshot: data.Snapshot | None = None
        self.version: int | None = None
        self.loads = 0  # snapshots applied (tests and the bench wait on this)
        self.first_paint: float | None = None
        self.detail_id: str | None = None
        self._watcher: data.Watcher | None = None
        self._watch_lock = threading.Lock()
        self._closing = False
        self._polling = False
        self._again = False
        self._started = time.perf_counter()

    # ---------------------------------------------------------------- layout
    def compose(self) -> ComposeResult:
        with Horizontal(id="topbar"):
            yield Static(" PLAYBOOK ", id="brand")
            yield Static(fmt.untrusted(self.label, one_line=True), id="dbpath")
            yield Static("", id="live")
        with TabbedContent(id="tabs", initial="bullets"):
            with TabPane("Bullets", id="bullets"):
                yield BulletsPane(id="bullets-pane")
            with TabPane("Detail", id="detail"):
                yield DetailPane(id="detail-pane")
            with TabPane("Proposals", id="proposals"):
                yield ProposalsPane(id="proposals-pane")
            with TabPane("Conflicts", id="conflicts"):
                yield ConflictsPane(id="conflicts-pane")
            with TabPane("Blocked", id="blocked"):
                yield BlockedPane(id="blocked-pane")
        yield Footer()

    def on_mount(self) -> None:
        self._bullets_pane = self.query_one(BulletsPane)
        self.register_theme(PLAYBOOK_THEME)
        self.theme = "playbook"
        self.query_one("#live", Static).update(Text("loading…", style=fmt.MUTED))
        self.query_one("#bullets-table").focus()
        self.poll()
        self.set_interval(self.poll_seconds, self.poll, name="poll")

    def on_unmount(self) -> None:
        # A poll thread may be inside `version()` right now: close under the same lock.
        with self._watch_lock:
            self._closing = True
            if self._watcher is not None:
                self._watcher.close()
                self._watcher = None

    @property
    def bullets_pane(self) -> BulletsPane:
        """Kept from mount: workers read its (immutable) rows and view without a DOM query."""
        return self._bullets_pane

    # ---------------------------------------------------------------- live refresh
    def poll(self) -> None:
        """Every POLL_SECONDS: reload if another connection committed. Never overlapping,
        never while a modal is open (the snapshot would move the ground under it)."""
        if self._polling:
            self._again = True
            return
        if self._closing or not self.screen_stack:  # shutting down: no screen to refresh
            return
        if isinstance(self.screen, ModalScreen):
            return
        self._polling = True
        self._poll_worker(self.version)

    @work(thread=True, exclusive=True, exit_on_error=False, group="poll")
    def _poll_worker(self, known: int | None) -> None:
        worker = get_current_worker()
        try:
            with self._watch_lock:
                if self._closing:
                    return
                if self._watcher is None:
                    self._watcher = self.source.watcher()
                version = self._watcher.version()
            if version == known:
                self.call_from_thread(self._poll_done)
                return
            snapshot = data.load_snapshot(self.source)
            rows = snapshot.rows_by_id
            prepared = self.bullets_pane.prepare(rows)
            if worker.is_cancelled:
                self.call_from_thread(self._poll_done)
                return
            self.post_message(SnapshotLoaded(snapshot, version, prepared))
            if len(rows) >= INDEX_FROM:  # next: make filtering and sorting fast
                self.post_message(IndexReady(data.RowIndex(rows)))
        except Exception as exc:  # reported, and the next tick tries again
            self.post_message(LoadFailed(f"could not read {self.source.path}: {exc}"))
            self.call_from_thread(self._poll_done)

    def _poll_done(self) -> None:
        """The poll ended (nothing new, or its snapshot is on screen); run the one that was
        asked for meanwhile, if any."""
        self._polling = False
        if self._again:
            self._again = False
            self.poll()

    @on(SnapshotLoaded)
    def _snapshot_loaded(self, message: SnapshotLoaded) -> None:
        if self._closing or not self.screen_stack:
            return
        snap = message.snapshot
        self.snapshot = snap
        self.rows_by_id = snap.rows_by_id
        with self.batch_update():
            self.bullets_pane.set_rows(snap.rows_by_id, message.prepared)
            self.query_one(ProposalsPane).set_proposals(snap.proposals, snap.passages)
            self.query_one(ConflictsPane).set_conflicts(snap.conflicts)
            self.query_one(BlockedPane).set_blocked(snap.blocked)
            self._update_labels(snap)
        self.version = message.version
        self.loads += 1
        if self.first_paint is None:
            self.first_paint = time.perf_counter() - self._started
        if self.detail_id and self.query_one(TabbedContent).active == "detail":
            self.load_detail(self.detail_id)
        self.refresh_bindings()
        self._poll_done()
        self.snapshot_applied()

    def snapshot_applied(self) -> None:
        """Called after each snapshot reached the screen (a hook for benchmarks)."""

    def _update_labels(self, snap: data.Snapshot) -> None:
        tabs = self.query_one(TabbedContent)
        counts = {
            "bullets": snap.live_count,
            "proposals": len(snap.proposals),
            "conflicts": len(snap.conflicts),
            "blocked": len(snap.blocked),
        }
        for tab, n in counts.items():
            tabs.get_tab(tab).label = f"{TAB_TITLES[tab]} [b]{n:,}[/b]"
        detail = f"Detail [dim]{self.detail_id}[/dim]" if self.detail_id else "Detail"
        tabs.get_tab("detail").label = detail
        live = Text()
        live.append("live ", style=fmt.GOOD)
        live.append(f"{time.strftime('%H:%M:%S')}", style=fmt.MUTED)
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

    # ---------------------------------------------------------------- filter
    def rank_filter(self, text: str) -> None:
        self._rank_worker(text)

    @work(thread=True, exclusive=True, exit_on_error=False, group="filter")
    def _rank_worker(self, text: str) -> None:
        started = time.perf_counter()
        pane = self.bullets_pane
        rows, view = pane.worker_view()
        index = pane.index if pane.index is not None and pane.index.rows is rows else None
        if index is None and len(rows) >= INDEX_FROM:
            index = data.RowIndex(rows)
            self.post_message(IndexReady(index))
        view, order = data.rank_view(self.source, text, rows, view, pane.min_confidence, index)
        if not get_current_worker().is_cancelled:
            self.post_message(
                FilterRanked(text, view.relevance, time.perf_counter() - started, order, rows)
            )

    @on(IndexReady)
    def _index_ready(self, message: IndexReady) -> None:
        pane = self.bullets_pane
        if message.index.rows is pane.rows:
            pane.index = message.index

    @on(FilterRanked)
    def _filter_ranked(self, message: FilterRanked) -> None:
        self.bullets_pane.set_relevance(
            message.text, message.relevance, message.order, message.rows
        )
        self.filter_applied(message.text)

    def filter_applied(self, text: str) -> None:
        """Called after a filter's ranking reached the table (a hook for benchmarks)."""

    def set_filter(self, text: str) -> None:
        self.show_tab("bullets")
        self.query_one("#filter", Input).value = text

    def action_filter(self) -> None:
        self.show_tab("bullets")
        self.bullets_pane.action_focus_filter()

    # ---------------------------------------------------------------- detail
    def open_bullet(self, bullet_id: str) -> None:
        self.detail_id = bullet_id
        if self.snapshot is not None:
            self._update_labels(self.snapshot)
        self.show_tab("detail")
        self.load_detail(bullet_id)

    def load_detail(self, bullet_id: str) -> None:
        self._detail_worker(bullet_id)

    @work(thread=True, exclusive=True, exit_on_error=False, group="detail")
    def _detail_worker(self, bullet_id: str) -> None:
        detail = data.load_detail(self.source, bullet_id)
        if not get_current_worker().is_cancelled:
            self.post_message(DetailLoaded(bullet_id, detail))

    @on(DetailLoaded)
    def _detail_loaded(self, message: DetailLoaded) -> None:
        if message.bullet_id == self.detail_id and not self._closing and self.screen_stack:
            self.query_one(DetailPane).show(message.detail)

    # ---------------------------------------------------------------- navigation
    def show_tab(self, tab: str) -> None:
        self.query_one(TabbedContent).active = tab
        self._focus_tab(tab)

    def action_tab(self, tab: str) -> None:
        if tab == "detail" and self.detail_id is None:
            bid = self.bullets_pane.current_bullet_id()
            if bid:
                self.open_bullet(bid)
                return
        self.show_tab(tab)

    @on(TabbedContent.TabActivated)
    def _tab_activated(self, event: TabbedContent.TabActivated) -> None:
        tab = event.pane.id or ""
        self._focus_tab(tab)
        if tab == "detail":
            bid = self.detail_id or self.bullets_pane.current_bullet_id()
            if bid and bid != self.detail_id:
                self.open_bullet(bid)
            elif bid:
                self.load_detail(bid)
        self.refresh_bindings()

    def _focus_tab(self, tab: str) -> None:
        target = {
            "bullets": "#bullets-table",
            "detail": "#d-timeline",
            "proposals": "#proposals-table",
            "conflicts": "#conflicts-table",
            "blocked": "#blocked-table",
        }.get(tab)
        if target:
            self.query_one(target).focus()

    def action_help(self) -> None:
        if not isinstance(self.screen, HelpScreen):
            self.push_screen(HelpScreen())

    # ---------------------------------------------------------------- lookups
    def row(self, bullet_id: str | None) -> BulletRow | None:
        return self.rows_by_id.get(bullet_id) if bullet_id else None

    def current_bullet_id(self) -> str | None:
        if self.query_one(TabbedContent).active == "detail":
            return self.detail_id
        return self.bullets_pane.current_bullet_id()

    def current_proposal(self) -> queue.Proposal | None:
        return self.query_one(ProposalsPane).current()

    def bullet_action_applies(self, action: str, bullet_id: str) -> bool:
        row = self.row(bullet_id)
        if row is None or row.state == "retired":
            return False
        return {
            "pin": not row.pinned,
            "unpin": row.pinned,
            "deprecate": row.maturity != "deprecated",
            "restore": row.maturity == "deprecated",
        }.get(action, True)

    def find_bullets(self, query: str, limit: int = 12) -> list[tuple[BulletRow, float]]:
        """Bullets for 'jump to': id prefix first, then content containing the words."""
        q = query.strip().lower()
        if len(q) < 2:
            return []
        hits: list[tuple[BulletRow, float]] = []
        if q.startswith("b-") or all(c in "0123456789abcdef-" for c in q):
            for row in self.rows_by_id.values():
                if row.id.startswith(q) or row.id.removeprefix("b-").startswith(q):
                    hits.append((row, 1.0))
                    if len(hits) >= limit:
                        return hits
        for row in self.rows_by_id.values():
            if row.state != "retired" and q in row.content.lower():
                hits.append((row, 0.6))
                if len(hits) >= limit:
                    break
        return hits

    # ---------------------------------------------------------------- writes
    def run_write(self, fn: Callable[..., str], *args: Any) -> None:
        """Run one write of `data` in a thread worker (writes are never cancelled)."""
        self._write_worker(fn, args)

    @work(thread=True, exit_on_error=False, group="write")
    def _write_worker(self, fn: Callable[..., str], args: tuple[Any, ...]) -> None:
        try:
            text = fn(self.source, *args)
        except (PlaybookError, ValueError) as exc:
            self.post_message(ActionFailed(str(exc)))
            return
        except Exception as exc:  # a bug: say so rather than fail silently in a thread
            self.post_message(ActionFailed(f"{type(exc).__name__}: {exc}"))
            raise
        self.post_message(ActionDone(text))

    @on(ActionDone)
    def _action_done(self, message: ActionDone) -> None:
        self.notify(Text(message.text).plain, title="Done", timeout=4)
        self.poll()  # show it at once, not at the next tick

    @on(ActionFailed)
    def _action_failed(self, message: ActionFailed) -> None:
        self.notify(message.text, title="Not done", severity="error", timeout=8)

    def _subject(self, bullet_id: str) -> Text:
        row = self.row(bullet_id)
        text = Text()
        text.append(bullet_id, style="bold #7aa2f7")
        if row is not None:
            text.append("  ")
            text.append_text(fmt.maturity(row.maturity))
            text.append("\n")
            text.append_text(fmt.untrusted(row.content))
        return text

    def bullet_action(self, action: str, bullet_id: str) -> None:
        row = self.row(bullet_id)
        subject = self._subject(bullet_id)
        if action == "helpful":
            self.run_write(data.mark, bullet_id, "helpful", None, "marked in the workbench")
        elif action == "harmful":

            def harmful(answer: tuple[str, str] | None) -> None:
                if answer:
                    reason, context = answer
                    self.run_write(data.mark, bullet_id, "harmful", reason, context or None)

            self.push_screen(HarmfulModal(subject), harmful)
        elif action == "pin":
            self._form(
                FormModal(
                    f"Pin {bullet_id}",
                    "A pinned bullet keeps its maturity whatever the feedback says, and agents "
                    "cannot retire or replace it.",
                    [
                        Field(
                            "reason",
                            "Why pin it",
                            placeholder="e.g. team policy since the incident",
                        )
                    ],
                    subject,
                    confirm="Pin",
                    variant="primary",
                ),
                lambda v: self.run_write(data.pin, bullet_id, v["reason"]),
            )
        elif action == "unpin":
            self._confirm(
                ConfirmModal(
                    f"Unpin {bullet_id}?",
                    "Its maturity will follow the evidence again at the next curation.",
                    subject,
                    confirm="Unpin",
                    variant="warning",
                ),
                lambda: self.run_write(data.unpin, bullet_id),
            )
        elif action == "block":
            content = row.content if row else ""
            self._form(
                FormModal(
                    "Block this pattern",
                    "From now on the curator refuses any add that matches this pattern. "
                    "The bullet itself stays; deprecate it separately if it should go.",
                    [
                        Field("pattern", "Pattern", value=content),
                        Field("reason", "Why", placeholder="what goes wrong when agents do this"),
                    ],
                    subject,
                    confirm="Block",
                    variant="error",
                ),
                lambda v: self.run_write(data.block, v["pattern"], v["reason"]),
            )
        elif action == "deprecate":
            self._form(
                FormModal(
                    f"Deprecate {bullet_id}",
                    "A deprecated bullet scores 0 and recall lists it as a warning "
                    "(don't do this any more). You can restore it later.",
                    [Field("reason", "Why", placeholder="e.g. superseded by the new CI image")],
                    subject,
                    confirm="Deprecate",
                    variant="error",
                ),
                lambda v: self.run_write(data.deprecate, bullet_id, v["reason"]),
            )
        elif action == "restore":
            target = (
                data.restore_target(row.helpful, row.harmful, _policy())
                if row is not None
                else "candidate"
            )
            self._form(
                FormModal(
                    f"Restore {bullet_id}",
                    f"It goes back to {target} (what its evidence earns now, at least "
                    "candidate). If the evidence still condemns it, the next curation "
                    "deprecates it again: pin it to make the restore stick.",
                    [Field("reason", "Why", required=False)],
                    subject,
                    confirm="Restore",
                    variant="primary",
                ),
                lambda v: self.run_write(data.restore, bullet_id, v["reason"]),
            )

    def proposal_action(self, action: str, p: queue.Proposal) -> None:
        content = p.delta.get("content")
        subject = fmt.untrusted(fmt.short_delta(p.delta))
        if action == "approve":
            self.run_write(data.approve, p.id)
        elif action == "edit" and isinstance(content, str):
            self._form(
                FormModal(
                    f"Edit and approve {p.id}",
                    "The edited text is curated with the proposal's provenance; both versions "
                    "are kept in the queue.",
                    [Field("content", "Text", value=content, multiline=True)],
                    confirm="Approve",
                    variant="success",
                ),
                lambda v: self.run_write(data.approve, p.id, v["content"]),
            )
        elif action == "reject":
            self._form(
                FormModal(
                    f"Reject {p.id}",
                    "The proposal is closed with your reason; nothing changes in the playbook.",
                    [Field("reason", "Why", placeholder="e.g. too specific to one repo")],
                    subject,
                    confirm="Reject",
                    variant="warning",
                ),
                lambda v: self.run_write(data.reject, p.id, v["reason"], False),
            )
        elif action == "reject_block" and isinstance(content, str):
            self._form(
                FormModal(
                    f"Reject {p.id} and block its pattern",
                    "Rejects the proposal and blocks its text: any later add like it, from any "
                    "agent, is refused.",
                    [Field("reason", "Why", placeholder="what goes wrong when agents do this")],
                    subject,
                    confirm="Reject and block",
                    variant="error",
                ),
                lambda v: self.run_write(data.reject, p.id, v["reason"], True),
            )

    def conflict_action(self, action: str, v: ConflictView) -> None:
        c = v.conflict
        if action == "keep":
            self.run_write(data.keep_both, c.id)
        elif action in ("deprecate-a", "deprecate-b"):
            row = v.a if action == "deprecate-a" else v.b
            if row is None:
                return
            self._form(
                FormModal(
                    f"Deprecate {row.id} and resolve",
                    "The other bullet stays as it is; the conflict is closed.",
                    [Field("reason", "Why", placeholder="e.g. the team decided the opposite")],
                    self._subject(row.id),
                    confirm="Deprecate",
                    variant="error",
                ),
                lambda f: self.run_write(data.deprecate_in_conflict, c.id, row.id, f["reason"]),
            )
        elif action == "merge" and v.a is not None and v.b is not None:
            a, b = v.a, v.b
            self._form(
                FormModal(
                    f"Merge {a.id} and {b.id}",
                    "Both retire; the rule you write supersedes them and inherits their evidence.",
                    [Field("content", "Merged rule", value=a.content, multiline=True)],
                    confirm="Merge",
                    variant="warning",
                ),
                lambda f: self.run_write(data.merge_conflict, c.id, [a.id, b.id], f["content"]),
            )

    def block_new(self) -> None:
        self._form(
            FormModal(
                "Block a pattern",
                "The curator refuses any add that matches it: exactly, by token overlap, or "
                "fuzzily.",
                [
                    Field("pattern", "Pattern", placeholder="e.g. Disable the failing test"),
                    Field("reason", "Why", placeholder="what goes wrong when agents do this"),
                ],
                confirm="Block",
                variant="error",
            ),
            lambda v: self.run_write(data.block, v["pattern"], v["reason"]),
        )

    def unblock(self, b: Any) -> None:
        self._confirm(
            ConfirmModal(
                f"Unblock {b.id}?",
                "Adds like this pattern will be accepted again.",
                fmt.untrusted(b.pattern, style="bold"),
                confirm="Unblock",
                variant="warning",
            ),
            lambda: self.run_write(data.unblock, b.id),
        )

    def _form(self, modal: FormModal, then: Callable[[dict[str, str]], None]) -> None:
        def done(values: dict[str, str] | None) -> None:
            if values is not None:
                then(values)

        self.push_screen(modal, done)

    def _confirm(self, modal: ConfirmModal, then: Callable[[], None]) -> None:
        def done(ok: bool | None) -> None:
            if ok:
                then()

        self.push_screen(modal, done)


def _policy() -> Any:
    from ..policy import DEFAULT_POLICY

    return DEFAULT_POLICY
