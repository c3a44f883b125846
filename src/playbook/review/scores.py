"""A bullet's score as every surface shows it: now for a live bullet, and frozen at its
retirement for a retired one.

Why frozen: a retired bullet is out of the playbook (recall never returns it), so a score
that kept decaying would mean nothing, and zero would hide what it had earned when it was
replaced, merged or inverted. Its score is the one it had the moment it was retired: its
evidence observed by then, decayed to then, times the multiplier of the rung it held
(retired bullets never change rung). A replaced bullet's evidence lives on in its
successor, which scores it (`supersedes`). `store.views.bullet_rows` gives the same
numbers for the table (`store.history.frozen_evidence`).
"""

from __future__ import annotations

from collections.abc import Iterable
from datetime import datetime
from typing import TYPE_CHECKING

from ..core import scoring
from ..store import PlaybookStore

if TYPE_CHECKING:
    from ..core.model import Bullet, Score


def score_moment(bullet: Bullet) -> datetime | None:
    """When a bullet's shown score is taken: its retirement, or None (now)."""
    return bullet.valid_to if bullet.state == "retired" else None


def bullet_scores(store: PlaybookStore, bullets: Iterable[Bullet]) -> dict[str, Score]:
    """Each bullet's score: `store.scores` now for a live one; for a retired one its
    evidence at `valid_to` (`evidence_many(at=valid_to)`) scored at its rung then."""
    bullets = list(bullets)
    live = [b.id for b in bullets if score_moment(b) is None]
    out = store.scores(live) if live else {}
    by_moment: dict[datetime, list[Bullet]] = {}
    for b in bullets:
        moment = score_moment(b)
        if moment is not None:
            by_moment.setdefault(moment, []).append(b)
    for moment, group in by_moment.items():
        evidence = store.evidence_many([b.id for b in group], at=moment)
        end = scoring.days(moment)
        for b in group:
            ev = evidence[b.id]
            out[b.id] = scoring.score_of(
                ev.helpful, ev.harmful, ev.last_activity, str(b.maturity), end, store.policy
            )
    return out


def bullet_score(store: PlaybookStore, bullet: Bullet) -> Score:
    return bullet_scores(store, [bullet])[bullet.id]
