"""What a reviewer reads: one bullet in full, the stale list, and the filter's ranking.
(Its score over time is `review.trends`.)"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any

from ..core import scoring
from ..core.errors import NotFound
from ..core.limits import preview
from ..core.record import NEW, FrozenRecord
from ..store import Conflict, Decision, PlaybookStore, iso
from .scores import bullet_score, score_moment

if TYPE_CHECKING:
    from ..core.model import Bullet, FeedbackEvent, Score

DECISIONS = 50  # latest decisions shown with a bullet


def require(store: PlaybookStore, bullet_id: str) -> Bullet:
    bullet = store.get_bullet(bullet_id)
    if bullet is None:
        raise NotFound(f"no bullet with id {preview(bullet_id)}")
    return bullet


class BulletDetail(FrozenRecord):
    """A bullet and everything behind it: the one shape every surface shows."""

    bullet: Bullet
    score: Score
    timeline: list[FeedbackEvent]  # oldest first
    predecessors: list[tuple[str, Bullet]]  # (edge kind, bullet) it came from
    successors: list[tuple[str, Bullet]]  # (edge kind, bullet) that came from it
    decisions: list[Decision]  # the latest, oldest first
    maturity_log: list[tuple[datetime, str]]  # every rung it held, since when
    conflicts: list[Conflict]  # open and resolved
    score_at: datetime | None  # None: now; a retired bullet's: its retirement (frozen)

    def __init__(
        self,
        bullet: Bullet,
        score: Score,
        timeline: list[FeedbackEvent],
        predecessors: list[tuple[str, Bullet]],
        successors: list[tuple[str, Bullet]],
        decisions: list[Decision],
        maturity_log: list[tuple[datetime, str]],
        conflicts: list[Conflict] = NEW,
        score_at: datetime | None = None,
    ) -> None:
        object.__setattr__(self, "bullet", bullet)
        object.__setattr__(self, "score", score)
        object.__setattr__(self, "timeline", timeline)
        object.__setattr__(self, "predecessors", predecessors)
        object.__setattr__(self, "successors", successors)
        object.__setattr__(self, "decisions", decisions)
        object.__setattr__(self, "maturity_log", maturity_log)
        object.__setattr__(self, "conflicts", [] if conflicts is NEW else conflicts)
        object.__setattr__(self, "score_at", score_at)

    def deprecation(self) -> dict[str, Any] | None:
        """Why a deprecated or retired bullet was deprecated: its latest applied `deprecate`
        decision (a curate batch's, or an import's that carried the source's reason)."""
        if self.bullet.maturity != "deprecated" and self.bullet.state != "retired":
            return None
        for d in reversed(self.decisions):
            if d.action == "deprecate" and d.status == "applied":
                keys = ("source", "deprecated_at", "replaced_by")
                extra = {k: d.detail[k] for k in keys if k in d.detail}
                return {"reason": d.reason, "at": iso(d.at), "actor": d.actor, **extra}
        return None

    def to_dict(self) -> dict[str, Any]:
        def related(pairs: list[tuple[str, Bullet]]) -> list[dict[str, Any]]:
            return [
                {
                    "kind": k,
                    "id": b.id,
                    "content": b.content,
                    "state": b.state,
                    "maturity": b.maturity,
                }
                for k, b in pairs
            ]

        return {
            "bullet": self.bullet.model_dump(mode="json"),
            "score": self.score.model_dump(mode="json"),
            "score_at": iso(self.score_at) if self.score_at else None,
            "lineage": {
                "predecessors": related(self.predecessors),
                "successors": related(self.successors),
            },
            "timeline": [e.model_dump(mode="json") for e in self.timeline],
            "deprecation": self.deprecation(),
            "maturity_log": [{"at": iso(at), "maturity": m} for at, m in self.maturity_log],
            "decisions": [
                {
                    "id": d.id,
                    "at": iso(d.at),
                    "batch_id": d.batch_id,
                    "actor": d.actor,
                    "action": d.action,
                    "status": d.status,
                    "reason": d.reason,
                    "detail": d.detail,
                }
                for d in self.decisions
            ],
            "conflicts": [
                {
                    "id": c.id,
                    "a": c.a,
                    "b": c.b,
                    "reason": c.reason,
                    "status": c.status,
                    "resolution": c.resolution,
                }
                for c in self.conflicts
            ],
        }


def bullet_detail(
    store: PlaybookStore, bullet_id: str, *, decisions: int = DECISIONS
) -> BulletDetail:
    """Content, score, lineage, feedback timeline, maturity history, decisions and
    conflicts of one bullet. NotFound for an unknown id. A retired bullet's score is the
    one it had when it was retired (`score_at`; see `review.scores`)."""
    bullet = require(store, bullet_id)
    lineage = store.lineage(bullet_id)
    related = store.get_bullets(
        [b for _, b in lineage.predecessors] + [b for _, b in lineage.successors]
    )
    return BulletDetail(
        bullet=bullet,
        score=bullet_score(store, bullet),
        timeline=store.timeline(bullet_id),
        predecessors=[(k, related[b]) for k, b in lineage.predecessors if b in related],
        successors=[(k, related[b]) for k, b in lineage.successors if b in related],
        decisions=store.decisions(bullet_id=bullet_id, limit=decisions),
        maturity_log=store.views.maturity_history(bullet_id),
        conflicts=[c for c in store.conflicts(include_resolved=True) if bullet_id in (c.a, c.b)],
        score_at=score_moment(bullet),
    )


# ------------------------------------------------------------------------------ stale


class StaleItem(FrozenRecord):
    bullet: Bullet
    days_silent: float
    last_activity: datetime

    def __init__(
        self,
        bullet: Bullet,
        days_silent: float,
        last_activity: datetime,
    ) -> None:
        object.__setattr__(self, "bullet", bullet)
        object.__setattr__(self, "days_silent", days_silent)
        object.__setattr__(self, "last_activity", last_activity)

    def to_dict(self) -> dict[str, Any]:
        return {
            "bullet": self.bullet.model_dump(mode="json"),
            "days_silent": round(self.days_silent, 3),
            "last_activity": iso(self.last_activity),
        }


class StaleList(FrozenRecord):
    stale_after_days: float
    total: int
    items: list[StaleItem]  # the longest silent first, at most `limit`

    def __init__(
        self,
        stale_after_days: float,
        total: int,
        items: list[StaleItem],
    ) -> None:
        object.__setattr__(self, "stale_after_days", stale_after_days)
        object.__setattr__(self, "total", total)
        object.__setattr__(self, "items", items)

    def to_dict(self) -> dict[str, Any]:
        return {
            "stale_after_days": self.stale_after_days,
            "total": self.total,
            "items": [i.to_dict() for i in self.items],
        }


def stale(store: PlaybookStore, limit: int = 50) -> StaleList:
    """Live bullets with no feedback (or creation) for `Policy.stale_after_days`: to be
    re-validated. Staleness changes no score."""
    now = store.now()
    ids = store.active_ids()
    evidence = store.evidence_many(ids, at=now) if ids else {}
    days_now = scoring.days(now)
    found = [
        (days_now - ev.last_activity, bid)
        for bid, ev in evidence.items()
        if scoring.is_stale(ev.last_activity, days_now, store.policy)
    ]
    found.sort(key=lambda t: (-t[0], t[1]))
    chosen = found[: max(0, limit)]
    bullets = store.get_bullets(bid for _, bid in chosen)
    items = [
        StaleItem(
            bullets[bid],
            silent,
            datetime.fromtimestamp((days_now - silent) * scoring.DAY, UTC),
        )
        for silent, bid in chosen
    ]
    return StaleList(store.policy.stale_after_days, len(found), items)


# ------------------------------------------------------------------------------ filter


def filter_relevance(store: PlaybookStore, words: str) -> dict[str, float] | None:
    """Recall's keyword relevance per matching bullet id for a filter's words (None when
    there are no words). Rank by `scoring.final_score(relevance, effective, policy)`, as
    recall does."""
    if not words.strip():
        return None
    from ..retrieval.query import keyword_relevance  # lazy: mark

    return keyword_relevance(store, words)


def filter_postings(store: PlaybookStore, words: str) -> list[tuple[Any, float]]:
    """The same points as postings by bullet seq, for a ranking done in numpy."""
    from ..retrieval.query import keyword_postings  # lazy: mark

    return keyword_postings(store, words)
