"""The evidence cache's days (`evidence_days`, schema step 4) against the raw log.

Time travel reads each bullet's checkpoint of the day before the moment's plus that day's
events (`review.history_fold`); these tests build a small year with every case the days
cannot answer alone (lineage through supersedes, retirements with feedback after them, a
changed half-life, future-dated events, events recorded long after they were observed,
events imported out of their recorded order) and compare the table at many moments, day
boundaries included, with the one the whole log gives. Both backends."""

from __future__ import annotations

import contextlib
import random
from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest

from playbook import review
from playbook.curation import curate
from playbook.review.history import rows_as_of_ids
from playbook.store import PlaybookStore, iso, memory_migration, open_executor, run_migrations
from playbook.store import testing as raw
from playbook.store.doctor import diagnose
from playbook.store.evidence_days import day_of
from playbook.store.schema import MEMORY_LATEST, schema_version

from .helpers import T0, Clock, add, feedback_from_ahead, log_mark_dated_ahead, mark


def _year(store: PlaybookStore, clock: Clock, seed: int = 7) -> list[str]:
    """A small year: a dozen rules marked most days, some merged, replaced, deprecated."""
    rng = random.Random(seed)
    ids = [add(store, f"Rule {i}: use tool{i} for task{i}") for i in range(10)]
    for day in range(120):
        clock.advance(hours=rng.choice([3, 7, 24, 30]))
        live = [b.id for b in store.bullets() if b.state != "retired"]
        for bid in rng.sample(live, min(3, len(live))):
            with contextlib.suppress(review.NotApplied):  # inverted by its harm meanwhile
                mark(store, bid, rng.choice(["helpful", "helpful", "harmful"]), rng.randint(1, 2))
        if day == 20:  # lineage: a merge's successor inherits both
            a, b = live[:2]
            curate(store, [{"type": "merge", "bullet_ids": [a, b], "content": "Merged rule"}],
                   actor="human")  # fmt: skip
        if day == 35:
            bid = rng.choice(live)
            curate(store, [{"type": "replace", "bullet_id": bid, "content": "Replaced v2"}],
                   actor="human")  # fmt: skip
        if day == 50:  # a changed half-life: older checkpoints were kept at another
            raw.run(store, "UPDATE bullets SET half_life_days = 30 WHERE id = ?", (live[-1],))
            store.add_feedback(live[-1], "helpful")
        if day == 60:  # observed long before it was recorded
            store.add_feedback(live[2], "harmful", at=clock() - timedelta(days=40))
        if day == 70:  # a writer whose clock runs ahead: recorded and observed ahead
            feedback_from_ahead(store, clock, live[3], "helpful", clock() + timedelta(days=3))
        if day == 80:  # observed after it was recorded (an older log's form)
            log_mark_dated_ahead(store, live[4], "helpful", clock() + timedelta(days=9))
        if day == 90:  # feedback on a retired rule: after its retirement
            gone = [b.id for b in store.bullets() if b.state == "retired"]
            if gone:
                store.add_feedback(gone[0], "helpful")
    clock.advance(days=5)
    return ids


def _moments(store: PlaybookStore, clock: Clock) -> list[Any]:
    out = []
    t = T0
    while t < clock():
        midnight = t.replace(hour=0, minute=0, second=0, microsecond=0)
        out += [t, midnight, midnight - timedelta(microseconds=1), midnight + timedelta(days=1)]
        t += timedelta(days=9, hours=5)
    # the moments events were recorded at, exactly
    out += [e.recorded_at for b in store.bullets()[:4] for e in store.timeline(b.id)[:3]]
    return [*out, clock()]


def _same(a: list[Any], b: list[Any], moment: Any) -> None:
    zero = {"helpful": 0, "harmful": 0, "effective": 0}
    assert [r._replace(**zero) for r in a] == [r._replace(**zero) for r in b], moment
    for x, y in zip(a, b, strict=True):
        for f in zero:
            assert getattr(x, f) == pytest.approx(getattr(y, f), abs=1e-9), (moment, x.id, f)


