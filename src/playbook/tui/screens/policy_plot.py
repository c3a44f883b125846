"""ForestPlot: each candidate's paired difference with its 95% interval, on one axis.

One row per candidate (grouped by half-life): the interval as a bar, the point estimate as
a dot, zero as a vertical rule. A bar wholly right of zero is drawn in the success colour,
wholly left in the error colour, across zero muted. Rich text, no extra dependency.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from rich.style import Style
from rich.text import Text
from textual.widget import Widget

LABEL = 16
VALUE = 26


@dataclass(frozen=True)
class PlotRow:
    label: str
    diff: float
    lo: float
    hi: float
    current: bool = False
    mark: str = ""  # "*" for the registered challenger


class ForestPlot(Widget):
    DEFAULT_CSS = """
    ForestPlot { height: auto; background: $surface; }
    """
    # Its colours, styled in text.tcss: a candidate better than the current policy, worse,
    # neither (or the current one), and the axis.
    COMPONENT_CLASSES: ClassVar[set[str]] = {
        "forest-plot--better",
        "forest-plot--worse",
        "forest-plot--even",
        "forest-plot--axis",
    }

    def __init__(self, *, id: str | None = None, classes: str | None = None) -> None:
        super().__init__(id=id, classes=classes)
        self.rows: list[PlotRow] = []
        self.caption = ""

    def set_rows(self, rows: list[PlotRow], caption: str) -> None:
        self.rows = rows
        self.caption = caption
        self.styles.height = len(rows) + 3 if rows else 1
        self.refresh(layout=True)

    def render(self) -> Text:
        out = Text(no_wrap=True, overflow="crop")
        rows = [r for r in self.rows if r.lo == r.lo]  # drop rows without an interval
        if not rows:
            out.append("no intervals to plot yet", style="italic")
            return out
        width = max(10, self.size.width - LABEL - VALUE - 2)
        lo = min(0.0, *(r.lo for r in rows))
        hi = max(0.0, *(r.hi for r in rows))
        pad = (hi - lo) * 0.05 or 1e-3
        lo, hi = lo - pad, hi + pad

        def x(v: float) -> int:
            return max(0, min(width - 1, round((v - lo) / (hi - lo) * (width - 1))))

        zero = x(0.0)
        good = self.get_component_rich_style("forest-plot--better", partial=True)
        bad = self.get_component_rich_style("forest-plot--worse", partial=True)
        muted = self.get_component_rich_style("forest-plot--even", partial=True)
        axis = self.get_component_rich_style("forest-plot--axis", partial=True)
        out.append(self.caption[: self.size.width] + "\n", style="bold")
        for r in self.rows:
            label = (r.label + (" " + r.mark if r.mark else ""))[: LABEL - 1]
            out.append(label.ljust(LABEL), style="bold" if r.mark else "")
            cells = [" "] * width
            cells[zero] = "│"
            if r.lo == r.lo and not r.current:
                a, b = x(r.lo), x(r.hi)
                for i in range(a, b + 1):
                    cells[i] = "─"
                cells[a], cells[b] = "├", "┤"
                cells[x(r.diff)] = "●"
                colour = good if r.lo > 0 else bad if r.hi < 0 else muted
                text = f"{r.diff:+z.4f} [{r.lo:+z.4f}, {r.hi:+z.4f}]"
            else:
                cells[zero] = "◆"
                colour, text = muted, "the current policy"
            out.append("".join(cells), style=colour)
            out.append("  " + text + "\n", style=colour if r.lo == r.lo else Style())
        ticks = [" "] * width
        for v in sorted({lo + pad, 0.0, hi - pad}):
            label = f"{v:+z.3f}"
            start = max(0, min(width - len(label), x(v) - len(label) // 2))
            ticks[start : start + len(label)] = label
        out.append(" " * LABEL + "".join(ticks), style=axis)
        return out
