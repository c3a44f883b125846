"""Consolidation: bounded, deterministic groups of near-duplicates with a merge proposal."""

from __future__ import annotations

import random

import pytest

from playbook.curation import curate
from playbook.review.queue import approve, get, pending, reject
from playbook.review.topics import Topic, stage_topics, topics
from playbook.store import PlaybookStore


def ids(found: list[Topic]) -> list[list[str]]:
    return [t.bullet_ids for t in found]


def test_groups_near_duplicates_and_proposes_a_merge(store: PlaybookStore) -> None:
    a = store.insert_bullet("Pin npm to 11 in release jobs", tags=["ci"])
    b = store.insert_bullet("Pin npm version to 11 in the release jobs", tags=["npm"])
    store.insert_bullet("Write the changelog before tagging a release")
    (topic,) = topics(store)
    assert topic.bullet_ids == [a.id, b.id]
    # subjects: {pin npm to 11 in release jobs} vs the same + {version the}: 7 / 9
    assert topic.similarity == pytest.approx(7 / 9)
    assert topic.keep == b.id  # no evidence either way: the longer wording
    assert topic.merge == {
        "type": "merge",
        "bullet_ids": [a.id, b.id],
        "content": "Pin npm version to 11 in the release jobs",
        "reason": f"2 near-duplicates (similarity >= 0.78); wording of {b.id}",
    }


def test_the_best_evidenced_wording_wins(store: PlaybookStore) -> None:
    a = store.insert_bullet("Pin npm to 11 in release jobs")
    b = store.insert_bullet("Pin npm version to 11 in the release jobs")
    curate(store, [{"type": "helpful", "bullet_id": a.id}])
    assert topics(store)[0].merge["content"] == a.content
    curate(store, [{"type": "helpful", "bullet_id": b.id}])
    curate(store, [{"type": "helpful", "bullet_id": b.id}])
    assert topics(store)[0].keep == b.id


def test_opposite_polarity_other_scopes_and_inactive_bullets_are_not_grouped(
    store: PlaybookStore,
) -> None:
    store.insert_bullet("Always pin npm to 11 in release jobs")
    store.insert_bullet("Never pin npm to 11 in release jobs")  # a conflict, not a duplicate
    store.insert_bullet("AVOID: pin npm to 11 in release jobs", type="anti-pattern")
    store.insert_bullet("Pin npm to 11 in release jobs", scope="language", scope_key="js")
    old = store.insert_bullet("Pin npm to 11 for the release jobs")
    store.retire(old.id)
    dep = store.insert_bullet("Pin npm to 11 in all the release jobs", maturity="deprecated")
    assert topics(store) == []
    store.insert_bullet("Pin npm to 11 in our release jobs")
    (topic,) = topics(store)
    assert dep.id not in topic.bullet_ids and old.id not in topic.bullet_ids
    assert len(topic.bullet_ids) == 2


def test_every_pair_in_a_topic_is_a_near_duplicate(store: PlaybookStore) -> None:
    # a chain: a~b and b~c, but a and c are too far apart to merge together
    a = store.insert_bullet("alpha beta gamma delta epsilon")
    b = store.insert_bullet("alpha beta gamma delta epsilon zeta")
    c = store.insert_bullet("alpha beta gamma delta zeta eta")
    found = topics(store, threshold=0.6)
    assert ids(found) == [[a.id, b.id]]  # the closest pair wins; c is left alone
    assert found[0].similarity == pytest.approx(5 / 6)
    assert c.id not in found[0].bullet_ids


