"""Recall (SPEC §6) with hand-computed expected scores."""

from __future__ import annotations

from datetime import timedelta

import numpy as np
import pytest

from playbook import recall
from playbook.curation import curate
from playbook.retrieval.query import parse_when
from playbook.retrieval.vectors import HashTrigramEmbedder, MemoryVectors
from playbook.store import PlaybookStore

from .helpers import Clock, add


def vote(store: PlaybookStore, bid: str, kind: str = "helpful", n: int = 1) -> None:
    for _ in range(n):
        extra = {"reason": "caused_bug"} if kind == "harmful" else {}
        curate(store, [{"type": kind, "bullet_id": bid, **extra}])


@pytest.fixture
def playbook(store: PlaybookStore) -> dict[str, str]:
    ids = {
        "a": add(store, "Pin npm to 11 in release jobs", tags=["ci"]),
        "b": add(store, "Use pnpm workspaces for monorepos", tags=["npm"]),
        "c": add(store, "Run the release checklist before tagging"),
        "d": add(store, "Prefer small focused commits"),
    }
    vote(store, ids["a"], n=3)  # established, H=3: effective 3
    vote(store, ids["b"])  # candidate, H=1: effective 0.5
    return ids


def test_keyword_points_and_final_scores(store: PlaybookStore, playbook) -> None:
    r = recall(store, "the npm release")  # "the" is a stop word
    assert r.query_tokens == ["npm", "release"]
    got = [(i.bullet.id, i.keyword_score, i.relevance, i.effective_score, i.final_score)
           for i in r.bullets]  # fmt: skip
    # a: npm exact 3 + release exact 3 = 6; effective 3 -> 18
    # b: npm is a substring of pnpm 1 + tag npm 5 = 6; effective 0.5 -> 3
    # c: release exact 3; no evidence, effective 0 -> floor 0.1 -> 0.3
    assert got == [
        (playbook["a"], 6, 6, 3.0, 18.0),
        (playbook["b"], 6, 6, 0.5, 3.0),
        (playbook["c"], 3, 3, 0.0, pytest.approx(0.3)),
    ]
    assert all(i.similarity is None for i in r.bullets)
    assert r.degraded == []


def test_low_confidence_topical_rule_still_surfaces_last(store: PlaybookStore, playbook) -> None:
    bad = add(store, "Bump npm with a release script")
    vote(store, bad, "harmful")  # candidate, X=1: effective -2
    r = recall(store, "npm release")
    ids = [i.bullet.id for i in r.bullets]
    # it surfaces, below the confident ones (c, with less relevance, is lower still)
    assert ids == [playbook["a"], playbook["b"], bad, playbook["c"]]
    item = r.bullets[2]
    assert item.effective_score == pytest.approx(-2.0)
    # relevance: npm 3 + release 3 = 6; the floor 0.1 applies to confidence
    assert item.final_score == pytest.approx(6 * 0.1)
    assert playbook["d"] not in ids  # no keyword: relevance 0 < 0.1


def test_anti_patterns_deprecated_and_retired(store: PlaybookStore, playbook) -> None:
    avoid = add(store, "AVOID: npm install without a lockfile in release jobs")
    dep = add(store, "Publish npm packages from laptops")
    curate(store, [{"type": "deprecate", "bullet_id": dep, "reason": "CI publishes"}])
    old = add(store, "Cache npm downloads by hand")
    r = curate(
        store, [{"type": "replace", "bullet_id": old, "content": "Cache npm with setup-node"}]
    )
    new = r.outcomes[0].bullet_id
    res = recall(store, "npm")
    rules = [i.bullet.id for i in res.bullets]
    assert [i.bullet.id for i in res.anti_patterns] == [avoid]
    assert [i.bullet.id for i in res.deprecated_warnings] == [dep]
    assert res.deprecated_warnings[0].effective_score == 0.0
    assert dep not in rules and avoid not in rules
    assert new in rules and old not in rules  # retired bullets never surface
    assert old not in [i.bullet.id for i in res.deprecated_warnings + res.anti_patterns]


def test_limit_applies_per_list(store: PlaybookStore, playbook) -> None:
    r = recall(store, "npm release", limit=1)
    assert [i.bullet.id for i in r.bullets] == [playbook["a"]]


class FixedEmbedder:
    """Known vectors, so cosines are computed by hand."""

    id = "fixed-2"
    dims = 2

    def __init__(self, table: dict[str, list[float]]) -> None:
        self.table = table

    def embed(self, texts: list[str]) -> np.ndarray:
        return np.array([self.table.get(t, [0.0, 0.0]) for t in texts], dtype=np.float32)


