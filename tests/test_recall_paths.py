"""The vectorised 'now' path of recall ranks exactly as the general path that scores every
candidate from the log itself (used for as-of), on random playbooks and histories."""

from __future__ import annotations

import random
from datetime import timedelta

import pytest

from playbook import recall
from playbook.curation import curate
from playbook.store import PlaybookStore
from playbook.vectors import HashTrigramEmbedder, MemoryVectors

from .conftest import Clock, feedback_from_ahead

WORDS = "npm pytest docker release cache lockfile ci flaky migration rebase hooks lint".split()


def _random_history(store: PlaybookStore, clock: Clock, rng: random.Random) -> None:
    ids: list[str] = []
    for n in range(120):
        op = rng.random()
        live = [b.id for b in store.bullets()]
        if op < 0.3 or len(live) < 3:
            words = [*rng.sample(WORDS, rng.randint(2, 4)), f"x{n}"]
            content = " ".join(words)
            if rng.random() < 0.2:
                content = "AVOID: " + content
            delta = {
                "type": "add",
                "content": content,
                "tags": rng.sample(WORDS, rng.randint(0, 2)),
            }
            r = curate(store, [delta])
            ids += r.added
        elif op < 0.75:
            kind = rng.choice(["helpful", "helpful", "harmful"])
            bid = rng.choice(live)
            extra = {"reason": "caused_bug"} if kind == "harmful" else {}
            curate(store, [{"type": kind, "bullet_id": bid, **extra}])
        elif op < 0.8:
            # an event observed ahead of now (clock skew): the fast path must defer it
            feedback_from_ahead(
                store, clock, rng.choice(live), "helpful", at=clock.t + timedelta(days=2)
            )
        elif op < 0.88:
            bid = rng.choice(live)
            curate(store, [{"type": "replace", "bullet_id": bid, "content": f"replaced {n} npm"}])
        elif op < 0.93 and len(live) >= 2:
            a, b = rng.sample(live, 2)
            curate(store, [{"type": "merge", "bullet_ids": [a, b], "content": f"merged {n} ci"}])
        elif op < 0.96:
            store.pin(rng.choice(live), "keep")
        else:
            curate(store, [{"type": "deprecate", "bullet_id": rng.choice(live), "reason": "old"}])
        clock.advance(hours=rng.uniform(1, 96))


def _flat(result) -> list[tuple]:
    return [
        (key, i.bullet.id, i.bullet.maturity, i.keyword_score, i.relevance)
        for key in ("bullets", "anti_patterns", "deprecated_warnings")
        for i in getattr(result, key)
    ]


@pytest.mark.parametrize("seed", range(4))
def test_fast_path_equals_the_log_path(store: PlaybookStore, clock: Clock, seed: int) -> None:
    rng = random.Random(seed)
    _random_history(store, clock, rng)
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
    _random_history(store, clock, rng)
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
