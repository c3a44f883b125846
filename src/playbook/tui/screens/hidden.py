"""What decay hid: for the filter's words, the rules that matched on relevance but fell out
of recall's top results or below the floor, each with the reason in numbers (decayed help
and harm, the maturity multiplier, staleness, deprecated or retired) and what would bring
it back (`review.explain_hidden`, the same answer as `playbook recall --explain-hidden`).

Pin, restore and a fresh helpful mark act on the selected rule from here, through the same
action table as everywhere else; the list is read again after each.
"""

from __future__ import annotations

from datetime import datetime
from typing import TYPE_CHECKING, Any, ClassVar

from rich.text import Text
from textual import on, work
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Horizontal, Vertical, VerticalScroll
from textual.message import Message
from textual.screen import Screen
from textual.widgets import Input, Static
from textual.worker import get_current_worker

from ... import review
from .. import format as fmt
from ..actions.rule import bindings_for
from ..actions.spec import Context, Subject
from ..panes.base import Pane
from ..widgets.columns import Column
from ..widgets.footer import WorkbenchFooter
from ..widgets.table import RowTable

if TYPE_CHECKING:
    from ...review import HiddenItem, HiddenReport, Remedy
    from ..data import Source

ACTIONS_HERE = ("helpful", "pin", "unpin", "restore")
REASON_LABEL = {
    "outranked": "outranked",
    "deprecated": "deprecated",
    "retired": "retired",
    "out_of_scope": "out of scope",
}
COLUMNS = [
    Column("id", "id", 10, priority=60, sortable=False),
    Column("content", "rule", None, min_width=20, sortable=False),
    Column("reason", "why hidden", 12, priority=95, sortable=False),
    Column("final", "score vs cut", 14, "right", priority=80, sortable=False),
    Column("back", "brings it back", 16, priority=90, sortable=False),
]


def remedy_short(r: Remedy) -> str:
    marks = f"{r.marks} helpful" if r.marks else "fresh marks"
    return {
        "feedback": marks,
        "restore": "restore",
        "restore+feedback": f"restore, {marks}",
        "pin": "pin",
        "successor": "its successor",
    }.get(r.action, r.action)


class HiddenPane(Pane):
    """The hidden rules; keys pin, restore or mark helpful the selected one."""

    SUBJECTS: ClassVar[tuple[Subject, ...]] = ("bullet",)
    BINDINGS: ClassVar[list[BindingType]] = [
        b for b in bindings_for("bullet") if b.action in ACTIONS_HERE
    ]

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self.items: dict[str, HiddenItem] = {}

    def compose(self) -> ComposeResult:
        yield RowTable(COLUMNS, self._cell, empty_text="Reading…", id="hidden-table")
        with VerticalScroll(id="hidden-why"):
            yield Static("", id="hidden-text")

    def on_mount(self) -> None:
        self.query_one("#hidden-why").border_title = "Why, in numbers, and what brings it back"

    @property
    def table(self) -> RowTable[str]:
        return self.query_one(RowTable)

    def current(self) -> HiddenItem | None:
        key = self.table.cursor_key
        return self.items.get(str(key)) if key is not None else None

    def subject(self) -> Any:
        item = self.current()
        if item is None:
            return None
        return self.context.row(item.bullet.id) or item.bullet

    def _cell(self, item: HiddenItem, column: str) -> Text:
        if column == "id":
            return Text(item.bullet.id, style=fmt.ID)
        if column == "content":
            return fmt.untrusted(item.bullet.content, one_line=True)
        if column == "reason":
            style = fmt.BAD if item.reason in ("deprecated", "retired") else fmt.ACCENT
            return Text(REASON_LABEL.get(item.reason, item.reason), style=style)
        if column == "final":
            text = Text(f"{item.final:.2f}")
            if item.cutoff is not None:
                text.append(f" < {item.cutoff:.2f}", style=fmt.MUTED)
            return text
        return Text(remedy_short(item.remedies[0]) if item.remedies else "-", style=fmt.GOOD)

    def set_items(self, items: list[HiddenItem], context: Context) -> None:
        self.items = {i.bullet.id: i for i in items}
        self.context = context
        self.table.empty_text = "Nothing hidden: every match is in recall's results."
        self.table.set_rows(dict(self.items))
        self.show_current()

    @on(RowTable.Highlighted)
    def show_current(self) -> None:
        item = self.current()
        box = self.query_one("#hidden-text", Static)
        if item is None:
            box.update("")
        else:
            box.update(why_text(item))
        self.refresh_bindings()


