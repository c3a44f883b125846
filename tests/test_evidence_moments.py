"""`evidence.many_at` (each bullet at its own moment, in one pass) gives every bullet what
`evidence.many([id], at=moment)` gives it, bit for bit: on random histories with lineage
(replace, merge), future-dated events, changed half-lives and retirements; and a retired
bullet's frozen score (`past.frozen_evidence`) is its score at its retirement."""

from __future__ import annotations

import random
from datetime import timedelta

import pytest

from playbook.store import PlaybookStore, parse_iso

from .helpers import Clock
from .helpers.histories import random_history


@pytest.mark.parametrize("seed", [3, 11])
def test_each_at_its_moment_as_one_at_a_time(store: PlaybookStore, clock: Clock, seed: int) -> None:
    rng = random.Random(seed)
    random_history(store, clock, rng)
    ids = [b.id for b in store.bullets()] + [b.id for b in store.bullets(state="retired")]
    some = rng.sample(ids, min(25, len(ids)))
    store.sql.execute(  # a half-life of its own, after its events were folded
        "UPDATE bullets SET half_life_days = 30 WHERE id = ?", (some[0],)
    )
    moments = {bid: clock.t - timedelta(hours=rng.uniform(-72, 24 * 20)) for bid in some}
    together = store.evidence.many_at(moments)
    assert together.keys() == set(some)
    for bid, at in moments.items():
        assert together[bid] == store.evidence.many([bid], at=at)[bid], bid


def test_a_retired_bullet_keeps_its_score_at_retirement(store: PlaybookStore, clock: Clock) -> None:
    random_history(store, clock, random.Random(5))
    retired = store.bullets(state="retired")
    assert len(retired) >= 3  # replaced, merged and deprecated bullets
    frozen = store.past.frozen_evidence()
    for b in retired:
        ev = store.evidence.many(
            [b.id],
            at=parse_iso(store.sql.scalar("SELECT valid_to FROM bullets WHERE id = ?", (b.id,))),
        )[b.id]
        assert frozen[b.id][:2] == (ev.helpful, ev.harmful), b.id
