"""The shapes of the whole history `playbook policy eval` replays (`Past.read_history`).

The evaluation replays the log from the start, so it reads each history table once, in
order, as plain tuples: bullets, the feedback log, the maturity log and the lineage edges.
Timestamps stay the ISO strings the store writes (fixed width, UTC), so comparing them as
strings is comparing them as times, exactly as the store's own `as_of` queries do.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import NamedTuple


class LogBullet(NamedTuple):
    seq: int
    id: str
    type: str
    maturity: str  # as it is now (the as-of fallback when the maturity log has no entry yet)
    half_life_days: float | None
    valid_from: str
    valid_to: str | None


class LogEvent(NamedTuple):
    id: int
    bullet_id: str
    kind: str
    at: str  # observation time
    recorded_at: str  # knowledge time: the moment the mark was made
    weight: float
    context: str | None
    session_ref: str | None
    batch_id: str | None


class MaturityEntry(NamedTuple):
    id: int
    bullet_id: str
    at: str
    maturity: str


class Edge(NamedTuple):
    id: int
    src: str  # the successor
    dst: str  # the bullet it supersedes
    at: str


@dataclass(frozen=True)
class History:
    bullets: list[LogBullet]  # in seq order
    events: list[LogEvent]  # in (recorded_at, id) order
    maturity: list[MaturityEntry]  # in (at, id) order
    supersedes: list[Edge]  # in (at, id) order
