"""The review queue: staging, the similar bullets a reviewer sees, approve and reject."""

from __future__ import annotations

from typing import Any

import pytest

from playbook.curation import curate
from playbook.review.queue import (
    ApprovalRefused,
    QueueError,
    StaleProposal,
    approve,
    count_pending,
    get,
    list_proposals,
    pending,
    reject,
    stage,
)
from playbook.store import PlaybookStore

from .helpers import Clock, dump

PROV = {"session_ref": "session:abc", "byte_offset": 4096}


def stage_one(store: PlaybookStore, delta: dict[str, Any], prov: Any = PROV) -> str:
    result = stage(store, [delta], provenance=prov)
    assert result.rejected == [] and len(result.staged) == 1, result
    return result.staged[0]


def add(content: str, **extra: Any) -> dict[str, Any]:
    return {"type": "add", "content": content, **extra}


# ------------------------------------------------------------------------ stage


def test_stage_records_pending_proposals_with_their_provenance(
    store: PlaybookStore, clock: Clock
) -> None:
    pid = stage_one(store, add("Pin npm to 11 in release jobs", tags=["ci"]))
    p = get(store, pid)
    assert p is not None
    assert p.status == "pending" and p.origin == "reflection"
    assert p.delta == {"type": "add", "content": "Pin npm to 11 in release jobs", "tags": ["ci"]}
    assert p.provenance.model_dump() == PROV
    assert p.created_at == clock.t
    assert store.bullets() == []  # staging adds nothing to the playbook


def test_stage_per_item_provenance_overrides_the_default(store: PlaybookStore) -> None:
    from playbook.core.model import Provenance

    result = stage(
        store,
        [add("First"), add("Second")],
        provenance={"session_ref": "s"},
        provenances=[Provenance(session_ref="s", byte_offset=10), None],
    )
    first, second = (get(store, i) for i in result.staged)
    assert first is not None and second is not None
    assert first.provenance.byte_offset == 10
    assert second.provenance.model_dump() == {"session_ref": "s", "byte_offset": None}


def test_stage_rejects_invalid_items_and_items_claiming_provenance(store: PlaybookStore) -> None:
    bullet = store.insert_bullet("Existing")
    store.retire(bullet.id)
    result = stage(
        store,
        [
            add("ok"),
            add("forged", session_ref="elsewhere"),
            {"type": "helpful", "bullet_id": "b-nothere"},
            {"type": "harmful", "bullet_id": bullet.id},
            42,
        ],
    )
    assert len(result.staged) == 1
    assert [i for i, _ in result.rejected] == [1, 2, 3, 4]
    reasons = [r for _, r in result.rejected]
    assert reasons[0].startswith("a delta cannot carry provenance (session_ref)")
    assert reasons[1] == "no bullet with id 'b-nothere'"
    assert reasons[2] == f"bullet {bullet.id} is retired"
    assert reasons[3] == "a delta must be an object, not int"
    assert stage(store, "not a list").rejected == [(0, "proposals must be a list, not str")]


def test_stage_does_not_stage_the_same_delta_twice(store: PlaybookStore) -> None:
    stage_one(store, add("Pin npm to 11"))
    again = stage(
        store, [add("Pin npm to 11"), add("Pin npm to 11")], provenance={"session_ref": "x"}
    )
    assert again.staged == [] and again.duplicates == [0, 1]
    assert count_pending(store) == 1


def test_a_decided_delta_is_not_restaged_from_the_same_place(store: PlaybookStore) -> None:
    pid = stage_one(store, add("Pin npm to 11"))
    reject(store, pid, "not now")
    assert stage(store, [add("Pin npm to 11")], provenance=PROV).duplicates == [0]
    other = stage(store, [add("Pin npm to 11")], provenance={"session_ref": "another session"})
    assert len(other.staged) == 1  # a different session may propose it again


# ------------------------------------------------------------------------ pending


def test_pending_shows_the_nearest_bullets_with_their_similarity(
    store: PlaybookStore, clock: Clock
) -> None:
    near = store.insert_bullet("Pin the npm version in release jobs")
    far = store.insert_bullet("Write the changelog before tagging")
    content = "Pin npm to 11 in release jobs"
    stage_one(store, add(content))
    clock.advance(seconds=1)
    stage_one(store, {"type": "helpful", "bullet_id": far.id})
    first, second = pending(store)
    # shared: pin npm in release jobs (5); either side only: to 11 / the version (4)
    assert [(s.bullet_id, s.similarity) for s in first.similar] == [(near.id, round(5 / 9, 4))]
    assert first.similar[0].state == "active" and first.similar[0].maturity == "candidate"
    assert second.similar == []  # a vote has no content to compare
    assert [p.id for p in pending(store)] == [p.id for p in list_proposals(store)]


