"""Scoring (SPEC §4) with a pinned clock; expected numbers are computed independently."""

from __future__ import annotations

import random

import pytest

from playbook.core import scoring
from playbook.core.model import Maturity
from playbook.core.policy import DEFAULT_POLICY, Policy
from playbook.curation import curate, run_maturity_pass

from .helpers import Clock, feedback_from_ahead


def add(store, content="Run the linter before committing", **kw) -> str:
    return curate(store, [{"type": "add", "content": content, **kw}]).added[0]


def vote(store, bid: str, kind: str = "helpful", n: int = 1, **kw) -> None:
    for _ in range(n):
        r = curate(store, [{"type": kind, "bullet_id": bid, **kw}])
        assert r.outcomes[0].status == "applied", r.outcomes


@pytest.mark.parametrize("age", [0, 45, 90, 180])
def test_decay_of_one_event_follows_the_half_life(store, clock: Clock, age: int) -> None:
    bid = add(store)
    vote(store, bid)
    clock.advance(days=age)
    expected = {0: 1.0, 45: 2**-0.5, 90: 0.5, 180: 0.25}[age]
    assert store.score(bid).helpful == pytest.approx(expected, rel=1e-12)


def test_per_bullet_half_life_is_used(store, clock: Clock) -> None:
    short = store.insert_bullet("Rebase feature branches daily", half_life_days=30)
    default = store.insert_bullet("Squash fixup commits before review")
    for b in (short, default):
        store.add_feedback(b.id, "harmful", reason="wasted_time")
    clock.advance(days=60)
    assert store.score(short.id).harmful == pytest.approx(0.25)  # two half-lives of 30
    assert store.score(default.id).harmful == pytest.approx(0.5 ** (60 / 90))


def test_future_events_count_at_age_zero(store, clock: Clock) -> None:
    b = store.insert_bullet("Tag releases from CI only")
    feedback_from_ahead(
        store, clock, b.id, "helpful", at=clock.t.replace(year=2026, month=3, day=11)
    )
    assert store.score(b.id).helpful == pytest.approx(1.0)  # ten days ahead: not decayed
    clock.advance(days=20)  # now ten days past the event
    assert store.score(b.id).helpful == pytest.approx(0.5 ** (10 / 90))


def test_effective_score_weighs_harm_and_maturity(store) -> None:
    bid = add(store)
    vote(store, bid, n=2)
    vote(store, bid, "harmful", reason="caused_bug")
    s = store.score(bid)
    # H=2, X=1: the harm ratio (1/3 > 0.3) earns "deprecated", but a rung earned lower
    # demotes nothing by itself (SPEC §4): the score, (2 - 4) * 0.5 = -1, is above -3 and a
    # candidate stays a candidate until it passes -3.
    assert store.get_bullet(bid).maturity == "candidate"
    assert s.effective == pytest.approx((2 - 4 * 1) * 0.5)
    assert (s.helpful, s.harmful) == (2.0, 1.0)
    assert s.earned == Maturity.DEPRECATED


@pytest.mark.parametrize(
    ("h", "x", "rung"),
    [
        (0, 0, "candidate"),
        (2.9, 0, "candidate"),
        (3, 0, "established"),
        (9.9, 0, "established"),
        (10, 0, "proven"),
        (10, 1.2, "established"),  # ratio 0.107: not under 0.1
        (10, 1.0, "proven"),  # ratio 0.0909
        (2, 1, "deprecated"),  # ratio 0.333 with 3 events
        (1, 1, "candidate"),  # too few events to judge
        (7, 3, "established"),  # ratio exactly 0.3 is not "> 0.3"
    ],
)
def test_earned_rung(h: float, x: float, rung: str) -> None:
    assert scoring.earned_rung(h, x, DEFAULT_POLICY) == rung


def test_promotion_candidate_established_proven(store) -> None:
    bid = add(store)
    seen = []
    for _ in range(10):
        seen.extend(curate(store, [{"type": "helpful", "bullet_id": bid}]).maturity_changes)
    assert seen == [(bid, "candidate", "established"), (bid, "established", "proven")]
    assert store.score(bid).effective == pytest.approx(10 * 1.5)


