"""The evidence cache's days (`evidence_days`, schema step 4) against the raw log.

Time travel reads each bullet's checkpoint of the day before the moment's plus that day's
events (`review.history_fold`); these tests build a small year with every case the days
cannot answer alone (lineage through supersedes, retirements with feedback after them, a
changed half-life, future-dated events, events recorded long after they were observed,
events imported out of their recorded order) and compare the table at many moments, day
boundaries included, with the one the whole log gives. Both backends."""

from __future__ import annotations

from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest

from playbook import review
from playbook.review.history import rows_as_of_ids
from playbook.store import PlaybookStore, iso, memory_migration, open_executor, run_migrations
from playbook.store import testing as raw
from playbook.store.doctor import diagnose
from playbook.store.evidence_days import day_of
from playbook.store.schema import MEMORY_LATEST, schema_version

from .helpers import Clock, add, mark
from .helpers.years import moments_of, small_year


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
    small_year(store, clock)
    assert store.past.days_answer()
    _against_the_log(store, moments_of(store, clock), monkeypatch)
    assert diagnose_ok(db_target)


def test_events_imported_out_of_recorded_order_rebuild_their_bullets_days(
    store: PlaybookStore, clock: Clock, monkeypatch: pytest.MonkeyPatch, db_target: str | Path
) -> None:
    """Events appended through the bulk path with a recorded day before a bullet's latest
    checkpoint: that bullet's days are folded again from the log."""
    small_year(store, clock, seed=3)
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
    _against_the_log(store, moments_of(store, clock), monkeypatch)
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
        small_year(store, clock, seed=5)
        assert not store.past.days_answer()  # schema 3: time travel reads the log
        moments = moments_of(store, clock)
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
    small_year(store, clock, seed=2)
    assert diagnose_ok(db_target)
    bid = raw.rows(store, "SELECT bullet_id FROM evidence_days ORDER BY bullet_id")[0][0]
    raw.run(store, "UPDATE evidence_days SET helpful = helpful + 1 WHERE bullet_id = ?", (bid,))
    assert not diagnose_ok(db_target)


def diagnose_ok(target: str | Path) -> bool:
    """Whether doctor finds the days and the log agree."""
    report = diagnose(target)
    return not [p for p in report.problems if "evidence_days" in p]


def test_a_fold_writes_the_days_it_changed_and_no_other(
    store: PlaybookStore, clock: Clock, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A rule marked again days later gets that day's checkpoint; its last one, read to
    fold on from, is not written back as it was (half the days' writes of a team's year)."""
    bid = add(store, "Run the migrations before the tests")
    other = add(store, "Pin the toolchain version in CI")
    mark(store, bid, "helpful")
    mark(store, other, "helpful")
    first = raw.rows(store, "SELECT bullet_id, day FROM evidence_days ORDER BY 1, 2")
    clock.advance(days=2)
    written: list[tuple[Any, ...]] = []
    days = store.evidence.days
    keep = days._write
    monkeypatch.setattr(days, "_write", lambda rows: (written.extend(rows), keep(rows)))
    mark(store, bid, "harmful")
    today = day_of(iso(clock()))
    assert [(r[0], r[1]) for r in written] == [(bid, today)]
    assert raw.rows(store, "SELECT bullet_id, day FROM evidence_days ORDER BY 1, 2") == sorted(
        [*first, (bid, today)]
    )
    assert store.past.days_answer()
