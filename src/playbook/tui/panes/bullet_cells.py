"""What the Bullets table draws: its columns (which give way first when narrow), one cell
of a row, and the peek under the table."""

from __future__ import annotations

from typing import TYPE_CHECKING

from rich.console import Group
from rich.text import Text

from .. import format as fmt
from ..trends import TREND_POINTS
from ..widgets.columns import Column

if TYPE_CHECKING:
    from ...store.views import BulletRow

# Narrow terminals keep the content and drop columns of the lowest priority first.
COLUMNS = [
    Column("id", "id", 10, priority=80),
    Column("content", "content", None, min_width=24),
    Column("type", "type", 5, priority=60),
    Column("maturity", "maturity", 13, priority=85),
    Column("effective", "score", 8, "right", priority=90),
    # 90 days. At 80 columns the trend outranks type (the text says "AVOID:") and pin (the
    # peek says "pinned"): it is what no other view shows.
    Column("trend", "trend", TREND_POINTS, priority=62, sortable=False),
    Column("helpful", "help", 6, "right", priority=40),
    Column("harmful", "harm", 6, "right", priority=39),
    Column("pinned", "pin", 3, "center", priority=50),
    Column("stale", "stale", 5, priority=45),
    Column("created", "added", 10, priority=35),
]
NARROW = 110  # columns below which the filter's info line is abridged
SORT_CYCLE = ["effective", "maturity", "helpful", "harmful", "created", "id", "content", "type"]
SORT_LABEL = {"effective": "score", "created": "added", "helpful": "help", "harmful": "harm"}


def render_cell(row: BulletRow, column: str) -> Text:
    retired = row.state == "retired"
    if column == "id":
        return Text(row.id, style=fmt.MUTED if retired else fmt.ID)
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
        return Text("pin", style=fmt.ACCENT_BOLD) if row.pinned else Text("")
    if column == "stale":
        return Text("stale", style=fmt.STALE) if row.stale else Text("")
    if column == "created":
        return Text(row.created_at[:10], style=fmt.MUTED)
    return Text("")


def peek_text(row: BulletRow, wide: bool) -> Group:
    """The selected rule under the table: its facts on two lines, then its whole text.

    The facts lines are cut at the edge rather than wrapped: the peek keeps its height
    when the same rule changes rung (deprecating it must not shorten the table under the
    cursor), and a number is never split from its label."""
    facts = Text(no_wrap=True, overflow="ellipsis")
    facts.append(row.id, style=fmt.ID_BOLD)
    facts.append("  ")
    facts.append_text(fmt.bullet_type(row.type))
    facts.append("  ")
    facts.append_text(fmt.maturity(row.maturity))
    if row.pinned:
        facts.append("  pinned", style=fmt.ACCENT_BOLD)
    if row.stale:
        facts.append("  stale", style=fmt.STALE)
    if row.state == "retired":
        facts.append("  retired", style=fmt.MUTED)
    facts.append("  ")
    facts.append(fmt.tags(row.tags), style=fmt.TAGS)
    facts.append(f"  {row.category} · {row.scope} · {row.source}", style=fmt.MUTED)
    numbers = Text(no_wrap=True, overflow="ellipsis")
    numbers.append("score ", style=fmt.MUTED)
    numbers.append_text(fmt.score(row.effective))
    numbers.append("  help ", style=fmt.MUTED)
    numbers.append(f"{row.helpful:.2f}", style=fmt.GOOD)
    numbers.append("  harm ", style=fmt.MUTED)
    numbers.append(f"{row.harmful:.2f}", style=fmt.BAD)
    numbers.append(f"  created {row.created_at[:10]}", style=fmt.MUTED)
    if wide:
        numbers.append("   enter: detail and history", style=fmt.MUTED)
    return Group(facts, numbers, fmt.untrusted(row.content))
