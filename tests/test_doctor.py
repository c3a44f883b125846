"""A damaged playbook: every command that meets the damage says so and points to
`playbook doctor`, which checks the file without writing and explains how to recover."""

from __future__ import annotations

import hashlib
import json
import sqlite3
from pathlib import Path

import pytest

from playbook.cli import main
from playbook.curation import curate
from playbook.store import MEMORY_LATEST, diagnose, open_store
from playbook.store import testing as raw

from .helpers import Clock

# SQLite only, on purpose: damaged pages of a file.
pytestmark = pytest.mark.sqlite_only


def sha(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def playbook_with_history(path: Path) -> list[str]:
    with open_store(path, clock=Clock()) as store:
        r = curate(
            store, [{"type": "add", "content": f"Run check{i} before pytest"} for i in range(40)]
        )
        for bid in r.added[:5]:
            store.add_feedback(bid, "helpful")
    conn = sqlite3.connect(path)
    conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    conn.close()
    return r.added


@pytest.fixture
def damaged(tmp_path: Path) -> Path:
    path = tmp_path / "pb.sqlite3"
    playbook_with_history(path)
    raw.damage_table(path, "bullets")
    return path


@pytest.mark.parametrize("args", [["recall", "pytest"], ["stats"], ["add", "A new rule"]])
def test_a_command_that_meets_damage_points_to_doctor(
    damaged: Path, args: list[str], capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["--db", str(damaged), *args, "--json"]) == 3
    out, err = capsys.readouterr()
    error = json.loads(out)["error"]
    assert error["code"] == "database_damaged"
    assert "is damaged" in error["message"] and "playbook doctor" in error["hint"]
    assert err.count("\n") == 1 and "playbook doctor" in err


def test_doctor_finds_the_damaged_table_and_explains_recovery(
    damaged: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    digest = sha(damaged)
    assert main(["--db", str(damaged), "doctor", "--json"]) == 3
    out, _ = capsys.readouterr()
    report = json.loads(out)["data"]
    assert report["healthy"] is False and report["sqlite"] and report["playbook"]
    assert "table bullets: damaged" in report["problems"]
    assert report["readable"]["bullets"] == "0 rows, then a damaged page"
    assert report["readable"]["feedback"] == 5  # the log is on other pages: it still reads
    steps = " ".join(report["recovery"])
    assert "export" in steps and "restore" in steps and "copy the file first" in steps
    assert main(["--db", str(damaged), "doctor"]) == 3
    text, _ = capsys.readouterr()
    assert "table bullets: damaged" in text and "to recover:" in text
    assert sha(damaged) == digest  # doctor only reads
    wal = damaged.with_name("pb.sqlite3-wal")  # a reader's empty WAL at most
    assert not wal.exists() or wal.stat().st_size == 0


def test_doctor_on_a_sound_playbook(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "pb.sqlite3"
    playbook_with_history(path)
    assert main(["--db", str(path), "doctor", "--json"]) == 0
    report = json.loads(capsys.readouterr().out)["data"]
    assert report["healthy"] is True and report["problems"] == [] and report["recovery"] == []
    assert report["schema_version"] == MEMORY_LATEST
    assert report["readable"]["bullets"] == 40 and report["readable"]["feedback"] == 5


def test_doctor_on_files_that_are_not_playbooks(tmp_path: Path) -> None:
    text = tmp_path / "notes.txt"
    text.write_bytes(b"my notes\n" * 500)
    report = diagnose(text)
    assert not report.healthy and not report.sqlite
    assert "not a usable SQLite database" in report.problems[0]
    other = tmp_path / "other.db"
    conn = sqlite3.connect(other)
    conn.execute("CREATE TABLE invoices (id INTEGER PRIMARY KEY)")
    conn.commit()
    conn.close()
    report = diagnose(other)
    assert report.sqlite and not report.playbook and not report.healthy
    assert report.problems == [] and "playbook init" in report.recovery[0]


def test_full_looks_every_row_up_in_its_indexes(tmp_path: Path) -> None:
    """The quick check reads each page once and counts each index's entries; an index whose
    entries name other rows (its definition edited behind SQLite's back) passes it, and
    only `--full` (SQLite's integrity_check) finds it. Neither writes."""
    path = tmp_path / "pb.sqlite3"
    playbook_with_history(path)
    conn = sqlite3.connect(path)
    conn.execute("PRAGMA writable_schema = ON")
    conn.execute(
        "UPDATE sqlite_master SET sql = 'CREATE INDEX bullets_state ON bullets(maturity, state)' "
        "WHERE name = 'bullets_state'"
    )
    conn.commit()
    conn.close()
    before = sha(path)
    assert diagnose(path).healthy
    full = diagnose(path, full=True)
    assert not full.healthy and any("bullets_state" in p for p in full.problems), full.problems
    assert main(["--db", str(path), "doctor", "--full"]) == 3
    assert sha(path) == before
