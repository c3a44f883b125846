"""Scoring (SPEC §4) with a pinned clock; expected numbers are computed independently."""

from __future__ import annotations

import random

import pytest

from playbook import scoring
from playbook.curation import curate, run_maturity_pass
from playbook.model import Maturity
from playbook.policy import DEFAULT_POLICY, Policy

from .conftest import Clock


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
    store.add_feedback(b.id, "helpful", at=clock.t.replace(year=2026, month=3, day=11))
    assert store.score(b.id).helpful == pytest.approx(1.0)  # ten days ahead: not decayed
    clock.advance(days=20)  # now ten days past the event
    assert store.score(b.id).helpful == pytest.approx(0.5 ** (10 / 90))


def test_effective_score_weighs_harm_and_maturity(store) -> None:
    bid = add(store)
    vote(store, bid, n=2)
    vote(store, bid, "harmful", reason="caused_bug")
    s = store.score(bid)
    # H=2, X=1; the batch of the harmful vote deprecated it by harm ratio (1/3 > 0.3).
    assert store.get_bullet(bid).maturity == "deprecated"
    assert s.effective == 0.0
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


def test_demotion_drops_one_rung_per_pass(store, clock: Clock) -> None:
    bid = add(store)
    vote(store, bid, n=10)
    assert store.get_bullet(bid).maturity == "proven"
    clock.advance(days=200)  # H = 10 * 0.5**(200/90) = 2.14: earns only candidate
    assert store.score(bid).helpful == pytest.approx(10 * 0.5 ** (200 / 90))
    first = run_maturity_pass(store)
    second = run_maturity_pass(store)
    third = run_maturity_pass(store)
    assert first == [(bid, "proven", "established")]
    assert second == [(bid, "established", "candidate")]
    assert third == []


def test_decay_alone_demotes_at_the_right_moment(store, clock: Clock) -> None:
    bid = add(store)
    vote(store, bid, n=10)
    # H falls under 10 - epsilon after 90 * log2(10 / 9.99) days.
    boundary = 90 * __import__("math").log2(10 / 9.99)
    clock.advance(days=boundary * 0.9)
    assert run_maturity_pass(store) == []
    clock.advance(days=boundary * 0.2)
    assert run_maturity_pass(store) == [(bid, "proven", "established")]


def test_score_below_minus_three_deprecates_outright(store) -> None:
    bid = add(store)
    vote(store, bid, n=3)
    assert store.get_bullet(bid).maturity == "established"
    vote(store, bid, "harmful", reason="caused_bug")
    # H=3, X=1: effective (3 - 4) * 1 = -1, ratio 0.25: stays established.
    assert store.get_bullet(bid).maturity == "established"
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


def test_policy_change_rescores_history(store, clock: Clock, db_path) -> None:
    bid = add(store)
    vote(store, bid, n=4)
    clock.advance(days=30)
    from playbook.store import open_store

    fast = open_store(db_path, clock=clock, policy=Policy(half_life_days=15))
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