def _against_the_log(store: PlaybookStore, moments: list[Any], mp: pytest.MonkeyPatch) -> None:
    folded = [review.rows_as_of(store, m) for m in moments]
    some = [b.id for b in store.bullets()][:5]
    few = [rows_as_of_ids(store, some, m) for m in moments]
    with mp.context() as m:
        m.setattr(store.past, "days_answer", lambda: False)  # the whole log instead
        for moment, days, ids in zip(moments, folded, few, strict=True):
            _same(days, review.rows_as_of(store, moment), moment)
            _same(ids, rows_as_of_ids(store, some, moment), moment)


def test_the_days_give_the_logs_table_at_every_moment(
    store: PlaybookStore, clock: Clock, monkeypatch: pytest.MonkeyPatch, db_target: str | Path
) -> None:
    _year(store, clock)
    assert store.past.days_answer()
    _against_the_log(store, _moments(store, clock), monkeypatch)
    assert diagnose_ok(db_target)


def test_events_imported_out_of_recorded_order_rebuild_their_bullets_days(
    store: PlaybookStore, clock: Clock, monkeypatch: pytest.MonkeyPatch, db_target: str | Path
) -> None:
    """Events appended through the bulk path with a recorded day before a bullet's latest
    checkpoint: that bullet's days are folded again from the log."""
    _year(store, clock, seed=3)
    bid = store.bullets()[0].id
    old = clock() - timedelta(days=60)
    with store.transaction():
        store.tables.append_rows(
            "feedback",
            ("bullet_id", "kind", "at", "recorded_at", "weight", "actor"),
            [(bid, "harmful", iso(old - timedelta(days=1)), iso(old), 2.0, "agent")],
        )
        store.sync_evidence()
    assert store.past.days_answer()
    _against_the_log(store, _moments(store, clock), monkeypatch)
    assert diagnose_ok(db_target)


def test_a_write_folds_its_event_into_the_day_it_was_recorded(
    store: PlaybookStore, clock: Clock
) -> None:
    bid = add(store, "Pin npm to 11 in release jobs")
    mark(store, bid, "helpful")
    clock.advance(hours=1)
    mark(store, bid, "helpful")
    clock.advance(days=1)
    mark(store, bid, "harmful")
    days = raw.rows(store, "SELECT day, count FROM evidence_days WHERE bullet_id = ? ORDER BY day",
                    (bid,))  # fmt: skip
    today = day_of(iso(clock()))
    assert [tuple(r) for r in days] == [(today - 1, 2), (today, 3)]


def test_the_migration_to_step_4_builds_the_days_from_the_log(
    db_target: str | Path, clock: Clock, monkeypatch: pytest.MonkeyPatch
) -> None:
    ex = open_executor(db_target, "create")
    try:
        run_migrations(ex, [memory_migration(3)])
        store = PlaybookStore(ex, migrate=False, clock=clock)
        _year(store, clock, seed=5)
        assert not store.past.days_answer()  # schema 3: time travel reads the log
        moments = _moments(store, clock)
        before = [review.rows_as_of(store, m) for m in moments]
        run_migrations(ex, [memory_migration()])
        assert schema_version(ex) == MEMORY_LATEST
        store = PlaybookStore(ex, migrate=False, clock=clock)
        assert store.past.days_answer()
        for moment, was in zip(moments, before, strict=True):
            _same(review.rows_as_of(store, moment), was, moment)
        assert diagnose_ok(db_target)
    finally:
        ex.close()


def test_doctor_finds_a_checkpoint_that_is_not_the_log(
    store: PlaybookStore, clock: Clock, db_target: str | Path
) -> None:
    _year(store, clock, seed=2)
    assert diagnose_ok(db_target)
    bid = raw.rows(store, "SELECT bullet_id FROM evidence_days ORDER BY bullet_id")[0][0]
    raw.run(store, "UPDATE evidence_days SET helpful = helpful + 1 WHERE bullet_id = ?", (bid,))
    assert not diagnose_ok(db_target)


def diagnose_ok(target: str | Path) -> bool:
    """Whether doctor finds the days and the log agree."""
    report = diagnose(target)
    return not [p for p in report.problems if "evidence_days" in p]
