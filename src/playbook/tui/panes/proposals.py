"""The Proposals pane: deltas waiting for a human, each beside the bullets it resembles.

Approving curates the delta with the provenance recorded when it was proposed; an agent
can never approve its own proposal (the queue refuses any actor but a human).
"""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import PurePath
from typing import ClassVar

from rich.table import Table
from rich.text import Text
from textual import on
from textual.app import ComposeResult
from textual.binding import BindingType
from textual.containers import Horizontal, Vertical, VerticalScroll
from textual.widgets import Static

from ... import queue
from .. import format as fmt
from ..actions.rule import bindings_for, stale_targets
from ..actions.spec import Context
from ..data import DiaryPassage, format_age
from ..widgets.table import Column, RowTable
from .base import ActionPane

TYPE_STYLE = {
    "add": "#9ece6a",
    "helpful": "#7dcfff",
    "harmful": "#f7768e",
    "replace": "#e0af68",
    "merge": "#bb9af7",
    "deprecate": "#f7768e",
}


def _source(p: queue.Proposal) -> Text:
    ref = p.provenance.session_ref or "-"
    name = ref.rsplit("/", 1)[-1]
    text = fmt.untrusted(name, one_line=True, style="#7dcfff")
    if p.provenance.byte_offset is not None:
        text.append(f" @{p.provenance.byte_offset}", style=fmt.MUTED)
    return text


COLUMNS = [
    Column("id", "id", 10, priority=40, sortable=False),
    Column("type", "type", 9, priority=80, sortable=False),
    Column("proposal", "proposal", None, min_width=24, sortable=False),
    Column("from", "from", 30, priority=30, sortable=False),
    Column("age", "proposed", 9, priority=50, sortable=False),
]


class ProposalsPane(ActionPane, Vertical):
    """Deltas waiting for review; its keys act on the selected proposal."""

    SUBJECTS = ("proposal",)
    BINDINGS: ClassVar[list[BindingType]] = bindings_for("proposal")

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self.proposals: dict[str, queue.Proposal] = {}
        self.passages: dict[str, DiaryPassage | None] = {}
        self._shown: tuple[str, int] | None = None
        self._now = datetime.now(UTC)

    def compose(self) -> ComposeResult:
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
        self.show_current()

    @property
    def table(self) -> RowTable:
        return self.query_one(RowTable)

    def current(self) -> queue.Proposal | None:
        key = self.table.cursor_key
        return self.proposals.get(str(key)) if key is not None else None

    def subject(self) -> queue.Proposal | None:
        return self.current()

    def _cell(self, p: queue.Proposal, column: str) -> Text:
        if column == "id":
            return Text(p.id, style=fmt.MUTED)
        kind = str(p.delta.get("type", "?"))
        if column == "type":
            return Text(kind, style=TYPE_STYLE.get(kind, ""))
        if column == "proposal":
            text = Text()
            if stale_targets(p, self.context):
                text.append("stale ", style=f"bold {fmt.BAD}")
            text.append_text(
                fmt.untrusted(fmt.short_delta(p.delta, self._content_of), one_line=True)
            )
            return text
        if column == "from":
            return _source(p)
        return Text(format_age(p.created_at, self._now), style=fmt.MUTED)

    def set_proposals(
        self,
        proposals: list[queue.Proposal],
        passages: dict[str, DiaryPassage | None],
        context: Context,
    ) -> None:
        self.proposals = {p.id: p for p in proposals}
        self.passages = passages
        self.context = context
        self._now = datetime.now(UTC)
        self.table.set_rows(dict(self.proposals))  # type: ignore[arg-type]
        self._shown = None  # the target's state may have moved: redraw the detail
        self.show_current()
        self.refresh_bindings()

    def _content_of(self, bullet_id: str) -> str | None:
        row = self.context.row(bullet_id)
        return row.content if row is not None else None

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
            delta_box.update(Text("Nothing waits for review.", style=fmt.MUTED))
            passage_box.update("")
            similar_box.update("")
            self._shown = None
            return
        if self._shown == (p.id, id(p)):
            return
        self._shown = (p.id, id(p))
        d = p.delta
        grid = Table.grid(padding=(0, 2))
        grid.add_column(style=fmt.MUTED, no_wrap=True)
        grid.add_column()
        kind = str(d.get("type"))
        grid.add_row("type", Text(kind, style=TYPE_STYLE.get(kind, "")))
        for key in ("content", "bullet_id", "bullet_ids", "reason", "context", "bullet_type"):
            if key in d:
                value = d[key]
                text = ", ".join(value) if isinstance(value, list) else str(value)
                style = "bold" if key == "content" else ""
                grid.add_row(key.replace("_", " "), fmt.untrusted(text, style=style))
        if d.get("tags"):
            grid.add_row("tags", Text(fmt.tags(list(d["tags"])), style="#bb9af7"))
        grid.add_row("proposal", Text(p.id, style=fmt.MUTED))
        delta_box.update(grid)

        prov = p.provenance
        where = Text()
        if prov.session_ref:
            passage = self.passages.get(p.id)
            shown = prov.session_ref
            if passage is not None and "/" in shown:
                shown = PurePath(shown).name  # the diary is at hand: its file name says enough
            where.append_text(fmt.untrusted(shown, one_line=True, style="#7dcfff"))
            if prov.byte_offset is not None:
                where.append(f" @ byte {prov.byte_offset}", style=fmt.MUTED)
            if passage is not None:
                where.append("\n")
                where.append_text(fmt.untrusted(fmt.reflow(passage.text)))
        else:
            where.append("no session recorded", style=fmt.MUTED)
        passage_box.update(where)

        near = Text()
        target = d.get("bullet_id")
        if isinstance(target, str):
            self.query_one("#p-similar").border_title = "The bullet it refers to"
            row = self.context.row(target)
            near.append(target, style="bold #7aa2f7")
            if row is None:
                near.append("  (no such bullet: this proposal is stale)", style=fmt.BAD)
            else:
                if row.state == "retired":
                    near.append("  retired since: this proposal is stale", style=fmt.BAD)
                near.append("  ")
                near.append_text(fmt.bullet_type(row.type))
                near.append("  ")
                near.append_text(fmt.maturity(row.maturity))
                near.append("  score ", style=fmt.MUTED)
                near.append_text(fmt.score(row.effective))
                near.append("\n")
                near.append_text(fmt.untrusted(row.content))
            similar_box.update(near)
            return
        self.query_one("#p-similar").border_title = "Nearest existing bullets"
        if not p.similar:
            near.append(
                "nothing close: this would be a new rule"
                if kind == "add"
                else "(only adds and rewrites are compared)",
                style=fmt.MUTED,
            )
        for s in p.similar:
            filled = round(s.similarity * 10)
            near.append("█" * filled, style=fmt.ACCENT)
            near.append("░" * (10 - filled), style=fmt.MUTED)
            near.append(f" {s.similarity:.2f}  ", style=fmt.ACCENT)
            near.append(s.bullet_id, style="#7aa2f7")
            near.append("  ")
            near.append_text(fmt.maturity(s.maturity))
            if s.state == "retired":
                near.append(" retired", style=fmt.MUTED)
            near.append("\n")
            near.append_text(fmt.untrusted(s.content))
            near.append("\n\n")
        near.rstrip()
        similar_box.update(near)
