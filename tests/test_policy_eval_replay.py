"""The replay's as-of views are the core's as-of views (issue 18, "Done means").

A random history made through the public API (adds, marks with contexts, back-dated and
future-dated marks, replace, merge, inversion, deprecation, pins, bullets with their own
half-life), then, for every mark and two policies, the replay's score just before the mark
must equal `store.score(id, at=)` and its top-k membership must equal `recall(as_of=)`.
"""

from __future__ import annotations

import random
from datetime import timedelta

import pytest

from playbook import Policy, curate, recall
from playbook.core.policy import DEFAULT_POLICY
from playbook.policy_eval.replay import replay
from playbook.store import PlaybookStore, parse_iso
from playbook.store import testing as raw

from .helpers import Clock, log_mark_dated_ahead

WORDS = ["npm", "cache", "docker", "pytest", "lockfile", "release", "ci", "deploy", "yarn"]
OTHER = Policy(
    half_life_days=30,
    harm_multiplier=2,
    multiplier_candidate=0.7,
    multiplier_proven=2.0,
    min_confidence=0.2,
    exact_points=2.0,
    tag_points=4.0,
)


ACTIVE_IDS = "SELECT id FROM bullets WHERE state != 'retired' ORDER BY created_at, seq"


def random_history(store: PlaybookStore, clock: Clock, seed: int, steps: int = 450) -> None:
    rng = random.Random(seed)

    def active() -> list[str]:  # the ids of store.bullets(), in its order, without models
        return [r[0] for r in raw.rows(store, ACTIVE_IDS)]

    for step in range(steps):
        clock.advance(hours=rng.uniform(0, 40))
        ids = active()
        r = rng.random()
        session = {"session_ref": f"session:{step // 4}"}
        if r < 0.12 or len(ids) < 6:
            content = " ".join(rng.sample(WORDS, 3)) + f" step{step}"
            store.insert_bullet(
                content,
                type="anti-pattern" if rng.random() < 0.2 else "rule",
                tags=[rng.choice(WORDS)] if rng.random() < 0.5 else [],
                half_life_days=20.0 if rng.random() < 0.15 else None,
            )
        elif r < 0.72:
            kind = "helpful" if rng.random() < 0.65 else "harmful"
            delta = {"type": kind, "bullet_id": rng.choice(ids)}
            if rng.random() < 0.8:
                delta["context"] = " ".join(rng.sample(WORDS, 2))
            curate(store, [delta], provenance=session)
        elif r < 0.8:
            shift = timedelta(days=rng.uniform(-40, 10))
            bid, kind = rng.choice(ids), rng.choice(["helpful", "harmful"])
            mark = {"context": rng.choice(WORDS), "weight": rng.choice([1.0, 0.5, 1 / 3])}
            if shift > timedelta(0):  # observed after it was recorded: an older log's mark
                log_mark_dated_ahead(store, bid, kind, clock.t + shift, **mark)
            else:
                store.add_feedback(bid, kind, at=clock.t + shift, **mark)
        elif r < 0.86:
            text = " ".join(rng.sample(WORDS, 3)) + f" replaced{step}"
            curate(store, [{"type": "replace", "bullet_id": rng.choice(ids), "content": text}])
        elif r < 0.9 and len(ids) >= 2:
            a, b = rng.sample(ids, 2)
            text = " ".join(rng.sample(WORDS, 3)) + f" merged{step}"
            curate(store, [{"type": "merge", "bullet_ids": [a, b], "content": text}])
        elif r < 0.94:
            curate(
                store,
                [{"type": "deprecate", "bullet_id": rng.choice(ids), "reason": "old"}],
                actor="human",
            )
        else:
            bid = rng.choice(ids)
            if store.get_bullet(bid).pinned:  # type: ignore[union-attr]
                store.unpin(bid)
            else:
                store.pin(bid, "keep")
    clock.advance(days=1)


def _replay_default(store: PlaybookStore):  # type: ignore[no-untyped-def]
    """The default policy's views; nothing held out (no recall@k)."""
    return replay(
        store.past.read_history(),
        [DEFAULT_POLICY],
        split_at="9999",
        k=10,
        matches=store.rank.token_matches,
    )


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
    random_history(store, clock, seed)
    history = store.past.read_history()
    policies = [DEFAULT_POLICY, OTHER]
    k = 3
    rep = replay(
        history,
        policies,
        split_at=history.events[0].recorded_at,  # everything held out: every mark ranked
        k=k,
        matches=store.rank.token_matches,
    )
    stores = [PlaybookStore(store.sql, policy=p, clock=clock, migrate=False) for p in policies]
    edges = raw.value(store, "SELECT COUNT(*) FROM edges WHERE kind='supersedes'")
    moves = raw.value(store, "SELECT COUNT(DISTINCT bullet_id) FROM maturity_log")
    assert edges >= 5 and moves >= 5  # the history exercises lineage and maturity
    ranked = hits = 0
    for i, ev in enumerate(rep.events):
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
            assert bool(rep.hits[i, c]) == (ev.bullet_id in listed), (i, c, ev.context)
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
    span = parse_iso(rep.events[-1].recorded_at) - parse_iso(rep.events[0].recorded_at)
    assert span.days / 0.5 > 1100  # 2 ** 1100 would overflow a float without one
    for i, ev in enumerate(rep.events):
        as_of = parse_iso(ev.recorded_at) - timedelta(microseconds=1)
        expected = store.score(ev.bullet_id, at=as_of).effective
        assert rep.scores[i, 0] == pytest.approx(expected, rel=1e-9, abs=1e-12)
