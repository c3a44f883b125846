"""A bullet's effective score over time: the Detail tab's plot (`score_series`, with the
events it should mark) and the bullets table's trend column (`score_trends`, many bullets
at a few moments).

The plot, at each moment t: the events observed by t (the bullet's own and its
supersedes-ancestors'), each decayed to t (SPEC §4), times the multiplier of the rung the
bullet held at t (its maturity log; before its first entry, its rung now). A retired
bullet's score stops at its retirement: after it, the value is the one it had then
(`review.scores`). Each bullet's events are folded once for all moments (a matrix of ages,
one numpy pass), not once per moment.

The trend column, at each moment: the score the playbook gave then (`rows_as_of_ids`,
knowledge time, as time travel shows it), from the evidence cache's days.
"""

from __future__ import annotations

from bisect import bisect_right
from collections.abc import Iterable, Sequence
from datetime import UTC, datetime, timedelta
from typing import NamedTuple

import numpy as np

from ..core import scoring
from ..core.model import Bullet
from ..store import PlaybookStore
from .history import rows_as_of_ids

SERIES_POINTS = 96  # moments in a score series, from creation (or first event) to now
TREND_DAYS = 90
TREND_POINTS = 16


class SeriesEvent(NamedTuple):
    """A feedback event to mark on a score plot: `e[0], e[1]` are (kind, time)."""

    kind: str  # helpful | harmful
    at: datetime
    weight: float
    bullet_id: str  # the bullet's own id, or the ancestor's whose evidence it inherits


class ScoreSeries(list[tuple[datetime, float]]):
    """(moment, effective score) pairs, oldest first, plus `events`: every event behind the
    score (its own and inherited), oldest first, so a plot can mark each one."""

    def __init__(
        self, points: Iterable[tuple[datetime, float]] = (), events: Sequence[SeriesEvent] = ()
    ) -> None:
        super().__init__(points)
        self.events: list[SeriesEvent] = list(events)


def score_series(
    store: PlaybookStore,
    bullet: Bullet,
    history: list[tuple[datetime, str]] | None = None,
    points: int = SERIES_POINTS,
) -> ScoreSeries:
    """The bullet's effective score at `points` moments from its creation (or its first
    inherited event) to now (or its retirement), with the events behind it (`.events`).

    `history` is the bullet's maturity log (default: the store's). Pure arithmetic from
    `playbook.core.scoring`; nothing is stored.
    """
    if history is None:
        history = store.past.maturity_histories([bullet.id]).get(bullet.id, [])
    lineage = [bullet.id, *store.edges.ancestors_many([bullet.id]).get(bullet.id, [])]
    raw = store.raw_events(lineage)
    events = sorted(_lineage_events(lineage, raw), key=lambda e: e[1])
    start = bullet.created_at
    if events:
        start = min(start, _moment(events[0][1]))
    end = bullet.valid_to or store.now()
    if end <= start:
        end = start + timedelta(hours=1)
    steps = max(2, points)
    span = (end - start).total_seconds()
    moments = [start + timedelta(seconds=span * k / (steps - 1)) for k in range(steps)]
    values = _effective_at(store, bullet, events, history, moments)
    marks = [SeriesEvent(kind, _moment(at), weight, bid) for kind, at, weight, bid in events]
    return ScoreSeries(zip(moments, values, strict=True), marks)


def score_trends(
    store: PlaybookStore,
    ids: Iterable[str],
    *,
    days: float = TREND_DAYS,
    points: int = TREND_POINTS,
    now: datetime | None = None,
) -> dict[str, list[float]]:
    """Each bullet's effective score at `points` evenly spaced moments over the last `days`
    (oldest first, the last one now), for the given ids only: the workbench asks for the
    rows on screen. Unknown ids are left out.

    Each moment's score is the one the playbook gave the bullet then (`rows_as_of_ids`: the
    feedback recorded by then, its rung and lineage then, 0 before it existed), read from
    the evidence cache's days: a few queries a moment, however long the log. (Reading
    every event of the rules on screen took 9.9 s at a team's year, 10M events.) Where the
    days do not answer (a read-only store they lag), the events observed by each moment
    are folded instead, read once."""
    wanted = list(dict.fromkeys(ids))
    if not wanted:
        return {}
    now = now or store.now()
    steps = max(2, points)
    moments = [now - timedelta(days=days * (steps - 1 - k) / (steps - 1)) for k in range(steps)]
    if store.past.days_answer():
        return _trends_from_days(store, wanted, moments)
    bullets = store.get_bullets(wanted)
    lineages = store.edges.ancestors_many(list(bullets))
    members = list({m for bid in bullets for m in (bid, *lineages.get(bid, ()))})
    raw = store.raw_events(members) if members else {}
    histories = store.past.maturity_histories(list(bullets))
    found = [bid for bid in wanted if bid in bullets]
    items = [
        (
            bullets[bid],
            _lineage_events((bid, *lineages.get(bid, ())), raw),
            histories.get(bid, []),
        )
        for bid in found
    ]
    return dict(zip(found, _effective_many(store, items, moments), strict=True))


