"""restore, conflicts and resolve at the command line (what the workbench also offers)."""

from __future__ import annotations

from pathlib import Path

import pytest

from playbook.curation import curate
from playbook.store import open_store

from .helpers.cli import assert_user_error, run_cli


@pytest.fixture
def pair(tmp_path: Path) -> tuple[Path, int, str, str]:
    db = tmp_path / "pb.sqlite3"
    with open_store(db) as store:
        always = curate(store, [{"type": "add", "content": "Always run migrations in CI"}])
        never = curate(store, [{"type": "add", "content": "Never run migrations in CI"}])
        for _ in range(3):
            store.add_feedback(always.added[0], "harmful", reason="caused_bug")
        (c,) = store.conflicts()
    return db, c.id, never.added[0], always.added[0]


def test_conflicts_lists_both_sides(pair) -> None:
    db, cid, never, always = pair
    (item,) = run_cli("conflicts", "--json", db=db).data
    assert (item["id"], item["a"]["id"], item["b"]["id"]) == (cid, never, always)
    assert item["b"]["score"]["harmful"] == pytest.approx(3.0, rel=1e-5)  # seconds of decay
    text = run_cli("conflicts", db=db).out
    assert f"conflict {cid}: opposite polarity to {always}" in text
    assert f"  b {always}  candidate" in text and "Always run migrations in CI" in text


def test_resolve_keep_then_again(pair) -> None:
    db, cid, _, _ = pair
    r = run_cli("resolve", str(cid), "keep", "--json", db=db)
    assert r.data["resolution"] == "kept both"
    assert run_cli("conflicts", "--json", db=db).data == []
    (resolved,) = run_cli("conflicts", "--all", "--json", db=db).data
    assert resolved["status"] == "resolved"
    again = run_cli("resolve", str(cid), "keep", "--json", db=db)
    assert "already resolved" in assert_user_error(again, "invalid_input")["message"]
    missing = run_cli("resolve", "999", "keep", "--json", db=db)
    assert assert_user_error(missing, "not_found")["message"] == "no conflict with id 999"


def test_resolve_deprecate_one_side(pair) -> None:
    db, cid, _, always = pair
    usage = run_cli("resolve", str(cid), "deprecate", "--bullet", always, db=db)
    assert usage.rc == 2 and usage.err == "playbook: error: deprecate needs --reason\n"
    r = run_cli("resolve", str(cid), "deprecate", "-b", always, "-r", "we migrate at deploy",
                "--json", db=db)  # fmt: skip
    assert r.data["resolution"] == f"deprecated {always}"
    shown = run_cli("show", always, "--json", db=db).data
    assert shown["bullet"]["maturity"] == "deprecated"
    assert shown["conflicts"][0]["resolution"] == f"deprecated {always}"


def test_resolve_merge_carries_no_flipped_evidence_and_no_pin_unless_asked(pair) -> None:
    db, cid, never, always = pair
    assert run_cli("pin", always, "-r", "team rule", db=db).rc == 0
    r = run_cli("resolve", str(cid), "merge", "-c", "Never run migrations from CI jobs",
                "--json", db=db)  # fmt: skip
    new = r.data["bullet_id"]
    shown = run_cli("show", new, "--json", db=db).data
    assert shown["score"]["harmful"] == 0.0 and shown["bullet"]["pinned"] is False
    kinds = {e["id"]: e["kind"] for e in shown["lineage"]["predecessors"]}
    assert kinds == {always: "inverts", never: "supersedes"}
    text = run_cli("show", new, db=db).out
    assert f"inverts {always}" in text and f"supersedes {never}" in text


def test_resolve_merge_with_keep_pin(pair) -> None:
    db, cid, never, _ = pair
    assert run_cli("pin", never, "-r", "agreed", db=db).rc == 0
    r = run_cli("resolve", str(cid), "merge", "-c", "Never migrate in CI", "--keep-pin",
                "--json", db=db)  # fmt: skip
    shown = run_cli("show", r.data["bullet_id"], "--json", db=db).data
    assert shown["bullet"]["pinned"] is True and shown["bullet"]["pinned_reason"] == "agreed"


def test_restore(pair) -> None:
    db, _, never, _ = pair
    assert run_cli("mark", never, "helpful", db=db).rc == 0
    not_yet = run_cli("restore", never, "--json", db=db)
    assert "not deprecated" in assert_user_error(not_yet, "invalid_input")["message"]
    with open_store(db) as store:
        curate(store, [{"type": "deprecate", "bullet_id": never, "reason": "x"}], actor="human")
    r = run_cli("restore", never, "-r", "rolled back", "--json", db=db)
    assert (r.data["from"], r.data["to"]) == ("deprecated", "candidate")
    assert run_cli("restore", never, db=db).err.startswith("playbook: error: ")
    text = run_cli("show", never, db=db).out
    assert "candidate" in text.splitlines()[0]
