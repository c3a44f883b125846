"""Whole-history reads for `playbook policy eval` (SQL lives in the store package).

The evaluation replays the log from the start, so it reads each history table once, in
order, as plain tuples: bullets, the feedback log, the maturity log and the lineage edges.
Timestamps stay the ISO strings the store writes (fixed width, UTC), so comparing them as
strings is comparing them as times, exactly as the store's own `as_of` queries do.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, NamedTuple

from .records import event_point

if TYPE_CHECKING:
    from .store import PlaybookStore


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


def read_history(store: PlaybookStore) -> History:
    """Everything the replay needs, read in one pass per table (a read: nothing written)."""
    conn = store.sql
    bullets = list(
        map(
            LogBullet._make,
            conn.execute(
                "SELECT seq, id, type, maturity, half_life_days, valid_from, valid_to "
                "FROM bullets ORDER BY seq"
            ),
        )
    )
    events = [
        LogEvent._make(r)
        for r in conn.execute(
            "SELECT id, bullet_id, kind, at, recorded_at, weight, context, session_ref, "
            "batch_id FROM feedback ORDER BY recorded_at, id"
        )
        if event_point(r[0], r[3], r[5], r[4]) is not None
    ]
    maturity = list(
        map(
            MaturityEntry._make,
            conn.execute("SELECT id, bullet_id, at, maturity FROM maturity_log ORDER BY at, id"),
        )
    )
    edges = list(
        map(
            Edge._make,
            conn.execute(
                "SELECT id, src, dst, at FROM edges WHERE kind = 'supersedes' ORDER BY at, id"
            ),
        )
    )
    return History(bullets, events, maturity, edges)


def token_matches(store: PlaybookStore, token: str) -> tuple[list[int], list[int], list[int]]:
    """Bullet seqs where `token` is a content token, a substring of one (and not a token),
    and a tag: the three kinds of keyword points recall gives (SPEC §6)."""
    from ..core.policy import DEFAULT_POLICY
    from .ranking import keyword_hits

    (exact, _), (partial, _), (tag, _) = keyword_hits(store, [token], DEFAULT_POLICY)
    return exact.tolist(), partial.tolist(), tag.tolist()