def test_promotion_jumps_straight_to_the_earned_rung(store) -> None:
    b = store.insert_bullet("Cache pip wheels in CI")
    for _ in range(12):
        store.add_feedback(b.id, "helpful")
    changes = run_maturity_pass(store, touched=[b.id])
    assert changes == [(b.id, "candidate", "proven")]


def test_a_negative_score_drops_one_rung_per_pass(store) -> None:
    bid = add(store)
    vote(store, bid, n=10)
    assert store.get_bullet(bid).maturity == "proven"
    for _ in range(3):  # written straight to the log: no pass runs
        store.add_feedback(bid, "harmful", reason="caused_bug")
    # H=10, X=3: proven (10 - 12) * 1.5 = -3.0, not below -3: one rung down, not out.
    first = run_maturity_pass(store, touched=[bid])
    second = run_maturity_pass(store)  # still negative above candidate: due again
    third = run_maturity_pass(store)
    assert first == [(bid, "proven", "established")]
    assert second == [(bid, "established", "candidate")]
    assert third == []
    assert store.score(bid).effective == pytest.approx((10 - 4 * 3) * 0.5)


def test_decay_alone_never_demotes(store, clock: Clock) -> None:
    bid = add(store)
    vote(store, bid, n=10)
    assert store.get_bullet(bid).maturity == "proven"
    clock.advance(days=200)  # H = 10 * 0.5**(200/90) = 2.14: it would earn only candidate
    assert store.score(bid).helpful == pytest.approx(10 * 0.5 ** (200 / 90))
    assert store.score(bid).earned == "candidate"
    assert run_maturity_pass(store, touched=[bid]) == []
    assert store.get_bullet(bid).maturity == "proven"
    assert store.score(bid).stale  # silence asks for re-validation instead


def test_an_unrelated_mark_moves_nothing_else(store, clock: Clock) -> None:
    """Regression: a proven rule with old helpful marks dropped a rung at every curate
    batch anywhere in the playbook."""
    proven = add(store)
    vote(store, proven, n=10)
    other = add(store, "Prefer uv for virtual environments")
    clock.advance(days=300)
    for _ in range(3):
        r = curate(store, [{"type": "helpful", "bullet_id": other}])
        assert [c[0] for c in r.maturity_changes] in ([], [other])
    assert store.get_bullet(proven).maturity == "proven"
    # nothing is scheduled for a later pass either: no bullet is demoting
    assert store.due_for_maturity(scoring.days(clock.t) + 10_000) == []


def test_a_demoting_bullet_keeps_demoting_on_later_batches(store) -> None:
    """The bullets still demoting are the only ones a pass visits beyond the batch."""
    bid = add(store)
    vote(store, bid, n=10)
    other = add(store, "Prefer uv for virtual environments")
    vote(store, bid, "harmful", n=2, reason="caused_bug")  # (10 - 8) * 1.5 = 3: stays proven
    assert store.get_bullet(bid).maturity == "proven"
    r0 = curate(store, [{"type": "harmful", "bullet_id": bid, "reason": "caused_bug"}])
    assert r0.maturity_changes == [(bid, "proven", "established")]  # (10 - 12) * 1.5 = -3
    r1 = curate(store, [{"type": "helpful", "bullet_id": other}])
    r2 = curate(store, [{"type": "helpful", "bullet_id": other}])
    assert (bid, "established", "candidate") in r1.maturity_changes  # 10 - 12 = -2: due
    assert [c for c in r2.maturity_changes if c[0] == bid] == []  # a candidate stays


def test_promotion_then_demotion_in_one_pass_does_not_oscillate(store) -> None:
    """H=3, X=1 earns established (ratio 0.25), but at established the score is 3 - 4 = -1:
    promoted and demoted in the same pass, as cass-memory does, the bullet stays a candidate
    however many passes run."""
    bid = add(store)
    vote(store, bid, n=2)
    store.add_feedback(bid, "harmful", reason="wasted_time")
    store.add_feedback(bid, "helpful")
    assert scoring.earned_rung(3, 1, DEFAULT_POLICY) == "established"
    for _ in range(3):
        assert run_maturity_pass(store, touched=[bid]) == []
    assert store.get_bullet(bid).maturity == "candidate"


