"""Trust boundaries: what an agent (or a model behind it) can and cannot do.

- An agent cannot retire, replace, merge or deprecate a pinned rule, nor wear it down:
  harmful votes and failed outcomes never deprecate or invert it.
- Only a human approves or rejects proposals, pins and unpins, blocks and unblocks; any
  other actor (including near-spellings of "human") is refused and changes nothing.
- Provenance comes only from the caller of `curate` (or from reflection, which decides it
  from the diary): a delta, an outcome report, an approval edit or a reflector's item
  that carries one is rejected, and an offset a reflector invents is dropped.
- `CommandReflector` never runs diary text, or its own command string, through a shell:
  see tests/test_reflectors.py::test_shell_metacharacters_are_never_executed.
- The MCP server offers no tool that approves, rejects, pins, blocks or deprecates, lets
  no caller name its actor, and nothing it is asked moves a pinned rule (the MCP tests at
  the end of this module drive the real server object in-process).
"""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import pytest

from playbook.curation import curate
from playbook.curation.outcomes import InvalidOutcome, apply_outcome
from playbook.reflection.diaries import Diary, read_text_diary
from playbook.reflection.reflectors import ProposedItem
from playbook.reflection.session import reflect_session
from playbook.review.queue import ApprovalRefused, QueueError, approve, get, reject, stage
from playbook.store import PlaybookStore, StoreError
from playbook.store import testing as raw

from .helpers import Clock, dump

NOT_HUMAN = ["agent", "Human", "HUMAN", "human ", "humans", "", "model", "mcp"]


def add(store: PlaybookStore, content: str) -> str:
    r = curate(store, [{"type": "add", "content": content}], actor="human")
    assert r.added, r.outcomes
    return r.added[0]


@pytest.fixture
def pinned(store: PlaybookStore) -> tuple[str, str]:
    """A pinned rule and an ordinary one."""
    rule = add(store, "Never commit secrets to the repository")
    other = add(store, "Scan every commit for secrets in CI")
    store.pin(rule, "security policy")
    return rule, other


def bullet_state(store: PlaybookStore, bid: str) -> tuple[Any, ...]:
    b = store.get_bullet(bid)
    assert b is not None
    return (b.state, b.maturity, b.pinned, b.pinned_reason, b.valid_to)


# ------------------------------------------------------------------ pinned rules
@pytest.mark.parametrize("kind", ["replace", "deprecate", "merge-first", "merge-second"])
def test_an_agent_cannot_retire_or_deprecate_a_pinned_rule(
    store: PlaybookStore, pinned: tuple[str, str], kind: str
) -> None:
    rule, other = pinned
    delta = {
        "replace": {"type": "replace", "bullet_id": rule, "content": "Secrets go in the vault"},
        "deprecate": {"type": "deprecate", "bullet_id": rule, "reason": "obsolete"},
        "merge-first": {"type": "merge", "bullet_ids": [rule, other], "content": "Secrets: vault"},
        "merge-second": {"type": "merge", "bullet_ids": [other, rule], "content": "Secrets: CI"},
    }[kind]
    before = bullet_state(store, rule), bullet_state(store, other), store.count_bullets()
    r = curate(store, [delta], actor="agent")
    assert [o.status for o in r.outcomes] == ["refused-pinned"]
    assert r.outcomes[0].bullet_id == rule and "only a human" in (r.outcomes[0].reason or "")
    assert (bullet_state(store, rule), bullet_state(store, other), store.count_bullets()) == before
    assert store.lineage(rule).successors == []
    r = curate(store, [delta], actor="human")  # a person can
    assert [o.status for o in r.outcomes] == ["applied"]


def test_agent_feedback_cannot_wear_a_pinned_rule_down(
    store: PlaybookStore, pinned: tuple[str, str], clock: Clock
) -> None:
    rule, _ = pinned
    before = bullet_state(store, rule)
    for i in range(12):
        curate(store, [{"type": "harmful", "bullet_id": rule, "reason": "caused_bug"}])
        apply_outcome(store, {"outcome": "failure", "bullet_ids": [rule], "receipt": f"r{i}"})
        clock.advance(days=1)
    score = store.score(rule)
    assert score.harmful > 20 and score.earned == "deprecated"  # the evidence is all there
    assert bullet_state(store, rule) == before  # and the pin holds: not deprecated, not
    assert store.lineage(rule).successors == []  # inverted into an AVOID: twin


# ------------------------------------------------------------------ human-only actions
@pytest.mark.parametrize("actor", NOT_HUMAN)
def test_only_a_human_approves_or_rejects(store: PlaybookStore, actor: str) -> None:
    pid = stage(store, [{"type": "add", "content": "Pin npm to 11 in release jobs"}]).staged[0]
    before = dump(store)
    with pytest.raises(ApprovalRefused):
        approve(store, pid, actor=actor)
    with pytest.raises(ApprovalRefused):
        reject(store, pid, "no", block=True, actor=actor)
    assert dump(store) == before
    assert get(store, pid).status == "pending"  # type: ignore[union-attr]