def test_semantic_blend_with_known_vectors(store: PlaybookStore) -> None:
    a = add(store, "Pin npm in release jobs")
    b = add(store, "Freeze toolchain versions in CI")
    vote(store, a, n=3)  # effective 3
    vote(store, b, n=3)
    emb = FixedEmbedder(
        {
            "npm toolchain": [1.0, 0.0],
            "Pin npm in release jobs": [0.6, 0.8],
            "Freeze toolchain versions in CI": [0.8, -0.6],
        }
    )
    r = recall(store, "npm toolchain", vectors=MemoryVectors(store, emb))
    by = {i.bullet.id: i for i in r.bullets}
    # a: keyword npm 3; cos 0.6 -> similarity 6; relevance 3*0.4 + 6*0.6 = 4.8; final 14.4
    assert by[a].similarity == pytest.approx(6.0)
    assert by[a].relevance == pytest.approx(4.8)
    assert by[a].final_score == pytest.approx(14.4)
    # b: keyword toolchain 3; cos 0.8 -> 8; relevance 1.2 + 4.8 = 6.0; final 18
    assert by[b].relevance == pytest.approx(6.0)
    assert [i.bullet.id for i in r.bullets] == [b, a]


def test_semantic_only_match_surfaces_and_negative_cosine_is_zero(store: PlaybookStore) -> None:
    a = add(store, "Quarantine flaky tests")
    c = add(store, "Write the changelog")
    emb = FixedEmbedder(
        {
            "intermittent failures": [1, 0],
            "Quarantine flaky tests": [1, 0],
            "Write the changelog": [-1, 0],
        }
    )
    r = recall(store, "intermittent failures", vectors=MemoryVectors(store, emb))
    assert [i.bullet.id for i in r.bullets] == [a]  # no shared keyword, similarity 10
    assert r.bullets[0].relevance == pytest.approx(6.0)
    assert c not in [i.bullet.id for i in r.bullets]


def test_vectors_are_cached_by_embedder_and_content(store: PlaybookStore) -> None:
    add(store, "Pin npm in release jobs")
    emb = HashTrigramEmbedder(dims=64)
    recall(store, "npm", vectors=MemoryVectors(store, emb))
    assert store.cache_embedders() == {emb.id: 1}

    class Counting(HashTrigramEmbedder):
        calls = 0

        def embed(self, texts):  # type: ignore[override]
            Counting.calls += len(texts)
            return super().embed(texts)

    recall(store, "npm", vectors=MemoryVectors(store, Counting(dims=64)))
    assert Counting.calls == 1  # only the query: the bullet's vector came from cache_blob


def test_other_embedder_vectors_are_reported_not_compared(store: PlaybookStore) -> None:
    add(store, "Pin npm in release jobs")
    recall(store, "npm", vectors=MemoryVectors(store, HashTrigramEmbedder(dims=64)))
    r = recall(store, "npm", vectors=MemoryVectors(store, HashTrigramEmbedder(dims=128)))
    assert any("hash-trigram-64-v1" in d and "re-embed" in d for d in r.degraded)
    assert store.cache_embedders() == {"hash-trigram-64-v1": 1, "hash-trigram-128-v1": 1}


def test_failing_embedder_degrades_to_keywords(store: PlaybookStore) -> None:
    a = add(store, "Pin npm in release jobs")

    class Broken(FixedEmbedder):
        def embed(self, texts):  # type: ignore[override]
            raise RuntimeError("model file missing")

    r = recall(store, "npm", vectors=MemoryVectors(store, Broken({})))
    assert [i.bullet.id for i in r.bullets] == [a]
    assert r.bullets[0].relevance == 3 and r.bullets[0].similarity is None
    assert any("failed" in d and "model file missing" in d for d in r.degraded)


def test_bullets_without_vectors_are_reported(store: PlaybookStore) -> None:
    add(store, "Pin npm in release jobs")
    r = recall(
        store, "npm", vectors=MemoryVectors(store, HashTrigramEmbedder(), embed_missing=False)
    )
    assert any("1 bullet has no" in d for d in r.degraded)
    assert r.bullets[0].relevance == 3


