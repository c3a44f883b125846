"""The bullets table's trend column: each visible row's effective score over the last 90
days as a sparkline. Read for the rows on screen only, in a thread worker, so a keystroke
never waits for it (the table draws a blank cell until the trend arrives)."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime
from typing import TYPE_CHECKING

from rich.text import Text

from .. import review
from . import format as fmt

if TYPE_CHECKING:
    from .data import Source

TREND_DAYS = 90
TREND_POINTS = 10  # one glyph per point: the column is this wide
BARS = "▁▂▃▄▅▆▇█"


def load_trends(
    source: Source, ids: Sequence[str], now: datetime | None = None
) -> dict[str, list[float]]:
    """Effective score of each bullet at `TREND_POINTS` moments over the `TREND_DAYS` days
    up to `now` (default: the store's now; time travel passes its moment), oldest first
    (the API's `review.score_trends`)."""
    with source.open(migrate=False) as store:
        return review.score_trends(store, list(ids), days=TREND_DAYS, points=TREND_POINTS, now=now)


def sparkline(values: Sequence[float]) -> Text:
    """Eighth-block bars scaled to the row's own range (zero included), green when the
    score ends at or above where it began, red when it fell; a flat line is dim."""
    if not values:
        return Text("")
    lo, hi = min(0.0, *values), max(0.0, *values)
    if hi - lo < 1e-9:
        return Text(BARS[0] * len(values), style=fmt.MUTED)
    top = len(BARS) - 1
    bars = "".join(BARS[round((v - lo) / (hi - lo) * top)] for v in values)
    falling = values[-1] < values[0] - 1e-9
    return Text(bars, style=fmt.BAD if falling else fmt.GOOD)
