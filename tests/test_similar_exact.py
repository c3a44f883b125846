"""The duplicate search (`similar_bullets`) reads only the bullets that can reach its
threshold (counted in the token index) and, with a limit, stops early: its answers must be
exactly those of the plain definition, scored against every bullet, on a playbook whose
vocabulary is skewed the way a team's is (a few words in a fifth of the rules, most rare)."""

from __future__ import annotations

import random
from datetime import timedelta

from playbook.core.model import Bullet
from playbook.core.text import core_tokens, jaccard
from playbook.curation.matching import similar_bullets
from playbook.store import PlaybookStore

WORDS = [f"w{i}" for i in range(80)]
WEIGHTS = [1 / (i + 1) ** 1.2 for i in range(len(WORDS))]  # Zipf-like: w0 is everywhere


def _sentence(rng: random.Random) -> str:
    words = rng.choices(WORDS, WEIGHTS, k=rng.randint(2, 12))
    head = rng.choice(["", "", "", "Never ", "Always ", "AVOID: ", "Prefer "])
    return head + " ".join(words)


Every = list[tuple[Bullet, frozenset[str]]]


def _every(store: PlaybookStore) -> Every:
    """Every bullet (any state) with its subject's tokens: read once, after the last write
    (the queries write nothing), so each reference scoring reads no database."""
    return [(b, core_tokens(b.content)) for b in store.bullets(state=("active", "retired"))]


def _plain(
    every: Every, content: str, threshold: float, limit: int | None
) -> list[tuple[float, str]]:
    """The definition: every bullet (any state) scored against `content` (its own text
    scores 1; without a subject, only its own text matches), best, then oldest, then id."""
    core = core_tokens(content)
    out = []
    for b, tokens in every:
        if b.content == content:
            score = 1.0
        elif core:
            score = jaccard(core, tokens)
        else:
            continue
        if score >= threshold - 1e-9:
            out.append((score, b.created_at, b.id))
    out.sort(key=lambda s: (-s[0], s[1], s[2]))
    return [(score, bid) for score, _, bid in out[:limit]]


def test_the_duplicate_search_answers_exactly_as_scoring_every_bullet(
    store: PlaybookStore,
) -> None:
    rng = random.Random(31)
    texts = [_sentence(rng) for _ in range(300)]
    texts += rng.sample(texts, 30)  # the same text twice: ties at 1.0, broken by age then id
    texts += ["Never use", "Never use", "Always w79 w78"]  # no subject; a rare-word rule
    start = store.now()
    for i, text in enumerate(texts):
        # Every fifth shares its creation time with the one before: ties broken by id.
        at = start + timedelta(minutes=i - i % 5 // 4)
        store.insert_bullet(text, created_at=at)
    for b in store.bullets()[::17]:
        store.bullets.retire(b.id)  # a retired rule is still a duplicate
    queries = rng.sample(texts, 40) + [_sentence(rng) for _ in range(40)]
    queries += ["Never use", "Always use w79", "w0", "w0 w1 w2 w3", "nothing here at all"]
    every = _every(store)
    assert len(every) == len(texts)  # the retired ones too
    checked = 0
    for query in queries:
        for threshold in (0.3, 0.5, store.policy.duplicate_jaccard, 1.0):
            scored = _plain(every, query, threshold, None)  # scored once, sliced per limit
            for limit in (None, 1, 3, 6):
                want = scored[:limit]
                got = [(s, b.id) for s, b in similar_bullets(store, query, threshold, limit=limit)]
                assert got == want, (query, threshold, limit)
                checked += len(want)
    assert checked > 2000  # the cases are not all empty
