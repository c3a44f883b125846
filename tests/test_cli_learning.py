"""The learning commands run as a real `playbook` process: stdout JSON, stderr, exit codes.

Set-up and checks of the database go through the API in this process; only the command
under test runs as a subprocess (each costs a fresh interpreter).
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import pytest

from playbook.review.queue import count_pending, list_proposals, pending, reject, stage

from .helpers import store_at
from .helpers.cli import Result, run_cli


def add_bullets(path: Path, *contents: str) -> list[str]:
    with store_at(path) as store:
        return [store.insert_bullet(c).id for c in contents]


FIXTURES = Path(__file__).parent / "fixtures"
FAKE_MODEL = FIXTURES / "fake_model.py"

NOTES = b"Fixed the release job.\n\nRULE: Pin npm to 11 in release jobs #ci\n\nAVOID: sudo npm ci\n"


@pytest.fixture
def db(tmp_path: Path) -> Path:
    path = tmp_path / "state.sqlite3"
    with store_at(path):
        pass
    return path


@pytest.fixture
def cli(db: Path) -> Any:
    def run(*args: str, stdin: str | None = None) -> Result:
        r = run_cli(*args, db=db, stdin=None if stdin is None else stdin.encode())
        assert "Traceback" not in r.err, r.err
        return r

    return run


@pytest.fixture
def notes(tmp_path: Path) -> Path:
    path = tmp_path / "notes.md"
    path.write_bytes(NOTES)
    return path


def test_reflect_stage_review_approve_and_reject(cli: Any, db: Path, notes: Path) -> None:
    (existing,) = add_bullets(db, "Pin the npm version in release jobs")
    r = cli("reflect", str(notes), "--session", "s1", "--json")
    assert r.rc == 0 and r.err == ""
    data = r.data
    assert data["stopped"] == "nothing-new"
    assert (data["watermark_before"], data["watermark_after"]) == (0, len(NOTES))
    rule, avoid = data["staged"]

    listed = cli("proposals", "--json").data
    assert listed["pending"] == 2
    first = listed["proposals"][0]
    assert first["id"] == rule
    assert first["provenance"] == {
        "session_ref": "s1",
        "byte_offset": NOTES.index(b"RULE:"),
    }
    assert [(s["bullet_id"], s["similarity"]) for s in first["similar"]] == [
        (existing, round(5 / 9, 4))
    ]
    human = cli("proposals")
    assert human.rc == 0
    assert f"{rule}  add  (reflection)  from s1 @ byte {NOTES.index(b'RULE:')}" in human.out
    assert f"similar 0.56  {existing} [active/candidate] Pin the npm version" in human.out
    assert human.out.rstrip().endswith("2 pending")

    approved = cli("approve", rule, "--edit", "Pin npm to 11 in every release job", "--json")
    assert approved.rc == 0
    new_id = approved.data["result"]["added"][0]

    rejected = cli("reject", avoid, "--reason", "too vague", "--block", "--json")
    assert rejected.rc == 0 and rejected.data["block_id"].startswith("p-")

    with store_at(db) as store:
        bullet = store.get_bullet(new_id)
        assert bullet is not None
        assert bullet.content == "Pin npm to 11 in every release job"
        assert bullet.provenance.model_dump() == {
            "session_ref": "s1",
            "byte_offset": NOTES.index(b"RULE:"),
        }
        (blocked,) = store.blocked()
        assert (blocked.pattern, blocked.reason) == ("AVOID: sudo npm ci", "too vague")
        assert [p.status for p in list_proposals(store)] == ["approved", "rejected"]
        assert store.watermark("s1") == len(NOTES)


def test_reflect_apply_with_a_command_reflector(cli: Any, db: Path, notes: Path) -> None:
    cmd = f"{sys.executable} {FAKE_MODEL} echo"
    r = cli("reflect", str(notes), "--session", "s2", "--reflector", cmd, "--apply")
    assert r.rc == 0, r.err
    assert "stopped: nothing-new" in r.out
    assert "added b-" in r.out  # "Quantum marmalade…" curated at once
    assert "rejected (iteration 1): offset: unknown field" in r.out
    with store_at(db) as store:
        assert count_pending(store) == 0
        assert [b.content for b in store.bullets()] == [
            "Quantum marmalade has nothing to do with it"
        ]


def test_user_errors_are_one_plain_line_and_exit_1(
    cli: Any, db: Path, notes: Path, tmp_path: Path
) -> None:
    missing = cli("reflect", str(tmp_path / "nope.md"), "--session", "s")
    assert missing.rc == 1 and missing.out == ""
    assert missing.err == f"playbook: error: no such diary file: {tmp_path / 'nope.md'}\n"

    failing = cli("reflect", str(notes), "--session", "s", "--reflector", "false", "--json")
    assert failing.rc == 1
    assert failing.json["error"]["code"] == "reflector_failed"
    assert failing.err.count("\n") == 1 and "false exited with status 1" in failing.err
    with store_at(db) as store:
        assert store.watermark("s") == 0 and count_pending(store) == 0

    unknown = cli("approve", "d-nothere", "--json")
    assert unknown.rc == 1
    assert unknown.json == {
        "ok": False,
        "error": {
            "code": "not_found",
            "message": "no proposal with id 'd-nothere'",
            "hint": "see 'playbook proposals'",
        },
    }
    assert unknown.err == (
        "playbook: error: no proposal with id 'd-nothere' (see 'playbook proposals')\n"
    )

    both = cli("reflect", str(notes), "--session", "t", "--heuristic", "--reflector", "x")
    assert both.rc == 2 and "choose one of" in both.err
    blank = cli("reflect", str(notes), "--session", " ")
    assert blank.rc == 2 and blank.err == "playbook: error: --session needs a session ref\n"


def test_approve_of_a_decided_proposal_fails(cli: Any, db: Path) -> None:
    with store_at(db) as store:
        (pid,) = stage(store, [{"type": "add", "content": "Pin npm"}]).staged
        reject(store, pid, "no")
    again = cli("approve", pid)
    assert again.rc == 1 and again.out == ""
    assert again.err == (
        f"playbook: error: proposal {pid} is already rejected (see 'playbook proposals')\n"
    )


def test_outcome_command(cli: Any, db: Path) -> None:
    (a,) = add_bullets(db, "Pin npm to 11")
    r = cli("outcome", "partial", a, a, "b-missing", "--receipt", "t1", "--json")
    assert r.rc == 0
    assert r.data["applied"] == [a]
    assert (r.data["skipped"], r.data["duplicate_citations"]) == (["b-missing"], 1)
    with store_at(db) as store:
        (event,) = store.timeline(a)
        assert (event.kind, event.weight, event.receipt) == ("helpful", pytest.approx(1 / 3), "t1")
    replay = cli("outcome", "partial", a, "--receipt", "t1")
    assert replay.rc == 0 and "already recorded: nothing applied" in replay.out
    bad = cli("outcome", "maybe", a)
    assert bad.rc == 1
    assert bad.err == "playbook: error: expected success, failure or partial, not 'maybe'\n"


def test_topics_command(cli: Any, db: Path) -> None:
    a, b = add_bullets(
        db, "Pin npm to 11 in release jobs", "Pin npm version to 11 in the release jobs"
    )
    found = cli("topics", "--json").data
    assert [t["bullet_ids"] for t in found["topics"]] == [[a, b]]
    assert "staged" not in found
    human = cli("topics", "--stage")
    assert human.rc == 0
    assert human.out.splitlines() == [
        "topic 1: 2 bullets, similarity 0.78",
        f"   {a} Pin npm to 11 in release jobs",
        f" * {b} Pin npm version to 11 in the release jobs",
        "1 topic",
        "staged 1 merge; 0 already proposed",
    ]
    with store_at(db) as store:
        (proposal,) = pending(store)
        assert proposal.origin == "consolidation"
        assert proposal.delta["bullet_ids"] == [a, b]


def test_a_stale_proposal_is_shown_as_stale_and_cannot_be_approved(cli: Any, db: Path) -> None:
    (old,) = add_bullets(db, "Run the linter before committing")
    with store_at(db) as store:
        (pid,) = stage(store, [{"type": "helpful", "bullet_id": old}]).staged
        store.retire(old)
    listed = cli("proposals")
    assert f"on {old} [retired/candidate]" in listed.out
    assert f"STALE: its target {old} was retired; approving it will fail" in listed.out
    (p,) = cli("proposals", "--json").data["proposals"]
    assert p["stale"] == f"its target {old} was retired" and p["targets"][0]["state"] == "retired"
    r = cli("approve", pid, "--json")
    assert r.rc == 1 and r.json["error"]["code"] == "stale_proposal"
    assert r.err.startswith(f"playbook: error: proposal {pid} is stale: its target {old}")
    assert r.err.count("\n") == 1
