"""Vectors (SPEC §6): true cosines whatever an embedder returns, the hashed-trigram embedder's
identity, and vectors computed once (`MemoryVectors.index`, `playbook index`)."""

from __future__ import annotations

import math
import sqlite3
from pathlib import Path

import numpy as np
import pytest

from playbook import recall
from playbook.curation import curate
from playbook.retrieval.vectors import HashTrigramEmbedder, MemoryVectors
from playbook.store import PlaybookStore, open_store
from playbook.store import testing as raw

from .helpers import add
from .helpers.cli import run_cli


def cosine(a: list[float], b: list[float]) -> float:
    """The textbook cosine, in plain Python; 0 when either vector is zero."""
    na = math.sqrt(sum(x * x for x in a))
    nb = math.sqrt(sum(x * x for x in b))
    if na == 0 or nb == 0:
        return 0.0
    return sum(x * y for x, y in zip(a, b, strict=True)) / (na * nb)


class RawEmbedder:
    """Returns the vectors it is given, at whatever length (a model that does not
    normalise its output), and counts the texts it embeds."""

    dims = 3

    def __init__(self, table: dict[str, list[float]], name: str = "raw-3") -> None:
        self.table = table
        self.id = name
        self.embedded: list[str] = []

    def embed(self, texts: list[str]) -> np.ndarray:
        self.embedded += texts
        return np.array([self.table.get(t, [0.0, 0.0, 0.0]) for t in texts], dtype=np.float32)


RULES = [
    "Roll back a bad deploy at once",
    "Pin npm in release jobs before a deploy",
    "Quarantine flaky tests instead of retrying the deploy",
    "Run database migrations before the deploy starts",
    "Keep secrets out of deploy logs",
    "Deploy on Fridays only with a rollback plan",
    "Squash merge feature branches",
    "Cache the lockfile hash in CI",
]


# ------------------------------------------------------------------ cosines (issue 12)
TABLE = {
    "deploy rollback": [2.0, 0.0, 0.0],
    "Roll back a bad deploy at once": [3.0, 4.0, 0.0],  # length 5
    "Keep a rollback script next to the deploy job": [0.0, 0.2, 0.1],  # length ~0.22
    "Tag releases after the deploy": [7.0, -1.0, 12.0],
    "Write the deploy notes": [0.0, 0.0, 0.0],  # a zero vector
}


@pytest.mark.parametrize("cached_first", [False, True])
def test_similarity_is_the_cosine_of_unnormalised_vectors(
    store: PlaybookStore, cached_first: bool
) -> None:
    ids = {content: add(store, content) for content in list(TABLE)[1:]}
    emb = RawEmbedder(TABLE)
    if cached_first:  # vectors read back from cache_blob, not just computed
        recall(store, "deploy rollback", vectors=MemoryVectors(store, emb))
        emb = RawEmbedder(TABLE)
    r = recall(store, "deploy rollback", vectors=MemoryVectors(store, emb))
    if cached_first:
        assert emb.embedded == ["deploy rollback"]
    got = {i.bullet.id: i.similarity for i in r.bullets}
    for content, bid in ids.items():
        expected = max(0.0, cosine(TABLE["deploy rollback"], TABLE[content])) * 10
        assert got[bid] == pytest.approx(expected, abs=1e-5), content
    assert got[ids["Roll back a bad deploy at once"]] == pytest.approx(6.0)
    assert got[ids["Write the deploy notes"]] == 0.0  # a zero vector: 0, never NaN


def test_a_zero_query_vector_gives_similarity_zero_not_nan(store: PlaybookStore) -> None:
    a = add(store, "Roll back a bad deploy at once")
    emb = RawEmbedder({"Roll back a bad deploy at once": [3.0, 4.0, 0.0]})
    r = recall(store, "deploy", vectors=MemoryVectors(store, emb))  # "deploy" embeds to zero
    [item] = r.bullets
    assert item.bullet.id == a
    assert item.similarity == 0.0
    # keyword: "deploy" is a token of the content, 3 points; 3 * (1 - 0.6) + 0 * 0.6
    assert item.relevance == pytest.approx(1.2)


def test_non_finite_vectors_count_as_zero(store: PlaybookStore) -> None:
    a = add(store, "Roll back a bad deploy at once")
    b = add(store, "Tag releases after the deploy")
    emb = RawEmbedder(
        {
            "deploy": [1.0, 0.0, 0.0],
            "Roll back a bad deploy at once": [float("nan"), 1.0, 0.0],
            "Tag releases after the deploy": [float("inf"), 0.0, 0.0],
        }
    )
    r = recall(store, "deploy", vectors=MemoryVectors(store, emb))
    assert {i.bullet.id: i.similarity for i in r.bullets} == {a: 0.0, b: 0.0}


def test_vectors_cached_raw_by_an_older_version_still_give_cosines(
    store: PlaybookStore,
) -> None:
    a = add(store, "Roll back a bad deploy at once")
    digest = store.get_bullet(a).content_hash
    raw = np.array([3.0, 4.0, 0.0], dtype=np.float32)  # stored without normalising
    store.cache_put("raw-3", 3, {digest: raw.tobytes()})
    emb = RawEmbedder({"deploy rollback": [2.0, 0.0, 0.0]})
    r = recall(store, "deploy rollback", vectors=MemoryVectors(store, emb))
    assert emb.embedded == ["deploy rollback"]
    assert r.bullets[0].similarity == pytest.approx(6.0)


