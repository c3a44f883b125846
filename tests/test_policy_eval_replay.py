"""The replay's as-of views are the core's as-of views (issue 18, "Done means").

A random history made through the public API (adds, marks with contexts, back-dated and
future-dated marks, replace, merge, inversion, deprecation, pins, bullets with their own
half-life), then, for every mark and two policies, the replay's score just before the mark
must equal `store.score(id, at=)` and its top-k membership must equal `recall(as_of=)`.
"""

from __future__ import annotations

import random
from datetime import timedelta

import numpy as np
import pytest

from playbook import Policy, recall
from playbook.core.policy import DEFAULT_POLICY
from playbook.policy_eval.replay import Replay, replay
from playbook.store import PlaybookStore, parse_iso
from playbook.store import testing as raw

from .helpers import Clock, log_mark_dated_ahead
from .helpers.policy_eval_histories import varied_history

OTHER = Policy(
    half_life_days=30,
    harm_multiplier=2,
    multiplier_candidate=0.7,
    multiplier_proven=2.0,
    min_confidence=0.2,
    exact_points=2.0,
    tag_points=4.0,
)


def replayed(
    store: PlaybookStore, policies: list[Policy], split_at: str, k: int, page: int = 7
) -> Replay:
    """The replay as `evaluate` runs it (in one snapshot), a few marks a page."""
    with store.log.snapshot():
        return replay(
            store.log, policies, split_at=split_at, k=k, size=store.log.event_count(), page=page
        )


def _replay_default(store: PlaybookStore) -> Replay:
    """The default policy's views; nothing held out (no recall@k)."""
    return replayed(store, [DEFAULT_POLICY], split_at="9999", k=10)


# Two random histories on SQLite, one on PostgreSQL in the suite: there every mark's as-of
# score and recall, under each policy, are round trips to the server (the run costs about
# three SQLite ones), so the second history there is the long variant (-m slow).
@pytest.mark.parametrize(
    ("backend", "seed"),
    [
        ("sqlite", 3),
        ("sqlite", 11),
        pytest.param("postgresql", 3, marks=pytest.mark.postgres),
        pytest.param("postgresql", 11, marks=[pytest.mark.postgres, pytest.mark.slow]),
    ],
    indirect=["backend"],
)
def test_replay_views_agree_with_store_score_and_recall(
    store: PlaybookStore, clock: Clock, seed: int
) -> None:
    varied_history(store, clock, seed)
    history = store.past.read_history()
    policies = [DEFAULT_POLICY, OTHER]
    k = 3
    # everything held out: every mark ranked
    rep = replayed(store, policies, split_at=history.events[0].recorded_at, k=k)
    stores = [PlaybookStore(store.sql, policy=p, clock=clock, migrate=False) for p in policies]
    edges = raw.value(store, "SELECT COUNT(*) FROM edges WHERE kind='supersedes'")
    moves = raw.value(store, "SELECT COUNT(DISTINCT bullet_id) FROM maturity_log")
    assert edges >= 5 and moves >= 5  # the history exercises lineage and maturity
    ranked = hits = 0
    row = np.cumsum(rep.ranked) - 1  # each ranked mark's row of `rep.hits`
    for i, ev in enumerate(history.events):
        as_of = parse_iso(ev.recorded_at) - timedelta(microseconds=1)
        for c, s in enumerate(stores):
            expected = s.score(ev.bullet_id, at=as_of).effective
            assert rep.scores[i, c] == pytest.approx(expected, rel=1e-9, abs=1e-12), (i, c)
            if not ev.context:
                continue
            r = recall(s, ev.context, limit=k, as_of=as_of)
            if not r.query_tokens:
                assert not rep.ranked[i]
                continue
            assert rep.ranked[i]
            listed = {it.bullet.id for lst in (r.bullets, r.anti_patterns,
                                               r.deprecated_warnings) for it in lst}  # fmt: skip
            assert bool(rep.hits[row[i], c]) == (ev.bullet_id in listed), (i, c, ev.context)
            ranked += 1
            hits += ev.bullet_id in listed
    assert ranked > 300 and 0 < hits < ranked  # both outcomes were compared


def test_future_dated_mark_counts_at_full_weight_until_its_time(
    store: PlaybookStore, clock: Clock
) -> None:
    """A mark dated after it was recorded counts at age 0 until its date (SPEC §4)."""
    a = store.insert_bullet("pin npm in release jobs")
    start = clock.t
    log_mark_dated_ahead(store, a.id, "helpful", start + timedelta(days=10))
    clock.t = start + timedelta(days=3)
    store.add_feedback(a.id, "harmful")
    clock.t = start + timedelta(days=40)
    store.add_feedback(a.id, "helpful")
    rep = _replay_default(store)
    # candidate multiplier 0.5; before day 3 the day-10 mark has its full weight
    assert rep.scores[:, 0].tolist() == pytest.approx(
        [0.0, 0.5 * 1.0, 0.5 * (0.5 ** (30 / 90) - 4 * 0.5 ** (37 / 90))], rel=1e-9
    )


def test_long_history_with_a_short_half_life_stays_exact(
    store: PlaybookStore, clock: Clock
) -> None:
    """Past 400 half-lives the replay moves its reference time (no overflow, same scores)."""
    quick = store.insert_bullet("retry flaky network tests once", half_life_days=0.5)
    slow = store.insert_bullet("pin npm in release jobs")
    rng = random.Random(8)
    for _ in range(120):
        clock.advance(days=rng.uniform(3, 8))
        store.add_feedback(rng.choice([quick.id, slow.id]), rng.choice(["helpful", "harmful"]))
    clock.advance(days=1)
    rep = _replay_default(store)
    events = store.past.read_history().events
    span = parse_iso(events[-1].recorded_at) - parse_iso(events[0].recorded_at)
    assert span.days / 0.5 > 1100  # 2 ** 1100 would overflow a float without one
    for i, ev in enumerate(events):
        as_of = parse_iso(ev.recorded_at) - timedelta(microseconds=1)
        expected = store.score(ev.bullet_id, at=as_of).effective
        assert rep.scores[i, 0] == pytest.approx(expected, rel=1e-9, abs=1e-12)
