"""What time travel keeps between moments (`review.moments.Moments`): a table read with it
is the table read without it, at every moment of a small year (day boundaries, lineage,
retirements, a changed half-life, future-dated and late-recorded events), after writes
made since it kept something, and after an import of feedback recorded in the past (the
one write that changes a settled day). Both backends. Also the conflicts views' latest
events read from the end of the log, and the collector paused around whole-table reads."""

from __future__ import annotations

import gc
import threading
from datetime import datetime, timedelta
from typing import Any

import pytest

from playbook import review
from playbook.core import collector
from playbook.review.moments import Moments
from playbook.store import PlaybookStore, iso

from .helpers import Clock, add, mark
from .helpers.bad_rows import bad_feedback, drop_checks, restore_checks
from .helpers.years import moments_of, small_year


def _reads_of_checkpoints(store: PlaybookStore, mp: pytest.MonkeyPatch) -> list[int]:
    """The days whose checkpoints `store` is asked for from now on."""
    asked: list[int] = []
    original = store.past.checkpoints_before

    def counted(day: int) -> list[tuple[Any, ...]]:
        asked.append(day)
        return original(day)

    mp.setattr(store.past, "checkpoints_before", counted)
    return asked


def _import_event(
    store: PlaybookStore, bid: str, kind: str, at: datetime, recorded: datetime, weight: float
) -> None:
    """One event appended through the bulk path with its own recorded time (an import)."""
    with store.transaction():
        store.tables.append_rows(
            "feedback",
            ("bullet_id", "kind", "at", "recorded_at", "weight", "actor"),
            [(bid, kind, iso(at), iso(recorded), weight, "agent")],
        )
        store.sync_evidence()


def test_a_table_read_with_what_is_kept_is_the_table_read_without(
    store: PlaybookStore, clock: Clock, monkeypatch: pytest.MonkeyPatch
) -> None:
    small_year(store, clock)
    moments = moments_of(store, clock)
    kept = Moments(keep_days=3)  # small: days are dropped and read again
    asked = _reads_of_checkpoints(store, monkeypatch)
    for moment in [*moments, *reversed(moments)]:  # the second pass finds days kept
        assert review.rows_as_of(store, moment, kept) == review.rows_as_of(store, moment), moment
    assert 0 < len(asked) < 2 * len(moments)  # some days were answered from what was kept


def test_what_is_kept_serves_the_next_read_and_writes_since_show(
    store: PlaybookStore, clock: Clock, monkeypatch: pytest.MonkeyPatch
) -> None:
    small_year(store, clock, seed=4)
    week_back = clock() - timedelta(days=7)
    kept = Moments()
    kept.warm(store, [week_back])
    asked = _reads_of_checkpoints(store, monkeypatch)
    before = review.rows_as_of(store, week_back, kept)
    assert asked == []  # read ahead: the step reads no checkpoint
    # writes since: a retirement dated before the moment, a pin, a new rule, fresh marks;
    # none settles a past day
    live = [r.id for r in before if r.state != "retired" and not r.pinned]
    store.retire(live[0], at=week_back - timedelta(days=1))
    store.pin(live[1], "keep")
    add(store, "A rule written today")
    mark(store, live[2], "harmful", 2)
    moment = week_back + timedelta(seconds=30)
    after = {r.id: r for r in review.rows_as_of(store, moment, kept)}
    assert asked == []
    assert list(after.values()) == review.rows_as_of(store, moment)
    assert after[live[0]].state == "retired"


def test_an_import_of_feedback_recorded_in_the_past_drops_the_days_it_changes(
    store: PlaybookStore, clock: Clock, monkeypatch: pytest.MonkeyPatch
) -> None:
    small_year(store, clock, seed=3)
    moment = clock() - timedelta(days=20)
    kept = Moments()
    stale = review.rows_as_of(store, moment, kept)
    bid = stale[0].id
    old = clock() - timedelta(days=60)  # recorded before the moment's day
    _import_event(store, bid, "harmful", old - timedelta(days=1), old, 5.0)
    fresh = review.rows_as_of(store, moment)
    assert fresh != stale  # the import changed that moment
    asked = _reads_of_checkpoints(store, monkeypatch)
    assert review.rows_as_of(store, moment, kept) == fresh
    assert len(asked) == 1  # the kept day was read again


