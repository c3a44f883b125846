"""Columns of a `RowTable`, and how they share a width: by priority, content first."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

Justify = Literal["left", "right", "center"]


@dataclass(frozen=True)
class Column:
    """One column. `width` None: the column takes the room the others leave (the content).
    When the table is too narrow, columns of the lowest `priority` leave first, whole,
    rather than every column being cut ("h", "reaso")."""

    key: str
    label: str
    width: int | None = None
    justify: Justify = "left"
    min_width: int = 12
    sortable: bool = True
    priority: int = 50


GAP = 2  # one space either side of every cell


def fit_widths(columns: Sequence[Column], width: int) -> list[int]:
    """Each column's width in `width` cells; 0 for a column that yields its place.

    Flexible columns (the content) come first: fixed columns of the lowest priority are
    dropped until the flexible ones get at least their `min_width`, then the flexible ones
    share what is left (the first takes the rounding)."""
    shown = list(columns)
    while True:
        fixed = sum(c.width or 0 for c in shown)
        flex = [c for c in shown if c.width is None]
        need = fixed + GAP * len(shown) + sum(c.min_width for c in flex)
        droppable = [c for c in shown if c.width is not None]
        if need <= width or len(shown) <= 1 or not droppable:
            break
        shown.remove(min(droppable, key=lambda c: c.priority))
    room = max(0, width - fixed - GAP * len(shown))
    share = room // max(1, len(flex))
    widths = []
    for c in columns:
        if c not in shown:
            widths.append(0)
        elif c.width is not None:
            widths.append(c.width)
        else:
            widths.append(max(c.min_width, share))
    if flex:
        spare = width - sum(widths) - GAP * len(shown)
        if spare > 0:
            widths[list(columns).index(flex[0])] += spare
    return widths


@dataclass(frozen=True)
class Diff:
    """Rows added and removed between two snapshots, and whether any row changed (1 or 0:
    `RowTable.diff` stops at the first)."""

    added: int
    removed: int
    changed: int

    @property
    def any(self) -> bool:
        return bool(self.added or self.removed or self.changed)
