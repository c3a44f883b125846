"""Review that scales (`review.proposal_diff`, `proposal_diffs`, `closest_rules`,
`approve_many`, `reject_many`, the queue's session and type filters) and its commands
(`playbook approve ID...`, `reject ID...`, `proposals --session --type`)."""

from __future__ import annotations

import random
from pathlib import Path

import pytest

from playbook import review
from playbook.review import queue
from playbook.store import PlaybookStore, open_store

from .helpers import Clock, add, dump
from .helpers.cli import assert_user_error, run_cli


def test_proposal_diff_is_word_level_and_keeps_whitespace() -> None:
    assert review.proposal_diff(
        "Pin npm to 11 in release jobs", "Pin npm to 12 in all release jobs"
    ) == [
        ("equal", "Pin npm to "),
        ("delete", "11"),
        ("insert", "12"),
        ("equal", " in"),
        ("insert", " all"),
        ("equal", " release jobs"),
    ]
    # a space between two changed words is part of the change, not kept on its own
    assert review.proposal_diff("use a b c", "use x y z") == [
        ("equal", "use "),
        ("delete", "a b c"),
        ("insert", "x y z"),
    ]
    assert review.proposal_diff("Run  pytest\n-x", "Run pytest\n-x --lf") == [
        ("equal", "Run"),
        ("delete", "  "),
        ("insert", " "),
        ("equal", "pytest\n-x"),
        ("insert", " --lf"),
    ]
    assert review.proposal_diff("same", "same") == [("equal", "same")]
    assert review.proposal_diff("", "new text") == [("insert", "new text")]


@pytest.mark.parametrize("seed", range(20))
def test_proposal_diff_gives_both_texts_back(seed: int) -> None:
    rng = random.Random(seed)
    words = ["npm", "ci", "pin", "the", "release", " ", "  ", "\n", "job", "11"]
    old = "".join(
        rng.choice(words) + rng.choice([" ", "", "\t"]) for _ in range(rng.randint(0, 12))
    )
    new = "".join(rng.choice(words) + rng.choice([" ", ""]) for _ in range(rng.randint(0, 12)))
    ops = review.proposal_diff(old, new)
    assert "".join(t for op, t in ops if op != "insert") == old
    assert "".join(t for op, t in ops if op != "delete") == new
    assert all(op in ("equal", "insert", "delete") and t for op, t in ops)


def test_proposal_diffs_for_replace_and_merge(store: PlaybookStore) -> None:
    a = add(store, "Run pytest -x in CI")
    b = add(store, "Run the linter in CI")
    staged = queue.stage(
        store,
        [
            {"type": "replace", "bullet_id": a, "content": "Run pytest -x --lf in CI"},
            {"type": "merge", "bullet_ids": [a, b], "content": "Run pytest and the linter in CI"},
            {"type": "add", "content": "Cache pip downloads"},
        ],
    ).staged
    rep, mer, new = (queue.get(store, pid) for pid in staged)
    assert review.proposal_diffs(store, rep) == [
        (a, [("equal", "Run pytest -x "), ("insert", "--lf "), ("equal", "in CI")])
    ]
    assert [bid for bid, _ in review.proposal_diffs(store, mer)] == [a, b]
    assert review.proposal_diffs(store, new) == []


def test_closest_rules_name_the_near_duplicates(store: PlaybookStore) -> None:
    near = add(store, "Pin npm to version 11 in release jobs")
    add(store, "Squash commits before merging")
    target = add(store, "Pin npm in release jobs")
    (pid,) = queue.stage(
        store,
        [{"type": "replace", "bullet_id": target, "content": "Pin npm to 11 in release jobs"}],
    ).staged
    p = queue.get(store, pid)
    found = review.closest_rules(store, p)
    assert [s.bullet_id for s in found] == [near]  # its own target is not listed
    assert 0.3 <= found[0].similarity <= 1
    assert review.closest_rules(store, p, k=0) == []
    # the queue's listing (CLI and workbench) uses the same neighbours
    assert [s.bullet_id for s in queue.pending(store)[0].similar] == [near]
    helpful = queue.get(
        store, queue.stage(store, [{"type": "helpful", "bullet_id": near}]).staged[0]
    )
    assert review.closest_rules(store, helpful) == []


# ------------------------------------------------------------------ many at once


def _queue(store: PlaybookStore) -> list[str]:
    return queue.stage(
        store,
        [
            {"type": "add", "content": "Cache pip downloads in CI"},
            {"type": "add", "content": "Use ruff for linting"},
            {"type": "add", "content": "Commit generated files"},
        ],
        provenance={"session_ref": "session:one"},
    ).staged


def test_approve_many_decides_each_on_its_own(store: PlaybookStore) -> None:
    one, two, three = _queue(store)
    queue.reject(store, three, "no")
    out = review.approve_many(store, [one, "d-nope", two, one, three])
    assert [(d.proposal_id, d.ok, d.status, d.code) for d in out] == [
        (one, True, "approved", None),
        ("d-nope", False, "refused", "not_found"),
        (two, True, "approved", None),
        (three, False, "refused", "not_pending"),
    ]
    assert out[0].result is not None and out[0].result.added
    assert {p.id: p.status for p in queue.list_proposals(store)} == {
        one: "approved", two: "approved", three: "rejected"
    }  # fmt: skip
    assert out[3].to_dict()["message"] == f"proposal {three} is already rejected"


