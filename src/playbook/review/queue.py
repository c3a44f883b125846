"""The review queue (SPEC §7): proposed deltas wait here for a human.

Reflection (and agents over MCP) stage deltas; only `actor="human"` can approve or reject
them. Approving curates the delta with the provenance recorded when it was staged, never
with anything the proposer says later.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from ..core import authority
from ..core.deltas import AddDelta, InvalidDelta, MergeDelta, delta_dict, parse_delta
from ..core.errors import NotFound, Refused
from ..core.limits import delta_problem, preview
from ..core.model import Provenance
from ..core.terms import HOOK_ORIGIN  # noqa: F401  (part of this module's API)
from ..curation import CurateResult, blocking_pattern, curate
from ..curation.pipeline import batch_problem
from ..store import PlaybookStore, StoreError, iso
from ..store.store import new_id
from .proposal_view import with_similar
from .proposals import (  # noqa: F401  (part of this module's API)
    SIMILAR_LIMIT,
    SIMILAR_THRESHOLD,
    Proposal,
    Similar,
    Target,
    _proposal,
    delta_targets,
    with_targets,
)


class QueueError(StoreError):
    """A queue request that cannot be carried out (wrong id, not pending, not human)."""


# Deprecated: a refusal is `core.errors.Refused` wherever it is made (`core.authority`).
ApprovalRefused = Refused


class UnknownProposal(QueueError, NotFound):
    """No proposal with that id."""


class NotPending(QueueError):
    """The proposal was decided already (approved or rejected)."""

    code = "not_pending"


class StaleProposal(QueueError):
    """A proposal whose target was retired (or is gone) since it was staged."""

    code = "stale_proposal"


@dataclass
class StageResult:
    staged: list[str] = field(default_factory=list)  # proposal ids, in input order
    rejected: list[tuple[int, str]] = field(default_factory=list)  # (index, reason)
    duplicates: list[int] = field(default_factory=list)  # already pending: not staged again
    staged_at: list[int] = field(default_factory=list)  # the input index of each staged id

    def to_dict(self) -> dict[str, Any]:
        return {
            "staged": self.staged,
            "rejected": [{"index": i, "reason": r} for i, r in self.rejected],
            "duplicates": self.duplicates,
        }


def _canonical(delta: dict[str, Any]) -> str:
    return json.dumps(delta, sort_keys=True, ensure_ascii=False)


def validate_proposal(store: PlaybookStore, item: object) -> dict[str, Any]:
    """The delta `item` stands for, as the queue stores it; InvalidDelta says why not.

    Beyond the delta's own shape (no provenance fields, see `parse_delta`): every field
    within its bound in Policy (`max_content_length`, `max_text_length`...), every bullet it
    names exists and is not retired, and an add is not near a blocked pattern. These are
    refusals approval would meet anyway; catching them here keeps them out of a reviewer's
    queue.
    """
    delta = parse_delta(item)
    too_long = delta_problem(store.policy, delta)
    if too_long:
        raise InvalidDelta(too_long)
    ids = (
        list(delta.bullet_ids)
        if isinstance(delta, MergeDelta)
        else [i for i in [getattr(delta, "bullet_id", None)] if isinstance(i, str)]
    )
    if ids:
        bullets = store.get_bullets(ids)
        for bid in ids:
            bullet = bullets.get(bid)
            if bullet is None:
                raise InvalidDelta(f"no bullet with id {preview(bid)}")
            if bullet.state == "retired":
                raise InvalidDelta(f"bullet {bid} is retired")
    if isinstance(delta, AddDelta):
        hit = blocking_pattern(
            store, delta.content, str(delta.bullet_type) if delta.bullet_type else None
        )
        if hit is not None:
            raise InvalidDelta(f"near blocked pattern {hit[0]}: {hit[1]!r}")
    return delta_dict(delta)


def stage(
    store: PlaybookStore,
    deltas: object,
    *,
    provenance: Provenance | dict[str, Any] | None = None,
    origin: str = "reflection",
    provenances: list[Provenance | None] | None = None,
) -> StageResult:
    """Validate deltas and put them in the queue as pending. Invalid items are reported.

    Validation is `validate_proposal`'s: an item it refuses lands in `rejected` with the
    reason and is never raised.

    `provenances` (one per delta) overrides `provenance` per item, e.g. the byte offset of
    the passage each proposal came from. A delta identical to one already pending, or
    already decided for the same provenance, is not staged twice.
    """
    result = StageResult()
    base = (
        provenance
        if isinstance(provenance, Provenance)
        else Provenance.model_validate(provenance or {})
    )
    refusal = (
        batch_problem(store.policy, deltas, base)
        if isinstance(deltas, list | tuple)
        else f"proposals must be a list, not {type(deltas).__name__}"
    )
    if refusal is not None:
        result.rejected.append((0, refusal))
        return result
    assert isinstance(deltas, list | tuple)
    with store.transaction():
        now = iso(store.now())
        for i, item in enumerate(deltas):
            try:
                delta = validate_proposal(store, item)
            except InvalidDelta as exc:
                result.rejected.append((i, str(exc)))
                continue
            prov = (provenances[i] if provenances and i < len(provenances) else None) or base
            key = _canonical(delta)
            if store.proposals.seen(key, prov.session_ref, prov.byte_offset):
                result.duplicates.append(i)
                continue
            pid = new_id("d")
            store.proposals.insert(pid, key, prov.session_ref, prov.byte_offset, origin, now)
            result.staged.append(pid)
            result.staged_at.append(i)
    return result


def get(store: PlaybookStore, proposal_id: str) -> Proposal | None:
    row = store.proposals.get(proposal_id)
    return _proposal(row) if row else None


def pending(
    store: PlaybookStore,
    *,
    limit: int | None = None,
    similar: bool = True,
    session: str | None = None,
    delta_type: str | None = None,
) -> list[Proposal]:
    """Pending proposals, oldest first, each with its targets as they are now (a proposal
    whose target was retired meanwhile says it is `stale`). Those with content (add,
    replace, merge) carry the nearest existing bullets other than the ones they act on,
    with their similarity. `session` and `delta_type` filter as in `list_proposals`."""
    found = list_proposals(
        store, status="pending", limit=limit, session=session, delta_type=delta_type
    )
    out = [with_targets(store, p) for p in found]
    return [with_similar(store, p) for p in out] if similar else out


def list_proposals(
    store: PlaybookStore,
    *,
    status: str | None = None,
    origin: str | None = None,
    limit: int | None = None,
    since: datetime | None = None,
    newest_first: bool = False,
    session: str | None = None,
    delta_type: str | None = None,
) -> list[Proposal]:
    """Proposals in any state (or one `status`, one `origin`, staged after `since`, from one
    `session` (its provenance's session ref), of one `delta_type` such as "add"), oldest
    first or `newest_first`. Each carries its `origin` ("hook" for an agent session's end)
    and its session (`provenance.session_ref`)."""
    rows = store.proposals.rows(
        status=status,
        origin=origin,
        limit=None if delta_type is not None else limit,
        since=iso(since) if since is not None else None,
        newest_first=newest_first,
        session_ref=session,
    )
    found = [_proposal(r) for r in rows]
    if delta_type is not None:  # the type is inside the stored delta: filtered here
        found = [p for p in found if p.delta.get("type") == delta_type]
        found = found[:limit] if limit is not None else found
    return found


def count_pending(
    store: PlaybookStore, *, since: datetime | None = None, origin: str | None = None
) -> int:
    """Pending proposals; with `since`, only those staged after it ("new since you last
    looked"); with `origin`, only those of one origin (e.g. `HOOK_ORIGIN`)."""
    return store.proposals.count(
        "pending", since=iso(since) if since is not None else None, origin=origin
    )


def require_human(actor: str, verb: str) -> None:
    """Refused unless `actor` is a human: only people decide proposals."""
    authority.require_human(actor, f"{verb} proposals")


def _require_pending(store: PlaybookStore, proposal_id: str) -> Proposal:
    """The proposal, if it is still pending. Call inside the write transaction, so that two
    reviewers (say the workbench and a terminal) cannot both decide the same proposal."""
    p = get(store, proposal_id)
    if p is None:
        raise UnknownProposal(f"no proposal with id {preview(proposal_id)}")
    if p.status != "pending":
        raise NotPending(f"proposal {proposal_id} is already {p.status}")
    return p


def _edited(original: dict[str, Any], edited: dict[str, Any] | str) -> dict[str, Any]:
    if isinstance(edited, str):
        if "content" not in original:
            raise QueueError(f"a {original.get('type')} proposal has no text to edit")
        return {**original, "content": edited}
    return dict(edited)


# Curation outcomes that change nothing: approving such a proposal is refused and it stays
# pending, so the reviewer can reject it (or unblock / restore first, then approve).
_NOTHING_DONE = ("rejected-invalid", "refused-blocked", "refused-zombie", "refused-pinned")


def approve(
    store: PlaybookStore,
    proposal_id: str,
    *,
    actor: str = "human",
    edited: dict[str, Any] | str | None = None,
) -> CurateResult:
    """Curate a pending proposal with its recorded provenance. Human only.

    `edited` (new content, or a whole delta) is curated instead, and both versions are kept
    (`delta` and `edited_delta`). If curation would change nothing (the bullet was retired
    since, the add is near a blocked pattern or duplicates a deprecated rule), nothing
    changes, the proposal stays pending and QueueError says why.
    """
    require_human(actor, "approve")
    with store.transaction():
        p = _require_pending(store, proposal_id)
        delta = p.delta
        if edited is not None:
            try:
                delta = delta_dict(parse_delta(_edited(p.delta, edited)))
            except InvalidDelta as exc:
                raise QueueError(f"edited proposal is not a valid delta: {exc}") from None
        stale = [t.stale for t in delta_targets(store, delta) if t.stale]
        if stale:
            raise StaleProposal(
                f"proposal {proposal_id} is stale: {'; '.join(stale)} after it was proposed; "
                "reject it, or propose the change again on the current rule"
            )
        result = curate(store, [delta], provenance=p.provenance, actor="human")
        outcome = result.outcomes[0]
        if outcome.status in _NOTHING_DONE:
            raise QueueError(f"cannot approve {proposal_id}: {outcome.status}: {outcome.reason}")
        store.proposals.decide(
            proposal_id,
            "approved",
            decided_at=iso(store.now()),
            decided_by=actor,
            edited_delta=_canonical(delta) if edited is not None else None,
            result=json.dumps(result.to_dict()),
        )
        store.log_decision(
            result.batch_id,
            actor,
            "approve",
            outcome.bullet_id,
            outcome.status,
            None,
            {
                "proposal": proposal_id,
                "edited": edited is not None,
                "delta": p.delta,
                **({"edited_delta": delta} if edited is not None else {}),
            },
        )
    return result


def reject(
    store: PlaybookStore,
    proposal_id: str,
    reason: str,
    *,
    block: bool = False,
    actor: str = "human",
) -> str | None:
    """Reject a pending proposal with a reason; `block=True` also blocks its content as a
    pattern, so the same rule is neither staged nor added again. Human only.
    Returns the block id when one was made."""
    require_human(actor, "reject")
    if not reason.strip():
        raise QueueError("a rejection needs a reason")
    with store.transaction():
        p = _require_pending(store, proposal_id)
        content = p.delta.get("content")
        if block and not isinstance(content, str):
            raise QueueError(f"a {p.delta.get('type')} proposal has no pattern to block")
        block_id = store.block(content, reason, actor=actor) if block and content else None
        store.proposals.decide(
            proposal_id,
            "rejected",
            decided_at=iso(store.now()),
            decided_by=actor,
            reason=reason,
        )
        store.log_decision(
            None,
            actor,
            "reject",
            None,
            "applied",
            reason,
            {"proposal": proposal_id, "block": block_id},
        )
    return block_id
