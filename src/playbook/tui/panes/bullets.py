"""The Bullets pane: every rule and anti-pattern with its score, sortable and filterable.

`/` filters with recall's ranking: the words' keyword relevance (read from the token index
in a thread worker) times each row's effective score; `is:` words narrow by state.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, ClassVar

from rich.text import Text
from textual import on
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Horizontal
from textual.message import Message
from textual.widgets import Input, Static

from .. import format as fmt
from ..actions.rule import bindings_for
from ..actions.spec import Context
from ..filterspec import FLAGS, parse_filter
from ..ordering import RowIndex, View, view_order
from ..trends import sparkline
from ..widgets.columns import Diff
from ..widgets.table import RowTable
from .base import Pane
from .bullet_cells import COLUMNS, NARROW, SORT_CYCLE, SORT_LABEL, peek_text, render_cell

if TYPE_CHECKING:
    from ...core.policy import Policy
    from ...store.views import BulletRow
    from ..reading import Snapshot


@dataclass(frozen=True)
class Prepared:
    """The bullets table's next state, computed by the poll worker from a snapshot."""

    view: View
    order: list[str]
    positions: dict[str, int]
    diff: Diff
    live: int


class BulletsPane(Pane):
    """Every bullet, filtered and sorted; its keys act on the row under the cursor."""

    TAB = "bullets"
    TITLE = "Bullets"
    FOCUS = "#bullets-table"
    HELP_SECTION = (
        "Bullets and Detail",
        f"Filter words: {' '.join(f'is:{f}' for f in FLAGS)} (is:retired and is:all show "
        "superseded and inverted bullets too).",
    )
    SUBJECTS = ("bullet",)

    class FilterChanged(Message):
        """The filter has words to rank (the app reads relevance in a worker)."""

        def __init__(self, text: str) -> None:
            super().__init__()
            self.text = text

    class TrendsWanted(Message):
        """Rows on screen whose trend is missing or older than the rows (read in a worker)."""

        def __init__(self, ids: list[str]) -> None:
            super().__init__()
            self.ids = ids

    class Opened(Message):
        """Enter on a row: show this bullet in Detail."""

        def __init__(self, bullet_id: str) -> None:
            super().__init__()
            self.bullet_id = bullet_id

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding(
            "slash",
            "focus_filter",
            "Filter",
            tooltip="Filter: words ranked like recall",
            id="filter",
        ),
        Binding("escape", "clear_filter", "Clear filter", show=False, id="clear-filter"),
        Binding("s", "cycle_sort", "Sort", tooltip="Sort by the next column on screen", id="sort"),
        Binding("S", "reverse_sort", "Reverse", show=False, id="reverse-sort"),
        *bindings_for("bullet"),
    ]

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self.rows: dict[str, BulletRow] = {}  # replaced, never mutated: workers read it
        self.view = View(parse_filter(""))
        self.live_total = 0
        self.index: RowIndex | None = None  # numpy columns of `rows`, for big playbooks
        # Trend sparklines of rows drawn so far: id -> (rows epoch read at, values).
        self.trends: dict[str, tuple[int, list[float]]] = {}
        self.epoch = 0  # bumped when the rows change: trends read before are redrawn, re-read
        self._asked: set[str] = set()
        self._wanted: set[str] = set()

    @property
    def policy(self) -> Policy:
        """The policy the workbench runs with (recall's floor on the score, for ranking)."""
        return self.context.policy

    def compose(self) -> ComposeResult:
        with Horizontal(id="filter-bar"):
            yield Static("/", id="filter-slash")
            yield Input(
                placeholder="words ranked like recall, or is:pinned is:stale is:retired",
                id="filter",
            )
            yield Static("", id="filter-info")
        yield Static("", id="filter-error")
        yield RowTable(COLUMNS, self._cell, empty_text="Reading the playbook…", id="bullets-table")
        yield Static("", id="peek")

    @property
    def table(self) -> RowTable[str]:
        return self.query_one(RowTable)

    # ---------------------------------------------------------------- trends
    def _cell(self, row: BulletRow, column: str) -> Text:
        if column != "trend":
            return render_cell(row, column)
        known = self.trends.get(row.id)
        if (known is None or known[0] != self.epoch) and row.id not in self._asked:
            self._want(row.id)  # drawn means on screen: read its trend, lazily
        return sparkline(known[1]) if known is not None else Text("")

    def _want(self, bullet_id: str) -> None:
        if not self._wanted:
            self.call_later(self._ask_trends)  # in this pane's own pump: the message bubbles
        self._wanted.add(bullet_id)

    def _ask_trends(self) -> None:
        ids = sorted(self._wanted - self._asked)
        self._wanted.clear()
        if ids:
            self._asked.update(ids)
            self.post_message(self.TrendsWanted(ids))

    def set_trends(self, trends: dict[str, list[float]], epoch: int) -> None:
        """Trends read in a worker for the rows of `epoch` (older answers still draw, and
        are read again)."""
        self._asked.difference_update(trends)
        for bid, values in trends.items():
            self.trends[bid] = (epoch, values)
        for table in self.query(RowTable):  # none while the app is closing around the pane
            table.refresh_rows()

    def current_bullet_id(self) -> str | None:
        key = self.table.cursor_key
        return str(key) if key is not None else None

    def subject(self) -> BulletRow | None:
        return self.rows.get(self.current_bullet_id() or "")

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        if action in ("cycle_sort", "reverse_sort", "focus_filter") and self.typing():
            return False
        if action == "clear_filter":
            return True
        return super().check_action(action, parameters)

    # ---------------------------------------------------------------- data in
    def set_rows(
        self, rows: dict[str, BulletRow], prepared: Prepared | None = None, *, context: Context
    ) -> None:
        """A new snapshot. `prepared` is what a worker computed from it for the view shown
        then (order, diff, positions); when the view has changed since, it is redone here."""
        self.rows = rows
        self.context = context
        self.index = None  # built for the old rows; a worker makes the next one
        self.table.empty_text = "No bullet matches." if rows else "The playbook is empty."
        if prepared is not None:
            self.live_total = prepared.live
            diff = self.table.apply(rows, prepared.diff)
        else:
            self.live_total = sum(1 for r in rows.values() if r.state != "retired")
            diff = self.table.apply(rows)
        if diff.any:
            self.epoch += 1
            self._asked.clear()
        if prepared is not None and prepared.view is self.view:
            self.show_view(prepared.order, positions=prepared.positions)
        else:
            self.show_view(None)
        if diff.any:
            self.update_peek()

    def apply(self, snap: Snapshot, context: Context, prepared: Prepared | None) -> None:
        self.set_rows(snap.rows_by_id, prepared, context=context)

    def count(self, snap: Snapshot) -> int:
        return snap.live_count

    def prepare(self, snap: Snapshot) -> Prepared:
        """Off the UI thread: everything `set_rows` needs for the current view."""
        rows = snap.rows_by_id
        old, view = self.worker_view()
        order = view_order(rows, view, self.policy)
        return Prepared(
            view=view,
            order=order,
            positions=dict(zip(order, range(len(order)), strict=True)),
            diff=RowTable.diff(old, rows),
            live=snap.live_count,
        )

    def set_relevance(
        self,
        text: str,
        relevance: dict[str, float] | None,
        order: list[str] | None = None,
        rows: dict[str, BulletRow] | None = None,
    ) -> None:
        """The recall relevance for `text` (and the order a worker made from `rows`)."""
        if text != self.query_one("#filter", Input).value:
            return  # a stale answer for an older keystroke
        self.view = replace(self.view, spec=parse_filter(text), relevance=relevance)
        self.show_view(order if rows is self.rows else None, keep_top=True)

    def worker_view(self) -> tuple[dict[str, BulletRow], View]:
        """What a worker needs to compute an order (immutable values, safe to share)."""
        return self.rows, self.view

    def refilter(self, *, keep_top: bool = False) -> None:
        self.show_view(None, keep_top=keep_top)

    def show_view(
        self,
        order: list[str] | None,
        *,
        keep_top: bool = False,
        positions: dict[str, int] | None = None,
    ) -> None:
        view = self.view
        if order is None:
            order = view_order(self.rows, view, self.policy, self.index)
        table = self.table
        table.sort_by(view.column, view.descending)
        keys = list(order)
        if keep_top and keys:
            table.show(keys, keep=keys[0], positions=positions)
            table.move_to(keys[0])
        else:
            table.show(keys, positions=positions)
        self.update_info(len(keys), view.ranked)

    def update_info(self, shown: int, ranked: bool) -> None:
        """'384 bullets', or 'N of M' where M counts what the filter could show: the live
        bullets, or every bullet once is:retired / is:all let retired ones in."""
        spec = self.view.spec
        narrow = self.size.width < NARROW
        info = Text()
        if spec.empty:
            info.append(f"{self.live_total:,}", style="bold")
            info.append("" if narrow else " bullets", style=fmt.MUTED)
        else:
            retired_in = bool(spec.flags & {"retired", "all"})
            total = len(self.rows) if retired_in else self.live_total
            info.append(f"{shown:,}", style="bold")
            info.append(f"/{total:,}" if narrow else f" of {total:,}", style=fmt.MUTED)
            if retired_in and not narrow:
                info.append(" in all", style=fmt.MUTED)
        column = self.view.column
        if column is None:
            info.append("  ranked" if narrow else "  ranked by recall", style=fmt.ACCENT)
        else:
            label = SORT_LABEL.get(column, column)
            arrow = "▼" if self.view.descending else "▲"
            info.append(f" {arrow}{label}" if narrow else f"  by {label}", style=fmt.MUTED)
        self.query_one("#filter-info", Static).update(info)

    # ---------------------------------------------------------------- peek
    @on(RowTable.Highlighted)
    def _highlighted(self, event: RowTable.Highlighted) -> None:
        self.update_peek()
        self.refresh_bindings()  # pin/unpin, deprecate/restore follow the row

    def update_peek(self) -> None:
        row = self.rows.get(self.current_bullet_id() or "")
        peek = self.query_one("#peek", Static)
        if row is None:
            peek.update(Text("No bullet selected.", style=fmt.MUTED))
            return
        peek.update(peek_text(row, self.size.width >= NARROW))

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
        self.show_filter_error(spec.unknown)
        if not spec.words.strip():
            self.view = replace(self.view, spec=spec, relevance=None)
            self.refilter(keep_top=bool(spec.flags))
        else:
            self.post_message(self.FilterChanged(event.value))

    def show_filter_error(self, unknown: tuple[str, ...]) -> None:
        """An `is:` word the filter does not know: say so under the box, with the known ones
        (it is ignored, not searched for as a word)."""
        line = self.query_one("#filter-error", Static)
        if not unknown:
            line.display = False
            return
        known = " ".join(f"is:{f}" for f in FLAGS)
        line.update(Text(f"unknown is:{unknown[0]}; known: {known}"))
        line.display = True

    @on(Input.Submitted, "#filter")
    def _filter_submitted(self) -> None:
        self.table.focus()

    def sort(self, column: str, reverse: bool) -> None:
        """Order by `column`; the cursor goes to the first row, the top of the new order."""
        self.view = replace(self.view, sort_column=column, sort_reverse=reverse)
        self.refilter()
        self.table.action_edge(0)

    @on(RowTable.HeaderClicked)
    def _header_clicked(self, event: RowTable.HeaderClicked) -> None:
        same = (self.view.sort_column or "effective") == event.column
        self.sort(event.column, not self.view.sort_reverse if same else False)

    def action_cycle_sort(self) -> None:
        """The next column on screen: a column the width left out (help and harm at 80
        columns) is not sorted by, or the order would look random."""
        shown = set(self.table.shown_columns())
        cycle = [c for c in SORT_CYCLE if c in shown] or ["effective"]
        current = self.view.sort_column or "effective"
        i = cycle.index(current) if current in cycle else -1
        self.sort(cycle[(i + 1) % len(cycle)], False)

    def action_reverse_sort(self) -> None:
        self.sort(self.view.sort_column or "effective", not self.view.sort_reverse)

    @on(RowTable.Selected)
    def _selected(self, event: RowTable.Selected) -> None:
        event.stop()
        self.post_message(self.Opened(str(event.key)))
