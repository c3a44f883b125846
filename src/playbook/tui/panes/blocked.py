"""The Blocked pane: patterns a human has ruled out; adds near them are refused."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import TYPE_CHECKING, ClassVar

from rich.table import Table
from rich.text import Text
from textual import on
from textual.app import ComposeResult
from textual.binding import BindingType
from textual.containers import VerticalScroll
from textual.widgets import Static

from ...store import BlockedPattern
from .. import format as fmt
from ..actions.rule import bindings_for
from ..actions.spec import Context
from ..format import format_age
from ..widgets.columns import Column
from ..widgets.table import RowTable
from .base import Pane

if TYPE_CHECKING:
    from ..reading import Snapshot

COLUMNS = [
    Column("id", "id", 10, priority=30, sortable=False),
    Column("pattern", "pattern", None, min_width=24, sortable=False),
    Column("reason", "reason", None, min_width=16, sortable=False),
    Column("by", "by", 6, priority=20, sortable=False),
    Column("age", "blocked", 9, priority=40, sortable=False),
]


class BlockedPane(Pane):
    """Patterns a human ruled out; keys block a new one or unblock the selected one."""

    TAB = "blocked"
    TITLE = "Blocked"
    FOCUS = "#blocked-table"
    HELP_SECTION = ("Blocked", "")
    SUBJECTS = ("blocked", "none")
    BINDINGS: ClassVar[list[BindingType]] = [*bindings_for("none", "blocked")]

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self.blocked: dict[str, BlockedPattern] = {}
        self._now = datetime.now(UTC)

    def compose(self) -> ComposeResult:
        yield RowTable(COLUMNS, self._cell, empty_text="No blocked patterns.", id="blocked-table")
        with VerticalScroll(id="blocked-detail"):
            yield Static("", id="blocked-text")

    def on_mount(self) -> None:
        self.query_one("#blocked-detail").border_title = "Pattern"
        self.show_current()

    @property
    def table(self) -> RowTable[str]:
        return self.query_one(RowTable)

    def current(self) -> BlockedPattern | None:
        key = self.table.cursor_key
        return self.blocked.get(str(key)) if key is not None else None

    def subject(self) -> BlockedPattern | None:
        return self.current()

    def _cell(self, b: BlockedPattern, column: str) -> Text:
        if column == "id":
            return Text(b.id, style=fmt.MUTED)
        if column == "pattern":
            return fmt.untrusted(b.pattern, one_line=True, style="bold")
        if column == "reason":
            return fmt.untrusted(b.reason, one_line=True)
        if column == "by":
            return Text(b.actor, style=fmt.ACCENT if b.actor == "human" else fmt.MUTED)
        return Text(format_age(b.created_at, self._now), style=fmt.MUTED)

    def set_blocked(self, blocked: list[BlockedPattern], context: Context) -> None:
        self.blocked = {b.id: b for b in blocked}
        self.context = context
        self._now = datetime.now(UTC)
        self.table.set_rows(dict(self.blocked))
        self.show_current()

    def apply(self, snap: Snapshot, context: Context, prepared: object) -> None:
        self.set_blocked(snap.blocked, context)

    def count(self, snap: Snapshot) -> int:
        return len(snap.blocked)

    @on(RowTable.Highlighted)
    def show_current(self) -> None:
        b = self.current()
        box = self.query_one("#blocked-text", Static)
        if b is None:
            box.update(Text("No blocked patterns. Press n to block one.", style=fmt.MUTED))
        else:
            grid = Table.grid(padding=(0, 2))
            grid.add_column(style=fmt.MUTED, no_wrap=True)
            grid.add_column()
            grid.add_row("pattern", fmt.untrusted(b.pattern, style="bold"))
            grid.add_row("reason", fmt.untrusted(b.reason))
            grid.add_row("blocked", Text(f"{b.created_at:%Y-%m-%d %H:%M} by {b.actor}"))
            policy = self.context.policy
            grid.add_row(
                "effect",
                Text(
                    "adds whose text matches it (exactly, by token overlap >= "
                    f"{policy.blocked_jaccard:g}, or fuzzy ratio >= "
                    f"{policy.blocked_fuzz_ratio:g}) are refused by the curator",
                    style=fmt.MUTED,
                ),
            )
            box.update(grid)
        self.refresh_bindings()
