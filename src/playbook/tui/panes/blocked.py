"""The Blocked pane: patterns a human has ruled out; adds near them are refused."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import ClassVar

from rich.table import Table
from rich.text import Text
from textual import on
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Vertical, VerticalScroll
from textual.widgets import DataTable, Static

from ...store import BlockedPattern
from .. import format as fmt
from ..data import format_age
from ..widgets.datatable import FitTable, selected_key, sync_rows


class BlockedPane(Vertical):
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("n", "add", "Block pattern", tooltip="Block a new pattern", id="block-new"),
        Binding("u", "unblock", "Unblock", tooltip="Allow adds like it again", id="unblock"),
    ]

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self.blocked: dict[str, BlockedPattern] = {}

    def compose(self) -> ComposeResult:
        yield FitTable("reason", id="blocked-table")
        with VerticalScroll(id="blocked-detail"):
            yield Static("", id="blocked-text")

    def on_mount(self) -> None:
        table = self.query_one(DataTable)
        table.add_column("id", key="id", width=10)
        table.add_column("pattern", key="pattern", width=48)
        table.add_column("reason", key="reason", width=20)
        table.add_column("by", key="by", width=6)
        table.add_column("blocked", key="age", width=9)
        self.query_one("#blocked-detail").border_title = "Pattern"

    def current(self) -> BlockedPattern | None:
        key = selected_key(self.query_one(DataTable))
        return self.blocked.get(key) if key else None

    def set_blocked(self, blocked: list[BlockedPattern]) -> None:
        self.blocked = {b.id: b for b in blocked}
        now = datetime.now(UTC)
        rows = {}
        for b in blocked:
            pattern = fmt.untrusted(b.pattern, one_line=True, style="bold")
            reason = fmt.untrusted(b.reason, one_line=True)
            for t in (pattern, reason):
                t.no_wrap = True
                t.overflow = "ellipsis"
            rows[b.id] = (
                Text(b.id, style=fmt.MUTED),
                pattern,
                reason,
                Text(b.actor, style=fmt.ACCENT if b.actor == "human" else fmt.MUTED),
                Text(format_age(b.created_at, now), style=fmt.MUTED),
            )
        sync_rows(self.query_one(DataTable), rows)
        self.show_current()

    @on(DataTable.RowHighlighted)
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
            grid.add_row(
                "effect",
                Text(
                    "adds whose text matches it (exactly, by token overlap >= 0.85, or fuzzy "
                    "ratio >= 90) are refused by the curator",
                    style=fmt.MUTED,
                ),
            )
            box.update(grid)
        self.refresh_bindings()

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        if action == "unblock":
            return True if self.current() else None
        return True

    def action_add(self) -> None:
        self.app.block_new()  # type: ignore[attr-defined]

    def action_unblock(self) -> None:
        b = self.current()
        if b:
            self.app.unblock(b)  # type: ignore[attr-defined]
