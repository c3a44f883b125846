"""What the connection's login may do on a team's playbook, as PostgreSQL itself says.

An agent's login (a member of the agents' role `playbook pg roles` makes, `playbook_agent`
by default, under whatever name it was given) cannot decide a proposal: only the
reviewers' role, the schema's owner and superusers may update `proposals`. That right is
the one asked here, so the answer holds for any role names and needs no list of them. A
SQLite file has no logins: whoever opens it is its owner.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from ..store import PlaybookStore

__all__ = ["is_agent_login"]


def is_agent_login(store: PlaybookStore) -> bool:
    """Whether the connection's login may not decide proposals, as an agent's may not
    (always False on SQLite)."""
    if store.sql.dialect != "postgresql":
        return False
    schema = str(store.sql.schema)  # type: ignore[attr-defined]
    may_decide = store.sql.scalar(
        "SELECT has_table_privilege(quote_ident(?) || '.proposals', 'UPDATE')", (schema,)
    )
    return not may_decide
