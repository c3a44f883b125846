"""The Conflicts pane: rules that say opposite things, side by side.

Resolve by keeping both (the flag closes), deprecating one (curated as a human deprecate),
or merging both into one rule you write (curated as a human merge: the originals retire,
the new rule inherits the evidence of the side it agrees with, never the flipped side's,
and a pin carries over only when the person merging ticks it). Sides come from
`review.conflicts`.
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import TYPE_CHECKING, ClassVar

from rich.console import Group, RenderableType
from rich.text import Text
from textual import on
from textual.app import ComposeResult
from textual.binding import BindingType
from textual.containers import Horizontal, VerticalScroll
from textual.widgets import Static

from .. import format as fmt
from ..actions.rule import bindings_for
from ..actions.spec import Context
from ..format import format_age
from ..widgets.columns import Column
from ..widgets.table import RowTable
from .base import Pane

if TYPE_CHECKING:
    from ...review import ConflictSide, ConflictView
    from ..reading import Snapshot

COLUMNS = [
    Column("id", "#", 3, priority=20, sortable=False),
    Column("a", "left", 10, priority=90, sortable=False),
    Column("am", "", 13, priority=50, sortable=False),
    Column("b", "right", 10, priority=90, sortable=False),
    Column("bm", "", 13, priority=50, sortable=False),
    Column("reason", "the rule in question", None, min_width=20, sortable=False),
    Column("age", "flagged", 9, priority=40, sortable=False),
]


def card(side: ConflictSide) -> RenderableType:
    b, score, events = side.bullet, side.score, side.events
    if b is None:
        return Text(f"{side.bullet_id} (bullet missing)", style=fmt.MUTED)
    head = [Text(b.id, style=fmt.ID_BOLD), fmt.bullet_type(b.type), fmt.maturity(b.maturity)]
    if b.pinned:
        head.append(Text("pinned", style=fmt.ACCENT_BOLD))
    if b.state == "retired":
        head.append(Text("retired", style=fmt.MUTED))
    parts: list[RenderableType] = [fmt.flow(head, gap=2), Text()]
    parts.append(fmt.untrusted(b.content, style="bold"))
    parts.append(Text())
    if score is not None:  # each number with its label, even in a half-width card
        numbers = [Text("score ", style=fmt.MUTED) + fmt.score(score.effective)]
        numbers.append(
            Text("help ", style=fmt.MUTED) + Text(f"{score.helpful:.2f}", style=fmt.GOOD)
        )
        numbers.append(Text("harm ", style=fmt.MUTED) + Text(f"{score.harmful:.2f}", style=fmt.BAD))
        parts.append(fmt.flow(numbers))
    text = Text()
    text.append(fmt.tags(b.tags), style=fmt.TAGS)
    text.append(f"   {b.category} · {b.source} · created {b.created_at:%Y-%m-%d}", style=fmt.MUTED)
    text.append("\n")
    text.append("from ", style=fmt.MUTED)
    source = b.provenance.session_ref
    if source:
        text.append_text(fmt.untrusted(source, one_line=True, style=fmt.SOURCE))
    else:
        text.append("no session recorded", style=fmt.MUTED)
    text.append("\n\n")
    if not events:
        text.append("no feedback yet", style=fmt.MUTED)
    else:
        text.append("latest feedback\n", style=fmt.MUTED_BOLD)
    for e in reversed(events):
        text.append(f"{e.at:%Y-%m-%d}  ", style=fmt.MUTED)
        text.append(f"{e.kind:<8}", style=fmt.GOOD if e.kind == "helpful" else fmt.BAD)
        text.append_text(fmt.untrusted(e.context or e.reason or "", one_line=True))
        text.append("\n")
    text.rstrip()
    parts.append(text)
    return Group(*parts)


class ConflictsPane(Pane):
    """Open conflict flags, the two bullets side by side; keys act on the selected pair."""

    TAB = "conflicts"
    TITLE = "Conflicts"
    FOCUS = "#conflicts-table"
    HELP_SECTION = ("Conflicts", "")
    SUBJECTS = ("conflict",)
    BINDINGS: ClassVar[list[BindingType]] = [*bindings_for("conflict")]

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self.conflicts: dict[str, ConflictView] = {}
        self._now = datetime.now(UTC)

    def compose(self) -> ComposeResult:
        yield RowTable(COLUMNS, self._cell, empty_text="No open conflicts.", id="conflicts-table")
        with Horizontal(id="pair"):
            with VerticalScroll(id="card-a", classes="card"):
                yield Static("", id="card-a-text")
            with VerticalScroll(id="card-b", classes="card"):
                yield Static("", id="card-b-text")

    def on_mount(self) -> None:
        for side, key in (("a", "["), ("b", "]")):
            box = self.query_one(f"#card-{side}")
            box.border_title = "Left" if side == "a" else "Right"
            box.border_subtitle = f"{key} deprecate this one"
        self.show_current()

    @property
    def table(self) -> RowTable[str]:
        return self.query_one(RowTable)

    def current(self) -> ConflictView | None:
        key = self.table.cursor_key
        return self.conflicts.get(str(key)) if key is not None else None

    def subject(self) -> ConflictView | None:
        return self.current()

    def _cell(self, v: ConflictView, column: str) -> Text:
        c = v.conflict
        if column == "id":
            return Text(str(c.id), style=fmt.MUTED)
        if column in ("a", "b"):
            return Text(c.a if column == "a" else c.b, style=fmt.ID)
        if column in ("am", "bm"):
            b = (v.a if column == "am" else v.b).bullet
            return fmt.maturity(b.maturity) if b else Text("-")
        if column == "reason":
            about = v.a.bullet or v.b.bullet
            return fmt.untrusted(about.content if about else c.reason, one_line=True)
        return Text(format_age(c.created_at, self._now), style=fmt.MUTED)

    def set_conflicts(self, conflicts: list[ConflictView], context: Context) -> None:
        self.conflicts = {str(c.conflict.id): c for c in conflicts}
        self.context = context
        self._now = datetime.now(UTC)
        self.table.set_rows(dict(self.conflicts))
        self.show_current()

    def apply(self, snap: Snapshot, context: Context, prepared: object) -> None:
        self.set_conflicts(snap.conflicts, context)

    def count(self, snap: Snapshot) -> int:
        return len(snap.conflicts)

    @on(RowTable.Highlighted)
    def show_current(self) -> None:
        v = self.current()
        a = self.query_one("#card-a-text", Static)
        b = self.query_one("#card-b-text", Static)
        if v is None:
            a.update(Text("No open conflicts.", style=fmt.MUTED))
            b.update("")
        else:
            a.update(card(v.a))
            b.update(card(v.b))
        self.refresh_bindings()
