"""`evaluate`: synthetic worlds with a known truth, small logs, determinism (issue 18)."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import timedelta
from pathlib import Path

import pytest

from playbook.policy_eval import evaluate
from playbook.policy_eval.evaluate import MIN_HELDOUT_EVENTS
from playbook.store import PlaybookStore, parse_iso

from .helpers import Clock, store_at
from .helpers.policy_eval_worlds import flipping_world, noise_world


def _world(path: Path, build, **kw) -> PlaybookStore:  # type: ignore[no-untyped-def]
    clock = Clock()
    store = store_at(path, clock=clock)
    build(store, clock, **kw)
    clock.advance(days=1)
    return store


@pytest.fixture(scope="module")
def flipping(tmp_path_factory: pytest.TempPathFactory) -> Iterator[PlaybookStore]:
    path = tmp_path_factory.mktemp("flip") / "state.sqlite3"
    store = _world(path, flipping_world, period=60, rules=20, marks_per_day=16)
    yield store
    store.close()


@pytest.fixture(scope="module")
def noise(tmp_path_factory: pytest.TempPathFactory) -> Iterator[PlaybookStore]:
    path = tmp_path_factory.mktemp("noise") / "state.sqlite3"
    store = _world(path, noise_world, rules=20, marks_per_day=16)
    yield store
    store.close()


@pytest.fixture(scope="module")
def flipping_report(flipping: PlaybookStore):  # type: ignore[no-untyped-def]
    return evaluate(flipping)


def test_usefulness_that_flips_recommends_a_30_day_half_life(flipping_report) -> None:  # type: ignore[no-untyped-def]
    report = flipping_report
    current = report.rows[0].candidate.policy
    assert current.half_life_days == 90  # the default is what is being challenged
    assert report.verdict.status == "recommended"
    row = report.recommended
    assert row is not None and row.candidate.policy.half_life_days == 30
    est = row.metrics["log_loss"]
    # its paired interval against the 90-day policy lies wholly above zero: 90 is excluded
    assert 0 < est.lo <= est.diff <= est.hi
    assert est.events == report.log.heldout_events and est.sessions > 100
    assert report.line().startswith(f"recommended: {row.candidate.name} (half_life_days 30")


def test_known_truth_orders_the_half_lives(flipping_report) -> None:  # type: ignore[no-untyped-def]
    """Rules flip every 60 days: the shorter the memory, the better the separation."""
    by_hl: dict[float, list[float]] = {}
    for r in flipping_report.rows:
        by_hl.setdefault(r.candidate.policy.half_life_days, []).append(r.metrics["auc"].value)
    mean = {hl: sum(v) / len(v) for hl, v in by_hl.items()}
    assert mean[30] > mean[60] > mean[90] > mean[180]
    assert mean[30] > 0.6  # the signal is real, not a rounding of 0.5


def test_no_signal_is_inert(noise: PlaybookStore) -> None:
    report = evaluate(noise)
    assert report.verdict.status == "inert"
    assert report.recommended is None
    assert report.line().startswith("inert: keep the current policy — ")
    assert report.log.heldout_events >= MIN_HELDOUT_EVENTS  # not for want of events
    challenger = report.row(report.verdict.challenger)
    if challenger is not None:  # registered on the training span, refuted on held-out
        est = challenger.metrics["log_loss"]
        assert est.lo <= 0 and "spans zero" in report.line()


def test_a_small_log_is_inert_with_the_count(store: PlaybookStore, clock: Clock) -> None:
    a = store.insert_bullet("pin npm in release jobs")
    times = []
    for i in range(40):
        clock.advance(hours=6)
        times.append(clock.t)
        store.add_feedback(a.id, "helpful" if i % 3 else "harmful")
    clock.advance(days=1)
    report = evaluate(store)
    split = times[0] + (times[-1] - times[0]) * 0.7
    held = sum(1 for t in times if t >= split)
    assert report.verdict.status == "inert"
    assert f"too few events: {held} held-out events" in report.line()
    assert report.line().startswith("inert: keep the current policy — too few events")


def test_an_empty_log_is_inert(store: PlaybookStore) -> None:
    report = evaluate(store)
    assert report.line().startswith("inert: keep the current policy — too few events: 0 ")
    assert report.to_dict()["log"]["events"] == 0


def test_report_is_deterministic_and_the_seed_is_used(flipping: PlaybookStore) -> None:
    one, two = evaluate(flipping).to_dict(), evaluate(flipping).to_dict()
    assert one == two
    other = evaluate(flipping, seed=19).to_dict()
    a = {c["name"]: c["metrics"]["log_loss"] for c in one["candidates"]}
    b = {c["name"]: c["metrics"]["log_loss"] for c in other["candidates"]}
    name = one["verdict"]["challenger"]
    assert a[name]["diff"] == b[name]["diff"]  # the point estimate does not resample
    assert a[name]["interval"] != b[name]["interval"]


def test_split_moves_the_held_out_span(flipping: PlaybookStore) -> None:
    report = evaluate(flipping, split=0.5)
    log = report.log
    first, last = parse_iso(log.first), parse_iso(log.last)  # type: ignore[arg-type]
    expected = first + (last - first) * 0.5
    assert abs(parse_iso(log.split_at) - expected) < timedelta(milliseconds=1)  # type: ignore[arg-type]
    assert log.training_events + log.heldout_events == log.events
    with pytest.raises(ValueError, match="split"):
        evaluate(flipping, split=1.0)