def test_a_merge_proposal_does_not_list_its_own_members_as_similar(store: PlaybookStore) -> None:
    a = store.insert_bullet("Pin npm to 11 in release jobs")
    b = store.insert_bullet("Pin npm version 11 in release jobs")
    c = store.insert_bullet("Pin npm to 11 in release pipelines")
    merge = {"type": "merge", "bullet_ids": [a.id, b.id], "content": a.content}
    stage_one(store, merge)
    (p,) = pending(store)
    assert [s.bullet_id for s in p.similar] == [c.id]


# ------------------------------------------------------------------------ approve


def test_approve_adds_the_bullet_with_the_proposals_provenance(
    store: PlaybookStore,
) -> None:
    pid = stage_one(store, add("Pin npm to 11 in release jobs", tags=["ci"]))
    result = approve(store, pid)
    (outcome,) = result.outcomes
    assert outcome.status == "added"
    bullet = store.get_bullet(outcome.bullet_id or "")
    assert bullet is not None
    assert bullet.content == "Pin npm to 11 in release jobs" and bullet.tags == ["ci"]
    assert bullet.provenance.model_dump() == PROV
    assert bullet.source == "learned"
    p = get(store, pid)
    assert p is not None and p.status == "approved" and p.decided_by == "human"
    assert p.result is not None and p.result["added"] == [bullet.id]
    assert count_pending(store) == 0
    approvals = [d for d in store.decisions() if d.action == "approve"]
    assert [(d.actor, d.bullet_id, d.detail["proposal"]) for d in approvals] == [
        ("human", bullet.id, pid)
    ]


def test_approving_a_vote_records_feedback_with_the_recorded_provenance(
    store: PlaybookStore,
) -> None:
    bullet = store.insert_bullet("Run the linter")
    pid = stage_one(store, {"type": "harmful", "bullet_id": bullet.id, "reason": "wasted_time"})
    approve(store, pid)
    (event,) = store.timeline(bullet.id)
    assert (event.kind, event.reason, event.actor) == ("harmful", "wasted_time", "human")
    assert event.provenance.model_dump() == PROV


def test_an_edited_approval_keeps_both_versions(store: PlaybookStore) -> None:
    pid = stage_one(store, add("Pin npm in release jobs", tags=["ci"]))
    result = approve(store, pid, edited="Pin npm to 11 in release jobs")
    bullet = store.get_bullet(result.added[0])
    assert bullet is not None
    assert bullet.content == "Pin npm to 11 in release jobs" and bullet.tags == ["ci"]
    assert bullet.provenance.model_dump() == PROV
    p = get(store, pid)
    assert p is not None
    assert p.delta["content"] == "Pin npm in release jobs"  # the original, as proposed
    assert p.edited_delta == {
        "type": "add",
        "content": "Pin npm to 11 in release jobs",
        "tags": ["ci"],
    }
    (decision,) = [d for d in store.decisions() if d.action == "approve"]
    assert decision.detail["delta"]["content"] == "Pin npm in release jobs"
    assert decision.detail["edited_delta"]["content"] == "Pin npm to 11 in release jobs"


def test_an_edit_cannot_smuggle_in_provenance_or_text_for_a_vote(store: PlaybookStore) -> None:
    bullet = store.insert_bullet("Run the linter")
    pid = stage_one(store, add("Something"))
    forged = {"type": "add", "content": "Something", "session_ref": "forged"}
    with pytest.raises(QueueError, match="cannot carry provenance"):
        approve(store, pid, edited=forged)
    vote = stage_one(store, {"type": "helpful", "bullet_id": bullet.id})
    with pytest.raises(QueueError, match="no text to edit"):
        approve(store, vote, edited="new text")
    assert count_pending(store) == 2


@pytest.mark.parametrize("actor", ["agent", "model", ""])
def test_only_a_human_can_approve_or_reject(store: PlaybookStore, actor: str) -> None:
    pid = stage_one(store, add("Pin npm to 11"))
    before = dump(store)
    with pytest.raises(ApprovalRefused, match="only a human can approve"):
        approve(store, pid, actor=actor)
    with pytest.raises(ApprovalRefused, match="only a human can reject"):
        reject(store, pid, "no", actor=actor)
    assert dump(store) == before
    assert get(store, pid).status == "pending"  # type: ignore[union-attr]


