"""The Conflicts pane: rules that say opposite things, side by side.

Resolve by keeping both (the flag closes), deprecating one (curated as a human deprecate),
or merging both into one rule you write (curated as a human merge: the originals retire
and the new rule inherits their evidence).
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import ClassVar

from rich.text import Text
from textual import on
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Horizontal, Vertical, VerticalScroll
from textual.widgets import DataTable, Static

from ...model import FeedbackEvent
from ...store.views import BulletRow
from .. import format as fmt
from ..data import ConflictView, format_age
from ..widgets.datatable import FitTable, selected_key, sync_rows


def card(row: BulletRow | None, events: list[FeedbackEvent], source: str | None) -> Text:
    if row is None:
        return Text("(bullet missing)", style=fmt.MUTED)
    text = Text()
    text.append(row.id, style="bold #7aa2f7")
    text.append("  ")
    text.append_text(fmt.bullet_type(row.type))
    text.append("  ")
    text.append_text(fmt.maturity(row.maturity))
    if row.pinned:
        text.append("  pinned", style=f"bold {fmt.ACCENT}")
    if row.state == "retired":
        text.append("  retired", style=fmt.MUTED)
    text.append("\n\n")
    text.append_text(fmt.untrusted(row.content, style="bold"))
    text.append("\n\n")
    text.append("score ", style=fmt.MUTED)
    text.append_text(fmt.score(row.effective))
    text.append("   help ", style=fmt.MUTED)
    text.append(f"{row.helpful:.2f}", style=fmt.GOOD)
    text.append("   harm ", style=fmt.MUTED)
    text.append(f"{row.harmful:.2f}", style=fmt.BAD)
    text.append("\n")
    text.append(fmt.tags(row.tags), style="#bb9af7")
    text.append(
        f"   {row.category} · {row.source} · created {row.created_at[:10]}", style=fmt.MUTED
    )
    text.append("\n")
    text.append("from ", style=fmt.MUTED)
    if source:
        text.append_text(fmt.untrusted(source, one_line=True, style="#7dcfff"))
    else:
        text.append("no session recorded", style=fmt.MUTED)
    text.append("\n\n")
    if not events:
        text.append("no feedback yet", style=fmt.MUTED)
    else:
        text.append("latest feedback\n", style=f"bold {fmt.MUTED}")
    for e in reversed(events):
        text.append(f"{e.at:%Y-%m-%d}  ", style=fmt.MUTED)
        text.append(f"{e.kind:<8}", style=fmt.GOOD if e.kind == "helpful" else fmt.BAD)
        text.append_text(fmt.untrusted(e.context or e.reason or "", one_line=True))
        text.append("\n")
    text.rstrip()
    return text


class ConflictsPane(Vertical):
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("k", "keep", "Keep both", tooltip="Both stay; the flag is resolved", id="keep"),
        Binding(
            "left_square_bracket",
            "deprecate('a')",
            "Deprecate left",
            tooltip="Deprecate the left bullet and resolve",
            id="deprecate-a",
        ),
        Binding(
            "right_square_bracket",
            "deprecate('b')",
            "Deprecate right",
            tooltip="Deprecate the right bullet and resolve",
            id="deprecate-b",
        ),
        Binding("m", "merge", "Merge", tooltip="Merge both into one rule you write", id="merge"),
    ]

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self.conflicts: dict[str, ConflictView] = {}

    def compose(self) -> ComposeResult:
        yield FitTable("reason", id="conflicts-table")
        with Horizontal(id="pair"):
            with VerticalScroll(id="card-a", classes="card"):
                yield Static("", id="card-a-text")
            with VerticalScroll(id="card-b", classes="card"):
                yield Static("", id="card-b-text")

    def on_mount(self) -> None:
        table = self.query_one(DataTable)
        table.add_column("#", key="id", width=3)
        table.add_column("left", key="a", width=10)
        table.add_column("", key="am", width=13)
        table.add_column("right", key="b", width=10)
        table.add_column("", key="bm", width=13)
        table.add_column("the rule in question", key="reason", width=20)
        table.add_column("flagged", key="age", width=9)
        for side, key in (("a", "["), ("b", "]")):
            box = self.query_one(f"#card-{side}")
            box.border_title = "Left" if side == "a" else "Right"
            box.border_subtitle = f"{key} deprecate this one"

    def current(self) -> ConflictView | None:
        key = selected_key(self.query_one(DataTable))
        return self.conflicts.get(key) if key else None

    def set_conflicts(self, conflicts: list[ConflictView]) -> None:
        self.conflicts = {str(c.conflict.id): c for c in conflicts}
        now = datetime.now(UTC)
        rows = {}
        for v in conflicts:
            c = v.conflict
            about = v.a or v.b
            summary = fmt.untrusted(about.content if about else c.reason, one_line=True)
            summary.no_wrap = True
            summary.overflow = "ellipsis"
            rows[str(c.id)] = (
                Text(str(c.id), style=fmt.MUTED),
                Text(c.a, style="#7aa2f7"),
                fmt.maturity(v.a.maturity) if v.a else Text("-"),
                Text(c.b, style="#7aa2f7"),
                fmt.maturity(v.b.maturity) if v.b else Text("-"),
                summary,
                Text(format_age(c.created_at, now), style=fmt.MUTED),
            )
        sync_rows(self.query_one(DataTable), rows)
        self.show_current()

    @on(DataTable.RowHighlighted)
    def show_current(self) -> None:
        v = self.current()
        a = self.query_one("#card-a-text", Static)
        b = self.query_one("#card-b-text", Static)
        if v is None:
            a.update(Text("No open conflicts.", style=fmt.MUTED))
            b.update("")
        else:
            a.update(card(v.a, v.a_events, v.sources.get(v.conflict.a)))
            b.update(card(v.b, v.b_events, v.sources.get(v.conflict.b)))
        self.refresh_bindings()

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        if action in ("keep", "deprecate", "merge"):
            v = self.current()
            if v is None:
                return None
            if action == "deprecate":
                row = v.a if parameters and parameters[0] == "a" else v.b
                return True if row is not None and row.state != "retired" else None
            if action == "merge":
                live = [r for r in (v.a, v.b) if r is not None and r.state != "retired"]
                return True if len(live) == 2 else None
        return True

    def action_keep(self) -> None:
        v = self.current()
        if v:
            self.app.conflict_action("keep", v)  # type: ignore[attr-defined]

    def action_deprecate(self, side: str) -> None:
        v = self.current()
        if v:
            self.app.conflict_action(f"deprecate-{side}", v)  # type: ignore[attr-defined]

    def action_merge(self) -> None:
        v = self.current()
        if v:
            self.app.conflict_action("merge", v)  # type: ignore[attr-defined]
