"""RowTable: a keyed table that renders only the lines on screen.

DataTable measures every cell of every row when rows are added, which is fine for
thousands of rows and far too slow for 100k (about 20 s to first paint, measured). This is
the Toolong approach instead: a `ScrollView` whose `render_line` draws the visible rows
from a dict of row objects and a list of keys in display order, so painting costs the same
at 100 rows or 100,000. Rows are immutable objects; an update replaces changed ones by key,
drops gone keys, adds new ones, and the cursor stays on the row it was on.

`RowTable[K]` is keyed by `K` (a pane's ids are `str`), as Textual's `DataTable[CellType]`
is by its cells: a pane hands its own `dict[str, Row]` over, and reads its own key back.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable, Mapping, Sequence
from typing import Any, ClassVar, Generic, TypeVar

from rich.segment import Segment
from rich.style import Style
from rich.text import Text
from textual import events
from textual.binding import Binding, BindingType
from textual.cache import LRUCache
from textual.geometry import Size
from textual.message import Message
from textual.reactive import reactive
from textual.scroll_view import ScrollView
from textual.strip import Strip

from .columns import GAP, Column, Diff, fit_widths

CellRenderer = Callable[[Any, str], Text]
K = TypeVar("K", bound=Hashable)  # a row's key


class RowTable(ScrollView, Generic[K], can_focus=True):
    """A table of keyed rows with a row cursor, drawn line by line."""

    COMPONENT_CLASSES: ClassVar[set[str]] = {
        "row-table--header",
        "row-table--header-sorted",
        "row-table--cursor",
        "row-table--cursor-blurred",
        "row-table--odd",
        "row-table--empty",
    }

    DEFAULT_CSS = """
    RowTable {
        background: $surface;
        overflow-x: hidden;
        scrollbar-gutter: stable;
        &:focus { background-tint: $foreground 2%; }
        & > .row-table--header { background: $panel; color: $text-muted; text-style: bold; }
        & > .row-table--header-sorted { background: $panel; color: $accent; text-style: bold; }
        & > .row-table--cursor { background: $primary 35%; }
        & > .row-table--cursor-blurred { background: $primary 15%; }
        & > .row-table--odd { background: $foreground 3%; }
        & > .row-table--empty { color: $text-muted; text-style: italic; }
    }
    """

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("up", "cursor(-1)", "Up", show=False),
        Binding("down", "cursor(1)", "Down", show=False),
        Binding("pageup", "page(-1)", "Page up", show=False),
        Binding("pagedown", "page(1)", "Page down", show=False),
        Binding("home", "edge(0)", "First row", show=False),
        Binding("end", "edge(1)", "Last row", show=False),
        Binding("enter", "select", "Open", show=False),
    ]

    cursor_row: reactive[int] = reactive(0, always_update=True, layout=False)

    class Highlighted(Message):
        """The cursor moved to another row (key None: the table is empty)."""

        def __init__(self, table: RowTable[Any], key: Hashable | None) -> None:
            super().__init__()
            self.table = table
            self.key = key

        @property
        def control(self) -> RowTable[Any]:
            return self.table

    class Selected(Message):
        """Enter (or a double click) on a row."""

        def __init__(self, table: RowTable[Any], key: Hashable) -> None:
            super().__init__()
            self.table = table
            self.key = key

        @property
        def control(self) -> RowTable[Any]:
            return self.table

    class HeaderClicked(Message):
        def __init__(self, table: RowTable[Any], column: str) -> None:
            super().__init__()
            self.table = table
            self.column = column

        @property
        def control(self) -> RowTable[Any]:
            return self.table

    def __init__(
        self,
        columns: Sequence[Column],
        render_cell: CellRenderer,
        *,
        empty_text: str = "Nothing here.",
        name: str | None = None,
        id: str | None = None,
        classes: str | None = None,
    ) -> None:
        super().__init__(name=name, id=id, classes=classes)
        self.columns = list(columns)
        self.render_cell = render_cell
        self.empty_text = empty_text
        self.rows: Mapping[K, Any] = {}
        self.order: list[K] = []
        self._index: dict[K, int] = {}
        self.sort_column: str | None = None
        self.sort_descending = False
        self._widths: list[int] = []
        self._fitted_to = -1
        self._line_cache: LRUCache[tuple[Any, ...], Strip] = LRUCache(1024)
        self._last_highlight: Hashable | None = object()

    # ---------------------------------------------------------------- data
    @property
    def cursor_key(self) -> K | None:
        if 0 <= self.cursor_row < len(self.order):
            return self.order[self.cursor_row]
        return None

    @property
    def row_count(self) -> int:
        return len(self.order)

    @staticmethod
    def diff(old: Mapping[K, object], new: Mapping[K, object]) -> Diff:
        """What changed between two row dicts (pure: a worker thread can compute it): the
        keys added and removed, and whether any row changed (`changed` is 1 or 0: the
        comparison stops at the first changed row; a step in time changes nearly all)."""
        if old.keys() == new.keys():
            added = removed = 0
        else:
            added = sum(1 for k in new if k not in old)
            removed = sum(1 for k in old if k not in new)
        get = old.get
        changed = any(
            prev is not None and prev is not row and prev != row
            for k, row in new.items()
            for prev in (get(k),)
        )
        return Diff(added, removed, int(changed))

    def apply(self, rows: Mapping[K, Any], diff: Diff | None = None) -> Diff:
        """Replace the rows by key: gone keys leave, changed rows update, new ones arrive.

        Lines are drawn from `rows` on demand, so the update is the dict itself; `diff`
        (computed off the UI thread, or here) says whether drawn lines are now stale. The
        display order is not touched here; call `show` with the new order after.
        """
        if diff is None:
            diff = self.diff(self.rows, rows)
        self.rows = rows
        if diff.removed or diff.changed:
            self._line_cache.clear()
        return diff

    def show(
        self,
        order: list[K],
        *,
        keep: K | None = None,
        positions: dict[K, int] | None = None,
    ) -> None:
        """Display these keys in this order, keeping the cursor on `keep` (default: the
        row it is on) when that row is still shown. `positions` (key -> index in `order`)
        may come precomputed from a worker."""
        keep = self.cursor_key if keep is None else keep
        old_row = self.cursor_row
        self.order = order
        self._index = positions or {}
        self._line_cache.clear()
        self.virtual_size = Size(self.scrollable_content_region.width, len(order) + 1)
        if keep is not None:
            index = self._index_of(keep)
            row = index if index is not None else min(old_row, max(0, len(order) - 1))
        else:
            row = 0
        self._set_cursor(row, scroll=True)
        self.refresh()

    def _index_of(self, key: K) -> int | None:
        if not self._index and self.order:
            self._index = {k: i for i, k in enumerate(self.order)}
        return self._index.get(key)

    def move_to(self, key: K, *, at_top: bool = False) -> bool:
        """The cursor to `key`'s row, scrolled into view (centred; `at_top`: the first
        line, as a group's first row is shown with the rest of its group below it)."""
        index = self._index_of(key)
        if index is None:
            return False
        self._set_cursor(index, scroll=not at_top, center=True)
        if at_top:
            self.scroll_to(y=index, animate=False, immediate=True)
        return True

    def refresh_rows(self) -> None:
        self._line_cache.clear()
        self.refresh()

    # ---------------------------------------------------------------- cursor
    def _set_cursor(self, row: int, *, scroll: bool = True, center: bool = False) -> None:
        row = max(0, min(row, len(self.order) - 1)) if self.order else 0
        self.cursor_row = row
        if scroll:
            self._scroll_into_view(center=center)

    def watch_cursor_row(self, old: int, new: int) -> None:
        self._line_cache.clear()
        self.refresh()
        key = self.cursor_key
        if key != self._last_highlight:
            self._last_highlight = key
            self.post_message(self.Highlighted(self, key))

    def _visible_rows(self) -> int:
        return max(1, self.scrollable_content_region.height - 1)

    def _scroll_into_view(self, *, center: bool = False) -> None:
        height = self._visible_rows()
        top = int(self.scroll_offset.y)
        row = self.cursor_row
        if center and not top <= row < top + height:
            self.scroll_to(y=max(0, row - height // 2), animate=False, immediate=True)
        elif row < top:
            self.scroll_to(y=row, animate=False, immediate=True)
        elif row >= top + height:
            self.scroll_to(y=row - height + 1, animate=False, immediate=True)

    def action_cursor(self, delta: int) -> None:
        self._set_cursor(self.cursor_row + delta)

    def action_page(self, direction: int) -> None:
        self._set_cursor(self.cursor_row + direction * self._visible_rows())

    def action_edge(self, end: int) -> None:
        self._set_cursor(len(self.order) - 1 if end else 0)

    def action_select(self) -> None:
        key = self.cursor_key
        if key is not None:
            self.post_message(self.Selected(self, key))

    def set_rows(self, rows: Mapping[K, Any], order: list[K] | None = None) -> None:
        """Show exactly these rows (in `order`, default: the dict's), keeping the cursor on
        its row: the whole update for a small table."""
        self.apply(rows)
        self.show(list(rows) if order is None else order)

    def on_click(self, event: events.Click) -> None:
        if event.y == 0:
            column = self._column_at(event.x)
            if column is not None and column.sortable:
                self.post_message(self.HeaderClicked(self, column.key))
            return
        row = int(self.scroll_offset.y) + event.y - 1
        if 0 <= row < len(self.order):
            self._set_cursor(row, scroll=False)
            if event.chain >= 2:
                self.action_select()

    def _column_at(self, x: int) -> Column | None:
        pos = 1
        for column, width in zip(self.columns, self._widths, strict=False):
            if not width:
                continue
            if pos <= x < pos + width + 1:
                return column
            pos += width + GAP
        return None

    # ---------------------------------------------------------------- layout
    def on_resize(self, event: events.Resize) -> None:
        self._widths = []
        self._fitted_to = -1
        self._line_cache.clear()
        self.virtual_size = Size(self.scrollable_content_region.width, len(self.order) + 1)
        # Shorter now (the box below grew: a longer rule in the peek): the cursor's row
        # stays on screen, as it was when the order was shown.
        self.call_after_refresh(self._scroll_into_view)

    def _column_widths(self, width: int) -> list[int]:
        if self._widths and self._fitted_to == width:
            return self._widths
        self._widths = fit_widths(self.columns, width)
        self._fitted_to = width
        return self._widths

    def shown_columns(self) -> list[str]:
        """The keys of the columns that have room at the current width."""
        widths = self._column_widths(self.scrollable_content_region.width)
        return [c.key for c, w in zip(self.columns, widths, strict=True) if w]

    # ---------------------------------------------------------------- rendering
    def render_line(self, y: int) -> Strip:
        width = self.scrollable_content_region.width
        base = self.rich_style
        widths = self._column_widths(width)
        if y == 0:
            return self._header(width, widths, base)
        if not self.order:
            if y == 2:
                style = self.get_component_rich_style("row-table--empty")
                text = Text(self.empty_text, justify="center")
                text.truncate(width, pad=True)
                text.stylize(style)  # a span: render() leaves a Text's own style out
                return Strip(list(text.render(self.app.console)), width)
            return Strip.blank(width, base)
        index = int(self.scroll_offset.y) + y - 1
        if not 0 <= index < len(self.order):
            return Strip.blank(width, base)
        key = self.order[index]
        row = self.rows.get(key)
        cursor = index == self.cursor_row
        cache_key = (key, id(row), width, cursor, cursor and self.has_focus, index % 2)
        strip = self._line_cache.get(cache_key)
        if strip is None:
            if cursor:
                name = "row-table--cursor" if self.has_focus else "row-table--cursor-blurred"
                row_style = base + self.get_component_rich_style(name)
            elif index % 2:
                row_style = base + self.get_component_rich_style("row-table--odd")
            else:
                row_style = base
            cells = [
                self.render_cell(row, c.key) if w else Text("")
                for c, w in zip(self.columns, widths, strict=True)
            ]
            strip = self._strip(cells, widths, width, row_style)
            self._line_cache.set(cache_key, strip)
        return strip

    def _header(self, width: int, widths: list[int], base: Style) -> Strip:
        style = base + self.get_component_rich_style("row-table--header")
        sorted_style = base + self.get_component_rich_style("row-table--header-sorted")
        cells = []
        for c in self.columns:
            label = c.label
            if c.key == self.sort_column:
                label = f"{label} {'▼' if self.sort_descending else '▲'}"
                cells.append(Text(label, style=sorted_style))
            else:
                cells.append(Text(label, style=style))
        return self._strip(cells, widths, width, style)

    def _strip(self, cells: list[Text], widths: list[int], width: int, style: Style) -> Strip:
        segments: list[Segment] = []
        console = self.app.console
        for column, cell, w in zip(self.columns, cells, widths, strict=True):
            if not w:
                continue
            cell = cell.copy()
            if cell.style:  # a cell's own style (Text("pin", style=...)): render() drops it
                cell.stylize(cell.style, 0, len(cell))
                cell.style = ""
            cell.no_wrap = True
            cell.truncate(w, overflow="ellipsis")
            pad = w - cell.cell_len
            if column.justify == "right":
                cell.pad_left(pad)
            elif column.justify == "center":
                cell.pad_left(pad // 2)
                cell.pad_right(pad - pad // 2)
            else:
                cell.pad_right(pad)
            segments.append(Segment(" ", style))
            for seg in cell.render(console, end=""):
                segments.append(Segment(seg.text, style + seg.style if seg.style else style))
            segments.append(Segment(" ", style))
        return Strip(segments).adjust_cell_length(width, style)

    def sort_by(self, column: str | None, descending: bool) -> None:
        """Only the header's indicator: the caller orders the rows (see `show`)."""
        self.sort_column = column
        self.sort_descending = descending
        self.refresh_rows()