def test_approving_what_is_not_pending_fails_clearly(store: PlaybookStore) -> None:
    pid = stage_one(store, add("Pin npm to 11"))
    approve(store, pid)
    before = dump(store)
    with pytest.raises(QueueError, match=f"proposal {pid} is already approved"):
        approve(store, pid)
    with pytest.raises(QueueError, match=f"proposal {pid} is already approved"):
        reject(store, pid, "too late")
    with pytest.raises(QueueError, match="no proposal with id 'd-missing'"):
        approve(store, "d-missing")
    assert dump(store) == before


def test_approval_that_curation_would_refuse_leaves_it_pending(store: PlaybookStore) -> None:
    bullet = store.insert_bullet("Run the linter")
    vote = stage_one(store, {"type": "helpful", "bullet_id": bullet.id})
    blocked = stage_one(store, add("Use sudo for npm installs"))
    store.retire(bullet.id)
    store.block("Use sudo for npm installs", "never")
    before = dump(store)
    with pytest.raises(StaleProposal, match=f"{vote} is stale: its target {bullet.id} was retired"):
        approve(store, vote)
    with pytest.raises(QueueError, match="refused-blocked"):
        approve(store, blocked)
    assert dump(store) == before
    assert count_pending(store) == 2


# ------------------------------------------------------------------------ reject


def test_reject_records_the_reason(store: PlaybookStore, clock: Clock) -> None:
    pid = stage_one(store, add("Pin npm to 11"))
    clock.advance(hours=1)
    assert reject(store, pid, "too specific") is None
    p = get(store, pid)
    assert p is not None
    assert (p.status, p.reason, p.decided_by, p.decided_at) == (
        "rejected",
        "too specific",
        "human",
        clock.t,
    )
    assert store.blocked() == []
    assert store.bullets() == []
    with pytest.raises(QueueError, match="needs a reason"):
        reject(store, stage_one(store, add("Other")), "  ")


def test_reject_and_block_refuses_the_pattern_later(store: PlaybookStore) -> None:
    pid = stage_one(store, add("Run npm ci as root in CI"))
    block_id = reject(store, pid, "dangerous", block=True)
    assert block_id is not None
    (blocked,) = store.blocked()
    assert (blocked.id, blocked.pattern, blocked.reason) == (
        block_id,
        "Run npm ci as root in CI",
        "dangerous",
    )
    later = curate(store, [add("run npm ci as root in CI!")])
    assert later.outcomes[0].status == "refused-blocked"
    assert store.bullets() == []
    restaged = stage(store, [add("Run npm ci as root in CI")], provenance={"session_ref": "s2"})
    assert restaged.staged == []
    assert restaged.rejected == [
        (0, f"near blocked pattern {block_id}: 'Run npm ci as root in CI'")
    ]


def test_a_vote_has_no_pattern_to_block(store: PlaybookStore) -> None:
    bullet = store.insert_bullet("Run the linter")
    pid = stage_one(store, {"type": "helpful", "bullet_id": bullet.id})
    with pytest.raises(QueueError, match="no pattern to block"):
        reject(store, pid, "no", block=True)
    assert get(store, pid).status == "pending"  # type: ignore[union-attr]


def test_a_proposal_whose_target_was_retired_says_it_is_stale(store: PlaybookStore) -> None:
    old = store.insert_bullet("Run the linter before committing")
    pid = stage_one(store, {"type": "replace", "bullet_id": old.id, "content": "Run ruff"})
    (p,) = pending(store)
    assert p.stale is None and p.targets[0].state == "active"
    r = curate(store, [{"type": "replace", "bullet_id": old.id, "content": "Run ruff check"}])
    successor = r.outcomes[0].bullet_id
    (p,) = pending(store)
    assert (p.targets[0].state, p.targets[0].successors) == ("retired", (successor,))
    assert p.stale == f"its target {old.id} was retired (succeeded by {successor})"
    assert p.to_dict()["stale"] == p.stale
    assert p.to_dict()["targets"][0]["state"] == "retired"
    before = dump(store)
    with pytest.raises(StaleProposal, match=f"proposal {pid} is stale: its target {old.id}"):
        approve(store, pid)
    assert dump(store) == before and count_pending(store) == 1
