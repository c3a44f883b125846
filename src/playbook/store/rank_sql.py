"""The SQL both recall paths share: when a bullet's cached evidence cannot
answer as it is (`ranking.py`'s first query, `rank_table.py`'s whole table)."""

from __future__ import annotations

# Whether a bullet's cached evidence cannot answer as it is: another half-life, or it
# inherits evidence through supersedes. One parameter: the policy's default half-life.
CANNOT_ANSWER = (
    "(e.half_life IS NOT NULL AND e.half_life != COALESCE(b.half_life_days, ?)) "
    "OR b.id IN (SELECT src FROM edges WHERE kind = 'supersedes')"
)
INEXACT = f"CASE WHEN {CANNOT_ANSWER} THEN 1 ELSE 0 END"
