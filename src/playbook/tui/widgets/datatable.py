"""DataTable helpers: keyed diff updates (the Dolphie/memray way) and a flexible column.

`sync_rows` makes the table show exactly `rows` (key -> cells) by removing gone keys,
updating only the cells that changed, and adding new rows, then puts the cursor back on
the row key it was on. Call it inside `app.batch_update()` so the screen repaints once.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from rich.text import Text
from textual import events
from textual.widgets import DataTable
from textual.widgets.data_table import CellDoesNotExist, RowKey

Cells = Sequence[str | Text]


def _key(row_key: RowKey) -> str:
    return str(row_key.value)


def sync_rows(table: DataTable[str | Text], rows: dict[str, Cells]) -> tuple[int, int, int]:
    """Returns (added, removed, changed)."""
    cursor_key: str | None = None
    if table.row_count and 0 <= table.cursor_row < table.row_count:
        try:
            cursor_key = _key(table.coordinate_to_cell_key(table.cursor_coordinate).row_key)
        except CellDoesNotExist:
            cursor_key = None
    present = {_key(k): k for k in table.rows}
    removed = [k for k in present if k not in rows]
    for key in removed:
        table.remove_row(present[key])
    columns = list(table.columns)
    changed = added = 0
    for key, cells in rows.items():
        if key in present:
            row_changed = False
            current = table.get_row(present[key])
            for column, old, new in zip(columns, current, cells, strict=False):
                if _plain(old) != _plain(new) or _style(old) != _style(new):
                    table.update_cell(present[key], column, new)
                    row_changed = True
            changed += row_changed
        else:
            table.add_row(*cells, key=key)
            added += 1
    if cursor_key is not None and cursor_key in rows:
        index = table.get_row_index(cursor_key)
        if index != table.cursor_row:
            table.move_cursor(row=index, animate=False, scroll=True)
    return added, len(removed), changed


def _plain(cell: str | Text) -> str:
    return cell.plain if isinstance(cell, Text) else str(cell)


def _style(cell: str | Text) -> object:
    return (
        (str(cell.style), [(s.start, s.end, str(s.style)) for s in cell.spans])
        if isinstance(cell, Text)
        else None
    )


def selected_key(table: DataTable[str | Text]) -> str | None:
    if not table.row_count:
        return None
    try:
        return _key(table.coordinate_to_cell_key(table.cursor_coordinate).row_key)
    except CellDoesNotExist:
        return None


class FitTable(DataTable[Any]):
    """A row-cursor DataTable whose `flex` column takes the width the others leave, so
    long text is cut with an ellipsis instead of scrolling sideways."""

    def __init__(self, flex: str, *, id: str | None = None) -> None:
        super().__init__(id=id, cursor_type="row", zebra_stripes=True)
        self.flex = flex

    def on_resize(self, event: events.Resize) -> None:
        self.fit()

    def fit(self) -> None:
        pad = 2 * self.cell_padding
        others = sum(c.width + pad for c in self.columns.values() if c.key.value != self.flex)
        column = next((c for c in self.columns.values() if c.key.value == self.flex), None)
        if column is None:
            return
        room = self.scrollable_content_region.width - others - pad
        width = max(10, room)
        if column.width != width or column.auto_width:
            column.width = width
            column.auto_width = False
            self._require_update_dimensions = True  # recompute the virtual size
            self.refresh()
