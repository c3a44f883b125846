"""The workbench's writes: each opens the playbook, calls the API every surface calls
(`playbook.review`, `playbook.review.queue`, the store's human actions) as a human, and returns
one sentence for the status line. Errors are raised (`PlaybookError` and its kin) and the
app shows them; nothing here decides what a write means.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from .. import review
from ..core.terms import HUMAN

if TYPE_CHECKING:
    from ..curation import CurateResult
    from .data import Source


def outcome_text(result: CurateResult) -> str:
    o = result.outcomes[0]
    text = o.status + (f" {o.bullet_id}" if o.bullet_id else "")
    if o.reason and o.status not in ("applied", "added"):
        text += f": {o.reason}"
    for bid, old, new in result.maturity_changes:
        text += f"; {bid} {old} -> {new}"
    for old, new in result.inversions:
        text += f"; {old} inverted into {new}"
    return text


# ------------------------------------------------------------------------------ a bullet


def mark(
    source: Source, bullet_id: str, kind: str, reason: str | None = None, context: str | None = None
) -> str:
    with source.open() as store:
        result = review.mark(store, bullet_id, kind, reason=reason, context=context)
    return f"Marked {kind}: " + outcome_text(result)


def pin(source: Source, bullet_id: str, reason: str) -> str:
    with source.open() as store:
        again = review.pin(store, bullet_id, reason)
    return f"Pinned {bullet_id}" + (" (new reason)" if again else "")


def unpin(source: Source, bullet_id: str) -> str:
    with source.open() as store:
        review.unpin(store, bullet_id)
    return f"Unpinned {bullet_id}"


def deprecate(source: Source, bullet_id: str, reason: str) -> str:
    with source.open() as store:
        result = review.deprecate(store, bullet_id, reason)
    return "Deprecated: " + outcome_text(result)


def activate(source: Source, bullet_id: str) -> str:
    with source.open() as store:
        done = review.activate(store, [bullet_id])
    return f"{bullet_id} is live" if done.activated else f"{bullet_id} was live already"


def restore(source: Source, bullet_id: str, reason: str | None) -> str:
    with source.open() as store:
        done = review.restore(store, bullet_id, reason or None)
    return f"Restored {bullet_id} to {done.maturity}"


# ------------------------------------------------------------------------------ patterns


def block(source: Source, pattern: str, reason: str) -> str:
    with source.open() as store:
        pid = store.block(pattern, reason, actor=HUMAN)
    return f"Blocked pattern {pid}"


def unblock(source: Source, block_id: str) -> str:
    with source.open() as store:
        store.unblock(block_id, actor=HUMAN)
    return f"Unblocked {block_id}"


# ------------------------------------------------------------------------------ proposals


def approve(source: Source, proposal_id: str, edited: str | None = None) -> str:
    from ..review import queue  # lazy: pydantic: the workbench's first frame

    with source.open() as store:
        result = queue.approve(store, proposal_id, actor=HUMAN, edited=edited)
    verb = "Edited and approved" if edited is not None else "Approved"
    return f"{verb} {proposal_id}: " + outcome_text(result)


def reject(source: Source, proposal_id: str, reason: str, block: bool = False) -> str:
    from ..review import queue  # lazy: pydantic: the workbench's first frame

    with source.open() as store:
        block_id = queue.reject(store, proposal_id, reason, block=block, actor=HUMAN)
    if block_id:
        return f"Rejected {proposal_id} and blocked its pattern ({block_id})"
    return f"Rejected {proposal_id}"


def decided_sentence(verb: str, decided: list[review.Decided]) -> str:
    """'Approved 2 of 3 proposals; not d-…: why' from `review.approve_many` and its kin."""
    done = [d for d in decided if d.ok]
    failed = [d for d in decided if not d.ok]
    text = f"{verb} {len(done)} of {len(decided)} proposals"
    if failed:
        more = f" (and {len(failed) - 1} more)" if len(failed) > 1 else ""
        text += f"; not {failed[0].proposal_id}: {failed[0].message}{more}"
    return text


def approve_many(source: Source, ids: list[str]) -> str:
    with source.open() as store:
        decided = review.approve_many(store, ids, actor=HUMAN)
    return decided_sentence("Approved", decided)


def reject_many(source: Source, ids: list[str], reason: str) -> str:
    with source.open() as store:
        decided = review.reject_many(store, ids, reason, actor=HUMAN)
    return decided_sentence("Rejected", decided)


# ------------------------------------------------------------------------------ conflicts


def keep_both(source: Source, conflict_id: int) -> str:
    with source.open() as store:
        review.keep_both(store, conflict_id)
    return f"Conflict {conflict_id}: kept both"


def deprecate_in_conflict(source: Source, conflict_id: int, bullet_id: str, reason: str) -> str:
    with source.open() as store:
        done = review.deprecate_one(store, conflict_id, bullet_id, reason)
    assert done.result is not None
    return f"Conflict {conflict_id}: " + outcome_text(done.result)


def merge_conflict(source: Source, conflict_id: int, content: str, keep_pin: bool) -> str:
    """Merge both sides into `content`: evidence whose meaning flips is not carried (the
    API links that side by `inverts`); a pin carries only when `keep_pin`."""
    with source.open() as store:
        done = review.merge(store, conflict_id, content, keep_pin=keep_pin)
    pinned = " (pin kept)" if keep_pin else ""
    return f"Conflict {conflict_id}: {done.resolution}{pinned}"
