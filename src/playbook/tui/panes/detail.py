"""The Detail pane: one bullet in full, the evidence behind it, and how its score moved.

Left: the content, its facts, the diary passage it came from (when the file is at hand),
its lineage and the decisions taken on it. Right: the effective score over time and every
feedback event, newest first.
"""

from __future__ import annotations

import functools
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, ClassVar

from rich.console import Group
from rich.table import Table
from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Vertical, VerticalScroll
from textual.message import Message
from textual.widgets import Static

from ...project.workspace import Workspace, same_workspace, workspace_of
from ...store.views import BulletRow
from .. import format as fmt
from ..actions.rule import bindings_for
from ..format import format_age

if TYPE_CHECKING:
    from ...core.model import FeedbackEvent
    from ...review import BulletDetail
    from ..reading import DetailRead, Snapshot
from ..widgets.chart import ScoreChart
from ..widgets.columns import Column
from ..widgets.table import RowTable
from .base import Pane

EVENT_COLUMNS = [
    Column("when", "when", 16, priority=90, sortable=False),
    Column("kind", "kind", 7, priority=85, sortable=False),
    Column("weight", "weight", 6, "right", priority=30, sortable=False),
    Column("reason", "reason", 13, priority=60, sortable=False),
    Column("by", "by", 5, priority=40, sortable=False),
    Column("context", "context", None, min_width=12, sortable=False),
]


def _pair(label: str, value: Text) -> Text:
    """A muted label and its value, kept together."""
    text = Text(label, style=fmt.MUTED)
    text.append_text(value)
    return text


@functools.cache
def _this_workspace() -> Workspace | None:
    """The workspace the workbench runs in (`project.workspace`), read once."""
    return workspace_of(Path.cwd())


def _when(t: datetime) -> str:
    return f"{t:%Y-%m-%d %H:%M}"


def event_cell(e: FeedbackEvent, column: str) -> Text:
    if column == "when":
        return Text(_when(e.at))
    if column == "kind":
        return Text(e.kind, style=fmt.GOOD if e.kind == "helpful" else fmt.BAD)
    if column == "weight":
        return Text(f"{e.weight:g}")
    if column == "reason":
        return Text(e.reason or "", style=fmt.MUTED)
    if column == "by":
        return Text(e.actor, style=fmt.ACCENT if e.actor == "human" else fmt.MUTED)
    return fmt.untrusted(e.context, one_line=True)


