"""Conflict flags (an add whose polarity opposes a live bullet's) and their resolution:
keep both, deprecate one, or merge them into one rule."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from ..core.errors import NotFound
from ..core.terms import HUMAN
from ..store import Conflict, PlaybookStore, StoreError, iso
from .scores import bullet_scores

if TYPE_CHECKING:
    from ..core.model import Bullet, FeedbackEvent, Score
    from ..curation import CurateResult

CONFLICT_EVENTS = 6  # latest feedback events shown under each side


@dataclass(frozen=True)
class ConflictSide:
    bullet_id: str
    bullet: Bullet | None
    score: Score | None
    events: list[FeedbackEvent] = field(default_factory=list)  # the latest few, oldest first

    def to_dict(self) -> dict[str, Any]:
        return {
            "id": self.bullet_id,
            "bullet": self.bullet.model_dump(mode="json") if self.bullet else None,
            "score": self.score.model_dump(mode="json") if self.score else None,
            "events": [e.model_dump(mode="json") for e in self.events],
        }


@dataclass(frozen=True)
class ConflictView:
    conflict: Conflict
    a: ConflictSide  # the bullet added with opposite polarity
    b: ConflictSide  # the bullet it opposes

    def to_dict(self) -> dict[str, Any]:
        c = self.conflict
        return {
            "id": c.id,
            "reason": c.reason,
            "created_at": iso(c.created_at),
            "status": c.status,
            "resolution": c.resolution,
            "a": self.a.to_dict(),
            "b": self.b.to_dict(),
        }


def conflicts(
    store: PlaybookStore, *, include_resolved: bool = False, events: int = CONFLICT_EVENTS
) -> list[ConflictView]:
    """Open conflict flags (all of them with `include_resolved`), oldest first, with both
    bullets, their scores and their latest feedback."""
    flags = store.conflicts(include_resolved=include_resolved)
    ids = list(dict.fromkeys(i for c in flags for i in (c.a, c.b)))
    bullets = store.get_bullets(ids)
    scores = bullet_scores(store, bullets.values()) if bullets else {}

    def side(bid: str) -> ConflictSide:
        latest = store.latest_events(bid, events) if bid in bullets else []
        return ConflictSide(bid, bullets.get(bid), scores.get(bid), latest)

    return [ConflictView(c, side(c.a), side(c.b)) for c in flags]


@dataclass(frozen=True)
class Resolution:
    conflict_id: int
    action: str  # "keep", "deprecate" or "merge"
    resolution: str  # as recorded: "kept both", "deprecated b-…", "merged into b-…"
    bullet_id: str | None = None  # the bullet deprecated, or the merged successor
    result: CurateResult | None = None

    def to_dict(self) -> dict[str, Any]:
        return {
            "conflict_id": self.conflict_id,
            "action": self.action,
            "resolution": self.resolution,
            "bullet_id": self.bullet_id,
            "result": self.result.to_dict() if self.result else None,
        }


def _open(store: PlaybookStore, conflict_id: int) -> Conflict:
    """The conflict, if it is still open (call inside the write transaction)."""
    for c in store.conflicts(include_resolved=True):
        if c.id == conflict_id:
            if c.status != "open":
                raise StoreError(f"conflict {conflict_id} is already resolved ({c.resolution})")
            return c
    raise NotFound(f"no conflict with id {conflict_id}")


def keep_both(store: PlaybookStore, conflict_id: int, *, actor: str = HUMAN) -> Resolution:
    """Both rules stand (they apply in different cases): the flag is closed."""
    with store.transaction():
        _open(store, conflict_id)
        store.resolve_conflict(conflict_id, "kept both", actor=actor)
    return Resolution(conflict_id, "keep", "kept both")


def deprecate_one(
    store: PlaybookStore, conflict_id: int, bullet_id: str, reason: str, *, actor: str = HUMAN
) -> Resolution:
    """Deprecate one side of the conflict (`bullet_id`, which must be one of the pair)."""
    from .actions import deprecate  # lazy: every typer command (curation: on resolving)

    if not reason.strip():
        raise StoreError("deprecating needs a reason")
    with store.transaction():
        c = _open(store, conflict_id)
        if bullet_id not in (c.a, c.b):
            raise StoreError(f"{bullet_id} is not in conflict {conflict_id} ({c.a}, {c.b})")
        result = deprecate(store, bullet_id, reason, actor=actor)
        text = f"deprecated {bullet_id}"
        store.resolve_conflict(conflict_id, text, actor=actor)
    return Resolution(conflict_id, "deprecate", text, bullet_id, result)


def merge(
    store: PlaybookStore,
    conflict_id: int,
    content: str,
    *,
    keep_pin: bool = False,
    actor: str = HUMAN,
) -> Resolution:
    """Replace both sides with one rule, `content`.

    Evidence follows meaning: the side whose polarity the new rule shares is superseded
    (its feedback counts for the new rule); the other is linked by an `inverts` edge and
    lends none (the harm an "Always X" earned is not harm of "Never X"). A pin carries over
    only with `keep_pin=True`, and then the new rule is pinned with the pinned side's reason.
    """
    from .actions import curate_one  # lazy: every typer command (curation: on resolving)

    with store.transaction():
        c = _open(store, conflict_id)
        pinned = [b for b in store.get_bullets([c.a, c.b]).values() if b.pinned]
        result = curate_one(
            store,
            {
                "type": "merge",
                "bullet_ids": [c.a, c.b],
                "content": content,
                "reason": f"merged to resolve conflict {conflict_id}",
            },
            actor,
            carry_pins=False,
        )
        new = result.outcomes[0].bullet_id
        assert new is not None
        if keep_pin and pinned:
            reason = "; ".join(dict.fromkeys(b.pinned_reason or "pinned" for b in pinned))
            store.pin(new, reason, actor=actor)
        text = f"merged into {new}"
        store.resolve_conflict(conflict_id, text, actor=actor)
    return Resolution(conflict_id, "merge", text, new, result)
