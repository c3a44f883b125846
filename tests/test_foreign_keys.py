"""doctor's foreign-key check (`store/sqlite/foreign_keys.py`) finds what SQLite's own
`PRAGMA foreign_key_check` finds, row for row, on a playbook whose keys were broken
behind its back (written with the foreign keys off)."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest

from playbook.curation import curate
from playbook.store import open_store
from playbook.store.sqlite.foreign_keys import foreign_key_problems

from .helpers import Clock

pytestmark = pytest.mark.sqlite_only


def _broken(path: Path) -> sqlite3.Connection:
    with open_store(path, clock=Clock()) as store:
        r = curate(
            store, [{"type": "add", "content": f"Run check{i} before pytest"} for i in range(6)]
        )
        for bid in r.added:
            store.add_feedback(bid, "helpful")
    conn = sqlite3.connect(path)
    conn.execute("PRAGMA foreign_keys = OFF")
    at = "2026-03-01T12:00:00.000000Z"
    event = "INSERT INTO feedback (bullet_id, kind, at, recorded_at) VALUES (?, 'helpful', ?, ?)"
    for bid in ["b-gone0001"] * 3 + ["b-gone0002"]:  # a missing rule, three events; another
        conn.execute(event, (bid, at, at))
    conn.execute(
        "INSERT INTO edges (kind, src, dst, at) VALUES ('supersedes', ?, 'b-gone0003', ?)",
        (r.added[0], at),
    )
    edge = "INSERT INTO edges (kind, src, dst, at) VALUES ('supersedes', ?, ?, ?)"
    conn.execute(edge, ("b-gone0004", "b-gone0005", at))
    conn.execute("INSERT INTO bullet_tags (tag, seq) VALUES ('ci', 99999)")
    conn.commit()
    return conn


def test_the_same_rows_as_the_pragma(tmp_path: Path) -> None:
    conn = _broken(tmp_path / "p.sqlite3")
    pragma = [tuple(r) for r in conn.execute("PRAGMA foreign_key_check")]
    assert len(pragma) == 8  # 4 events, 1 + 2 edge ends, 1 tag
    assert sorted(foreign_key_problems(conn)) == sorted(pragma)


def test_a_sound_playbook_has_none(tmp_path: Path) -> None:
    path = tmp_path / "p.sqlite3"
    with open_store(path, clock=Clock()) as store:
        curate(store, [{"type": "add", "content": "Run pytest with -x"}])
    conn = sqlite3.connect(path)
    assert foreign_key_problems(conn) == [] == conn.execute("PRAGMA foreign_key_check").fetchall()