class DetailPane(Pane):
    """One bullet in full; its keys act on that bullet."""

    TAB = "detail"
    TITLE = "Detail"
    FOCUS = "#d-timeline"
    HELP_SECTION = ("Bullets and Detail", "")
    SUBJECTS = ("bullet",)

    class BackRequested(Message):
        """Escape: back to the bullets table."""

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("escape", "back", "Back", tooltip="Back to the bullets", id="back"),
        *bindings_for("bullet"),
    ]

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self.read: DetailRead | None = None
        self.bullet_id: str | None = None  # shown, or being read

    def compose(self) -> ComposeResult:
        with VerticalScroll(id="detail-left"):
            yield Static(
                Text("Select a bullet in the Bullets tab (enter).", style=fmt.MUTED), id="d-head"
            )
            yield Static("", id="d-content")
            yield Static("", id="d-facts")
            yield Static("", id="d-passage")
            yield Static("", id="d-lineage")
            yield Static("", id="d-decisions")
        with Vertical(id="detail-right"):
            with Vertical(id="d-chart-box"):
                yield ScoreChart(id="d-chart")
            table: RowTable[int] = RowTable(  # by event id
                EVENT_COLUMNS, event_cell, empty_text="", id="d-timeline"
            )
            table.border_title = "Feedback events"
            yield table

    def on_mount(self) -> None:
        self.query_one("#d-chart-box").border_title = "Effective score over time"
        for wid, title in (
            ("#d-content", "Content"),
            ("#d-facts", "Facts"),
            ("#d-passage", "Where it came from"),
            ("#d-lineage", "Lineage"),
            ("#d-decisions", "Decision log"),
        ):
            self.query_one(wid).border_title = title

    @property
    def detail(self) -> BulletDetail | None:
        """The API's one shape of the bullet shown (None while it is being read)."""
        return self.read.detail if self.read is not None else None

    def current_bullet_id(self) -> str | None:
        return self.bullet_id

    def label(self, snap: Snapshot, narrow: bool) -> str:
        if self.bullet_id and not narrow:  # at 80 columns the id would crowd the tabs
            return f"{self.TITLE} [dim]{self.bullet_id}[/dim]"
        return self.TITLE

    def subject(self) -> BulletRow | None:
        return self.context.row(self.bullet_id)

    def action_back(self) -> None:
        self.post_message(self.BackRequested())

    # ---------------------------------------------------------------- render
    def show_loading(self, bullet_id: str, row: BulletRow | None) -> None:
        """At once, before the history is read: what the snapshot already knows about the
        bullet, and a word that the rest is on its way (never an empty pane)."""
        self.bullet_id = bullet_id
        if self.detail is not None and self.detail.bullet.id == bullet_id:
            return  # already shown; a reload replaces it when it lands
        self.read = None
        head = Text()
        head.append(bullet_id, style=fmt.ID_BOLD)
        if row is not None:
            head.append("   ")
            head.append_text(fmt.bullet_type(row.type))
            head.append("   ")
            head.append_text(fmt.maturity(row.maturity))
            head.append("\n")
            head.append_text(_pair("score ", fmt.score(row.effective)))
        head.append("\n")
        head.append("reading its history…", style=fmt.MUTED_ITALIC)
        self.query_one("#d-head", Static).update(head)
        content = fmt.untrusted(row.content) if row is not None else Text("…", style=fmt.MUTED)
        self.query_one("#d-content", Static).update(content)
        for wid in ("#d-facts", "#d-passage", "#d-lineage", "#d-decisions"):
            self.query_one(wid, Static).update(Text("…", style=fmt.MUTED))
        self.query_one(ScoreChart).set_data([], [], "reading the score history…")
        self.query_one("#d-chart-box").border_subtitle = ""
        table = self.query_one("#d-timeline", RowTable)
        table.empty_text = "Reading the feedback events…"
        table.set_rows({})
        self.refresh_bindings()

    def show(self, read: DetailRead | None) -> None:
        self.read = read
        if read is None:
            self.query_one("#d-head", Static).update(
                Text("That bullet no longer exists.", style=fmt.MUTED)
            )
            return
        detail = read.detail
        self.bullet_id = detail.bullet.id
        b, s = detail.bullet, detail.score
        now = datetime.now(UTC)

        # Each label stays with its number: at 80 columns the pairs go to the next line
        # whole, never "harm" on one line and "0.00" on the next.
        first = [
            Text(b.id, style=fmt.ID_BOLD),
            fmt.bullet_type(b.type),
            fmt.maturity(b.maturity),
        ]
        if b.pinned:
            first.append(Text("pinned", style=fmt.ACCENT_BOLD))
        if b.state != "active":
            first.append(Text(b.state, style=fmt.MUTED))
        if s.stale:
            first.append(Text("stale", style=fmt.STALE))
        numbers = [
            _pair("score ", fmt.score(s.effective)),
            _pair("help ", Text(f"{s.helpful:.2f}", style=fmt.GOOD)),
            _pair("harm ", Text(f"{s.harmful:.2f}", style=fmt.BAD)),
            _pair("earns ", fmt.maturity(s.earned, glyph=False)),
        ]
        self.query_one("#d-head", Static).update(Group(fmt.flow(first), fmt.flow(numbers)))
        self.query_one("#d-content", Static).update(fmt.untrusted(b.content))

        facts = Table.grid(padding=(0, 2))
        facts.add_column(style=fmt.MUTED, no_wrap=True)
        facts.add_column()
        facts.add_row("tags", Text(fmt.tags(b.tags) or "-", style=fmt.TAGS))
        facts.add_row("category", fmt.untrusted(b.category, one_line=True))
        scope = b.scope + (f": {b.scope_key}" if b.scope_key else "")
        if b.scope == "workspace" and b.scope_key:
            here = _this_workspace()
            scope += " (this workspace)" if same_workspace(b.scope_key, here) else ""
        facts.add_row("scope", fmt.untrusted(scope, one_line=True))
        facts.add_row("kind", fmt.untrusted(b.kind, one_line=True))
        facts.add_row("source", Text(str(b.source)))
        age = Text(f"({format_age(b.created_at, now)})", style=fmt.MUTED)
        facts.add_row("created", fmt.flow([Text(_when(b.created_at)), age], gap=2))
        if b.valid_to:
            facts.add_row("retired", Text(_when(b.valid_to)))
        half_life = b.half_life_days or self.context.policy.half_life_days
        facts.add_row("half-life", Text(f"{half_life:g} days"))
        if b.pinned:
            facts.add_row(
                "pinned", fmt.untrusted(b.pinned_reason or "(no reason)", style=fmt.ACCENT)
            )
        for c in detail.conflicts:
            other_id = c.b if c.a == b.id else c.a
            label = "conflict" if c.status == "open" else "conflict (resolved)"
            facts.add_row(label, fmt.untrusted(f"with {other_id}: {c.resolution or c.reason}"))
        self.query_one("#d-facts", Static).update(facts)

        passage = self.query_one("#d-passage", Static)
        prov = b.provenance
        if prov.session_ref:
            where = Text()
            where.append_text(fmt.untrusted(prov.session_ref, one_line=True, style=fmt.SOURCE))
            if prov.byte_offset is not None:
                where.append(f" @ byte {prov.byte_offset}", style=fmt.MUTED)
            if read.passage is not None:
                where.append("\n")
                where.append_text(fmt.untrusted(fmt.reflow(read.passage.text)))
            elif prov.byte_offset is not None:
                where.append("\n(diary file not at hand)", style=fmt.MUTED)
            passage.update(where)
        else:
            passage.update(
                Text("entered by hand or imported: no session recorded", style=fmt.MUTED)
            )

        lineage = Text()
        for kind, other in detail.predecessors:
            verb = "supersedes" if kind == "supersedes" else "inverts"
            lineage.append(f"{verb} ", style=fmt.MUTED)
            lineage.append(other.id, style=fmt.ID)
            lineage.append("  ")
            lineage.append_text(fmt.untrusted(other.content, one_line=True))
            lineage.append("\n")
        for kind, other in detail.successors:
            verb = "superseded by" if kind == "supersedes" else "inverted into"
            lineage.append(f"{verb} ", style=fmt.MUTED)
            lineage.append(other.id, style=fmt.ID)
            lineage.append("  ")
            lineage.append_text(fmt.untrusted(other.content, one_line=True))
            lineage.append("\n")
        if not lineage:
            lineage.append("an original: no predecessors or successors", style=fmt.MUTED)
        lineage.rstrip()
        self.query_one("#d-lineage", Static).update(lineage)

        decisions = Table.grid(padding=(0, 1))
        decisions.add_column(style=fmt.MUTED, no_wrap=True)
        decisions.add_column(no_wrap=True)
        decisions.add_column()
        shown = [d for d in detail.decisions if d.action not in ("helpful", "harmful")]
        for d in reversed(shown[-12:]):
            what = Text(d.action, style="bold" if d.actor == "human" else "")
            if d.action == "maturity" and d.detail:
                what.append(f" {d.detail.get('from')} -> {d.detail.get('to')}", style=fmt.MUTED)
            elif d.status not in ("applied", "added"):
                what.append(f" {d.status}", style=fmt.MUTED)
            decisions.add_row(
                f"{d.at:%Y-%m-%d}",
                Text(d.actor, style=fmt.ACCENT if d.actor == "human" else fmt.MUTED),
                Group(what, fmt.untrusted(d.reason, style=fmt.MUTED)) if d.reason else what,
            )
        self.query_one("#d-decisions", Static).update(decisions)

        chart = self.query_one(ScoreChart)
        # Every event behind the score, inherited ones too (`ScoreSeries.events`).
        chart.set_data(read.series, [(e.at, e.kind) for e in read.series.events])
        box = self.query_one("#d-chart-box")
        start, last = read.series[0][1], read.series[-1][1]
        peak = max(v for _, v in read.series)
        room = box.size.width - 6  # the corners and the spaces around a subtitle
        box.border_subtitle = fmt.fit(
            [
                f"now {last:+z.2f}  peak {peak:+z.2f}  first {start:+z.2f}",
                f"now {last:+z.2f}  peak {peak:+z.2f}",
                f"now {last:+z.2f}",
            ],
            room,
        )

        table = self.query_one("#d-timeline", RowTable)
        table.empty_text = "No feedback yet."
        table.set_rows({e.id: e for e in reversed(detail.timeline)})
        helpful = sum(1 for e in detail.timeline if e.kind == "helpful")
        harmful = len(detail.timeline) - helpful
        table.border_title = fmt.fit(
            [
                f"Feedback events  {helpful} helpful, {harmful} harmful",
                f"Events  {helpful} helpful, {harmful} harmful",
                f"Events  {helpful}+ {harmful}x",
            ],
            table.size.width - 6,
        )
        self.refresh_bindings()
