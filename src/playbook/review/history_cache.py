"""What time travel reads from the store, read once: every bullet ever created and every
feedback event, as arrays (`HistoryCache`).

`review.rows_as_of(store, when)` reads the bullets created by `when` and the feedback
recorded by `when` for that one moment; a caller that asks for several moments of a
playbook that has not changed (the workbench stepping a week at a time) reads both once
and answers each moment with numpy alone. The cache holds what the store held when it was
read: a writer's later commit is not in it, so a caller keeps one per change token.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any, NamedTuple

import numpy as np

from ..core import scoring
from ..store import PlaybookStore, iso, parse_iso

_CREATED, _VALID_FROM = 10, 14  # positions in store.history.ROW_COLUMNS
_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)
_MICROSECOND = timedelta(microseconds=1)


class Events(NamedTuple):
    """Feedback events as parallel arrays: the position of each one's bullet in a list of
    rows, when it was observed (epoch days), its weight, and whether it was helpful."""

    owner: np.ndarray
    at: np.ndarray
    weight: np.ndarray
    helpful: np.ndarray


@dataclass(frozen=True)
class HistoryCache:
    """Every bullet (`store.history.ROW_COLUMNS`, seq order) and every feedback event."""

    rows: list[tuple[Any, ...]]
    valid_from: np.ndarray  # ISO text, compared as the store compares it
    created: np.ndarray  # epoch days
    events: Events  # `owner` is a position in `rows`
    recorded: np.ndarray  # each event's recorded_at, epoch microseconds

    @classmethod
    def read(cls, store: PlaybookStore) -> HistoryCache:
        rows = store.past.every_bullet()
        events, known = events_of(store.past.every_event(), {r[0]: i for i, r in enumerate(rows)})
        return cls(
            rows,
            np.array([r[_VALID_FROM] for r in rows], dtype=str),
            epoch_days([r[_CREATED] for r in rows]),
            events,
            epoch_micros([r[4] for r in known]),
        )

    def at(self, when: datetime) -> tuple[list[tuple[Any, ...]], Events, np.ndarray]:
        """The rows created by `when`, the events recorded by `when` (owned by positions
        in those rows) and the rows' creation days: what `rows_as_of` would read."""

        made = self.valid_from <= iso(when)
        if not made.any():
            return [], Events(*(a[:0] for a in self.events)), self.created[:0]
        position = np.cumsum(made) - 1  # a row's position among the rows made by then
        owner, at, weight, helpful = self.events
        keep = (self.recorded <= _micros(when)) & made[owner]
        rows = [r for r, m in zip(self.rows, made.tolist(), strict=True) if m]
        events = Events(position[owner[keep]], at[keep], weight[keep], helpful[keep])
        return rows, events, self.created[made]


def events_of(
    found: Sequence[tuple[Any, ...]], pos: dict[str, int]
) -> tuple[Events, list[tuple[Any, ...]]]:
    """Feedback rows (bullet_id, kind, at, weight, ...) as `Events` owned by the rows'
    positions in `pos`, and the rows kept: an event whose bullet is not among them (created
    after the moment asked) is left out."""

    kept = [r for r in found if r[0] in pos]
    return Events(
        np.fromiter((pos[r[0]] for r in kept), dtype=np.int64, count=len(kept)),
        epoch_days([r[2] for r in kept]),
        np.fromiter((r[3] for r in kept), dtype=np.float64, count=len(kept)),
        np.fromiter((r[1] == "helpful" for r in kept), dtype=bool, count=len(kept)),
    ), kept


def epoch_days(values: Sequence[Any]) -> np.ndarray:
    """Timestamps as epoch days: ISO text as the store writes it, parsed by numpy at once;
    anything else (another ISO form, a datetime from a driver) one by one."""

    text = _canonical(values)
    if text is not None:
        micros = text.astype("U26").astype("datetime64[us]").astype(np.int64)
        return micros / (scoring.DAY * 1e6)
    return np.array(
        [scoring.days(v if isinstance(v, datetime) else parse_iso(v)) for v in values],
        dtype=np.float64,
    )


def epoch_micros(values: Sequence[Any]) -> np.ndarray:
    """Timestamps as whole microseconds since the epoch (exact, for comparing moments)."""

    text = _canonical(values)
    if text is not None:
        return text.astype("U26").astype("datetime64[us]").astype(np.int64)
    return np.array(
        [_micros(v if isinstance(v, datetime) else parse_iso(v)) for v in values],
        dtype=np.int64,
    )


def _canonical(values: Sequence[Any]) -> np.ndarray | None:
    """`values` as a text array when every one is the store's own ISO form
    ("2026-05-01T10:00:00.000000Z"), else None."""

    if not len(values):
        return np.zeros(0, dtype="U27")
    text = np.array(values, dtype=str)  # a datetime becomes "2026-...+00:00": not ours
    if (np.char.str_len(text) == 27).all() and np.char.endswith(text, "Z").all():
        return text
    return None


def _micros(t: datetime) -> int:
    return (t - _EPOCH) // _MICROSECOND