def test_groups_are_bounded_in_size_and_number(store: PlaybookStore) -> None:
    same = [store.insert_bullet(f"Pin npm to 11 in release jobs variant{i}") for i in range(7)]
    pairs = []
    for what in ("database password", "api token", "ssh key", "tls cert"):
        pairs.append(
            [
                store.insert_bullet(f"Rotate the {what} monthly").id,
                store.insert_bullet(f"Rotate the {what}s monthly").id,
            ]
        )
    found = topics(store, max_group_size=3, max_groups=20)
    assert all(len(t.bullet_ids) <= 3 for t in found)
    npm = [t for t in found if t.bullet_ids[0] in {b.id for b in same}]
    assert [len(t.bullet_ids) for t in npm] == [3, 3]  # 7 near-duplicates: 3 + 3, one left
    assert sorted(t.bullet_ids for t in found if t not in npm) == sorted(pairs)
    assert len(found) == 6
    capped = topics(store, max_group_size=3, max_groups=2)
    assert ids(capped) == ids(found)[:2]


def test_topics_are_deterministic(store: PlaybookStore) -> None:
    rng = random.Random(7)
    words = [f"w{i}" for i in range(40)]
    for _ in range(300):
        store.insert_bullet(" ".join(rng.sample(words, 5)))
    first = topics(store, threshold=0.5)
    assert first  # random 5-word subjects from 40 words do collide at 0.5
    assert [t.to_dict() for t in topics(store, threshold=0.5)] == [t.to_dict() for t in first]
    sims = [t.similarity for t in first]
    assert sims == sorted(sims, reverse=True)


def test_staging_puts_merges_in_the_queue_once(store: PlaybookStore) -> None:
    a = store.insert_bullet("Pin npm to 11 in release jobs")
    b = store.insert_bullet("Pin npm version to 11 in the release jobs")
    found = topics(store)
    staged = stage_topics(store, found)
    (pid,) = staged.staged
    p = get(store, pid)
    assert p is not None
    assert (p.origin, p.delta["type"], p.delta["bullet_ids"]) == (
        "consolidation",
        "merge",
        [a.id, b.id],
    )
    assert p.provenance.session_ref is None
    assert stage_topics(store, topics(store)).duplicates == [0]
    # more evidence changes the wording, but it is the same question: not asked twice
    curate(store, [{"type": "helpful", "bullet_id": a.id}])
    assert topics(store)[0].merge["content"] == a.content
    assert stage_topics(store, topics(store)).staged == []
    reject(store, pid, "they differ on purpose")
    assert stage_topics(store, topics(store)).duplicates == [0]
    assert pending(store) == []


def test_an_approved_merge_retires_the_members(store: PlaybookStore) -> None:
    a = store.insert_bullet("Pin npm to 11 in release jobs")
    b = store.insert_bullet("Pin npm version to 11 in the release jobs")
    curate(store, [{"type": "helpful", "bullet_id": a.id}])
    (pid,) = stage_topics(store, topics(store)).staged
    result = approve(store, pid)
    successor = store.get_bullet(result.added[0])
    assert successor is not None and successor.source == "merged"
    assert {store.get_bullet(i).state for i in (a.id, b.id)} == {"retired"}  # type: ignore[union-attr]
    assert store.score(successor.id).helpful == pytest.approx(1.0)  # evidence follows lineage
    assert topics(store) == []


# 10,000 single inserts are 10,000 round trips to a server: on PostgreSQL this scale run
# takes over a minute, so its variant there is a long one (-m slow); topics' behaviour on
# PostgreSQL is proved by every other test here.
@pytest.mark.parametrize(
    "backend",
    ["sqlite", pytest.param("postgresql", marks=[pytest.mark.postgres, pytest.mark.slow])],
    indirect=True,
)
def test_topics_at_ten_thousand_bullets_finds_the_one_pair(store: PlaybookStore) -> None:
    """Correct at scale (its speed is printed by bench/topics.py, not asserted here)."""
    rng = random.Random(3)
    words = [f"word{i}" for i in range(2000)]
    with store.transaction():
        for _ in range(10_000):
            store.insert_bullet(" ".join(rng.sample(words, 8)))
        twin = store.insert_bullet("word1 word2 word3 word4 word5 word6 word7 word8")
        store.insert_bullet("word1 word2 word3 word4 word5 word6 word7 word9")
    found = topics(store)
    assert twin.id in found[0].bullet_ids
