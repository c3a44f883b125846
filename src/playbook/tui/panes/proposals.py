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
from textual.binding import Binding, BindingType
from textual.containers import Horizontal, Vertical, VerticalScroll
from textual.widgets import DataTable, Static

from ... import queue
from .. import format as fmt
from ..data import DiaryPassage, format_age
from ..widgets.datatable import FitTable, selected_key, sync_rows

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


class ProposalsPane(Vertical):
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding(
            "a",
            "approve",
            "Approve",
            tooltip="Curate it, with its recorded provenance",
            id="approve",
        ),
        Binding("e", "edit", "Edit+approve", tooltip="Edit the text, then approve", id="edit"),
        Binding("x", "reject", "Reject", tooltip="Reject, with a reason", id="reject"),
        Binding(
            "B",
            "reject_block",
            "Reject+block",
            tooltip="Reject and block the pattern for good",
            id="reject-block",
        ),
    ]

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self.proposals: dict[str, queue.Proposal] = {}
        self.passages: dict[str, DiaryPassage | None] = {}
        self._shown: str | None = None

    def compose(self) -> ComposeResult:
        yield FitTable("proposal", id="proposals-table")
        with Horizontal(id="proposal-detail"):
            with VerticalScroll(id="p-left"):
                yield Static("", id="p-delta")
                yield Static("", id="p-passage")
            with VerticalScroll(id="p-right"):
                yield Static("", id="p-similar")

    def on_mount(self) -> None:
        table = self.query_one(DataTable)
        table.add_column("id", key="id", width=10)
        table.add_column("type", key="type", width=9)
        table.add_column("proposal", key="proposal", width=20)
        table.add_column("from", key="from", width=30)
        table.add_column("proposed", key="age", width=9)
        self.query_one("#p-delta").border_title = "Proposed change"
        self.query_one("#p-passage").border_title = "In the session"
        self.query_one("#p-similar").border_title = "Nearest existing bullets"

    def current(self) -> queue.Proposal | None:
        key = selected_key(self.query_one(DataTable))
        return self.proposals.get(key) if key else None

    def set_proposals(
        self, proposals: list[queue.Proposal], passages: dict[str, DiaryPassage | None]
    ) -> None:
        self.proposals = {p.id: p for p in proposals}
        self.passages = passages
        now = datetime.now(UTC)
        rows = {}
        for p in proposals:
            kind = str(p.delta.get("type", "?"))
            summary = fmt.untrusted(fmt.short_delta(p.delta, self._content_of), one_line=True)
            summary.no_wrap = True
            summary.overflow = "ellipsis"
            rows[p.id] = (
                Text(p.id, style=fmt.MUTED),
                Text(kind, style=TYPE_STYLE.get(kind, "")),
                summary,
                _source(p),
                Text(format_age(p.created_at, now), style=fmt.MUTED),
            )
        sync_rows(self.query_one(DataTable), rows)
        self.show_current()
        self.refresh_bindings()

    def _content_of(self, bullet_id: str) -> str | None:
        row = self.app.row(bullet_id)  # type: ignore[attr-defined]
        return row.content if row is not None else None

    @on(DataTable.RowHighlighted)
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
        if self._shown == p.id:
            return
        self._shown = p.id
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
            row = self.app.row(target)  # type: ignore[attr-defined]
            near.append(target, style="bold #7aa2f7")
            if row is None:
                near.append("  (no such bullet)", style=fmt.BAD)
            else:
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

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        if action in ("approve", "reject"):
            return True if self.current() else None
        if action in ("edit", "reject_block"):
            p = self.current()
            return True if p and isinstance(p.delta.get("content"), str) else None
        return True

    def action_approve(self) -> None:
        p = self.current()
        if p:
            self.app.proposal_action("approve", p)  # type: ignore[attr-defined]

    def action_edit(self) -> None:
        p = self.current()
        if p:
            self.app.proposal_action("edit", p)  # type: ignore[attr-defined]

    def action_reject(self) -> None:
        p = self.current()
        if p:
            self.app.proposal_action("reject", p)  # type: ignore[attr-defined]

    def action_reject_block(self) -> None:
        p = self.current()
        if p:
            self.app.proposal_action("reject_block", p)  # type: ignore[attr-defined]
