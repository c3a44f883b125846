"""The rank table (`store/ranking.py`) reads what few bullets have (a scope key, a half-life
of their own) in a second query: the table path of recall must still rank exactly as the
path that scores every candidate from the log (as-of)."""

from __future__ import annotations

import pytest

from playbook import recall
from playbook.retrieval.vectors import HashTrigramEmbedder, MemoryVectors
from playbook.store import PlaybookStore

from .helpers import Clock, mark

RULES = [
    ("Pin npm in release jobs", {}),
    ("Pin npm in the web release job", {"scope": "workspace", "scope_key": "web"}),
    ("Pin npm in the api release job", {"scope": "workspace", "scope_key": "api"}),
    ("Pin npm when Python packages ship", {"scope": "language", "scope_key": "python"}),
    ("Pin npm for every framework", {"scope": "framework"}),
    ("Refresh the npm lockfile weekly", {"half_life_days": 7.0}),
    (
        "Audit npm packages monthly",
        {"half_life_days": 400.0, "scope": "task", "scope_key": "audit"},
    ),
    ("Cache npm downloads in CI", {}),
]


def _flat(result) -> list[tuple]:
    return [
        (key, i.bullet.id, i.bullet.maturity, i.keyword_score, i.relevance)
        for key in ("bullets", "anti_patterns", "deprecated_warnings")
        for i in getattr(result, key)
    ]


@pytest.mark.parametrize(
    "scope", [None, ["workspace:web"], ["language:python", "task:audit"], ["framework"]]
)
def test_scoped_rules_and_own_half_lives_rank_as_the_log_path(
    store: PlaybookStore, clock: Clock, scope: list[str] | None
) -> None:
    ids = [store.insert_bullet(content, **fields).id for content, fields in RULES]
    for n, bid in enumerate(ids):
        mark(store, bid, "helpful", n + 1)
        clock.advance(days=5)
    mark(store, ids[4], "harmful")
    clock.advance(days=20)  # the 7-day half-life and the 400-day one now rank differently
    vectors = MemoryVectors(store, HashTrigramEmbedder(dims=64))  # the table path
    fast = recall(store, "npm", limit=50, vectors=vectors, scope=scope)
    slow = recall(store, "npm", limit=50, vectors=vectors, scope=scope, as_of=clock.t)
    assert _flat(fast) == _flat(slow)
    assert [i.effective_score for i in fast.bullets] == pytest.approx(
        [i.effective_score for i in slow.bullets], rel=1e-9
    )
    assert fast.bullets  # something was recalled for every scope
