"""Who may do what: the human-only rule, in one place.

Pins and blocks are a reviewer's decisions: an agent that could unpin a rule could then
retire it, and one that could unblock a pattern could add it. The store enforces this on
`pin`, `unpin`, `block` and `unblock` by calling `require_human`.
"""

from __future__ import annotations

from .errors import Refused

HUMAN = "human"


def require_human(actor: str, action: str) -> None:
    """Refuse `action` (e.g. "pin a bullet") unless a human asked for it."""
    if actor != HUMAN:
        raise Refused(f"only a human can {action} (actor was {actor!r})")
