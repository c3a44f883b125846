"""The agent's protocol: one text, told the same way wherever an agent meets the playbook.

SessionStart's context, the block `export --format agents-md` writes into AGENTS.md, the
Codex install's paragraph and the MCP server's instructions all say this, so an agent learns
the whole loop in a few lines: recall, cite what it used, and write a lesson down when it
learned one. The zero-model reflector (``reflectors.heuristic``) reads exactly these marks.
"""

from __future__ import annotations

from ..core.terms import HARM_REASONS

__all__ = ["protocol_lines"]


def protocol_lines(*, recall_hint: str = 'playbook recall "<a few words>"') -> list[str]:
    """The protocol as Markdown list items; `recall_hint` says how this agent recalls more.

    No line starts with a marker, and the examples use ``<id>`` (not an id): an agent's
    transcript that records this text gives the reflector nothing to read back. The markers
    are not in code spans either, so an agent copying the form writes them bare."""
    return [
        f"- Rules from this project's playbook are given to you with their ids; "
        f"`{recall_hint}` finds more.",
        "- Cite each rule you used, in your reply: [playbook: helpful <id>] when it helped, "
        "[playbook: harmful <id> <reason>] when it misled you (reason: "
        + ", ".join(HARM_REASONS)
        + ").",
        "- When you learn something worth keeping for this project (a fix that worked, a "
        "trap you fell into), write it on a line of its own that starts with RULE: (what to "
        "do) or AVOID: (what not to do), one short sentence. A person reviews it before it "
        "becomes a rule.",
    ]
