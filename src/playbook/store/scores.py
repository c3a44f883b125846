"""Scores: a bullet's decayed evidence, effective score, earned rung and staleness, now or
as the playbook stood at a moment (SPEC §2 `store.score(id, at=None)`). A read model over
the bullets and the evidence cache; the formulas are `playbook.core.scoring`'s."""

from __future__ import annotations

from collections.abc import Iterable
from datetime import datetime
from typing import TYPE_CHECKING

from ..core import scoring
from ..core.errors import NotFound
from .base import Now

if TYPE_CHECKING:
    from ..core.model import Score
    from ..core.policy import Policy
    from .bullets import BulletRepo
    from .evidence import EvidenceRepo


class Scores:
    """`score(id, at=None)` and `scores(ids, at=None)`."""

    def __init__(
        self, bullets: BulletRepo, evidence: EvidenceRepo, policy: Policy, now: Now
    ) -> None:
        self.bullets = bullets
        self.evidence = evidence
        self.policy = policy
        self.now = now

    def score(self, bullet_id: str, at: datetime | None = None) -> Score:
        """helpful/harmful (decayed, lineage included), effective score, earned rung, stale.

        `at` in the past reads the playbook as it stood then (feedback recorded by `at`,
        maturity as it was); `at` None means now.
        """
        return self.scores([bullet_id], at=at)[bullet_id]

    def scores(self, ids: Iterable[str], at: datetime | None = None) -> dict[str, Score]:
        ids = list(ids)
        bullets = self.bullets.get_many(ids)
        missing = [i for i in ids if i not in bullets]
        if missing:
            raise NotFound(f"no bullet with id {missing[0]!r}")
        now_t = self.now()
        past = at is not None and at < now_t
        evidence = self.evidence.many(ids, at=at, as_of=at if past else None)
        maturities = self.bullets.maturity_as_of(ids, at) if past and at else {}
        now = scoring.days(at or now_t)
        return {
            bid: scoring.score_of(
                evidence[bid].helpful,
                evidence[bid].harmful,
                evidence[bid].last_activity,
                maturities.get(bid, bullets[bid].maturity),
                now,
                self.policy,
            )
            for bid in ids
        }