def test_score_below_minus_three_deprecates_outright(store) -> None:
    bid = add(store)
    vote(store, bid, n=3)
    assert store.get_bullet(bid).maturity == "established"
    store.add_feedback(bid, "harmful", reason="caused_bug")  # to the log: no pass runs
    r = curate(store, [{"type": "harmful", "bullet_id": bid, "reason": "caused_bug"}])
    # H=3, X=2: effective 3 - 8 = -5 < -3 -> deprecated, not one rung down to candidate.
    assert r.maturity_changes == [(bid, "established", "deprecated")]


def test_deprecated_stays_deprecated_whatever_the_evidence(store) -> None:
    bid = add(store)
    curate(store, [{"type": "deprecate", "bullet_id": bid, "reason": "superseded by uv"}])
    vote(store, bid, n=12)
    assert store.get_bullet(bid).maturity == "deprecated"


def test_pinned_bullets_never_move(store) -> None:
    bid = add(store)
    store.pin(bid, "team convention")
    vote(store, bid, n=12)
    assert store.get_bullet(bid).maturity == "candidate"
    b2 = add(store, "Prefer pnpm for workspace installs")
    vote(store, b2, n=10)
    store.pin(b2, "keep")
    vote(store, b2, "harmful", reason="outdated")
    curate(store, [{"type": "harmful", "bullet_id": b2, "reason": "caused_bug"}])
    assert store.get_bullet(b2).maturity == "proven"


def test_staleness_after_180_days_of_silence(store, clock: Clock) -> None:
    bid = add(store)
    clock.advance(days=179)
    assert not store.score(bid).stale
    vote(store, bid)  # activity resets the clock
    clock.advance(days=179)
    assert not store.score(bid).stale
    clock.advance(days=1)
    s = store.score(bid)
    assert s.stale
    assert s.helpful == pytest.approx(0.5 ** (180 / 90))  # staleness changes no score


def test_policy_change_rescores_history(store, clock: Clock, db_target) -> None:
    bid = add(store)
    vote(store, bid, n=4)
    clock.advance(days=30)
    from playbook.store import open_store

    fast = open_store(db_target, clock=clock, policy=Policy(half_life_days=15))
    assert fast.score(bid).helpful == pytest.approx(4 * 0.25)
    assert store.score(bid).helpful == pytest.approx(4 * 0.5 ** (30 / 90))


def test_accumulator_equals_naive_sum_on_random_logs() -> None:
    rng = random.Random(1234)
    for _ in range(200):
        hl = rng.choice([7.0, 30.0, 90.0, 365.0])
        acc = scoring.DecayAccumulator(hl)
        events = []
        for _ in range(rng.randint(1, 60)):
            e = scoring.RawEvent(
                rng.choice(["helpful", "harmful"]), rng.uniform(0, 400), rng.choice([1.0, 1 / 3])
            )
            events.append(e)
            acc.fold(e.kind, e.at, e.weight)
        now = max(e.at for e in events) + rng.uniform(0, 200)
        h, x = acc.at(now)
        nh, nx = scoring.decayed_totals(events, now, hl)
        assert h == pytest.approx(nh, rel=1e-9, abs=1e-12)
        assert x == pytest.approx(nx, rel=1e-9, abs=1e-12)


def test_store_scores_equal_a_naive_recomputation(store, clock: Clock) -> None:
    """Random interleavings of writes and time (events back- and forward-dated)."""
    rng = random.Random(99)
    topics = ["pytest", "docker", "npm", "cargo", "alembic", "ruff", "mypy", "git"]
    ids = [add(store, f"Check the {t} configuration first") for t in topics]
    log: dict[str, list[tuple[str, float, float]]] = {i: [] for i in ids}
    for _ in range(150):
        bid = rng.choice(ids)
        kind = rng.choice(["helpful", "helpful", "harmful"])
        offset = rng.uniform(-20, 5)  # events observed in the past and a few ahead
        at = clock.t + __import__("datetime").timedelta(days=offset)
        weight = rng.choice([1.0, 0.5])
        if at > clock.t:  # from a writer whose clock runs ahead: the store refuses it from us
            feedback_from_ahead(store, clock, bid, kind, at=at, weight=weight)
        else:
            store.add_feedback(bid, kind, at=at, weight=weight)
        log[bid].append((kind, scoring.days(at), weight))
        clock.advance(hours=rng.uniform(0, 48))
    now = scoring.days(clock.t)
    for bid in ids:
        h = sum(w * 0.5 ** (max(0, now - t) / 90) for k, t, w in log[bid] if k == "helpful")
        x = sum(w * 0.5 ** (max(0, now - t) / 90) for k, t, w in log[bid] if k == "harmful")
        s = store.score(bid)
        assert s.helpful == pytest.approx(h, rel=1e-9)
        assert s.harmful == pytest.approx(x, rel=1e-9)


