"""The team-year generator (bench/year_world.py) on a small year: what it writes is a
playbook the engine could hold (doctor healthy; the evidence cache equal to the log folded
independently; no rung a pass would move), the same row for row on both backends.

The team-year itself (100k rules, 10M events) is a bench (`bench/team_year.py`), never a
test: this year has 300 rules and 6,000 marks over 40 days, and builds in about a second.
"""

from __future__ import annotations

import json
import shutil
import sys
from datetime import timedelta
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "bench"))
import year_verify
import year_world
from year_plan import Spec

from playbook.store import diagnose, open_store
from playbook.store.copying import TABLES

from .helpers import pg as pg_support
from .helpers.pg_catalog import catalog, fresh

SMALL = Spec(rules=300, events=6_000, sessions=40, days=40, seed=7)
END = SMALL.start + timedelta(days=SMALL.days)


def build(target: str | Path) -> dict[str, int]:
    return year_world.build(target, SMALL)


# The year is built once a module on each backend (a second on SQLite, a few on PostgreSQL)
# and only read afterwards; the test that changes it works on a copy.
Year = tuple[str | Path, dict[str, int]]


@pytest.fixture(scope="module")
def sqlite_year(tmp_path_factory: pytest.TempPathFactory) -> Year:
    path = tmp_path_factory.mktemp("year") / "year.sqlite3"
    return path, build(path)


@pytest.fixture(scope="module")
def pg_year(pg_server: str, worker_id: str) -> Year:
    target = pg_support.fresh_target(pg_server, worker_id)
    return target, build(target)


@pytest.fixture
def year(backend: str, request: pytest.FixtureRequest) -> Year:
    return request.getfixturevalue("sqlite_year" if backend == "sqlite" else "pg_year")


def test_a_small_year_is_what_the_engine_would_hold(year: Year) -> None:
    db_target, counts = year
    assert diagnose(db_target).healthy
    with open_store(db_target, mode="read", clock=lambda: END) as store:
        assert year_verify.verify(store) == []
        assert counts["feedback events"] == SMALL.events
        folded = counts.get("curate add: folded", 0)  # an add folded into a rule votes for it
        assert store.event_count() == SMALL.events + folded
        # every kind of history the year promises happened, through the engine
        assert counts["inversions"] >= 1
        assert counts["curate replace: applied"] >= 1
        assert counts["curate merge: applied"] >= 1
        assert counts["curate deprecate: applied"] >= 1
        assert counts["curate add: conflict"] >= 1
        assert counts["curate add: refused-blocked"] >= 1
        assert counts["proposals approved"] >= 1 and counts["proposals rejected"] >= 1
        assert store.conflicts(include_resolved=True)
        assert len(store.blocked()) == counts["blocks"]
        receipts = store.sql.scalar("SELECT COUNT(*) FROM receipts")
        outcomes = store.sql.scalar("SELECT COUNT(*) FROM decisions WHERE action = 'outcome'")
        assert receipts == outcomes > 0
        votes = store.sql.scalar(
            "SELECT COUNT(*) FROM decisions WHERE action IN ('helpful', 'harmful')"
        )
        marks = store.sql.scalar("SELECT COUNT(*) FROM feedback WHERE receipt IS NULL")
        assert votes == marks - folded  # a fold's vote is logged as the add's decision
        moved = store.sql.scalar("SELECT COUNT(*) FROM maturity_log WHERE maturity != 'candidate'")
        assert moved > 0  # the maturity pass ran on the marks, and moved rules


def test_verify_finds_a_cache_that_disagrees_with_the_log(
    sqlite_year: Year, tmp_path: Path
) -> None:
    path = tmp_path / "year.sqlite3"
    source = Path(sqlite_year[0])
    for suffix in ("", "-wal"):  # the file as it is on disk, its log included
        if source.with_name(source.name + suffix).exists():
            shutil.copyfile(source.with_name(source.name + suffix), f"{path}{suffix}")
    with open_store(path, clock=lambda: END) as store:
        bid = store.sql.scalar("SELECT bullet_id FROM evidence ORDER BY count DESC LIMIT 1")
        with store.transaction():
            store.sql.execute(
                "UPDATE evidence SET helpful = helpful * 1.001 WHERE bullet_id = ?", (bid,)
            )
        problems = year_verify.verify(store)
    assert any(p.startswith(f"{bid}: cache H=") for p in problems)


@pytest.mark.postgres
def test_the_same_year_on_both_backends(sqlite_year: Year, pg_year: Year) -> None:
    (path, lite_counts), (pg_url, pg_counts) = sqlite_year, pg_year
    assert lite_counts == pg_counts
    with open_store(path, mode="read") as lite, open_store(pg_url, mode="read") as pg:
        for table, (columns, key) in TABLES.items():
            if table == "meta":
                continue  # what each backend notes of itself
            select = f"SELECT {', '.join(columns)} FROM {table} ORDER BY {', '.join(key)}"
            rows = [tuple(r) for r in lite.sql.all(select)]
            assert rows == [tuple(r) for r in pg.sql.all(select)], table
            assert rows or table in ("cache_blob",), table


@pytest.mark.postgres
def test_the_postgresql_year_has_the_catalog_of_a_new_playbook(
    pg_year: Year, pg_server: str, worker_id: str
) -> None:
    """Its foreign keys, set aside while it was written (`store/postgres/loading.py`),
    were made again at its end, each validated over every row; its checks stayed."""
    assert catalog(str(pg_year[0])) == catalog(fresh(pg_server, worker_id))


def test_a_vote_decision_is_written_as_log_decision_writes_it() -> None:
    cases = [
        (0, "helpful", "b-0001", None, None),
        (3, "helpful", "b-0002", None, "pytest flaky"),
        (1, "harmful", "b-0003", "wasted_time", None),
        (5, "harmful", "b-0004", "outdated", "n+1 utf-8"),
    ]
    for index, kind, bid, reason, context in cases:
        delta = {"type": kind, "bullet_id": bid, "reason": reason, "context": context}
        delta = {k: v for k, v in delta.items() if v is not None}
        expected = json.dumps({"index": index, "delta": delta}, ensure_ascii=False)
        assert year_world.vote_detail(index, kind, bid, reason, context) == expected
