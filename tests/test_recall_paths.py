"""The vectorised 'now' path of recall ranks exactly as the general path that scores every
candidate from the log itself (used for as-of), on random playbooks and histories."""

from __future__ import annotations

import random

import pytest

from playbook import recall
from playbook.curation import curate
from playbook.retrieval.vectors import HashTrigramEmbedder, MemoryVectors
from playbook.store import PlaybookStore

from .helpers import Clock
from .helpers.histories import WORDS, random_history


def _flat(result) -> list[tuple]:
    return [
        (key, i.bullet.id, i.bullet.maturity, i.keyword_score, i.relevance)
        for key in ("bullets", "anti_patterns", "deprecated_warnings")
        for i in getattr(result, key)
    ]


@pytest.mark.parametrize("seed", range(4))
def test_fast_path_equals_the_log_path(store: PlaybookStore, clock: Clock, seed: int) -> None:
    rng = random.Random(seed)
    random_history(store, clock, rng)
    clock.advance(seconds=1)
    for _ in range(8):
        query = " ".join(rng.sample(WORDS, rng.randint(1, 3)))
        fast = recall(store, query, limit=50)
        slow = recall(store, query, limit=50, as_of=clock.t)
        assert _flat(fast) == _flat(slow), query
        for key in ("bullets", "anti_patterns", "deprecated_warnings"):
            for a, b in zip(getattr(fast, key), getattr(slow, key), strict=True):
                assert a.effective_score == pytest.approx(b.effective_score, rel=1e-9, abs=1e-12)
                assert a.final_score == pytest.approx(b.final_score, rel=1e-9, abs=1e-12)


def test_fast_path_equals_the_log_path_with_vectors(store: PlaybookStore, clock: Clock) -> None:
    rng = random.Random(11)
    random_history(store, clock, rng)
    clock.advance(seconds=1)
    vectors = MemoryVectors(store, HashTrigramEmbedder(dims=64))
    fast = recall(store, "npm cache", limit=30, vectors=vectors)
    slow = recall(store, "npm cache", limit=30, vectors=vectors, as_of=clock.t)
    assert _flat(fast) == _flat(slow)
    assert [i.similarity for i in fast.bullets] == pytest.approx(
        [i.similarity for i in slow.bullets]
    )


def test_rank_table_sees_writes_from_this_and_other_connections(
    store: PlaybookStore, clock: Clock, db_target
) -> None:
    from playbook.store import open_store

    a = curate(store, [{"type": "add", "content": "Pin npm in CI"}]).added[0]
    assert [i.bullet.id for i in recall(store, "npm").bullets] == [a]
    other = open_store(db_target, clock=clock)
    b = curate(other, [{"type": "add", "content": "Cache npm downloads"}]).added[0]
    curate(other, [{"type": "helpful", "bullet_id": b}])
    assert [i.bullet.id for i in recall(store, "npm").bullets] == [b, a]
    curate(store, [{"type": "deprecate", "bullet_id": b, "reason": "x"}])
    r = recall(store, "npm")
    assert [i.bullet.id for i in r.bullets] == [a]
    assert [i.bullet.id for i in r.deprecated_warnings] == [b]