def test_reject_many_with_block(store: PlaybookStore) -> None:
    one, two, _ = _queue(store)
    out = review.reject_many(store, [one, two], "not for this repo", block=True)
    assert [d.status for d in out] == ["rejected", "rejected"]
    assert all(d.block_id for d in out) and len(store.blocked()) == 2


def test_many_refuses_an_agent_and_an_empty_reason_before_touching_anything(
    store: PlaybookStore,
) -> None:
    ids = _queue(store)
    before = dump(store)
    with pytest.raises(queue.ApprovalRefused):
        review.approve_many(store, ids, actor="agent")
    with pytest.raises(queue.ApprovalRefused):
        review.reject_many(store, ids, "no", actor="agent")
    with pytest.raises(queue.QueueError, match="needs a reason"):
        review.reject_many(store, ids, "  ")
    assert dump(store) == before


def test_the_queue_filters_by_session_and_type(store: PlaybookStore, clock: Clock) -> None:
    target = add(store, "Pin npm in release jobs")
    _queue(store)
    clock.advance(hours=1)
    other = queue.stage(
        store,
        [
            {"type": "add", "content": "Rebase before merging"},
            {"type": "helpful", "bullet_id": target},
        ],
        provenance={"session_ref": "session:two"},
    ).staged
    assert [p.id for p in queue.list_proposals(store, session="session:two")] == other
    assert [p.id for p in queue.pending(store, delta_type="helpful")] == [other[1]]
    adds = queue.pending(store, delta_type="add", limit=4, similar=False)
    assert len(adds) == 4 and all(p.delta["type"] == "add" for p in adds)
    assert [p.id for p in queue.pending(store, session="session:two", delta_type="add")] == [
        other[0]
    ]
    assert queue.list_proposals(store, session="session:none") == []


# ------------------------------------------------------------------ commands


@pytest.fixture
def queued(tmp_path: Path) -> tuple[Path, list[str], str]:
    path = tmp_path / "state.sqlite3"
    with open_store(path, clock=Clock()) as s:
        target = add(s, "Pin npm to 11 in release jobs")
        ids = _queue(s)
        replace = {
            "type": "replace",
            "bullet_id": target,
            "content": "Pin npm to 12 in release jobs",
        }
        ids += queue.stage(s, [replace], provenance={"session_ref": "session:two"}).staged
    return path, ids, target


def test_cli_approve_several(queued: tuple[Path, list[str], str]) -> None:
    db, ids, _ = queued
    r = run_cli("approve", ids[0], "d-missing", ids[1], "--json", db=db)
    assert r.rc == 0, r.err
    data = r.data
    assert (data["approved"], data["refused"]) == (2, 1)
    assert [(o["proposal"], o["status"], o["code"]) for o in data["outcomes"]] == [
        (ids[0], "approved", None), ("d-missing", "refused", "not_found"),
        (ids[1], "approved", None),
    ]  # fmt: skip
    again = run_cli("approve", ids[0], ids[1], db=db)
    assert again.rc == 1
    assert again.err.strip() == (
        f"playbook: error: none of the 2 proposals was approved: {ids[0]}: not_pending; "
        f"{ids[1]}: not_pending (see 'playbook proposals')"
    )
    both = run_cli("approve", ids[0], ids[1], "--json", db=db)
    err = assert_user_error(both, "nothing_applied")
    assert "none of the 2" in err["message"]
    assert [o["code"] for o in both.json["data"]["outcomes"]] == ["not_pending"] * 2
    usage = run_cli("approve", ids[2], ids[3], "--edit", "x", "--json", db=db)
    assert_user_error(usage, "usage", exit_code=2)


def test_cli_reject_several_and_one(queued: tuple[Path, list[str], str]) -> None:
    db, ids, _ = queued
    r = run_cli("reject", ids[0], ids[1], "-r", "not now", db=db)
    assert r.rc == 0, r.err
    assert r.out.splitlines() == [f"rejected {ids[0]}", f"rejected {ids[1]}",
                                  "rejected 2 of 2 proposals"]  # fmt: skip
    one = run_cli("reject", ids[0], "-r", "again", "--json", db=db)
    assert assert_user_error(one, "not_pending")["hint"] == "see 'playbook proposals'"


def test_cli_proposals_filters_and_word_diff(queued: tuple[Path, list[str], str]) -> None:
    db, ids, target = queued
    r = run_cli("proposals", "--session", "session:one", "--type", "add", "--json", db=db)
    assert r.rc == 0, r.err
    assert [p["id"] for p in r.data["proposals"]] == ids[:3]
    assert r.data["pending"] == 4 and r.data["matching"] == 3
    text = run_cli("proposals", "--type", "replace", db=db)
    assert text.rc == 0, text.err
    assert f"  diff {target}: Pin npm to [-11-]{{+12+}} in release jobs" in text.out.splitlines()
    assert text.out.splitlines()[-1] == "1 of 4 pending match"
    bad = run_cli("proposals", "--type", "bogus", "--json", db=db)
    assert "not a delta type" in assert_user_error(bad, "usage", exit_code=2)["message"]
