"""Curation as an agent (SPEC §5, "Who may apply what"): `curate_as_agent`.

Where agents and people are told apart (the MCP server, the hooks, the command line under
a PostgreSQL agent login), an agent applies evidence and new candidates, `add`, `helpful`
and `harmful` (`authority.AGENT_APPLIES`), exactly as `curate` does. Its `replace`, `merge`
and `deprecate`, which change or retire rules other people rely on, are staged in the
review queue for a person, with the session's provenance. One transaction; the answer
says, delta by delta in input order, what happened to each.

`curate` itself keeps applying all six types (the caller is trusted code, as seed 000
says); this module is what a surface calls when its caller is an agent.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from ..core.authority import may_apply
from ..core.limits import PREVIEW, preview, problem
from ..core.terms import DELTA_TYPES, Actor
from ..core.text import plural
from ..curation.pipeline import batch_problem, curate, provenance_of
from ..curation.results import APPLIED, CurateResult, DeltaOutcome
from .queue import stage

if TYPE_CHECKING:
    from ..core.model import Provenance
    from ..store import PlaybookStore

__all__ = ["AgentCurateResult", "agent_login", "curate_as_agent"]

STAGED = "staged"  # a delta waiting for a person in the review queue
ALREADY_PROPOSED = "already-proposed"  # the same delta is in the queue already
# replace, merge, deprecate: every type an agent does not apply itself
_STAGED_TYPES = frozenset(t for t in DELTA_TYPES if not may_apply(Actor.AGENT, t))


@dataclass
class AgentCurateResult:
    """What `curate_as_agent` did: one outcome per input delta, in input order (status
    `staged` with its proposal id, `already-proposed`, or one of `curate`'s statuses), and
    the curate batch of the deltas it applied (None when none was curated; its outcomes
    carry the indexes of the input)."""

    outcomes: list[DeltaOutcome] = field(default_factory=list)
    proposals: dict[int, str] = field(default_factory=dict)  # input index -> proposal id
    curated: CurateResult | None = None
    replayed: bool = False  # the receipt was spent before: nothing done

    @property
    def applied_count(self) -> int:
        return sum(1 for o in self.outcomes if o.status in APPLIED)

    @property
    def staged_count(self) -> int:
        return len(self.proposals)

    @property
    def nothing_done(self) -> bool:
        """Nothing applied and nothing staged (an empty batch included); a replay is not
        a failure: its first call did the work."""
        return not self.replayed and self.applied_count == 0 and self.staged_count == 0

    def summary(self) -> str:
        """One plain sentence: how much of the batch applied and how much waits."""
        if self.replayed:
            return "already recorded under this receipt: nothing done again"
        total = len(self.outcomes)
        if not total:
            return "the batch is empty: nothing to curate"
        parts = [f"{self.applied_count} applied"]
        if self.staged_count:
            parts.append(f"{self.staged_count} staged for a person's review")
        rest = total - self.applied_count - self.staged_count
        if rest:
            parts.append(f"{rest} not applied")
        return f"{plural(total, 'delta')}: " + ", ".join(parts)

    def reasons(self, limit: int = 5) -> str:
        """The first `limit` deltas neither applied nor staged, `[i] status: reason; ...`."""
        failed = [o for o in self.outcomes if o.status not in (*APPLIED, STAGED)]
        parts = [f"[{o.index}] {o.status}" + (f": {o.reason}" if o.reason else "")
                 for o in failed[:limit]]  # fmt: skip
        if len(failed) > limit:
            parts.append(f"and {len(failed) - limit} more")
        return "; ".join(parts)

    def to_dict(self) -> dict[str, Any]:
        curated = self.curated.to_dict() if self.curated is not None else {}
        outcomes = [
            {**o.to_dict(), "proposal_id": self.proposals.get(o.index)} for o in self.outcomes
        ]
        return {
            "batch_id": curated.get("batch_id"),
            "outcomes": outcomes,
            "applied_count": self.applied_count,
            "staged_count": self.staged_count,
            "staged": [{"index": i, "proposal_id": p} for i, p in self.proposals.items()],
            "added": curated.get("added", []),
            "conflicts": curated.get("conflicts", []),
            "inversions": curated.get("inversions", []),
            "maturity_changes": curated.get("maturity_changes", []),
            "replayed": self.replayed,
        }


def _type_of(item: object) -> object:
    return item.get("type") if isinstance(item, dict) else getattr(item, "type", None)


def curate_as_agent(
    store: PlaybookStore,
    deltas: object,
    provenance: Provenance | dict[str, Any] | None = None,
    *,
    origin: str = "agent",
    receipt: str | None = None,
) -> AgentCurateResult:
    """Apply an agent's `add`, `helpful` and `harmful` deltas (`curate`, actor "agent") and
    stage its `replace`, `merge` and `deprecate` for a person (`queue.stage`, with
    `provenance` and `origin`), in one transaction.

    Invalid items are reported, never raised (`rejected-invalid` with the reason, from
    `curate` or from the queue's own checks). A `receipt` makes the batch idempotent: one
    seen before makes the call a no-op (`replayed`), and it is spent only by a batch that
    applied or staged something, so a retried call after a lost answer counts once.
    """

    prov = provenance_of(provenance)
    result = AgentCurateResult()
    refusal = batch_problem(store.policy, deltas, prov)
    if refusal is None and receipt is not None:
        blank = "a receipt must not be blank" if not receipt.strip() else None
        refusal = blank or problem(store.policy, "receipt", receipt, "id")
    if refusal is not None:  # the whole batch: one outcome says why, nothing is written
        result.outcomes.append(DeltaOutcome(0, "rejected-invalid", None, refusal))
        return result
    assert isinstance(deltas, list | tuple)
    applies = [i for i, d in enumerate(deltas) if _type_of(d) not in _STAGED_TYPES]
    staged = [i for i, d in enumerate(deltas) if _type_of(d) in _STAGED_TYPES]
    with store.transaction():
        if receipt is not None and store.has_receipt(receipt):
            result.replayed = True
            return result
        if applies:
            result.curated = curate(store, [deltas[i] for i in applies], prov, actor="agent")
            for o in result.curated.outcomes:
                o.index = applies[o.index]
                result.outcomes.append(o)
        if staged:
            queued = stage(store, [deltas[i] for i in staged], provenance=provenance, origin=origin)
            for at, pid in zip(queued.staged_at, queued.staged, strict=True):
                result.proposals[staged[at]] = pid
            refused = dict(queued.rejected)
            for k, i in enumerate(staged):
                kind = str(_type_of(deltas[i]))
                bid = _target(deltas[i])
                if i in result.proposals:
                    reason = f"{kind} waits for a person's review; an agent does not apply it"
                    result.outcomes.append(DeltaOutcome(i, STAGED, bid, reason, kind))
                elif k in refused:
                    result.outcomes.append(DeltaOutcome(i, "rejected-invalid", bid, refused[k]))
                else:
                    reason = "the same delta is already in the review queue"
                    result.outcomes.append(DeltaOutcome(i, ALREADY_PROPOSED, bid, reason, kind))
        result.outcomes.sort(key=lambda o: o.index)
        if receipt is not None and not result.nothing_done:
            batch = result.curated.batch_id if result.curated is not None else None
            store.add_receipt(receipt, "curate", batch)
    return result


def _target(item: object) -> str | None:
    """The bullet a staged delta names (the first, for a merge), for its outcome."""

    value = item.get("bullet_id") if isinstance(item, dict) else getattr(item, "bullet_id", None)
    if value is None and isinstance(item, dict) and isinstance(item.get("bullet_ids"), list):
        value = next(iter(item["bullet_ids"]), None)
    if not isinstance(value, str):
        return None
    return value if len(value) <= PREVIEW else preview(value)


def agent_login(store: PlaybookStore) -> bool:
    """Whether `store`'s connection is an agent's login: on PostgreSQL, one that may not
    decide proposals (`ProposalRepo.may_decide`); never on SQLite, which has no logins."""
    return not store.proposals.may_decide()
