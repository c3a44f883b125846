"""ScoreChart: a bullet's effective score over time, as an area chart of eighth-blocks.

Positive area grows up from the zero line in the success colour, negative area grows down
in the error colour; each feedback event is marked on the plot itself, at the score it
left (+ helpful, x harmful, * both in one column), and again in a row of ticks under it;
the axis labels give the range and the dates. Drawn with Rich text, no extra dependency.
"""

from __future__ import annotations

from datetime import datetime
from typing import ClassVar

from rich.color import Color as RichColor
from rich.style import Style
from rich.text import Text
from textual.widget import Widget

LOWER = " ▁▂▃▄▅▆▇█"
AXIS_WIDTH = 7


def _fmt(value: float) -> str:
    if abs(value) >= 100:
        return f"{value:.0f}"
    if abs(value) >= 10:
        return f"{value:.1f}"
    return f"{value:.2f}"


class ScoreChart(Widget):
    DEFAULT_CSS = """
    ScoreChart { height: 10; background: $surface; }
    """
    # Its colours, styled in text.tcss: the axis and labels, a score above zero, below.
    COMPONENT_CLASSES: ClassVar[set[str]] = {
        "score-chart--axis",
        "score-chart--up",
        "score-chart--down",
    }

    def __init__(self, *, id: str | None = None, classes: str | None = None) -> None:
        super().__init__(id=id, classes=classes)
        self.series: list[tuple[datetime, float]] = []
        self.events: list[tuple[datetime, str]] = []
        self.empty_text = "no history yet"

    def set_data(
        self,
        series: list[tuple[datetime, float]],
        events: list[tuple[datetime, str]],
        empty_text: str = "no history yet",
    ) -> None:
        self.series = series
        self.events = events
        self.empty_text = empty_text
        self.refresh()

    def render(self) -> Text:
        width, height = self.size
        plot_w = max(4, width - AXIS_WIDTH - 1)
        plot_h = max(2, height - 2)
        out = Text(no_wrap=True, overflow="crop")
        if not self.series:
            out.append(self.empty_text, style="italic")
            return out
        bg = self.rich_style.bgcolor or RichColor.parse("black")
        muted = self.get_component_rich_style("score-chart--axis", partial=True)
        good = self.get_component_rich_style("score-chart--up", partial=True).color
        bad = self.get_component_rich_style("score-chart--down", partial=True).color
        start, end = self.series[0][0], self.series[-1][0]
        span = max(1.0, (end - start).total_seconds())

        # One value per column: the sample nearest the column's moment.
        n = len(self.series)
        values = [self.series[round(c * (n - 1) / max(1, plot_w - 1))][1] for c in range(plot_w)]
        lo, hi = min(0.0, *values), max(0.0, *values)
        if hi - lo < 1e-9:
            hi = lo + 1.0
        units = plot_h * 8
        scale = units / (hi - lo)
        zero = (0.0 - lo) * scale

        zero_row = min(plot_h - 1, int(zero // 8)) if zero < units else plot_h - 1

        # Event ticks: + helpful, x harmful, * both in one column.
        ticks = [" "] * plot_w
        for at, kind in self.events:
            c = round((at - start).total_seconds() / span * (plot_w - 1))
            if 0 <= c < plot_w:
                mark = "+" if kind == "helpful" else "x"
                ticks[c] = mark if ticks[c] in (" ", mark) else "*"
        # On the plot: each event's glyph sits in the cell where the score's bar ends.
        on_plot: dict[int, int] = {}
        for c, t in enumerate(ticks):
            if t != " ":
                level = (values[c] - lo) * scale
                edge = level - 0.01 if level > zero else level
                on_plot[c] = max(0, min(plot_h - 1, int(edge // 8)))

        def tick_style(t: str) -> Style:
            if t == "+":
                return Style(color=good, bold=True)
            return Style(color=bad, bold=True) if t != " " else muted

        for r in range(plot_h - 1, -1, -1):  # top row first
            if r == plot_h - 1:
                label = _fmt(hi)
            elif r == 0:
                label = _fmt(lo)
            elif r == zero_row:
                label = "0"
            else:
                label = ""
            out.append(f"{label:>{AXIS_WIDTH}} ", style=muted)
            cell_lo, cell_hi = r * 8, r * 8 + 8
            for c, v in enumerate(values):
                if on_plot.get(c) == r:
                    out.append(ticks[c], style=tick_style(ticks[c]) + Style(reverse=True))
                    continue
                level = (v - lo) * scale
                a, b = (zero, level) if level >= zero else (level, zero)
                colour = good if v >= 0 else bad
                lo_in, hi_in = max(a, cell_lo) - cell_lo, min(b, cell_hi) - cell_lo
                if hi_in - lo_in < 0.5:
                    if r == zero_row:
                        out.append("─" if abs(v) < 1e-9 else " ", style=muted)
                    else:
                        out.append(" ")
                    continue
                if lo_in <= 0.5 and hi_in >= 7.5:
                    out.append("█", style=Style(color=colour))
                elif lo_in <= 0.5:  # anchored at the bottom of the cell
                    out.append(LOWER[max(1, round(hi_in))], style=Style(color=colour))
                else:  # anchored at the top: paint the gap below in the background colour
                    out.append(LOWER[min(7, round(lo_in))], style=Style(color=bg, bgcolor=colour))
            out.append("\n")

        out.append(f"{'events':>{AXIS_WIDTH}} ", style=muted)
        for t in ticks:
            out.append(t, style=tick_style(t))
        out.append("\n")

        # Dates: start on the left, end on the right, the middle in between.
        left = f"{start:%Y-%m-%d}"
        right = f"{end:%Y-%m-%d}"
        mid = f"{start + (end - start) / 2:%Y-%m-%d}"
        axis = [" "] * plot_w
        for pos, label in ((0, left), (max(0, plot_w - len(right)), right)):
            axis[pos : pos + len(label)] = label
        mpos = plot_w // 2 - len(mid) // 2
        if plot_w > 3 * len(mid) + 4:
            axis[mpos : mpos + len(mid)] = mid
        out.append(" " * (AXIS_WIDTH + 1) + "".join(axis)[:plot_w], style=muted)
        return out
