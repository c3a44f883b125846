"""The hashed-trigram embedder against SPEC §6's hashing written out in plain Python, and
how its vectors are kept in `cache_blob` (issue 15): its integer counts as int8 (`dims`
bytes a row), float32 unit rows (`4 × dims` bytes) for counts that do not fit and for
caches written by older versions, which `playbook index` compacts. Every expectation is
computed here, from that plain-Python reference."""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pytest

from playbook import recall
from playbook.retrieval.vectors import HashTrigramEmbedder, MemoryVectors
from playbook.store import PlaybookStore, open_store
from playbook.store import testing as raw

from .helpers import add
from .helpers.cli import run_cli

DIMS = 64
ID = f"hash-trigram-{DIMS}-v1"
QUERY = "roll back the deploy"
RULES = [
    "Roll back a bad deploy at once",
    "Pin npm in release jobs before a deploy",
    "Keep secrets out of deploy logs",
    "Squash merge feature branches",
]
LONG = "x" * 300  # the trigram "xxx" 298 times: a count that does not fit in int8


def reference_counts(text: str, dims: int = DIMS) -> list[int]:
    """SPEC §6's signed trigram sums, one trigram at a time in plain Python integers."""
    mask = (1 << 64) - 1
    m1, m2 = 0x9E3779B97F4A7C15, 0xBF58476D1CE4E5B9
    codes = [ord(c) for c in f"  {text.lower()}  "]
    out = [0] * dims
    for a, b, c in zip(codes, codes[1:], codes[2:], strict=False):
        key = (a << 42) ^ (b << 21) ^ c
        h = (key * m1) & mask
        h = ((h ^ (h >> 29)) * m2) & mask
        out[h % dims] += -1 if h >> 63 else 1
    return out


def reference_trigram_vector(text: str, dims: int) -> list[float]:
    """The reference counts scaled to length 1."""
    out = reference_counts(text, dims)
    norm = math.sqrt(sum(x * x for x in out))
    return [x / norm for x in out] if norm else [0.0] * dims


def test_hash_embedder_matches_the_reference_in_any_batch() -> None:
    texts = [
        "",
        "a",
        "Pin npm to 11 in release jobs",
        "İstanbul ß Straße",
        "emoji 🚀 ok",
        "x" * 300,
    ]
    emb = HashTrigramEmbedder(dims=64)
    emb.CHUNK = 4  # batches that split the list
    together = emb.embed(texts)
    counts = emb.counts(texts)
    for row, sums, text in zip(together, counts, texts, strict=True):
        assert row.tolist() == pytest.approx(reference_trigram_vector(text, 64), abs=1e-6)
        assert np.array_equal(HashTrigramEmbedder(dims=64).embed([text])[0], row)
        assert sums.tolist() == reference_counts(text, 64)  # the integers themselves


def cosine(a: list[int], b: list[int]) -> float:
    na = math.sqrt(sum(x * x for x in a))
    nb = math.sqrt(sum(x * x for x in b))
    return sum(x * y for x, y in zip(a, b, strict=True)) / (na * nb) if na and nb else 0.0


def expected_similarity(content: str, query: str = QUERY, dims: int = DIMS) -> float:
    """What recall reports: max(0, cosine) × the policy's scale (10)."""
    return max(0.0, cosine(reference_counts(query, dims), reference_counts(content, dims))) * 10


def unit_float32(counts: list[int]) -> bytes:
    """A vector as an older Playbook cached it: float32, scaled to length 1."""
    norm = math.sqrt(sum(x * x for x in counts))
    return np.array([x / norm for x in counts], dtype=np.float32).tobytes()


class CountingQueries(HashTrigramEmbedder):
    """The hashed-trigram embedder, remembering what it was asked to embed or count."""

    def __init__(self, dims: int = DIMS) -> None:
        super().__init__(dims)
        self.seen: list[str] = []

    def embed(self, texts: list[str]) -> np.ndarray:
        self.seen += texts
        return super().embed(texts)

    def counts(self, texts: list[str]) -> np.ndarray:
        self.seen += texts
        return super().counts(texts)


def stored(store: PlaybookStore, digest: str, embedder_id: str = ID) -> bytes:
    return bytes(store.cache_get(embedder_id, [digest])[digest])


def similarities(store: PlaybookStore, *, scan: bool, query: str = QUERY) -> dict[str, float]:
    """Similarity of every rule, by id, from vectors read back from the cache (the embedder
    only embeds the query), through the bulk scan or the keyed read."""
    emb = CountingQueries()
    vectors = MemoryVectors(store, emb)
    vectors.SCAN = 1 if scan else 10**9
    vectors.CAST = 3  # int8 rows cast a few at a time: blocks split across casts
    items = raw.rows(store, "SELECT id, content_hash FROM bullets")
    sims = vectors.similarities(query, items)
    assert emb.seen == [query]  # nothing re-embedded: every vector came from the cache
    assert sims.ok and not sims.degraded
    return sims.values


def hashes(store: PlaybookStore, ids: dict[str, str]) -> dict[str, str]:
    return {content: store.get_bullet(bid).content_hash for content, bid in ids.items()}


@pytest.mark.parametrize("scan", [False, True])
def test_new_vectors_are_int8_counts_and_give_the_cosine_of_the_counts(
    store: PlaybookStore, scan: bool
) -> None:
    ids = {content: add(store, content) for content in RULES}
    recall(store, QUERY, vectors=MemoryVectors(store, HashTrigramEmbedder(DIMS)))  # embeds
    for content, digest in hashes(store, ids).items():
        blob = stored(store, digest)
        assert len(blob) == DIMS  # one byte a count
        assert np.frombuffer(blob, np.int8).tolist() == reference_counts(content)
    got = similarities(store, scan=scan)
    for content, bid in ids.items():
        assert got[bid] == pytest.approx(expected_similarity(content), abs=1e-5), content


