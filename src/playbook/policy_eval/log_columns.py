"""A page of the feedback log as numpy columns: what the replay reads of each mark.

`store.log.event_pages` gives the rows as stored; a row is a mark when
`records.event_point` says so (a weight, a stored time for when it was observed and for
when it was recorded; a malformed row is noted and skipped, as every reader does). Asking
it row by row costs more than the rest of the replay at ten million marks, so the page is
checked whole: the timestamps' characters are read as numbers (`parse_times`), and only a
row that this does not certify is asked of `event_point`, which notes it as it would have.

Times become epoch days exactly as `scoring.days(parse_iso(text))` computes them: the
microseconds since the epoch, divided by 10**6 and by 86400 (both divisions correctly
rounded, so the same double).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import timedelta
from typing import Any

import numpy as np

from ..core import scoring
from ..core.policy import MAX_WEIGHT
from ..store import parse_iso
from ..store.checks import FIRST_YEAR, LAST_YEAR
from ..store.records import EPOCH, event_point

WIDTH = 27  # 2026-03-01T12:00:00.000000Z
_DIGITS = [i for i in range(WIDTH) if i not in (4, 7, 10, 13, 16, 19, 26)]
_MARKS = {4: "-", 7: "-", 10: "T", 13: ":", 16: ":", 19: ".", 26: "Z"}
_EXACT = 2**53  # microseconds below this are exact as doubles (years before 2255)
_DIM = np.array([0, 31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31], dtype=np.int64)


@dataclass(frozen=True)
class EventPage:
    """The well-formed marks of a page of the log, in (recorded_at, id) order."""

    ids: np.ndarray  # int64
    cols: np.ndarray  # intp: the bullet's column in the replay
    helpful: np.ndarray  # bool
    at: np.ndarray  # epoch days, observed
    recorded: np.ndarray  # epoch days, recorded
    now: np.ndarray  # epoch days, a microsecond before it was recorded: the view's moment
    recorded_us: np.ndarray  # int64 microseconds: equal for the marks of one moment
    weight: np.ndarray
    recorded_at: list[str]  # as stored
    context: list[str | None]
    session_ref: list[str | None]
    batch_id: list[str | None]

    def __len__(self) -> int:
        return len(self.ids)


def parse_times(values: Sequence[Any]) -> tuple[np.ndarray, np.ndarray]:
    """(microseconds since the epoch, whether the text is certainly a stored time
    (`checks.is_time`)) of each value; a value that is not certified may still be one."""
    n = len(values)
    us = np.zeros(n, dtype=np.int64)
    if not n or not all(type(v) is str for v in values):
        return us, np.zeros(n, dtype=bool)
    text = np.array(values)
    if text.dtype != np.dtype(f"<U{WIDTH}"):
        return us, np.zeros(n, dtype=bool)
    chars = text.view(np.uint32).reshape(n, WIDTH).astype(np.int64)
    ok = np.ones(n, dtype=bool)
    for i, mark in _MARKS.items():
        ok &= chars[:, i] == ord(mark)
    digits = chars[:, _DIGITS] - ord("0")
    ok &= ((digits >= 0) & (digits <= 9)).all(axis=1)

    def number(first: int, last: int) -> np.ndarray:
        out = np.zeros(n, dtype=np.int64)
        for i in range(first, last):
            out = out * 10 + (chars[:, i] - ord("0"))
        return out

    y, m, d = number(0, 4), number(5, 7), number(8, 10)
    hh, mm, ss, frac = number(11, 13), number(14, 16), number(17, 19), number(20, 26)
    ok &= (y >= FIRST_YEAR) & (y <= LAST_YEAR) & (m >= 1) & (m <= 12) & (d >= 1)
    leap = (y % 4 == 0) & ((y % 100 != 0) | (y % 400 == 0))
    ok &= d <= _DIM[np.clip(m, 0, 12)] + (leap & (m == 2))
    ok &= (hh <= 23) & (mm <= 59) & (ss <= 59)
    # days since 1970-01-01 of a proleptic Gregorian date (H. Hinnant's days_from_civil)
    yy = y - (m <= 2)
    era = yy // 400
    yoe = yy - era * 400
    doy = (153 * (m + np.where(m > 2, -3, 9)) + 2) // 5 + d - 1
    doe = yoe * 365 + yoe // 4 - yoe // 100 + doy
    days = era * 146097 + doe - 719468
    us[:] = (((days * 24 + hh) * 60 + mm) * 60 + ss) * 1_000_000 + frac
    us[~ok] = 0
    return us, ok


def _days(us: np.ndarray, texts: Sequence[str], shift: int = 0) -> np.ndarray:
    """`scoring.days(parse_iso(text) - shift µs)` of each (well-formed) text."""
    if len(us) and int(np.abs(us).max()) < _EXACT - 1:
        out: np.ndarray = (us - shift) / 1e6 / scoring.DAY
        return out
    return np.array([scoring.days(parse_iso(t) - timedelta(microseconds=shift)) for t in texts])


def _weights(values: Sequence[Any]) -> tuple[np.ndarray, np.ndarray]:
    n = len(values)
    if not all(type(v) is float or type(v) is int for v in values):
        return np.zeros(n), np.zeros(n, dtype=bool)
    w = np.array(values, dtype=np.float64)
    return w, np.isfinite(w) & (w >= 0.0) & (w <= MAX_WEIGHT)


def _us(text: str) -> int:
    return (parse_iso(text) - EPOCH) // timedelta(microseconds=1)


def page_columns(raw: Sequence[Sequence[Any]], col_of: dict[str, int]) -> EventPage:
    """The marks of one page of `store.log.event_pages` (malformed rows noted and left out)."""
    ids, bullet_ids, kinds, ats, recs, weights, contexts, refs, batches = raw
    at_us, at_ok = parse_times(ats)
    rec_us, rec_ok = parse_times(recs)
    w, w_ok = _weights(weights)
    ok = at_ok & rec_ok & w_ok
    for i in np.flatnonzero(~ok).tolist():  # not certified: ask as every reader does
        if event_point(ids[i], ats[i], weights[i], recs[i]) is not None:
            ok[i] = True
            at_us[i], rec_us[i], w[i] = _us(ats[i]), _us(recs[i]), float(weights[i])
    keep: Any = slice(None) if ok.all() else np.flatnonzero(ok)
    rows = range(len(ids)) if isinstance(keep, slice) else keep.tolist()

    def pick(values: Sequence[Any]) -> list[Any]:
        return list(values) if isinstance(keep, slice) else [values[i] for i in rows]

    rec_at = pick(recs)
    rec_us = rec_us[keep]
    return EventPage(
        ids=np.array(pick(ids), dtype=np.int64),
        cols=np.array([col_of[b] for b in pick(bullet_ids)], dtype=np.intp),
        helpful=np.fromiter((k == "helpful" for k in pick(kinds)), dtype=bool),
        at=_days(at_us[keep], pick(ats)),
        recorded=_days(rec_us, rec_at),
        now=_days(rec_us, rec_at, shift=1),
        recorded_us=rec_us,
        weight=w[keep],
        recorded_at=rec_at,
        context=pick(contexts),
        session_ref=pick(refs),
        batch_id=pick(batches),
    )