def test_new_vectors_are_stored_unit_length(store: PlaybookStore) -> None:
    a = add(store, "Roll back a bad deploy at once")
    recall(store, "deploy", vectors=MemoryVectors(store, RawEmbedder(TABLE)))
    digest = store.get_bullet(a).content_hash
    stored = np.frombuffer(store.cache_get("raw-3", [digest])[digest], dtype=np.float32)
    assert stored.tolist() == pytest.approx([0.6, 0.8, 0.0])


def test_the_bulk_read_and_the_keyed_read_agree(store: PlaybookStore) -> None:
    for content in RULES:
        add(store, content)
    emb = HashTrigramEmbedder(dims=32)
    keyed = recall(store, "deploy step", vectors=MemoryVectors(store, emb))  # embeds, stores
    store.cache_put(emb.id, 32, {"f" * 64: b"\x00" * 12})  # a vector of the wrong width
    bulk = MemoryVectors(store, emb)
    bulk.SCAN = 1  # read the whole cache in one pass
    again = recall(store, "deploy step", vectors=bulk)
    assert bulk._scanned
    assert [(i.bullet.id, i.similarity) for i in again.bullets] == [
        (i.bullet.id, pytest.approx(i.similarity, abs=1e-6)) for i in keyed.bullets
    ]


# ------------------------------------------------------------------ computed once (issue 15)
def test_index_embeds_every_live_rule_once(store: PlaybookStore) -> None:
    live = [add(store, content) for content in RULES[:5]]
    gone = add(store, RULES[5])
    store.retire(gone)
    dup = curate(store, [{"type": "add", "content": RULES[0]}])  # folds into the first
    assert dup.outcomes[0].status == "folded"
    table = {content: [1.0, float(n), 0.0] for n, content in enumerate(RULES)}
    table["deploy"] = [1.0, 0.0, 0.0]
    emb = RawEmbedder(table)
    seen: list[tuple[int, int]] = []
    counts = MemoryVectors(store, emb).index(batch=2, progress=lambda d, t: seen.append((d, t)))
    assert sorted(emb.embedded) == sorted(RULES[:5])  # each once; not the retired one
    assert counts == {"embedded": 5, "compacted": 0, "cached": 5}
    assert seen == [(0, 5), (2, 5), (4, 5), (5, 5)]
    emb2 = RawEmbedder(table)
    assert MemoryVectors(store, emb2).index() == {"embedded": 0, "compacted": 0, "cached": 5}
    r = recall(store, "deploy", vectors=MemoryVectors(store, emb2))
    assert emb2.embedded == ["deploy"]  # the recall only read
    assert {i.bullet.id for i in r.bullets} == set(live)


def test_a_recall_that_cannot_store_its_vectors_still_ranks(
    store: PlaybookStore, monkeypatch: pytest.MonkeyPatch
) -> None:
    a = add(store, "Roll back a bad deploy at once")

    def read_only(*args: object, **kw: object) -> None:
        raise sqlite3.OperationalError("attempt to write a readonly database")

    monkeypatch.setattr(store, "cache_put", read_only)
    vectors = MemoryVectors(store, RawEmbedder(TABLE))
    r = recall(store, "deploy rollback", vectors=vectors)
    assert r.bullets[0].bullet.id == a and r.bullets[0].similarity == pytest.approx(6.0)
    assert r.degraded == []
    assert vectors.save_error is not None and "readonly" in vectors.save_error


def test_playbook_index_then_semantic_recall(tmp_path: Path) -> None:
    db = tmp_path / "pb.sqlite3"
    for content in ("Roll back a bad deploy at once", "Pin npm in release jobs"):
        assert run_cli("add", content, db=db).rc == 0
    first = run_cli("index", "--json", db=db)
    assert first.rc == 0, first.err
    assert first.data["embedded"] == 2 and first.data["cached"] == 2
    assert first.data["embedder"] == HashTrigramEmbedder().id
    again = run_cli("index", db=db)
    assert again.rc == 0 and again.out.startswith("embedded 0 rules with hash-trigram-512-v1")
    with open_store(db) as store:
        before = raw.rows(store, "SELECT key, value FROM cache_blob ORDER BY key")
    r = run_cli("recall", "rolling back deploys", "--semantic", "--json", db=db)
    assert r.rc == 0, r.err
    top = r.data["bullets"][0]
    assert top["bullet"]["content"] == "Roll back a bad deploy at once"
    assert top["similarity"] > 0
    with open_store(db) as store:
        assert raw.rows(store, "SELECT key, value FROM cache_blob ORDER BY key") == before


def test_playbook_index_without_a_playbook_is_a_user_error(tmp_path: Path) -> None:
    r = run_cli("index", "--json", db=tmp_path / "missing.sqlite3")
    assert r.rc == 1 and r.error["code"] == "no_database"
    assert not (tmp_path / "missing.sqlite3").exists()