def test_counts_that_do_not_fit_int8_are_stored_as_float32_and_compare_right(
    store: PlaybookStore,
) -> None:
    ids = {content: add(store, content) for content in [LONG, *RULES[:2]]}
    assert max(map(abs, reference_counts(LONG))) > 127
    query = "xxx deploy"
    recall(store, query, vectors=MemoryVectors(store, HashTrigramEmbedder(DIMS)))
    digests = hashes(store, ids)
    wide = np.frombuffer(stored(store, digests[LONG]), np.float32)
    counts = reference_counts(LONG)
    norm = math.sqrt(sum(x * x for x in counts))
    assert wide.tolist() == pytest.approx([x / norm for x in counts], abs=1e-7)
    assert [len(stored(store, digests[c])) for c in RULES[:2]] == [DIMS, DIMS]
    for scan in (False, True):  # one scan reads rows of both forms
        got = similarities(store, scan=scan, query=query)
        for content, bid in ids.items():
            assert got[bid] == pytest.approx(expected_similarity(content, query), abs=1e-5)
    assert expected_similarity(LONG, query) > 0


def write_old_cache(store: PlaybookStore, ids: dict[str, str]) -> dict[str, str]:
    """Every rule's vector as an older Playbook wrote it (float32 unit rows)."""
    digests = hashes(store, ids)
    store.cache_put(ID, DIMS, {digests[c]: unit_float32(reference_counts(c)) for c in ids})
    return digests


def test_a_cache_of_float32_rows_ranks_the_same_and_index_compacts_it(
    store: PlaybookStore,
) -> None:
    ids = {content: add(store, content) for content in [*RULES, LONG]}
    digests = write_old_cache(store, ids)
    before = recall(store, QUERY, vectors=MemoryVectors(store, CountingQueries()), limit=50)
    order = [(i.bullet.id, i.similarity) for i in before.bullets]
    for scan in (False, True):
        got = similarities(store, scan=scan)
        for content, bid in ids.items():
            assert got[bid] == pytest.approx(expected_similarity(content), abs=1e-5)
    assert all(len(stored(store, d)) == 4 * DIMS for d in digests.values())  # a read wrote nothing

    emb = CountingQueries()
    counts = MemoryVectors(store, emb).index()
    assert counts == {"embedded": 0, "compacted": len(RULES), "cached": len(RULES) + 1}
    for content in RULES:
        assert np.frombuffer(stored(store, digests[content]), np.int8).tolist() == (
            reference_counts(content)
        )
    assert len(stored(store, digests[LONG])) == 4 * DIMS  # does not fit: left as it was
    after = recall(store, QUERY, vectors=MemoryVectors(store, CountingQueries()), limit=50)
    assert [i.bullet.id for i in after.bullets] == [bid for bid, _ in order]
    assert [i.similarity for i in after.bullets] == pytest.approx([s for _, s in order], abs=1e-5)
    again = MemoryVectors(store, CountingQueries()).index()
    assert again == {"embedded": 0, "compacted": 0, "cached": len(RULES) + 1}


def test_playbook_index_stores_counts_and_compacts_an_old_cache(tmp_path: Path) -> None:
    db = tmp_path / "pb.sqlite3"
    for content in RULES[:3]:
        assert run_cli("add", content, db=db).rc == 0
    first = run_cli("index", "--json", db=db)
    assert first.rc == 0, first.err
    assert first.data["embedded"] == 3 and first.data["compacted"] == 0
    with open_store(db) as store:
        widths = raw.rows(store, "SELECT length(value), dims FROM cache_blob")
        assert widths == [(512, 512)] * 3  # a typical rule: one byte per dimension
        # rewrite them as an older Playbook would have kept them
        ids = dict(raw.rows(store, "SELECT content, id FROM bullets"))
        store.cache_put(
            "hash-trigram-512-v1",
            512,
            {
                store.get_bullet(bid).content_hash: unit_float32(reference_counts(c, 512))
                for c, bid in ids.items()
            },
        )
        old = raw.rows(store, "SELECT key, value FROM cache_blob ORDER BY key")
    r = run_cli("recall", "rolling back deploys", "--semantic", "--json", db=db)
    assert r.rc == 0, r.err
    assert r.data["bullets"][0]["bullet"]["content"] == "Roll back a bad deploy at once"
    with open_store(db) as store:  # a recall reads the old rows and leaves them as they are
        assert raw.rows(store, "SELECT key, value FROM cache_blob ORDER BY key") == old
    again = run_cli("index", db=db)
    assert again.rc == 0, again.err
    assert again.out.strip().endswith("(3 vectors kept; 3 rewritten as int8 counts)")
    with open_store(db) as store:
        assert raw.rows(store, "SELECT length(value) FROM cache_blob") == [(512,)] * 3


def test_vectors_of_every_other_embedder_are_reported(store: PlaybookStore) -> None:
    add(store, RULES[0])
    for dims in (32, 128):  # identities that sort before and after hash-trigram-64-v1
        recall(store, QUERY, vectors=MemoryVectors(store, HashTrigramEmbedder(dims)))
    r = recall(store, QUERY, vectors=MemoryVectors(store, HashTrigramEmbedder(DIMS)))
    reported = sorted(d.split(" vectors from embedder ")[1].split(" ")[0] for d in r.degraded)
    assert reported == ["hash-trigram-128-v1", "hash-trigram-32-v1"]
    assert r.bullets[0].similarity == pytest.approx(expected_similarity(RULES[0]), abs=1e-5)
