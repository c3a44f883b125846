"""Who may do what: the human-only rule, and what an agent applies, in one place.

Pins and blocks are a reviewer's decisions: an agent that could unpin a rule could then
retire it, and one that could unblock a pattern could add it. Deciding a proposal and
restoring a deprecated rule are a person's too. Every one of these calls `require_human`
(the store on `pin`, `unpin`, `block` and `unblock`; the queue on approve and reject;
`review.actions.restore`), and every refusal is one error, `Refused` (code `refused`).

Where agents and people are told apart (the MCP server, the hooks, a PostgreSQL playbook's
agent login), an agent applies evidence and new candidates only (`may_apply`, from the
vocabulary's `AGENT_APPLIES`); its other deltas, which change or retire rules others rely
on, wait for a person (`review.agent.curate_as_agent` stages them). `curate` itself
applies all six.
"""

from __future__ import annotations

from .errors import Refused
from .terms import AGENT_APPLIES, HUMAN


def require_human(actor: str, action: str) -> None:
    """Refuse `action` (e.g. "pin a bullet") unless a human asked for it."""
    if actor != HUMAN:
        raise Refused(f"only a human can {action} (actor was {actor!r})")


def may_apply(actor: str, delta_type: str) -> bool:
    """Whether `actor` applies a delta of this type itself (a person: any; an agent:
    evidence and new candidates); the others wait for a person in the review queue."""
    return actor == HUMAN or delta_type in AGENT_APPLIES


__all__ = ["AGENT_APPLIES", "HUMAN", "Refused", "may_apply", "require_human"]
