"""A playbook whose default half-life is not 90 days reads its past as fast as one at 90.

The evidence cache's days (`evidence_days`) and rows (`evidence`) are folded at a
half-life; a read at another reads the raw events of every rule they were kept for
(correct, slow). These tests count the raw events an as-of read takes from the log
(`store.past.events_recorded_by`, the fallback) and compare them with what the same year
costs at the default half-life: the migration that builds the days builds them at the
opening policy's, and `doctor` names the rules kept at another, which `doctor --fix`
(`store.refold`) folds again, in one transaction, reads never writing. Both
backends."""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest

from playbook import review
from playbook.cli import main
from playbook.core.policy import Policy
from playbook.store import (
    PlaybookStore,
    memory_migration,
    open_executor,
    open_store,
    run_migrations,
)
from playbook.store import testing as raw
from playbook.store.doctor import diagnose

from .helpers import Clock
from .helpers.years import moments_of, small_year

THIRTY = Policy(half_life_days=30)


@contextmanager
def counting(store: PlaybookStore, mp: pytest.MonkeyPatch) -> Iterator[list[int]]:
    """The raw events an as-of read takes from the whole log (the days' fallback)."""
    read: list[int] = []
    past = store.past
    real = past.events_recorded_by

    def spy(when: Any, ids: Any = None) -> Any:
        found = real(when, ids)
        read.append(len(found))
        return found

    with mp.context() as m:
        m.setattr(past, "events_recorded_by", spy)
        yield read


def raw_events_read(store: PlaybookStore, moments: list[Any], mp: pytest.MonkeyPatch) -> int:
    with counting(store, mp) as read:
        for moment in moments:
            review.rows_as_of(store, moment)
    return sum(read)


def the_logs_table(store: PlaybookStore, moment: Any, mp: pytest.MonkeyPatch) -> Any:
    with mp.context() as m:
        m.setattr(store.past, "days_answer", lambda: False)  # the whole log instead
        return review.rows_as_of(store, moment)


def same(a: list[Any], b: list[Any]) -> None:
    zero = {"helpful": 0, "harmful": 0, "effective": 0}
    assert [r._replace(**zero) for r in a] == [r._replace(**zero) for r in b]
    for x, y in zip(a, b, strict=True):
        for f in zero:
            assert getattr(x, f) == pytest.approx(getattr(y, f), rel=1e-9, abs=1e-9), (x.id, f)


def half_life_notes(target: str | Path, policy: Policy) -> list[str]:
    return [n for n in diagnose(target, policy=policy).notes if "half-life" in n]


def year_at_schema_3(target: str | Path) -> tuple[Any, list[Any], Clock]:
    """The small year written at schema 3 (no days), at the default half-life (the
    policy also decides which rules are inverted or deprecated: the same log whatever the
    test reads it with): (the open executor, the moments to read, the clock)."""
    ex = open_executor(target, "create")
    run_migrations(ex, [memory_migration(3)])
    clock = Clock()
    small_year(PlaybookStore(ex, migrate=False, clock=clock), clock)
    return ex, moments_of(PlaybookStore(ex, migrate=False, clock=clock), clock), clock


def cost_at(tmp_path: Path, mp: pytest.MonkeyPatch, policy: Policy | None = None) -> int:
    """The raw events the year's moments read when it is migrated and read with `policy`
    (None: the defaults; SQLite)."""
    policy = policy or Policy()
    ex, moments, clock = year_at_schema_3(tmp_path / f"at-{policy.half_life_days:g}.sqlite3")
    try:
        return raw_events_read(PlaybookStore(ex, clock=clock, policy=policy), moments, mp)
    finally:
        ex.close()