def why_text(item: HiddenItem) -> Text:
    text = Text()
    text.append(item.bullet.id, style=fmt.ID_BOLD)
    text.append("  ")
    text.append_text(fmt.maturity(item.maturity))
    if item.stale:
        text.append(f"  stale ({item.days_silent:.0f} days silent)", style=fmt.STALE)
    text.append("\n")
    text.append_text(fmt.untrusted(item.bullet.content, style="bold"))
    text.append("\n")  # no blank lines: at 80x24 the numbers and the first remedy fit
    text.append_text(fmt.untrusted(item.why()))  # the reason, in numbers (the API's words)
    if item.remedies:
        text.append("\nbrings it back:\n", style=fmt.MUTED_BOLD)
        for r in item.remedies:
            text.append(f"  {remedy_short(r)}", style=fmt.GOOD)
            if r.rank_after is not None:
                text.append(f"  → rank {r.rank_after}", style=fmt.MUTED)
            if r.final_after is not None:
                text.append(f", final {r.final_after:.2f}", style=fmt.MUTED)
            if r.note:
                text.append("  ")
                text.append_text(fmt.untrusted(r.note, style=fmt.MUTED))
            text.append("\n")
    text.rstrip()
    return text


class HiddenScreen(Screen[None]):
    """The rules the words matched that recall does not show, and why."""

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("escape", "close", "Back", tooltip="Back to the workbench", id="close"),
        Binding("slash", "focus_words", "Words", tooltip="Change the words", id="words"),
    ]

    class Loaded(Message):
        def __init__(self, report: HiddenReport | None, error: str | None = None) -> None:
            super().__init__()
            self.report = report
            self.error = error

    def __init__(
        self, source: Source, words: str, as_of: datetime | None, context: Context
    ) -> None:
        super().__init__()
        self.source = source
        self.words = words
        self.as_of = as_of
        self.context = context
        self.report: HiddenReport | None = None

    def compose(self) -> ComposeResult:
        with Vertical(id="hidden"):
            with Horizontal(id="hidden-bar"):
                yield Static(" WHAT DECAY HID ", id="hidden-brand")
                yield Input(self.words, placeholder="words, as for recall", id="hidden-words")
            yield Static("", id="hidden-summary")
            yield HiddenPane(id="hidden-pane")
        yield WorkbenchFooter()

    def on_mount(self) -> None:
        self.query_one(HiddenPane).set_context(self.context)
        if self.words.strip():
            self.query_one(HiddenPane).table.focus()
            self.reload()
        else:
            self.query_one("#hidden-summary", Static).update(
                Text("Type the words to recall (enter), as in the bullets filter.", style=fmt.MUTED)
            )
            # Nothing is being read: the table waits for words, it is not "Reading…".
            self.query_one(HiddenPane).table.empty_text = "No words yet: type them above."
            self.query_one("#hidden-words", Input).focus()

    def set_context(self, context: Context) -> None:
        """A new snapshot (after an action here): the list is read again."""
        self.context = context
        self.reload()

    def reload(self) -> None:
        if self.words.strip():
            self._read(self.words)

    @work(thread=True, exclusive=True, exit_on_error=False, group="hidden")
    def _read(self, words: str) -> None:
        try:
            with self.source.open(migrate=False) as store:
                report = review.explain_hidden(store, words, as_of=self.as_of)
        except Exception as exc:  # shown on the screen, never a crash
            self.post_message(self.Loaded(None, f"{type(exc).__name__}: {exc}"))
            return
        if not get_current_worker().is_cancelled:
            self.post_message(self.Loaded(report))

    @on(Loaded)
    def _loaded(self, message: Loaded) -> None:
        summary = self.query_one("#hidden-summary", Static)
        pane = self.query_one(HiddenPane)
        if message.report is None:
            summary.update(Text(f"Could not explain: {message.error}", style=fmt.BAD))
            return
        self.report = r = message.report
        text = Text()
        shown = sum(r.shown.values())
        text.append(f"recall shows {shown}", style="bold")
        text.append(f" (limit {r.limit} per list)", style=fmt.MUTED)
        text.append(f";  {r.total} matched but hidden", style=fmt.ACCENT_BOLD)
        if len(r.hidden) < r.total:
            text.append(f", the {len(r.hidden)} closest to the cut listed", style=fmt.MUTED)
        if self.as_of is not None:
            text.append(f"   as of {fmt.moment(self.as_of)}", style="bold reverse")
        summary.update(text)
        pane.set_items(r.hidden, self.context)

    @on(Input.Submitted, "#hidden-words")
    def _words(self, event: Input.Submitted) -> None:
        self.words = event.value
        self.query_one(HiddenPane).table.focus()
        self.reload()

    def action_focus_words(self) -> None:
        self.query_one("#hidden-words", Input).focus()

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        if action == "focus_words" and isinstance(self.focused, Input):
            return False  # already there: the footer does not offer it, and / types a slash
        return super().check_action(action, parameters)

    def action_close(self) -> None:
        self.dismiss()
