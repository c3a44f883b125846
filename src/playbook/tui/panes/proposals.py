"""The Proposals pane: deltas waiting for a human, newest first, each beside the bullets it
acts on (as they are now) or resembles.

Approving curates the delta with the provenance recorded when it was proposed; an agent
can never approve its own proposal (the queue refuses any actor but a human). Space marks
proposals, and `a` / `x` then decide all the marked ones after one confirmation; `/`
narrows the queue by type, session, origin (`from:hook`) and words.
"""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import PurePath
from typing import TYPE_CHECKING, ClassVar

from rich.table import Table
from rich.text import Text
from textual import on
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Horizontal, VerticalScroll
from textual.message import Message
from textual.widgets import Input, Static

from .. import format as fmt
from ..actions.rule import bindings_for
from ..actions.spec import Context, Marked, Subject
from ..format import format_age
from ..queue_view import (
    QueueFilter,
    newer_than,
    origin_label,
    parse_queue_filter,
    session_name,
)
from ..widgets.columns import Column
from ..widgets.table import RowTable
from .base import Pane

if TYPE_CHECKING:
    from ...review.proposal_view import DiffOps
    from ...review.proposals import Proposal
    from ..reading import DiaryPassage, Snapshot
from .proposal_text import delta_grid, near_text

ORIGIN_LABEL = {"reflection": "reflect", "consolidation": "topics"}
MARK = "●"


COLUMNS = [
    Column("mark", "", 1, priority=95, sortable=False),
    Column("id", "id", 10, priority=40, sortable=False),
    Column("type", "type", 9, priority=80, sortable=False),
    Column("proposal", "proposal", None, min_width=24, sortable=False),
    Column("origin", "origin", 7, priority=60, sortable=False),
    Column("from", "session", 24, priority=30, sortable=False),
    Column("age", "proposed", 9, priority=50, sortable=False),
]