def test_an_event_recorded_late_on_the_moments_day_drops_that_day(
    store: PlaybookStore, clock: Clock, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A writer whose clock runs behind records today's event on the moment's day."""
    bid = add(store, "Retry flaky network tests once")
    small_year(store, clock, seed=8)
    moment = (clock() - timedelta(days=12)).replace(hour=20)
    kept = Moments()
    stale = review.rows_as_of(store, moment, kept)
    behind = moment - timedelta(hours=3)
    _import_event(store, bid, "helpful", behind, behind, 3.0)
    fresh = review.rows_as_of(store, moment)
    assert fresh != stale
    assert review.rows_as_of(store, moment, kept) == fresh


def test_nothing_is_kept_while_the_days_cannot_answer(
    store: PlaybookStore, clock: Clock, monkeypatch: pytest.MonkeyPatch
) -> None:
    small_year(store, clock, seed=6)
    moment = clock() - timedelta(days=10)
    monkeypatch.setattr(store.past, "days_answer", lambda: False)
    kept = Moments()
    kept.warm(store, [moment])
    assert review.rows_as_of(store, moment, kept) == review.rows_as_of(store, moment)
    assert kept.kept_days() == []


def test_latest_events_are_the_end_of_the_timeline(store: PlaybookStore, clock: Clock) -> None:
    bid = add(store, "Run the linter before committing")
    for i in range(30):
        clock.advance(hours=5)
        mark(store, bid, "helpful" if i % 3 else "harmful")
    # one observed in the past: the timeline is ordered by observation, not recording
    store.add_feedback(bid, "harmful", at=clock() - timedelta(days=3))
    timeline = store.timeline(bid)
    assert [e.id for e in store.latest_events(bid, 6)] == [e.id for e in timeline[-6:]]
    then = timeline[10].recorded_at
    seen = [e for e in timeline if e.recorded_at <= then]
    assert [e.id for e in store.latest_events(bid, 4, then)] == [e.id for e in seen[-4:]]
    assert store.latest_events(bid, 0) == []
    assert len(store.latest_events(bid, 100)) == len(timeline)


def test_latest_events_leave_out_malformed_rows_as_the_timeline_does(
    store: PlaybookStore, clock: Clock
) -> None:
    bid = add(store, "Prefer small commits")
    for _ in range(5):
        clock.advance(hours=1)
        mark(store, bid, "helpful")
    drop_checks(store, "feedback")  # rows written before the checks existed
    for _ in range(40):  # more than the read leaves room for, and first from the end
        bad_feedback(store, bid, at="yesterday")
    restore_checks(store, "feedback")
    timeline = store.timeline(bid)
    assert len(timeline) == 5
    assert [e.id for e in store.latest_events(bid, 3)] == [e.id for e in timeline[-3:]]


def test_the_collector_comes_back_when_the_last_paused_read_ends() -> None:
    assert gc.isenabled()
    inside = threading.Event()
    release = threading.Event()

    def other() -> None:
        with collector.paused():
            inside.set()
            release.wait(5)

    worker = threading.Thread(target=other)
    with collector.paused():
        assert not gc.isenabled()
        worker.start()
        assert inside.wait(5)
    assert not gc.isenabled()  # the other read still runs
    release.set()
    worker.join(5)
    assert gc.isenabled()


def test_a_collector_off_before_stays_off() -> None:
    gc.disable()
    try:
        with collector.paused():
            pass
        assert not gc.isenabled()
    finally:
        gc.enable()


def test_a_days_events_fold_over_arrays_as_one_by_one() -> None:
    """`history_fold._fold_day` against `DecayAccumulator.fold` event by event: rows with a
    checkpoint and without, events out of observation order, before the checkpoint's
    reference time, and of a bullet not among the rows."""
    import random

    import numpy as np

    from playbook.core.scoring import DecayAccumulator
    from playbook.review.history_fold import _fold_day

    rng = random.Random(11)
    n = 40
    kept = [
        (30.0 if i % 5 else 90.0, 20_000 + rng.random() * 5, rng.random() * 9, rng.random() * 3,
         rng.randint(1, 50), 20_000 + rng.random() * 5)
        if i % 3 else None
        for i in range(n)
    ]  # fmt: skip
    half_life = np.array([60.0 if i % 7 else 15.0 for i in range(n)])
    pos = {f"b{i}": i for i in range(n)}
    events = [
        (f"b{rng.randrange(n + 3)}", rng.choice(["helpful", "harmful"]),
         20_003 + rng.random() * 4, rng.choice([1.0, 2.0, 0.5]))
        for _ in range(600)
    ]  # fmt: skip
    state = tuple(
        np.array([k[j] if k else d for k in kept], dtype=np.float64)
        for j, d in enumerate((np.nan, -np.inf, 0.0, 0.0, 0, -np.inf))
    )
    state = (*state[:4], state[4].astype(np.int64), state[5])
    _fold_day(state, half_life, events, pos)
    for i in range(n):
        k = kept[i]
        acc = DecayAccumulator(*k[:5]) if k else DecayAccumulator(float(half_life[i]))
        last = k[5] if k else -np.inf
        for bid, kind, t, w in events:
            if bid == f"b{i}":
                acc.fold(kind, t, w)
                last = max(last, t)
        got = [float(a[i]) for a in state]
        want = [acc.half_life, acc.ref, acc.helpful, acc.harmful, acc.count, last]
        if not acc.count:
            assert got[4] == 0 and got[2] == got[3] == 0.0, i
            continue
        assert got == pytest.approx(want, rel=1e-12, abs=1e-12), i