def test_a_playbook_passed_under_the_old_rules_gets_one_full_pass(store) -> None:
    """Upgrade: a bullet the old (decay-driven) pass left established with a negative score
    is not due under the old bookkeeping; the first pass under the new rules visits it."""
    bid = add(store)
    vote(store, bid, n=3)
    store.add_feedback(bid, "harmful", reason="wasted_time")  # H=3, X=1: 3 - 4 = -1
    store.meta.set("maturity_policy", store.policy_fingerprint())  # as the old code wrote it
    assert run_maturity_pass(store) == [(bid, "established", "candidate")]
    assert run_maturity_pass(store) == []


def test_rerate_moves_exactly_the_ids_given_and_logs_each_move(store) -> None:
    from playbook.curation import rerate

    a = store.insert_bullet("Pin npm to 11 in release jobs", maturity="proven")
    b = store.insert_bullet("Cache pip wheels in CI")
    c = store.insert_bullet("Squash fixup commits", maturity="established")
    for _ in range(3):
        store.add_feedback(a.id, "harmful", reason="caused_bug")  # (0 - 12) * 1.5 < -3
        store.add_feedback(b.id, "helpful")  # earns established
        store.add_feedback(c.id, "harmful", reason="outdated")
    moves = rerate(store, [a.id, b.id], batch_id="c-import", actor="human", reason="rerate")
    assert moves == [(a.id, "proven", "deprecated"), (b.id, "candidate", "established")]
    assert store.get_bullet(c.id).maturity == "established"  # not asked: not moved
    logged = {d.bullet_id: d for d in store.decisions(batch_id="c-import")}
    assert set(logged) == {a.id, b.id}
    assert logged[a.id].detail == {"from": "proven", "to": "deprecated"}
    assert logged[a.id].reason.startswith("rerate: evidence H=0.00 X=3.00")
    assert logged[b.id].actor == "human" and logged[b.id].action == "maturity"


def _composed_fold(acc: list[float], kind: str, at: float, weight: float, hl: float) -> None:
    """The accumulator's fold as the composition of the public forms (`sums_at`, then
    `decayed`): [ref, helpful, harmful, count]."""
    ref, h, x, n = acc
    if at > ref:
        if n:
            h, x = scoring.sums_at(ref, h, x, hl, at)
        ref = at
    v = scoring.decayed(weight, ref - at, hl)
    h, x = (h + v, x) if kind == "helpful" else (h, x + v)
    acc[:] = [ref, h, x, n + 1]


def test_accumulator_fold_is_the_composed_form_to_the_bit() -> None:
    """The fold is written out for speed; it must give the very numbers `sums_at` and
    `decayed` give, for events in and out of order, across gaps past MAX_HALVINGS, with
    weights of zero and near TINY, and with sums flushed to zero."""
    rng = random.Random(4321)
    weights = [1.0, 1 / 3, 0.0, 0.5, scoring.TINY * 3, scoring.TINY * 1.5, 2.0]
    for _ in range(400):
        hl = rng.choice([0.001, 1.0, 7.0, 30.0, 90.0, 365.0])
        acc = scoring.DecayAccumulator(hl)
        ref: list[float] = [float("-inf"), 0.0, 0.0, 0]
        t = rng.uniform(0, 100)
        for _ in range(rng.randint(1, 40)):
            t += rng.choice([rng.uniform(-30, 30), rng.uniform(0, 2000 * hl), 0.0])
            kind = rng.choice(["helpful", "harmful"])
            w = rng.choice(weights)
            acc.fold(kind, t, w)
            _composed_fold(ref, kind, t, w, hl)
            assert (acc.ref, acc.helpful, acc.harmful, acc.count) == tuple(ref)