def test_the_migration_builds_the_days_at_the_opening_policys_half_life(
    db_target: str | Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A playbook upgraded to step 4 by a process whose policy sets 30 days reads its past
    from the days as one at the default half-life does: no more raw events."""
    baseline = cost_at(tmp_path, monkeypatch)
    ex, moments, clock = year_at_schema_3(db_target)
    try:
        store = PlaybookStore(ex, clock=clock, policy=THIRTY)  # migrates to the latest
        assert store.past.days_answer()
        assert kept_at_another(store, "evidence_days", 30) == 0
        # no more than at 90 (fewer: the rule given its own 30 days inherits from rules
        # read at the default, whose checkpoints then answer it too); 10x more before
        assert raw_events_read(store, moments, monkeypatch) <= baseline
        for moment in moments[::4]:
            same(review.rows_as_of(store, moment), the_logs_table(store, moment, monkeypatch))
        # the evidence cache was kept at 90 by the year's writes: doctor says so, not the days
        (note,) = half_life_notes(db_target, THIRTY)
        assert "11 rules" in note and "(11 in the evidence cache, 0 in its days)" in note
    finally:
        ex.close()


def kept_at_another(store: PlaybookStore, table: str, default: float) -> int:
    """How many rows of `table` (evidence, evidence_days) are kept at another half-life
    than their rule is read with when the default is `default`."""
    return int(
        raw.rows(
            store,
            f"SELECT COUNT(*) FROM {table} e JOIN bullets b ON b.id = e.bullet_id "
            "WHERE e.half_life != COALESCE(b.half_life_days, ?)",
            (default,),
        )[0][0]
    )


def test_a_changed_default_half_life_is_folded_again_by_doctors_fix(
    store: PlaybookStore,
    clock: Clock,
    db_target: str | Path,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A year kept at the default, then read by a team whose policy says 30 days: reads
    are right but take the raw events (and write nothing); doctor says which rules are
    kept at 90; its fix folds them again at 30, and the reads cost what they cost at 90."""
    baseline = cost_at(tmp_path, monkeypatch)
    small_year(store, clock)
    moments = moments_of(store, clock)
    assert raw_events_read(store, moments, monkeypatch) == baseline
    assert half_life_notes(db_target, Policy()) == []

    store.policy = THIRTY
    assert raw_events_read(store, moments, monkeypatch) > 3 * baseline  # the raw events
    assert kept_at_another(store, "evidence_days", 30) > 0  # a read wrote nothing
    assert kept_at_another(store, "evidence", 30) > 0
    ids = [b.id for b in store.bullets()]
    from_the_log = store.evidence.many(ids)  # rows kept at 90: read from the raw events
    notes = half_life_notes(db_target, THIRTY)
    assert len(notes) == 1 and "90" in notes[0] and "doctor --fix" in notes[0]
    assert diagnose(db_target, policy=THIRTY).healthy  # a cache at another half-life is sound

    folded = store.refold()
    assert folded > 0
    assert kept_at_another(store, "evidence_days", 30) == 0
    assert kept_at_another(store, "evidence", 30) == 0
    # what the same log costs migrated at 30 days: no more than at 90 (the migration's test)
    assert raw_events_read(store, moments, monkeypatch) == cost_at(tmp_path, monkeypatch, THIRTY)
    for moment in moments[::4]:
        same(review.rows_as_of(store, moment), the_logs_table(store, moment, monkeypatch))
    for bid, ev in store.evidence.many(ids).items():  # now from the cache, not the log
        assert ev.helpful == pytest.approx(from_the_log[bid].helpful, rel=1e-9, abs=1e-12)
        assert ev.harmful == pytest.approx(from_the_log[bid].harmful, rel=1e-9, abs=1e-12)
    assert half_life_notes(db_target, THIRTY) == []
    assert store.refold() == 0  # nothing left at another half-life


@pytest.mark.sqlite_only
def test_the_cli_migrates_notes_and_fixes_at_the_policys_half_life(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """`migrate` folds the days at --policy's half-life; a read with another policy writes
    nothing; `doctor` notes the rules kept at another (exit 0), `doctor --fix` folds them
    again and says how many."""
    path = tmp_path / "pb.sqlite3"
    year_at_schema_3(path)[0].close()
    thirty = tmp_path / "playbook.toml"
    thirty.write_text("[policy]\nhalf_life_days = 30\n")
    db = ["--db", str(path)]
    assert main([*db, "--policy", str(thirty), "migrate"]) == 0
    with open_store(path, mode="read") as store:
        assert kept_at_another(store, "evidence_days", 30) == 0
    capsys.readouterr()

    before = hashlib.sha256(path.read_bytes()).hexdigest()
    assert main([*db, "--policy", str(thirty), "diff", "--since", "60d", "--json"]) == 0
    capsys.readouterr()
    assert main([*db, "--policy", str(thirty), "doctor", "--json"]) == 0
    assert hashlib.sha256(path.read_bytes()).hexdigest() == before  # reads: nothing written
    (note,) = json.loads(capsys.readouterr().out)["data"]["notes"]
    assert "kept at a half-life of 90 days" in note  # the cache the year's writes kept

    assert main([*db, "--policy", str(thirty), "doctor", "--fix"]) == 0
    text = capsys.readouterr().out
    assert "folded again: the evidence of 11 rules" in text and "notes:" not in text
    assert main([*db, "doctor", "--json"]) == 0  # at the default it is now kept at 30
    assert "30 days" in json.loads(capsys.readouterr().out)["data"]["notes"][0]


@pytest.mark.postgres
def test_pg_roles_run_again_with_a_new_default_folds_the_evidence_again(
    pg_url: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """`pg roles` writes the policy's constants into the database's own fold; run with a
    new default half-life, it folds the evidence kept at the old one again in the same
    transaction, so the agents' folds and the cache agree from then on."""
    clock = Clock()
    with open_store(pg_url, clock=clock) as owner:
        small_year(owner, clock, seed=4)
    schema = pg_url.rsplit("search_path%3D", 1)[1]
    thirty = tmp_path / "playbook.toml"
    thirty.write_text("[policy]\nhalf_life_days = 30\n")
    roles = ["pg", "roles", "--agent", f"{schema}_agent", "--human", f"{schema}_human"]
    assert main(["--db", pg_url, *roles, "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["data"]["folded_again"] == 0  # at the default
    assert main(["--db", pg_url, "--policy", str(thirty), *roles]) == 0
    assert "folded again at this policy's half-life" in capsys.readouterr().out
    with open_store(pg_url, THIRTY, mode="read") as store:
        assert kept_at_another(store, "evidence", 30) == 0
        assert kept_at_another(store, "evidence_days", 30) == 0
    assert half_life_notes(pg_url, THIRTY) == []
