"""The Bullets pane: every rule and anti-pattern with its score, sortable and filterable.

`/` filters with recall's ranking: the words' keyword relevance (read from the token index
in a thread worker) times each row's effective score; `is:` words narrow by state.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable
from typing import TYPE_CHECKING, Any, ClassVar

from rich.text import Text
from textual import on
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Horizontal, Vertical
from textual.widgets import Input, Static

from .. import format as fmt
from ..data import FilterSpec, parse_filter, recall_rank, row_passes
from ..widgets.table import Column, RowTable
from .actions import BulletActions

if TYPE_CHECKING:
    from ...store.views import BulletRow

COLUMNS = [
    Column("id", "id", 10),
    Column("content", "content", None, min_width=20),
    Column("type", "type", 5),
    Column("maturity", "maturity", 13),
    Column("effective", "score", 7, "right"),
    Column("helpful", "help", 5, "right"),
    Column("harmful", "harm", 5, "right"),
    Column("pinned", "pin", 3, "center"),
    Column("stale", "stale", 5),
]
SORT_CYCLE = ["effective", "maturity", "helpful", "harmful", "created", "id", "content", "type"]
MATURITY_RANK = {"deprecated": 0, "candidate": 1, "established": 2, "proven": 3}

SORT_KEYS: dict[str, Callable[[BulletRow], Any]] = {
    "id": lambda r: r.id,
    "content": lambda r: r.content.lower(),
    "type": lambda r: r.type,
    "maturity": lambda r: (MATURITY_RANK.get(r.maturity, 0), r.effective),
    "effective": lambda r: r.effective,
    "helpful": lambda r: r.helpful,
    "harmful": lambda r: r.harmful,
    "pinned": lambda r: (r.pinned, r.effective),
    "stale": lambda r: (r.stale, r.effective),
    "created": lambda r: r.created_at,
}
DESCENDING = {"effective", "maturity", "helpful", "harmful", "pinned", "stale", "created"}
SORT_LABEL = {"effective": "score", "created": "newest"}


def render_cell(row: BulletRow, column: str) -> Text:
    retired = row.state == "retired"
    if column == "id":
        return Text(row.id, style=fmt.MUTED if retired else "#7aa2f7")
    if column == "content":
        return fmt.untrusted(row.content, one_line=True, style="strike dim" if retired else "")
    if column == "type":
        return fmt.bullet_type(row.type)
    if column == "maturity":
        if retired:
            return Text("- retired", style=fmt.MUTED)
        return fmt.maturity(row.maturity)
    if column == "effective":
        return fmt.score(row.effective)
    if column == "helpful":
        return fmt.amount(row.helpful, fmt.GOOD)
    if column == "harmful":
        return fmt.amount(row.harmful, fmt.BAD)
    if column == "pinned":
        return Text("pin", style=f"bold {fmt.ACCENT}") if row.pinned else Text("")
    if column == "stale":
        return Text("stale", style="#ff9e64") if row.stale else Text("")
    return Text("")


class BulletsPane(BulletActions, Vertical):
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("slash", "focus_filter", "Filter", tooltip="Filter: words ranked like recall"),
        Binding("escape", "clear_filter", "Clear filter", show=False),
        Binding("s", "cycle_sort", "Sort", tooltip="Sort by the next column"),
        Binding("S", "reverse_sort", "Reverse", show=False),
        *BulletActions.ACTION_BINDINGS,
    ]

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self.rows: dict[str, BulletRow] = {}
        self.spec: FilterSpec = parse_filter("")
        self.relevance: dict[str, float] | None = None
        self.sort_column: str | None = None  # None: by score (or by rank while filtering)
        self.sort_reverse = False

    def compose(self) -> ComposeResult:
        with Horizontal(id="filter-bar"):
            yield Static("/", id="filter-slash")
            yield Input(
                placeholder="filter: words rank like recall; is:pinned is:stale is:anti "
                "is:proven is:deprecated is:retired",
                id="filter",
            )
            yield Static("", id="filter-info")
        yield RowTable(COLUMNS, render_cell, empty_text="No bullet matches.", id="bullets-table")
        yield Static("", id="peek")

    @property
    def table(self) -> RowTable:
        return self.query_one(RowTable)

    def current_bullet_id(self) -> str | None:
        key = self.table.cursor_key
        return str(key) if key is not None else None

    # ---------------------------------------------------------------- data in
    def set_rows(self, rows: list[BulletRow]) -> None:
        self.rows = {r.id: r for r in rows}
        diff = self.table.apply((r.id, r) for r in rows)
        self.refilter()
        if diff.any:
            self.update_peek()

    def set_relevance(self, text: str, relevance: dict[str, float] | None) -> None:
        if text != self.query_one("#filter", Input).value:
            return  # a stale answer for an older keystroke
        self.spec = parse_filter(text)
        self.relevance = relevance
        self.refilter(keep_top=True)

    def refilter(self, *, keep_top: bool = False) -> None:
        flags = self.spec.flags
        rows = [r for r in self.rows.values() if row_passes(r, flags)]
        relevance = self.relevance
        ranked = relevance is not None and not self.spec.empty and self.spec.words.strip()
        if ranked and relevance is not None:
            rows = [r for r in rows if r.id in relevance]
        if self.sort_column is None and ranked and relevance is not None:
            rows.sort(key=lambda r: (-recall_rank(relevance[r.id], r.effective), r.id))
        else:
            column = self.sort_column or "effective"
            reverse = (column in DESCENDING) != self.sort_reverse
            rows.sort(key=lambda r: r.id)
            rows.sort(key=SORT_KEYS[column], reverse=reverse)
        order: list[Hashable] = [r.id for r in rows]
        table = self.table
        shown_column = self.sort_column or (None if ranked else "effective")
        descending = ((self.sort_column or "effective") in DESCENDING) != self.sort_reverse
        table.sort_by(shown_column, descending)
        if keep_top and order:
            table.show(order, keep=order[0])
            table.move_to(order[0])
        else:
            table.show(order)
        self.update_info(len(order), bool(ranked))

    def update_info(self, shown: int, ranked: bool) -> None:
        total = sum(1 for r in self.rows.values() if r.state != "retired")
        info = Text()
        if self.spec.empty:
            info.append(f"{total:,}", style="bold")
            info.append(" bullets", style=fmt.MUTED)
        else:
            info.append(f"{shown:,}", style="bold")
            info.append(f" of {total:,}", style=fmt.MUTED)
        if self.sort_column is None and ranked:
            info.append("  ranked by recall", style=fmt.ACCENT)
        else:
            column = self.sort_column or "effective"
            label = SORT_LABEL.get(column, column)
            info.append(f"  by {label}", style=fmt.MUTED)
        self.query_one("#filter-info", Static).update(info)

    # ---------------------------------------------------------------- peek
    @on(RowTable.Highlighted)
    def _highlighted(self, event: RowTable.Highlighted) -> None:
        self.update_peek()

    def update_peek(self) -> None:
        row = self.rows.get(self.current_bullet_id() or "")
        peek = self.query_one("#peek", Static)
        if row is None:
            peek.update(Text("No bullet selected.", style=fmt.MUTED))
            return
        text = Text()
        text.append(row.id, style="bold #7aa2f7")
        text.append("  ")
        text.append_text(fmt.bullet_type(row.type))
        text.append("  ")
        text.append_text(fmt.maturity(row.maturity))
        if row.pinned:
            text.append("  pinned", style=f"bold {fmt.ACCENT}")
        if row.stale:
            text.append("  stale", style="#ff9e64")
        if row.state == "retired":
            text.append("  retired", style=fmt.MUTED)
        text.append("  ")
        text.append(fmt.tags(row.tags), style="#bb9af7")
        text.append(f"  {row.category} · {row.scope} · {row.source}", style=fmt.MUTED)
        text.append("\n")
        text.append("score ", style=fmt.MUTED)
        text.append_text(fmt.score(row.effective))
        text.append("  help ", style=fmt.MUTED)
        text.append(f"{row.helpful:.2f}", style=fmt.GOOD)
        text.append("  harm ", style=fmt.MUTED)
        text.append(f"{row.harmful:.2f}", style=fmt.BAD)
        text.append(f"  created {row.created_at[:10]}", style=fmt.MUTED)
        text.append("   enter: detail and history", style=fmt.MUTED)
        text.append("\n")
        text.append_text(fmt.untrusted(row.content))
        peek.update(text)

    # ---------------------------------------------------------------- filter & sort
    def action_focus_filter(self) -> None:
        self.query_one("#filter", Input).focus()

    def action_clear_filter(self) -> None:
        box = self.query_one("#filter", Input)
        if box.value:
            box.value = ""
        self.table.focus()

    @on(Input.Changed, "#filter")
    def _filter_changed(self, event: Input.Changed) -> None:
        spec = parse_filter(event.value)
        if not spec.words.strip():
            self.spec = spec
            self.relevance = None
            self.refilter(keep_top=bool(spec.flags))
        else:
            self.app.rank_filter(event.value)  # type: ignore[attr-defined]

    @on(Input.Submitted, "#filter")
    def _filter_submitted(self) -> None:
        self.table.focus()

    @on(RowTable.HeaderClicked)
    def _header_clicked(self, event: RowTable.HeaderClicked) -> None:
        column = event.column
        if (self.sort_column or "effective") == column:
            self.sort_reverse = not self.sort_reverse
        else:
            self.sort_column, self.sort_reverse = column, False
        self.refilter()

    def action_cycle_sort(self) -> None:
        current = self.sort_column or "effective"
        i = SORT_CYCLE.index(current) if current in SORT_CYCLE else -1
        self.sort_column = SORT_CYCLE[(i + 1) % len(SORT_CYCLE)]
        self.sort_reverse = False
        self.refilter()

    def action_reverse_sort(self) -> None:
        if self.sort_column is None:
            self.sort_column = "effective"
        self.sort_reverse = not self.sort_reverse
        self.refilter()

    @on(RowTable.Selected)
    def _selected(self, event: RowTable.Selected) -> None:
        self.app.open_bullet(str(event.key))  # type: ignore[attr-defined]
