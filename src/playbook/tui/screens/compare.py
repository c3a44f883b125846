"""Then and now: which rules appeared since a moment, which were retired, which changed
rung, and which moved most in score (`review.diff_since`, the same answer as
`playbook diff --since DATE`). `n` jumps to the next group (a month of a busy playbook
lists dozens of new rules before the first mover); Enter opens a rule in Detail; escape
goes back."""

from __future__ import annotations

from datetime import datetime
from typing import TYPE_CHECKING, Any, ClassVar

from rich.text import Text
from textual import on, work
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Vertical
from textual.message import Message
from textual.screen import Screen
from textual.widgets import Static
from textual.worker import get_current_worker

from ... import review
from .. import format as fmt
from ..widgets.columns import Column
from ..widgets.footer import WorkbenchFooter
from ..widgets.table import RowTable

if TYPE_CHECKING:
    from ...review import PlaybookDiff, RuleChange
    from ..data import Source

GROUPS = (
    ("appeared", "appeared", fmt.GOOD),
    ("retired", "retired", fmt.MUTED),
    ("rung_changes", "rung", fmt.ACCENT),
    ("movers", "moved", fmt.MOVED),
)
COLUMNS = [
    Column("change", "change", 9, priority=95, sortable=False),
    Column("id", "id", 10, priority=60, sortable=False),
    Column("content", "rule", None, min_width=20, sortable=False),
    Column("rung", "rung then → now", 25, priority=70, sortable=False),
    Column("score", "score then → now", 17, "right", priority=80, sortable=False),
    Column("delta", "moved", 7, "right", priority=90, sortable=False),
]


def _score(value: float | None) -> Text:
    return fmt.score(value) if value is not None else Text("-", style=fmt.MUTED)


class CompareScreen(Screen[None]):
    """The changes between a moment and now, grouped: appeared, retired, rung, moved."""

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("escape", "close", "Back", tooltip="Back to the workbench", id="close"),
        Binding("enter", "open", "Open", tooltip="Open the rule in Detail", id="open"),
        Binding(
            "n",
            "next_group",
            "Next group",
            tooltip="Jump to the first rule of the next group: appeared, retired, rung, moved",
            id="next-group",
        ),
    ]

    class Loaded(Message):
        def __init__(self, diff: PlaybookDiff | None, error: str | None = None) -> None:
            super().__init__()
            self.diff = diff
            self.error = error

    class OpenBullet(Message):
        """Show this rule in the workbench's Detail tab; escape there comes back to this
        list, at `since`, on the row `key`."""

        def __init__(self, bullet_id: str, since: datetime, key: str) -> None:
            super().__init__()
            self.bullet_id = bullet_id
            self.since = since
            self.key = key

    def __init__(self, source: Source, since: datetime, *, select: str | None = None) -> None:
        super().__init__()
        self.source = source
        self.since = since
        self.select = select  # the row to put the cursor on once the list is read
        self.diff: PlaybookDiff | None = None
        self.changes: dict[str, tuple[str, RuleChange]] = {}

    def compose(self) -> ComposeResult:
        with Vertical(id="compare"):
            yield Static(self._title(), id="compare-title")
            yield Static(Text("Comparing…", style=fmt.MUTED), id="compare-counts")
            yield RowTable(COLUMNS, self._cell, empty_text="Reading…", id="compare-table")
        yield WorkbenchFooter()

    def _title(self) -> Text:
        text = Text()
        text.append(" THEN AND NOW ", style="bold reverse")
        text.append(f"  {fmt.moment(self.since)} → now", style="bold")
        return text

    def on_mount(self) -> None:
        self.query_one(RowTable).focus()
        self._read()

    @work(thread=True, exclusive=True, exit_on_error=False, group="compare")
    def _read(self) -> None:
        try:
            with self.source.open(migrate=False) as store:
                diff = review.diff_since(
                    store,
                    self.since,
                    moments=self.source.moments,
                    # the workbench's tables, if nothing was written since they were read
                    then=self.source.table_as_of(self.since),
                    now=self.source.table_now(),
                )
        except Exception as exc:  # shown on the screen, never a crash
            self.post_message(self.Loaded(None, f"{type(exc).__name__}: {exc}"))
            return
        if not get_current_worker().is_cancelled:
            self.post_message(self.Loaded(diff))

    @on(Loaded)
    def _loaded(self, message: Loaded) -> None:
        counts = self.query_one("#compare-counts", Static)
        table = self.query_one(RowTable)
        if message.diff is None:
            counts.update(Text(f"Could not compare: {message.error}", style=fmt.BAD))
            table.empty_text = ""
            table.set_rows({})
            return
        self.diff = diff = message.diff
        self.changes = {}
        for group, label, _ in GROUPS:
            for change in getattr(diff, group):
                self.changes[f"{group}:{change.id}"] = (label, change)
        c = diff.counts
        text = Text()
        text.append(f"{c.get('rules_then', 0):,}", style="bold")
        text.append(" rules then, ", style=fmt.MUTED)
        text.append(f"{c.get('rules_now', 0):,}", style="bold")
        text.append(" now.  ", style=fmt.MUTED)
        for group, label, style in GROUPS:
            key = "moved" if group == "movers" else group
            count = Text(f"{c.get(key, len(getattr(diff, group))):,} ", style=style)
            text.append_text(fmt.bold(count))
            text.append(f"{label}  ", style=fmt.MUTED)
        counts.update(text)
        table.empty_text = "Nothing changed."
        table.set_rows(dict(self.changes))
        if self.select is not None:  # back from a rule opened here: on its row again
            table.move_to(self.select)
            self.select = None

    def _cell(self, item: tuple[str, RuleChange], column: str) -> Text:
        label, ch = item
        if column == "change":
            style = next(s for _, lab, s in GROUPS if lab == label)
            return Text(label, style=style)
        if column == "id":
            return Text(ch.id, style=fmt.ID)
        if column == "content":
            return fmt.untrusted(ch.content, one_line=True)
        if column == "rung":
            text = fmt.maturity(ch.maturity_then) if ch.maturity_then else Text("-")
            text.append(" → ", style=fmt.MUTED)
            text.append_text(fmt.maturity(ch.maturity_now) if ch.maturity_now else Text("-"))
            if ch.state_now == "retired" and ch.state_then != "retired":
                text.append(" (retired)", style=fmt.MUTED)
            return text
        if column == "score":
            text = _score(ch.score_then)
            text.append(" → ", style=fmt.MUTED)
            text.append_text(_score(ch.score_now))
            return text
        delta = ch.delta
        return fmt.score(delta) if delta is not None else Text("")

    def current(self) -> Any:
        key = self.query_one(RowTable).cursor_key
        return self.changes.get(str(key)) if key is not None else None

    @on(RowTable.Selected)
    def action_open(self) -> None:
        item = self.current()
        key = self.query_one(RowTable).cursor_key
        if item is not None:
            self.dismiss()
            self.app.post_message(self.OpenBullet(item[1].id, self.since, str(key)))

    def action_next_group(self) -> None:
        """The cursor to the first rule of the next group that has any (after the last,
        the first again)."""
        table = self.query_one(RowTable)
        keys = list(self.changes)
        if not keys:
            return
        here = str(table.cursor_key or keys[0]).split(":")[0]
        firsts: dict[str, str] = {}
        for key in keys:
            firsts.setdefault(key.split(":")[0], key)
        groups = list(firsts)
        after = groups[(groups.index(here) + 1) % len(groups)] if here in groups else groups[0]
        table.move_to(firsts[after], at_top=True)

    def action_close(self) -> None:
        self.dismiss()