class ProposalsPane(Pane):
    """Deltas waiting for review; keys act on the selected proposal, or on the marked ones."""

    TAB = "proposals"
    TITLE = "Proposals"
    FOCUS = "#proposals-table"
    HELP_SECTION = (
        "Proposals",
        "Filter: type:add session:NAME from:hook and words. With proposals marked "
        "(space), a and x decide all the marked ones after one confirmation.",
    )
    SUBJECTS: ClassVar[tuple[Subject, ...]] = ("proposal", "marked")

    class Looked(Message):
        """The reviewer has seen the queue up to this proposal time (for the "new" count)."""

        def __init__(self, at: datetime) -> None:
            super().__init__()
            self.at = at

    BINDINGS: ClassVar[list[BindingType]] = [
        *bindings_for("proposal", "marked"),
        Binding("space", "toggle_mark", "Mark", tooltip="Mark or unmark (a, x act on all marked)"),
        Binding("slash", "focus_filter", "Filter", tooltip="type: session: from:hook words"),
        Binding("escape", "clear", "Clear", show=False, tooltip="Clear the marks, then the filter"),
    ]

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self.all: list[Proposal] = []  # newest first
        self.proposals: dict[str, Proposal] = {}  # the shown ones, by id
        self.passages: dict[str, DiaryPassage | None] = {}
        self.diffs: dict[str, list[tuple[str, DiffOps]]] = {}
        self.looking: set[str] = set()  # proposals whose nearest bullets are being read
        self.marked: set[str] = set()
        self.new_ids: set[str] = set()
        self.badge_since: datetime | None = None  # proposals newer than this: "new" badge
        self.new_count = 0  # pending proposals staged since the reviewer last looked
        self.filter = QueueFilter()
        self._shown: tuple[str, int] | None = None
        self._now = datetime.now(UTC)

    def compose(self) -> ComposeResult:
        with Horizontal(id="pfilter-bar"):
            yield Static("/", id="pfilter-slash")
            yield Input(placeholder="type:add session:… from:hook words", id="proposals-filter")
            yield Static("", id="pfilter-info")
        yield Static("", id="pfilter-error")
        yield RowTable(
            COLUMNS, self._cell, empty_text="Nothing waits for review.", id="proposals-table"
        )
        with Horizontal(id="proposal-detail"):
            with VerticalScroll(id="p-left"):
                yield Static("", id="p-delta")
                yield Static("", id="p-passage")
            with VerticalScroll(id="p-right"):
                yield Static("", id="p-similar")

    def on_mount(self) -> None:
        self.query_one("#p-delta").border_title = "Proposed change"
        self.query_one("#p-passage").border_title = "In the session"
        self.query_one("#p-similar").border_title = "Nearest existing bullets"
        self.query_one("#pfilter-error").display = False
        self.show_current()

    @property
    def table(self) -> RowTable[str]:
        return self.query_one(RowTable)

    # ---------------------------------------------------------------- subjects
    def current(self) -> Proposal | None:
        key = self.table.cursor_key
        return self.proposals.get(str(key)) if key is not None else None

    def subject(self) -> Proposal | None:
        return self.current()

    def marked_proposals(self) -> Marked | None:
        chosen = tuple(p for p in self.all if p.id in self.marked)
        return Marked(chosen) if chosen else None

    def subject_for(self, on: Subject) -> object:
        """With marks, `a` and `x` act on the marked proposals; without, on the cursor's."""
        marked = self.marked_proposals()
        if on == "marked":
            return marked
        return marked if marked is not None else self.current()

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        if action in ("toggle_mark", "focus_filter") and self.typing():
            return False
        if action == "toggle_mark":
            return self.current() is not None or None
        if action == "clear":
            return True
        return super().check_action(action, parameters)

    # ---------------------------------------------------------------- cells
    def _cell(self, p: Proposal, column: str) -> Text:
        if column == "mark":
            return Text(MARK, style=fmt.ACCENT_BOLD) if p.id in self.marked else Text("")
        if column == "id":
            return Text(p.id, style=fmt.MUTED)
        kind = str(p.delta.get("type", "?"))
        if column == "type":
            return Text(kind, style=fmt.DELTA_STYLE.get(kind, ""))
        if column == "proposal":
            text = Text()
            if p.stale:
                text.append("stale ", style=fmt.BAD_BOLD)
            elif p.id in self.new_ids:
                text.append("new ", style=fmt.ACCENT_BOLD)
            text.append_text(
                fmt.untrusted(fmt.short_delta(p.delta, self._content_of), one_line=True)
            )
            return text
        if column == "origin":
            label = origin_label(p)
            style = fmt.ACCENT_BOLD if label == "hook" else fmt.MUTED
            return Text(ORIGIN_LABEL.get(label, label), style=style)
        if column == "from":
            return _source(p)
        return Text(format_age(p.created_at, self._now), style=fmt.MUTED)

    def _content_of(self, bullet_id: str) -> str | None:
        row = self.context.row(bullet_id)
        return row.content if row is not None else None

    # ---------------------------------------------------------------- data in
    def apply(self, snap: Snapshot, context: Context, prepared: object) -> None:
        self.new_count = snap.new_proposals
        self.looking = set(snap.similar_unknown)
        badges = self.new_badges(snap.proposals)
        self.set_proposals(snap.proposals, snap.passages, context, badges, snap.diffs)

    def count(self, snap: Snapshot) -> int:
        return len(snap.proposals)

    def label(self, snap: Snapshot, narrow: bool) -> str:
        label = super().label(snap, narrow)
        if self.new_count:
            new = f"+{self.new_count}" if narrow else f"+{self.new_count} new"
            label += f" [$accent]{new}[/]"
        return label

    def new_badges(self, proposals: list[Proposal]) -> set[str]:
        """The proposals that arrived since the reviewer's last visit (none on a first
        visit: everything is new then, and a badge on every row says nothing)."""
        if self.badge_since is None:
            return set()
        return newer_than(proposals, self.badge_since)

    def set_proposals(
        self,
        proposals: list[Proposal],
        passages: dict[str, DiaryPassage | None],
        context: Context,
        new_ids: set[str] | None = None,
        diffs: dict[str, list[tuple[str, DiffOps]]] | None = None,
    ) -> None:
        """A new snapshot of the queue (newest first), with the word diffs of its rewrites.
        Marks on proposals no longer pending are dropped; the filter stays."""
        self.all = proposals
        self.passages = passages
        self.diffs = diffs or {}
        self.context = context
        if new_ids is not None:
            self.new_ids = new_ids
        self.marked &= {p.id for p in proposals}
        self._now = datetime.now(UTC)
        self._shown = None  # the target's state may have moved: redraw the detail
        self.show_filtered()

    def similar_read(self, proposals: list[Proposal], unknown: set[str]) -> None:
        """The same queue, its proposals now with their nearest existing bullets (read
        after the snapshot was shown): swapped in by id; filter, marks and cursor stay."""
        self.all = proposals
        self.looking = set(unknown)
        self.proposals = {p.id: p for p in proposals if p.id in self.proposals}
        self.table.apply(dict(self.proposals))
        self.show_current()

    def show_filtered(self) -> None:
        shown = [p for p in self.all if self.filter.matches(p)]
        self.proposals = {p.id: p for p in shown}
        self.table.empty_text = (
            "No proposal matches the filter." if self.all else "Nothing waits for review."
        )
        self.table.set_rows(dict(self.proposals))
        self.update_info()
        self.show_current()
        self.refresh_bindings()

    def update_info(self) -> None:
        info = Text()
        total, shown = len(self.all), len(self.proposals)
        info.append(f"{shown:,}", style="bold")
        if not self.filter.empty:
            info.append(f" of {total:,}", style=fmt.MUTED)
        hooks = sum(1 for p in self.all if origin_label(p) == "hook")
        if hooks:
            info.append(f"  {hooks} from hooks", style=fmt.ACCENT)
        if self.marked:
            info.append(f"  {len(self.marked)} marked", style=fmt.ACCENT_BOLD)
        self.query_one("#pfilter-info", Static).update(info)

    def newest_shown(self) -> datetime | None:
        return max((p.created_at for p in self.all), default=None)

    # ---------------------------------------------------------------- keys
    def action_focus_filter(self) -> None:
        self.query_one("#proposals-filter", Input).focus()

    def action_toggle_mark(self) -> None:
        p = self.current()
        if p is None:
            return
        self.marked ^= {p.id}
        self.table.refresh_rows()
        self.table.action_cursor(1)
        self.update_info()
        self.refresh_bindings()

    def action_clear(self) -> None:
        box = self.query_one("#proposals-filter", Input)
        if self.marked:
            self.marked.clear()
            self.table.refresh_rows()
            self.update_info()
            self.refresh_bindings()
        elif box.value:
            box.value = ""
        self.table.focus()

    def set_filter(self, text: str) -> None:
        self.query_one("#proposals-filter", Input).value = text

    @on(Input.Changed, "#proposals-filter")
    def _filter_changed(self, event: Input.Changed) -> None:
        self.filter = parse_queue_filter(event.value)
        error = self.query_one("#pfilter-error", Static)
        error.display = bool(self.filter.problems)
        if self.filter.problems:
            error.update(Text(self.filter.problems[0]))
        self.show_filtered()

    @on(Input.Submitted, "#proposals-filter")
    def _filter_submitted(self) -> None:
        self.table.focus()

    # ---------------------------------------------------------------- detail
    @on(RowTable.Highlighted)
    def _highlighted(self) -> None:
        self.show_current()
        self.refresh_bindings()

    def show_current(self) -> None:
        p = self.current()
        delta_box = self.query_one("#p-delta", Static)
        passage_box = self.query_one("#p-passage", Static)
        similar_box = self.query_one("#p-similar", Static)
        if p is None:
            empty = "No proposal matches the filter." if self.all else "Nothing waits for review."
            delta_box.update(Text(empty, style=fmt.MUTED))
            passage_box.update("")
            similar_box.update("")
            self._shown = None
            return
        if self._shown == (p.id, id(p)):
            return
        self._shown = (p.id, id(p))
        delta_box.update(delta_grid(p, fmt.DELTA_STYLE, self.diffs.get(p.id, [])))
        passage_box.update(_where(p, self.passages.get(p.id)))
        title, near = near_text(p, looking=p.id in self.looking)
        self.query_one("#p-similar").border_title = title
        similar_box.update(near)


def _source(p: Proposal) -> Text:
    text = fmt.untrusted(session_name(p.provenance.session_ref), one_line=True, style=fmt.SOURCE)
    if p.provenance.byte_offset is not None:
        text.append(f" @{p.provenance.byte_offset}", style=fmt.MUTED)
    return text


def _where(p: Proposal, passage: DiaryPassage | None) -> Table | Text:
    prov = p.provenance
    where = Text()
    if prov.session_ref:
        shown = prov.session_ref
        if passage is not None and "/" in shown:
            shown = PurePath(shown).name  # the diary is at hand: its file name says enough
        where.append_text(fmt.untrusted(shown, one_line=True, style=fmt.SOURCE))
        if prov.byte_offset is not None:
            where.append(f" @ byte {prov.byte_offset}", style=fmt.MUTED)
        if origin_label(p) == "hook":
            where.append("  from a hook-driven session", style=fmt.ACCENT)
        if passage is not None:
            where.append("\n")
            where.append_text(fmt.untrusted(fmt.reflow(passage.text)))
    else:
        where.append("no session recorded", style=fmt.MUTED)
    return where