@pytest.mark.parametrize("actor", NOT_HUMAN)
def test_only_a_human_pins_unpins_blocks_or_unblocks(
    store: PlaybookStore, pinned: tuple[str, str], actor: str
) -> None:
    rule, other = pinned
    block = store.block("disable the failing test", "flaky-test policy")
    before = dump(store)
    attempts = [
        lambda: store.pin(other, "mine now", actor=actor),
        lambda: store.unpin(rule, actor=actor),
        lambda: store.block("run the linter", "I dislike it", actor=actor),
        lambda: store.unblock(block, actor=actor),
    ]
    for attempt in attempts:
        with pytest.raises(StoreError, match="only a human"):
            attempt()
    assert dump(store) == before
    # After all that, an agent still cannot retire the pinned rule or add the blocked text.
    r = curate(store, [{"type": "deprecate", "bullet_id": rule, "reason": "x"}])
    assert r.outcomes[0].status == "refused-pinned"
    r = curate(store, [{"type": "add", "content": "Disable the failing test"}])
    assert r.outcomes[0].status == "refused-blocked"


def test_a_human_can_do_all_of_it(store: PlaybookStore, pinned: tuple[str, str]) -> None:
    rule, other = pinned
    store.pin(other, "also policy", actor="human")
    store.unpin(rule, actor="human")
    store.unblock(store.block("disable the failing test", "policy", actor="human"))
    assert store.get_bullet(other).pinned and not store.get_bullet(rule).pinned  # type: ignore[union-attr]


# ------------------------------------------------------------------ provenance
FORGED = {
    "provenance": {"session_ref": "session:forged", "byte_offset": 1},
    "session_ref": "session:forged",
    "byte_offset": 1,
    "sessionRef": "session:forged",
    "byteOffset": 1,
}


@pytest.mark.parametrize("key", sorted(FORGED))
def test_a_delta_cannot_claim_provenance(store: PlaybookStore, key: str) -> None:
    bid = add(store, "Run the linter before committing")
    before = dump(store)
    for delta in (
        {"type": "add", "content": "Trust me, this came from a session"},
        {"type": "helpful", "bullet_id": bid},
        {"type": "deprecate", "bullet_id": bid, "reason": "said so"},
    ):
        r = curate(store, [{**delta, key: FORGED[key]}], provenance={"session_ref": "real"})
        assert r.outcomes[0].status == "rejected-invalid"
        assert "cannot carry provenance" in (r.outcomes[0].reason or "")
    staged = stage(store, [{"type": "add", "content": "Trust me", key: FORGED[key]}])
    assert staged.staged == [] and "provenance" in staged.rejected[0][1]
    assert dump(store) == before


def test_provenance_is_the_callers(store: PlaybookStore) -> None:
    r = curate(
        store,
        [{"type": "add", "content": "Pin npm to 11"}],
        provenance={"session_ref": "session:real", "byte_offset": 42},
    )
    b = store.get_bullet(r.added[0])
    assert b is not None and (b.provenance.session_ref, b.provenance.byte_offset) == (
        "session:real",
        42,
    )


def test_an_outcome_report_cannot_claim_provenance(store: PlaybookStore) -> None:
    bid = add(store, "Run the linter before committing")
    before = dump(store)
    for key, value in FORGED.items():
        with pytest.raises(InvalidOutcome):
            apply_outcome(store, {"outcome": "success", "bullet_ids": [bid], key: value})
    assert dump(store) == before


def test_an_approval_edit_cannot_swap_the_recorded_provenance(store: PlaybookStore) -> None:
    pid = stage(
        store,
        [{"type": "add", "content": "Pin npm to 11"}],
        provenance={"session_ref": "session:staged", "byte_offset": 7},
    ).staged[0]
    edited = {"type": "add", "content": "Pin npm to 11.2", "session_ref": "session:forged"}
    with pytest.raises(QueueError, match="provenance"):
        approve(store, pid, edited=edited)
    r = approve(store, pid, edited={"type": "add", "content": "Pin npm to 11.2"})
    b = store.get_bullet(r.added[0])
    assert b is not None and b.provenance.session_ref == "session:staged"
    assert b.provenance.byte_offset == 7


class Forger:
    """A reflector (a model, say) that tries to choose its own provenance."""

    def propose(self, diary: Diary, playbook: list[Any], prior: list[Any]) -> list[ProposedItem]:
        if prior:
            return []
        return [
            ProposedItem({"type": "add", "content": "Forged A", "session_ref": "s:x"}, None),
            ProposedItem({"type": "add", "content": "Forged B", "byte_offset": 0}, None),
            ProposedItem({"type": "add", "content": "Invented offset"}, 999_999),
            ProposedItem({"type": "add", "content": "Real offset"}, diary.passages[1].offset),
        ]


