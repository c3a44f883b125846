"""When a bullet's evidence cache row answers its score at a moment as it is: decided once,
here, in SQL and in Python (floats and numpy arrays), for every reader of the cache.

A cache row holds a bullet's decayed sums referenced to `ref` at the half-life it was
folded with; `scoring.sums_at` reads it at any `now >= ref`. It cannot answer, and the
reader goes to the feedback log (`store.evidence_many`), when

- the row was kept at another half-life than the one the bullet is read with (its own
  `half_life_days`, or the policy's default: either may have changed since the fold);
- the bullet inherits evidence through `supersedes` (its score sums its ancestors' rows);
- it holds evidence dated after `now` (a future event, or a read at a past moment);
- the cache lags the log (a read-only store: another writer appended events it cannot fold).

tests/test_evidence_rule.py enumerates these cases on both backends and checks that the SQL
and the Python forms decide them alike, and that a row they let answer gives the bits the
log gives.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

# SQL over `bullets b LEFT JOIN evidence e ON e.bullet_id = b.id`.
# The row was folded at another half-life than the bullet's (one parameter: the policy's
# default half-life).
HALF_LIFE_CHANGED = "(e.half_life IS NOT NULL AND e.half_life != COALESCE(b.half_life_days, ?))"
# The bullet inherits evidence through supersedes.
INHERITS = "b.id IN (SELECT src FROM edges WHERE kind = 'supersedes')"
# Whether the row cannot answer at any moment (one parameter: the default half-life).
CANNOT_ANSWER = f"{HALF_LIFE_CHANGED} OR {INHERITS}"
# The same as a column: 1 where the row cannot answer (the INEXACT flag), else 0.
INEXACT = f"CASE WHEN {CANNOT_ANSWER} THEN 1 ELSE 0 END"
# The row holds evidence after the moment read (one parameter: now, in epoch days).
AFTER_NOW = "e.ref > ?"


def lags(read_only: bool, behind: Callable[[], bool]) -> bool:
    """Whether the cache lags the log: a read-only store that cannot fold what another
    writer appended (`behind` is asked only then). Such a cache answers nothing."""
    return read_only and behind()


def half_life_changed(cached: float | None, own: float | None, default: float) -> bool:
    """`HALF_LIFE_CHANGED` for one row: `cached` the row's half-life (None: no row), `own`
    the bullet's (None: the default)."""
    return cached is not None and cached != (own if own is not None else default)


def row_answers(inexact: Any, ref: float | None, now: float, lagging: bool) -> bool:
    """Whether one bullet's row answers at `now`: not `inexact` (`INEXACT`), no evidence
    after `now` (`ref` None: no row, nothing to read), and the cache not lagging."""
    return not (lagging or inexact or (ref is not None and ref > now))


def rows_answer(inexact: Any, ref: Any, now: float, lagging: bool) -> Any:
    """`row_answers` for numpy columns: `inexact` bool, `ref` float (NaN: no row)."""
    return ~(inexact | lagging | (ref > now))


def member_answers(cached_half_life: float, half_life: float, ref: float, now: float) -> bool:
    """Whether the row of a bullet, or of an ancestor whose evidence a successor inherits,
    answers a read at `now` with `half_life` (the reading bullet's): kept at that
    half-life, nothing after `now` (`store.evidence_many`, one member at a time)."""
    return cached_half_life == half_life and not ref > now
