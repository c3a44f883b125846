"""Who may do what: the human-only rule, and what an agent applies, in one place.

Pins and blocks are a reviewer's decisions: an agent that could unpin a rule could then
retire it, and one that could unblock a pattern could add it. The store enforces this on
`pin`, `unpin`, `block` and `unblock` by calling `require_human`.

Where agents and people are told apart (the MCP server, the hooks, a PostgreSQL playbook's
agent login), an agent applies evidence and new candidates only (`AGENT_APPLIES`); its
other deltas, which change or retire rules others rely on, wait for a person
(`curation.agent.curate_as_agent` stages them). `curate` itself applies all six.
"""

from __future__ import annotations

from .errors import Refused
from .terms import AGENT_APPLIES, HUMAN  # noqa: F401  (AGENT_APPLIES: part of this module's API)


def require_human(actor: str, action: str) -> None:
    """Refuse `action` (e.g. "pin a bullet") unless a human asked for it."""
    if actor != HUMAN:
        raise Refused(f"only a human can {action} (actor was {actor!r})")
