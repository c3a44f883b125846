"""What the workbench's Proposals tab asks of the queue for hook-driven sessions: each
proposal's origin and session, newest first, and how many are new since a moment."""

from __future__ import annotations

from typing import TYPE_CHECKING

from playbook.core.model import Provenance
from playbook.review.queue import HOOK_ORIGIN, count_pending, list_proposals, reject, stage
from playbook.store import PlaybookStore

if TYPE_CHECKING:
    from .helpers import Clock


def add(content: str) -> dict[str, str]:
    return {"type": "add", "content": content}


def test_newest_first_with_origin_and_session_and_counts_since(
    store: PlaybookStore, clock: Clock
) -> None:
    stage(store, [add("Older manual rule")], origin="mcp")
    t1 = clock.advance(hours=1)
    stage(
        store,
        [add("Rule from session one")],
        origin=HOOK_ORIGIN,
        provenance=Provenance(session_ref="/sessions/one.jsonl", byte_offset=10),
    )
    looked = clock.advance(hours=1)
    clock.advance(minutes=5)
    stage(
        store,
        [add("Rule from session two"), add("Another from session two")],
        origin=HOOK_ORIGIN,
        provenance=Provenance(session_ref="/sessions/two.jsonl", byte_offset=0),
    )
    newest = list_proposals(store, newest_first=True)
    assert [p.delta["content"] for p in newest] == [
        "Another from session two",
        "Rule from session two",
        "Rule from session one",
        "Older manual rule",
    ]
    assert [p.origin for p in newest] == [HOOK_ORIGIN, HOOK_ORIGIN, HOOK_ORIGIN, "mcp"]
    assert newest[2].provenance.session_ref == "/sessions/one.jsonl"
    hook_only = list_proposals(store, origin=HOOK_ORIGIN, since=t1, newest_first=True)
    assert [p.provenance.session_ref for p in hook_only] == ["/sessions/two.jsonl"] * 2
    assert count_pending(store) == 4
    assert count_pending(store, since=looked) == 2
    assert count_pending(store, since=looked, origin=HOOK_ORIGIN) == 2
    assert count_pending(store, since=looked, origin="mcp") == 0
    reject(store, newest[0].id, "not needed")  # decided ones are no longer new work
    assert count_pending(store, since=looked) == 1
