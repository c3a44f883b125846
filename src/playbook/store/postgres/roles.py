"""Two roles for a team's playbook: agents record, reviewers decide, and the database says so.

`playbook pg roles` runs (or, with `--sql`, prints) this SQL in the playbook's schema:

* the **agent** role (`playbook_agent`) may read everything and do what the API lets an
  agent do: add candidate rules, append feedback, outcomes (their receipts) and proposals,
  flag a conflict, log its own decisions, keep caches and reflection watermarks. Each row
  it writes is checked by PostgreSQL (`guard.py`: row-level security on inserts, triggers
  on updates), whatever client it uses; what is derived from the log (the evidence cache,
  `meta`, a rule's maturity, the maturity log's moves) it has no grant for, and the
  functions of `scoring_sql.py` compute and write it on its behalf, with the policy this
  was run with. So it cannot pin, block, approve, reject, resolve, deprecate, replace,
  merge, restore, promote itself, retire a rule its harm has not turned, or write in a
  human's name;
* the **human** role (`playbook_human`) may do all of that (a reviewer's workbench and CLI).

Both are group roles (NOLOGIN): give each person or agent a login role in one of them
(`CREATE ROLE alice LOGIN PASSWORD '…' IN ROLE playbook_human`). The refusals come out as
`PermissionDenied` (code `permission_denied`), with the reason. Run it again after an
upgrade that adds tables, and after changing the policy (its constants are written into
the database's maturity pass). The schema's owner (who ran `playbook init`) and superusers
are neither, and keep every right.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

from ...core.errors import UsageError
from ...core.policy import DEFAULT_POLICY
from ..tables import TABLES
from .guard import INSERT_CHECKS, UPDATES, checks_sql, policies_sql
from .matching_sql import matching_sql
from .scoring_sql import CALLED, scoring_sql
from .statements import quoted

if TYPE_CHECKING:
    from ...core.policy import Policy
    from ..base import Transaction
    from ..executor import Executor

AGENT = "playbook_agent"
HUMAN = "playbook_human"

_NAME = re.compile(r"^[a-z_][a-z0-9_]{0,62}$")
# What an earlier version of this SQL made, and this one replaces.
_OLD = (
    "DROP TRIGGER IF EXISTS agent_guard_pin ON {s}.bullets",
    "DROP TRIGGER IF EXISTS agent_guard_actor ON {s}.feedback",
    "DROP TRIGGER IF EXISTS agent_guard_actor ON {s}.decisions",
    "DROP TRIGGER IF EXISTS agent_guard_actor ON {s}.blocked_patterns",
    "DROP TRIGGER IF EXISTS agent_guard_decided ON {s}.proposals",
    "DROP TRIGGER IF EXISTS agent_guard_rule ON {s}.bullets",
    "DROP FUNCTION IF EXISTS {s}.playbook_agent_guard()",
)


def _check(name: str) -> str:
    if not _NAME.match(name):
        raise UsageError(f"a role name is lowercase letters, digits and _ ({name!r} is not)")
    return name


def roles_sql(
    schema: str, agent: str = AGENT, human: str = HUMAN, policy: Policy | None = None
) -> list[str]:
    """The statements that create (or bring up to date) the two roles on `schema`, with
    `policy`'s constants in the database's own maturity pass (the defaults without one)."""
    agent, human = _check(agent), _check(human)
    policy = policy or DEFAULT_POLICY
    s = quoted(schema)
    tables = [*TABLES, "_playbook_changes"]
    out = [
        f"""DO $$ BEGIN
    IF NOT EXISTS (SELECT 1 FROM pg_roles WHERE rolname = '{agent}') THEN
        CREATE ROLE {agent} NOLOGIN;
    END IF;
    IF NOT EXISTS (SELECT 1 FROM pg_roles WHERE rolname = '{human}') THEN
        CREATE ROLE {human} NOLOGIN;
    END IF;
END $$""",
        *(statement.format(s=s) for statement in _OLD),
        f"GRANT USAGE ON SCHEMA {s} TO {agent}, {human}",
        f"GRANT SELECT ON ALL TABLES IN SCHEMA {s} TO {agent}, {human}",
        f"GRANT INSERT, UPDATE, DELETE ON ALL TABLES IN SCHEMA {s} TO {human}",
        f"GRANT USAGE, SELECT, UPDATE ON ALL SEQUENCES IN SCHEMA {s} TO {human}",
        f"GRANT USAGE, SELECT ON ALL SEQUENCES IN SCHEMA {s} TO {agent}",
        f"ALTER DEFAULT PRIVILEGES IN SCHEMA {s} GRANT SELECT ON TABLES TO {agent}, {human}",
        # What an agent may write (an earlier version granted more: taken back first).
        f"REVOKE INSERT, UPDATE, DELETE, TRUNCATE ON ALL TABLES IN SCHEMA {s} FROM {agent}",
    ]
    out += [f"GRANT INSERT ON {s}.{t} TO {agent}" for t in INSERT_CHECKS]
    for table, columns in UPDATES.items():
        what = "UPDATE" if columns == ("*",) else f"UPDATE ({', '.join(columns)})"
        out.append(f"GRANT {what} ON {s}.{table} TO {agent}")
    out += scoring_sql(schema, policy)
    out += matching_sql(s, policy)
    out += checks_sql(s, policy, agent, human)
    for signature in CALLED:
        out.append(f"REVOKE EXECUTE ON FUNCTION {s}.{signature} FROM PUBLIC")
        out.append(f"GRANT EXECUTE ON FUNCTION {s}.{signature} TO {agent}, {human}")
    out += policies_sql(s, agent, human, tables)
    return out


class Roles:
    """The roles of a PostgreSQL playbook (`store.roles`): made with the store's policy
    written into the database's maturity pass."""

    def __init__(self, sql: Executor, policy: Policy, transaction: Transaction) -> None:
        self.sql = sql
        self.policy = policy
        self.transaction = transaction

    def schema(self) -> str:
        """The PostgreSQL schema that holds the playbook."""
        if self.sql.dialect != "postgresql":
            raise UsageError("roles are for a PostgreSQL playbook (--db postgresql://...)")
        return self.sql.schema

    def install(self, agent: str = AGENT, human: str = HUMAN) -> list[str]:
        """Create the roles on the playbook (one transaction), with the store's policy in
        the database's maturity pass; returns the SQL run."""
        statements = roles_sql(self.schema(), agent, human, self.policy)
        with self.transaction():
            for statement in statements:
                self.sql.execute(statement)
        return statements