def test_hash_embedder_is_deterministic_and_normalised() -> None:
    e = HashTrigramEmbedder()
    v1 = e.embed(["Pin npm to 11 in release jobs", "pin npm release job", "Docker layer caching"])
    v2 = HashTrigramEmbedder().embed(["Pin npm to 11 in release jobs"])
    assert np.array_equal(v1[0], v2[0])
    assert np.linalg.norm(v1, axis=1) == pytest.approx([1, 1, 1], abs=1e-6)
    assert v1[0] @ v1[1] > 0.5 > v1[0] @ v1[2]
    assert e.id == "hash-trigram-512-v1" and v1.shape == (3, 512)


def test_scope_keeps_global_and_matching_scoped(store: PlaybookStore) -> None:
    g = add(store, "Run the test suite before pushing")
    py = add(store, "Run pytest with -x before pushing", scope="language", scope_key="python")
    ts = add(store, "Run vitest before pushing", scope="language", scope_key="typescript")
    web = add(store, "Run e2e tests before pushing", scope="workspace", scope_key="web")
    ids = lambda r: {i.bullet.id for i in r.bullets}  # noqa: E731
    assert ids(recall(store, "pushing")) == {g, py, ts, web}  # no scope: everything
    assert ids(recall(store, "pushing", scope=["language:python"])) == {g, py}
    assert ids(recall(store, "pushing", scope={"workspace": "web", "language": "TypeScript"})) == {
        g, ts, web,
    }  # fmt: skip


def test_as_of_reads_the_playbook_as_it_stood(store: PlaybookStore, clock: Clock) -> None:
    a = add(store, "Pin npm to 11 in release jobs")
    vote(store, a, n=3)  # established at T0
    t1 = clock.advance(days=10)
    clock.advance(days=5)
    vote(store, a, "harmful", n=2)  # recorded after T1
    late = add(store, "Publish npm packages from CI only")
    old = add(store, "Cache npm by hand")
    clock.advance(days=1)
    curate(store, [{"type": "replace", "bullet_id": old, "content": "Cache npm with setup-node"}])
    now = recall(store, "npm")
    then = recall(store, "npm", as_of=t1)
    item_then = next(i for i in then.bullets if i.bullet.id == a)
    assert item_then.effective_score == pytest.approx(3 * 0.5 ** (10 / 90))  # established
    assert item_then.bullet.maturity == "established"
    all_now = {i.bullet.id: i for i in now.bullets + now.deprecated_warnings}
    assert all_now[a].effective_score != pytest.approx(item_then.effective_score)
    ids_then = {i.bullet.id for i in then.bullets}
    assert late not in ids_then  # created after T1
    assert old not in ids_then  # it did not exist at T1 either
    t2 = clock.t - timedelta(hours=12)  # after old was created, before it was replaced
    assert old in {i.bullet.id for i in recall(store, "npm", as_of=t2).bullets}
    assert old not in {i.bullet.id for i in recall(store, "npm").bullets}


def test_parse_when_accepts_dates_and_datetimes() -> None:
    assert parse_when("2026-03-01").isoformat() == "2026-03-01T00:00:00+00:00"
    assert parse_when("2026-03-01T12:30:00Z").hour == 12
    with pytest.raises(ValueError):
        parse_when("yesterday")


def test_code_stop_words_are_dropped_from_queries(store: PlaybookStore) -> None:
    """cass-memory's stop words (src/utils.ts): "new", "async", "const"... carry no meaning in
    a task description; scored, "new" pulled in every rule that mentions something new."""
    noisy = add(store, "Create a new branch for every fix")
    retry = add(store, "Retry flaky network calls with backoff")
    r = recall(store, "write a new async retry helper, const config")
    assert r.query_tokens == ["write", "retry", "helper", "config"]
    assert [i.bullet.id for i in r.bullets] == [retry]
    assert noisy not in {i.bullet.id for i in r.bullets}


def test_stop_words_come_from_the_policy(store: PlaybookStore, db_target, clock) -> None:
    from playbook.core.policy import CASS_STOP_WORDS, Policy
    from playbook.store import open_store

    add(store, "Just run the formatter")
    cass_only = open_store(db_target, Policy(query_stop_words_extra=()), clock)
    assert recall(store, "just formatting").query_tokens == ["formatting"]
    assert recall(cass_only, "just formatting").query_tokens == ["just", "formatting"]
    none = open_store(db_target, Policy(query_stop_words=(), query_stop_words_extra=()), clock)
    assert recall(none, "the new formatter").query_tokens == ["the", "new", "formatter"]
    assert {"async", "await", "new", "const", "undefined"} <= set(CASS_STOP_WORDS)
