"""A store's first keyword recall stops reading candidates that cannot enter a list
(`retrieval_first`): the items, their order and every number are those of the full read
(`rank_first(cut=False)`), and the same as the numpy path's (to the last bit too), on
playbooks where the cut does skip rows.

The cut is exact only while an upper bound on each unread candidate's final score holds;
the bullets the cache cannot bound (inheriting evidence through `supersedes`, evidence
dated after now, a cache kept at another half-life) are read whatever their bound, and a
policy that could turn harm into help (a negative multiplier) reads everything.
Small batches and a forced scan (`first_worth`) make the cut engage on small playbooks.
"""

from __future__ import annotations

import random
from collections.abc import Iterator
from datetime import timedelta
from typing import Any

import pytest

from playbook import recall
from playbook.core.policy import Policy
from playbook.retrieval.query import query_terms
from playbook.retrieval.ranked import Ranked, parse_scope
from playbook.store import PlaybookStore, open_store

from .helpers import Clock, feedback_from_ahead

WORDS = "npm pytest docker release cache lockfile ci flaky".split()
LISTS = ("bullets", "anti_patterns", "deprecated_warnings")


@pytest.fixture(params=["groups", "scan"])
def cutting(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> Iterator[str]:
    """One relevance group a batch; with "scan", every batch after the first is found by
    one pass over the evidence cache, as at 100k rules."""
    import playbook.retrieval.first_cut as first

    monkeypatch.setattr(first, "BATCH", 1)
    if request.param == "scan":
        monkeypatch.setattr(first, "SCAN_LEAST", 1)
        monkeypatch.setattr(first, "_scan_pays", lambda *_: True)
    else:
        monkeypatch.setattr(first, "SCAN_LEAST", 10**9)
    yield str(request.param)


def _rank(
    store: PlaybookStore,
    query: str,
    monkeypatch: pytest.MonkeyPatch,
    *,
    limit: int = 3,
    scope: Any = None,
    cut: bool = True,
) -> tuple[list[list[Ranked]], int]:
    """The first path's lists for `query`, and how many rank rows it read."""
    import playbook.retrieval.first_cut as first

    read = 0
    rows_of = store.rank.first_rows

    def counting(*args: Any, **kw: Any) -> list[tuple[Any, ...]]:
        nonlocal read
        rows = rows_of(*args, **kw)
        read += len(rows)
        return rows

    points: dict[int, float] = {}
    for seqs, value in store.rank.keyword_lists(query_terms(store, query), store.policy):
        for s in seqs:
            points[s] = points.get(s, 0.0) + value
    with monkeypatch.context() as m:
        m.setattr(store.rank, "first_rows", counting)
        ranked = first.rank_first(store, points, parse_scope(scope), limit, cut=cut)
    return ranked, read


def _numpy_path(store: PlaybookStore, query: str, limit: int, scope: Any) -> list[list[Ranked]]:
    store.rank_cache.wanted = True  # not a first query: the whole table, in numpy
    result = recall(store, query, limit=limit, scope=scope)
    assert store.rank_cache.table is not None
    return [
        [
            Ranked(
                i.bullet.id,
                i.bullet.maturity,
                i.keyword_score,
                i.similarity,
                i.relevance,
                i.effective_score,
                i.final_score,
            )
            for i in getattr(result, key)
        ]
        for key in LISTS
    ]


def _same_as_numpy(cut: list[list[Ranked]], numpy_path: list[list[Ranked]]) -> None:
    def items(lists: list[list[Ranked]]) -> list[tuple[Any, ...]]:
        return [
            (k, r.bullet_id, r.maturity, r.keyword, r.relevance)
            for k, rs in enumerate(lists)
            for r in rs
        ]

    def scores(lists: list[list[Ranked]]) -> list[float]:
        return [x for rs in lists for r in rs for x in (r.effective, r.final)]

    assert items(cut) == items(numpy_path)
    assert scores(cut) == scores(numpy_path)  # to the last bit


def _event(store: PlaybookStore, clock: Clock, bid: str, kind: str, days_ago: float) -> None:
    store.add_feedback(bid, kind, at=clock.t - timedelta(days=days_ago))


def _world(store: PlaybookStore, clock: Clock, rng: random.Random, n: int = 90) -> None:
    """Bullets over a few words, some tagged, of every list, maturity and scope, each with
    a random history of helpful and harmful marks over the last year."""
    for i in range(n):
        content = " ".join([*rng.sample(WORDS, rng.randint(1, 3)), f"w{i}"])
        anti = rng.random() < 0.25
        bid = store.insert_bullet(
            ("AVOID: " if anti else "") + content,
            tags=rng.sample(WORDS, rng.randint(0, 1)),
            type="anti-pattern" if anti else "rule",
            maturity=rng.choice(["candidate", "established", "proven", "deprecated"]),
            scope=rng.choice(["global", "global", "global", "language", "workspace"]),
            scope_key=rng.choice([None, "python", "web"]),
        ).id
        for _ in range(rng.randint(0, 8)):
            _event(store, clock, bid, "helpful", rng.uniform(0, 300))
        for _ in range(rng.randint(0, 2)):
            _event(store, clock, bid, "harmful", rng.uniform(0, 300))


@pytest.mark.parametrize("seed", range(3))
def test_the_cut_reads_less_and_ranks_as_the_full_read(
    store: PlaybookStore,
    clock: Clock,
    cutting: str,
    monkeypatch: pytest.MonkeyPatch,
    seed: int,
) -> None:
    rng = random.Random(seed)
    _world(store, clock, rng)
    read = full_read = 0
    for _ in range(10):
        query = " ".join(rng.sample(WORDS, rng.randint(1, 3)))
        scope = rng.choice([None, ["language:python"], ["workspace:web", "language"]])
        limit = rng.choice([1, 3, 10])
        cut, n_cut = _rank(store, query, monkeypatch, limit=limit, scope=scope)
        full, n_full = _rank(store, query, monkeypatch, limit=limit, scope=scope, cut=False)
        assert cut == full, query  # every number to the last bit
        _same_as_numpy(cut, _numpy_path(store, query, limit, scope))
        store.rank_cache.wanted = False
        read, full_read = read + n_cut, full_read + n_full
    assert read < full_read  # the cut did skip rows (by how much, the tests below say)


def _top_group(store: PlaybookStore, clock: Clock, n: int = 4) -> list[str]:
    """Rules that fill the rules list from the top relevance group (a tag on "npm"), with
    enough help that most of the rest cannot reach them."""
    out = []
    for i in range(n):
        bid = store.insert_bullet(f"npm pin t{i}", tags=["npm"], maturity="established").id
        for _ in range(6):
            _event(store, clock, bid, "helpful", 1)
        out.append(bid)
    return out


def _crowd(store: PlaybookStore, clock: Clock, n: int = 30, **kw: Any) -> list[str]:
    """Low-relevance rules ("npm" only) with a little help: the rows the cut skips."""
    out = []
    for i in range(n):
        bid = store.insert_bullet(f"npm crowd c{i}", **kw).id
        _event(store, clock, bid, "helpful", 30)
        out.append(bid)
    return out


def _ids(lists: list[list[Ranked]], k: int = 0) -> list[str]:
    return [r.bullet_id for r in lists[k]]


def test_ties_at_the_cut_are_kept_and_settled_by_id(
    store: PlaybookStore, clock: Clock, cutting: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    _top_group(store, clock, n=2)
    # six rules tied with one another (same relevance, same evidence at the same time), the
    # limit falling among them; below them, rules whose final score equals theirs
    tied = [store.insert_bullet(f"npm lint tie{i}", maturity="established").id for i in range(6)]
    level = [store.insert_bullet(f"npm lvl{i}", maturity="established").id for i in range(3)]
    for bid in tied:  # relevance 6, effective 2: final 12
        for _ in range(2):
            _event(store, clock, bid, "helpful", 0)
    for bid in level:  # relevance 3, effective 4: final 12 too, after them by relevance
        for _ in range(4):
            _event(store, clock, bid, "helpful", 0)
    _crowd(store, clock)
    cut, n_cut = _rank(store, "npm lint", monkeypatch, limit=4)
    full, n_full = _rank(store, "npm lint", monkeypatch, limit=4, cut=False)
    assert cut == full
    assert _ids(cut)[2:] == sorted(tied)[:2]
    assert n_cut < n_full


def test_a_bullet_inheriting_evidence_is_read_whatever_its_own(
    store: PlaybookStore, clock: Clock, cutting: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    _top_group(store, clock)
    _crowd(store, clock)
    old = store.insert_bullet("docker layers", maturity="proven").id
    for _ in range(30):
        _event(store, clock, old, "helpful", 2)
    heir = store.insert_bullet("npm docker heir", maturity="proven").id  # low relevance
    store.add_edge("supersedes", heir, old)
    store.retire(old)
    cut, n_cut = _rank(store, "npm", monkeypatch)
    full, n_full = _rank(store, "npm", monkeypatch, cut=False)
    assert cut == full
    assert _ids(cut)[0] == heir  # its predecessor's help lifts it above the tagged rules
    assert n_cut < n_full
    _same_as_numpy(cut, _numpy_path(store, "npm", 3, None))


def test_evidence_dated_after_now_is_read_whatever_the_cache_says(
    store: PlaybookStore, clock: Clock, cutting: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    _top_group(store, clock)
    _crowd(store, clock)
    ahead = store.insert_bullet("npm from ahead", maturity="proven").id
    for _ in range(20):  # due tomorrow: at full weight now
        feedback_from_ahead(store, clock, ahead, "helpful", at=clock.t + timedelta(days=1))
    # the cache is referenced to its latest event, years ahead: it holds almost nothing
    feedback_from_ahead(store, clock, ahead, "helpful", at=clock.t + timedelta(days=900))
    cut, n_cut = _rank(store, "npm", monkeypatch)
    full, n_full = _rank(store, "npm", monkeypatch, cut=False)
    assert cut == full
    assert _ids(cut)[0] == ahead
    assert n_cut < n_full


def test_a_cache_kept_at_another_half_life_is_read_whatever_it_says(
    db_target: Any, clock: Clock, cutting: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    with open_store(db_target, clock=clock) as store:
        for i in range(4):  # bullets of their own half-life: their cache answers as it is
            bid = store.insert_bullet(f"npm pin t{i}", tags=["npm"], half_life_days=30).id
            for _ in range(6):
                _event(store, clock, bid, "helpful", 1)
        _crowd(store, clock, half_life_days=30)
        slow = store.insert_bullet("npm old wisdom", maturity="proven").id
        for _ in range(10):  # long ago: little left at 90 days' half-life
            _event(store, clock, slow, "helpful", 400)
        _event(store, clock, slow, "helpful", 0)  # the cache's reference: now
    # the default half-life is now far longer: its cache (at 90 days) undercounts it
    with open_store(db_target, clock=clock, policy=Policy(half_life_days=5000)) as store:
        cut, n_cut = _rank(store, "npm", monkeypatch)
        full, n_full = _rank(store, "npm", monkeypatch, cut=False)
        assert cut == full
        assert _ids(cut)[0] == slow
        assert n_cut < n_full
        _same_as_numpy(cut, _numpy_path(store, "npm", 3, None))


def test_a_negative_multiplier_reads_every_candidate(
    db_target: Any, clock: Clock, cutting: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    policy = Policy(multiplier_candidate=-1.0)  # harm now counts for a candidate
    with open_store(db_target, clock=clock, policy=policy) as store:
        _top_group(store, clock)
        _crowd(store, clock, maturity="established")
        harmed = store.insert_bullet("npm harmed often").id  # a candidate
        for _ in range(10):
            _event(store, clock, harmed, "harmful", 1)
        cut, n_cut = _rank(store, "npm", monkeypatch)
        full, n_full = _rank(store, "npm", monkeypatch, cut=False)
        assert cut == full
        assert _ids(cut)[0] == harmed
        assert n_cut == n_full  # no bound holds: nothing is skipped


def test_rows_outside_the_callers_scope_do_not_set_the_cut(
    store: PlaybookStore, clock: Clock, cutting: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    for i in range(4):  # the best rows, for another workspace
        bid = store.insert_bullet(f"npm t{i}", tags=["npm"], scope="workspace", scope_key="api").id
        for _ in range(8):
            _event(store, clock, bid, "helpful", 1)
    _top_group(store, clock, n=2)
    crowd = _crowd(store, clock)
    cut, _ = _rank(store, "npm", monkeypatch, scope=["workspace:web"])
    full, _ = _rank(store, "npm", monkeypatch, scope=["workspace:web"], cut=False)
    assert cut == full
    assert set(_ids(cut)[2:]) <= set(crowd)  # the list is filled from the crowd


def test_the_deprecated_list_fills_from_lower_groups_too(
    store: PlaybookStore, clock: Clock, cutting: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    _top_group(store, clock)
    _crowd(store, clock)
    gone = [store.insert_bullet(f"npm gone d{i}", maturity="deprecated").id for i in range(5)]
    store.insert_bullet("npm gone tagged", tags=["npm"], maturity="deprecated")
    cut, n_cut = _rank(store, "npm", monkeypatch)
    full, n_full = _rank(store, "npm", monkeypatch, cut=False)
    assert cut == full
    assert len(cut[2]) == 3 and set(_ids(cut, 2)[1:]) <= set(gone)
    assert n_cut < n_full


def test_a_half_life_of_its_own_the_cache_was_not_kept_at_is_read(
    store: PlaybookStore, clock: Clock, cutting: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A bullet whose half-life changed under its cache (a hand-edited playbook: nothing
    in the API changes one) is scored from its log, so it must be read."""
    _top_group(store, clock)
    _crowd(store, clock)
    edited = store.insert_bullet("npm edited", maturity="proven").id
    for _ in range(20):  # long ago: little left at 90 days' half-life
        _event(store, clock, edited, "helpful", 400)
    _event(store, clock, edited, "helpful", 0)  # the cache's reference: now
    with store.transaction():
        store.sql.execute("UPDATE bullets SET half_life_days = 5000 WHERE id = ?", (edited,))
    cut, n_cut = _rank(store, "npm", monkeypatch)
    full, n_full = _rank(store, "npm", monkeypatch, cut=False)
    assert cut == full
    assert _ids(cut)[0] == edited
    assert n_cut < n_full
