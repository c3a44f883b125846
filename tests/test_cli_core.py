"""init, add, mark, curate, show and recall as a real `playbook` process."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest

from .helpers.cli import Result, run_cli


def run(db: Path, *args: str, stdin: str | None = None) -> Result:
    return run_cli(*args, db=db, stdin=None if stdin is None else stdin.encode())


def data(proc: Result) -> Any:
    assert proc.rc == 0, proc.err
    doc = json.loads(proc.out)
    assert doc["ok"] is True
    return doc["data"]


def test_init_add_mark_show_recall_round(tmp_path: Path) -> None:
    db = tmp_path / "nested" / "pb.sqlite3"
    assert data(run(db, "init", "--json"))["path"] == str(db)
    added = data(run(db, "add", "Pin npm to 11 in release jobs", "--tag", "ci", "--json"))
    bid = added["added"][0]
    for _ in range(5):
        data(run(db, "mark", bid, "helpful", "--json"))
    marked = data(run(db, "mark", bid, "harmful", "--reason", "wasted_time", "--json"))
    assert marked["outcomes"][0]["status"] == "applied"
    before = datetime.now(UTC)
    shown = data(run(db, "show", bid, "--json"))
    after = datetime.now(UTC)
    assert [e["kind"] for e in shown["timeline"]] == ["helpful"] * 5 + ["harmful"]
    assert shown["timeline"][-1]["reason"] == "wasted_time"
    assert shown["bullet"]["maturity"] == "established"  # score 5 - 4 * 1 > 0
    # Five helpful marks, decayed (90-day half-life) from their times to the moment `show`
    # scored them, somewhere between `before` and `after`: on a busy machine the seconds the
    # commands take are enough to move the sum past a fixed 1e-6.
    marks = [datetime.fromisoformat(e["at"]) for e in shown["timeline"][:5]]

    def helpful_at(t: datetime) -> float:
        return sum(0.5 ** ((t - m).total_seconds() / (90 * 86400)) for m in marks)

    assert helpful_at(after) - 1e-9 <= shown["score"]["helpful"] <= helpful_at(before) + 1e-9
    assert shown["score"]["helpful"] == pytest.approx(5, rel=1e-3)
    found = data(run(db, "recall", "npm release", "--json"))
    assert [i["bullet"]["id"] for i in found["bullets"]] == [bid]
    assert found["bullets"][0]["keyword_score"] == 6  # npm 3 + release 3; tag ci not asked
    human = run(db, "recall", "npm release")
    assert human.rc == 0 and bid in human.out and "Rules:" in human.out


def test_curate_from_stdin_reports_each_delta(tmp_path: Path) -> None:
    db = tmp_path / "pb.sqlite3"
    batch = [{"type": "add", "content": "Run ruff before committing"}, {"type": "nope"}]
    out = data(run(db, "curate", "-", "--session", "s:1", "--offset", "12", "--json",
                   stdin=json.dumps(batch)))  # fmt: skip
    assert [o["status"] for o in out["outcomes"]] == ["added", "rejected-invalid"]
    shown = data(run(db, "show", out["added"][0], "--json"))
    assert shown["bullet"]["provenance"] == {"session_ref": "s:1", "byte_offset": 12}


@pytest.mark.parametrize(
    ("args", "stdin", "code", "needle"),
    [
        (("mark", "b-00000000", "helpful"), None, 1, "no bullet with id 'b-00000000'"),
        (("show", "b-00000000"), None, 1, "no bullet with id"),
        (("curate", "-"), "{not json", 1, "not valid JSON"),
        (("curate", "missing.json"), None, 1, "no such file"),
        (("mark", "b-1", "sideways"), None, 1, "expected helpful or harmful"),
        (("frobnicate",), None, 2, "No such command"),
    ],
)
def test_user_errors_are_one_plain_line(
    tmp_path: Path, args: tuple[str, ...], stdin: str | None, code: int, needle: str
) -> None:
    db = tmp_path / "pb.sqlite3"
    run(db, "init")
    proc = run(db, *args, stdin=stdin)
    assert proc.rc == code
    assert needle in proc.err
    assert "Traceback" not in proc.err


def test_json_errors_have_a_stable_code(tmp_path: Path) -> None:
    db = tmp_path / "pb.sqlite3"
    run(db, "init")
    proc = run(db, "mark", "b-00000000", "helpful", "--json")
    assert proc.rc == 1
    doc = json.loads(proc.out)
    assert doc["ok"] is False and doc["error"]["code"] == "not_found"


def test_reading_a_missing_database_is_a_user_error(tmp_path: Path) -> None:
    proc = run(tmp_path / "absent.sqlite3", "show", "b-1")
    assert proc.rc == 1 and "no playbook at" in proc.err
    assert not (tmp_path / "absent.sqlite3").exists()


def test_not_a_database_exits_3(tmp_path: Path) -> None:
    bogus = tmp_path / "bogus.sqlite3"
    bogus.write_bytes(b"\x00garbage" * 512)
    proc = run(bogus, "show", "b-1")
    assert proc.rc == 3 and "not a usable SQLite database" in proc.err
    assert proc.err.count("\n") == 1 and "Traceback" not in proc.err


def test_database_location_falls_back_to_env_then_xdg(tmp_path: Path) -> None:
    env = {k: v for k, v in os.environ.items() if k != "PLAYBOOK_DB"}
    env["XDG_DATA_HOME"] = str(tmp_path / "xdg")
    cmd = [sys.executable, "-c", "from playbook.cli import run; run()", "init", "--json"]
    out = subprocess.run(cmd, capture_output=True, text=True, env=env, check=True)
    assert json.loads(out.stdout)["data"]["path"] == str(tmp_path / "xdg/playbook/state.sqlite3")
    env["PLAYBOOK_DB"] = str(tmp_path / "env.sqlite3")
    out = subprocess.run(cmd, capture_output=True, text=True, env=env, check=True)
    assert json.loads(out.stdout)["data"]["path"] == str(tmp_path / "env.sqlite3")


def test_hostile_content_is_printed_inert(tmp_path: Path) -> None:
    db = tmp_path / "pb.sqlite3"
    bid = data(run(db, "add", "Run \x1b[31mred\x1b[0m tests \u202eevil", "--json"))["added"][0]
    for args in (("show", bid), ("recall", "tests")):
        out = run(db, *args).out
        assert "\x1b" not in out and "\u202e" not in out
        assert "\\x1b[31mred" in out and "\\u202e" in out
