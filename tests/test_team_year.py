"""The team-year generator (bench/year_world.py) on a small year: what it writes is a
playbook the engine could hold (doctor healthy; the evidence cache equal to the log folded
independently; no rung a pass would move), the same row for row on both backends.

The team-year itself (100k rules, 10M events) is a bench (`bench/team_year.py`), never a
test: this year has 300 rules and 6,000 marks over 40 days, and builds in about a second.
"""

from __future__ import annotations

import json
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

SMALL = Spec(rules=300, events=6_000, sessions=40, days=40, seed=7)
END = SMALL.start + timedelta(days=SMALL.days)


def build(target: str | Path) -> dict[str, int]:
    return year_world.build(target, SMALL)


def test_a_small_year_is_what_the_engine_would_hold(db_target: str | Path) -> None:
    counts = build(db_target)
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


def test_verify_finds_a_cache_that_disagrees_with_the_log(tmp_path: Path) -> None:
    path = tmp_path / "year.sqlite3"
    build(path)
    with open_store(path, clock=lambda: END) as store:
        bid = store.sql.scalar("SELECT bullet_id FROM evidence ORDER BY count DESC LIMIT 1")
        with store.transaction():
            store.sql.execute(
                "UPDATE evidence SET helpful = helpful * 1.001 WHERE bullet_id = ?", (bid,)
            )
        problems = year_verify.verify(store)
    assert any(p.startswith(f"{bid}: cache H=") for p in problems)


@pytest.mark.postgres
def test_the_same_year_on_both_backends(tmp_path: Path, pg_url: str) -> None:
    path = tmp_path / "year.sqlite3"
    assert build(path) == build(pg_url)
    with open_store(path, mode="read") as lite, open_store(pg_url, mode="read") as pg:
        for table, (columns, key) in TABLES.items():
            if table == "meta":
                continue  # what each backend notes of itself
            select = f"SELECT {', '.join(columns)} FROM {table} ORDER BY {', '.join(key)}"
            rows = [tuple(r) for r in lite.sql.all(select)]
            assert rows == [tuple(r) for r in pg.sql.all(select)], table
            assert rows or table in ("cache_blob",), table


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