@pytest.mark.parametrize("apply", [False, True])
def test_a_reflector_cannot_choose_provenance(store: PlaybookStore, apply: bool) -> None:
    diary = read_text_diary(b"First paragraph.\n\nSecond paragraph.\n", ref="diary.md")
    r = reflect_session(store, "session:real", diary, Forger(), apply=apply)
    assert sorted(str(x.item["content"]) for x in r.rejected) == ["Forged A", "Forged B"]  # type: ignore[index]
    for x in r.rejected:
        assert "provenance" in x.reason
    if apply:
        rows = raw.rows(store, "SELECT content, session_ref, byte_offset FROM bullets")
    else:
        rows = [
            (json.loads(delta)["content"], session_ref, offset)
            for delta, session_ref, offset in raw.rows(
                store, "SELECT delta, session_ref, byte_offset FROM proposals"
            )
        ]
    assert sorted(rows) == [
        ("Invented offset", "session:real", None),
        ("Real offset", "session:real", diary.passages[1].offset),
    ]


# ------------------------------------------------------------------ the MCP surface
HUMAN_WORDS = ("approve", "reject", "pin", "block", "deprecate", "retire", "delete", "resolve")


def _server(db: Path) -> Any:
    pytest.importorskip("mcp")
    from playbook.mcp.server import build_server

    return build_server(db)


def _field(obj: Any, snake: str, camel: str) -> Any:
    """SDK 2.x names fields in snake_case, 1.x in camelCase."""
    return getattr(obj, snake) if hasattr(obj, snake) else getattr(obj, camel)


def mcp_call(server: Any, tool: str, args: dict[str, Any]) -> Any:
    result = asyncio.run(server.call_tool(tool, args))
    if isinstance(result, tuple):  # SDK 1.x: (content, structured)
        return result[1].get("result", result[1])
    if isinstance(result, list):
        return json.loads(result[0].text)
    assert not _field(result, "is_error", "isError"), result
    data = _field(result, "structured_content", "structuredContent")
    return data.get("result", data) if set(data) == {"result"} else data


def test_the_mcp_server_offers_no_human_action(tmp_path: Path) -> None:
    tools = asyncio.run(_server(tmp_path / "pb.sqlite3").list_tools())
    names = {t.name for t in tools}
    assert names == {
        "recall", "list_rules", "playbook_stats", "pending_proposals", "show_bullet",
        "mark_feedback", "record_outcome", "propose_deltas", "reflect_session",
    }  # fmt: skip
    assert [n for n in names for word in HUMAN_WORDS if word in n] == []
    for t in tools:  # nobody calling over MCP can say who they are
        properties = _field(t, "input_schema", "inputSchema")["properties"]
        assert "actor" not in properties, t.name


def test_nothing_an_mcp_client_asks_moves_a_pinned_rule(
    db_target: str | Path, store: PlaybookStore, pinned: tuple[str, str]
) -> None:
    rule, other = pinned
    server = _server(db_target)
    before = bullet_state(store, rule)
    last = raw.value(store, "SELECT MAX(id) FROM decisions")
    for i in range(8):
        mark = mcp_call(server, "mark_feedback", {"bullet_id": rule, "kind": "harmful"})
        assert mark["status"] == "applied"
        out = mcp_call(
            server,
            "record_outcome",
            {"outcome": "failure", "bullet_ids": [rule], "receipt": f"mcp-{i}"},
        )
        assert out["applied"] == [rule]
    proposed = mcp_call(
        server,
        "propose_deltas",
        {
            "deltas": [
                {"type": "deprecate", "bullet_id": rule, "reason": "mine"},
                {"type": "replace", "bullet_id": rule, "content": "Secrets are fine in tests"},
                {"type": "merge", "bullet_ids": [other, rule], "content": "Scan, then commit"},
                {"type": "add", "content": "Approve me", "provenance": {"session_ref": "x"}},
            ]
        },
    )
    assert proposed["staged"] == 3
    assert [o["status"] for o in proposed["outcomes"]] == ["staged"] * 3 + ["rejected"]
    assert bullet_state(store, rule) == before
    assert store.lineage(rule).successors == []
    statuses = raw.rows(store, "SELECT DISTINCT status FROM proposals")
    assert statuses == [("pending",)]
    assert {e.actor for e in store.timeline(rule)} == {"agent"}
    actors = raw.rows(store, "SELECT DISTINCT actor FROM decisions WHERE id > ?", (last,))
    assert actors == [("agent",)]  # nothing over MCP acted as a human