def _trends_from_days(
    store: PlaybookStore, ids: list[str], moments: Sequence[datetime]
) -> dict[str, list[float]]:
    found = store.get_bullets(ids)
    out = {bid: [0.0] * len(moments) for bid in ids if bid in found}
    for k, when in enumerate(moments):
        for row in rows_as_of_ids(store, list(out), when):
            if row.id in out:
                out[row.id][k] = row.effective
    return out


_Event = tuple[str, float, float, str]  # kind, observed at (epoch days), weight, bullet id


def _lineage_events(lineage: Iterable[str], raw: dict[str, list[scoring.RawEvent]]) -> list[_Event]:
    return [(e.kind, e.at, e.weight, m) for m in lineage for e in raw.get(m, ())]


def _moment(epoch_days: float) -> datetime:
    return datetime.fromtimestamp(epoch_days * scoring.DAY, tz=UTC)


def _effective_at(
    store: PlaybookStore,
    bullet: Bullet,
    events: Sequence[_Event],
    history: list[tuple[datetime, str]],
    moments: Sequence[datetime],
) -> list[float]:
    """The bullet's effective score at each moment (after its retirement: at it)."""
    return _effective_many(store, [(bullet, events, history)], moments)[0]


def _effective_many(
    store: PlaybookStore,
    items: Sequence[tuple[Bullet, Sequence[_Event], list[tuple[datetime, str]]]],
    moments: Sequence[datetime],
) -> list[list[float]]:
    """Each bullet's effective score at each moment (after its retirement: at it), from
    its events and its maturity log: `scoring` over every event of every bullet at once."""

    policy = store.policy
    steps = len(moments)
    when = np.empty((len(items), steps), dtype=np.float64)
    multiplier = np.empty((len(items), steps), dtype=np.float64)
    spans: list[int] = [0]
    for i, (bullet, events, history) in enumerate(items):
        end = bullet.valid_to
        taken = [min(t, end) if end is not None else t for t in moments]
        when[i] = [scoring.days(t) for t in taken]
        times = [at for at, _ in history]
        current = str(bullet.maturity)
        multiplier[i] = [
            policy.multiplier(history[k - 1][1] if (k := bisect_right(times, t)) else current)
            for t in taken
        ]
        spans.append(spans[-1] + len(events))
    every = [e for _, events, _ in items for e in events]
    owner = np.repeat(np.arange(len(items)), np.diff(spans))
    half_life = np.array([store.half_life(b) for b, _, _ in items], dtype=np.float64)
    value = _decayed(every, when[owner], half_life[owner])
    helpful = np.array([e[0] == "helpful" for e in every], dtype=bool)
    h = np.zeros((len(items), steps), dtype=np.float64)
    x = np.zeros((len(items), steps), dtype=np.float64)
    for i in range(len(items)):
        if spans[i + 1] > spans[i]:
            part, kind = value[spans[i] : spans[i + 1]], helpful[spans[i] : spans[i + 1]]
            h[i], x[i] = part[kind].sum(axis=0), part[~kind].sum(axis=0)
    scores: list[list[float]] = scoring.effective_with(h, x, multiplier, policy).tolist()
    return scores


def _decayed(events: Sequence[_Event], when: np.ndarray, half_life: np.ndarray) -> np.ndarray:
    """(events x moments): `scoring.decayed` of each event at each of its bullet's moments
    (`when`, epoch days, a row per event) if observed by then, else 0."""

    at = np.array([e[1] for e in events], dtype=np.float64)
    weight = np.array([e[2] for e in events], dtype=np.float64)
    age = when - at[:, None]
    return np.where(age >= 0, scoring.decayed(weight[:, None], age, half_life[:, None]), 0.0)
