"""Two roles for a team's playbook: agents record, reviewers decide, and the database says so.

`playbook pg roles` runs (or, with `--sql`, prints) this SQL in the playbook's schema:

* the **agent** role (`playbook_agent`) may read everything and record what agents record:
  rules (curate), feedback, outcomes and their receipts, proposals for review, conflict
  flags, the decision log, caches and watermarks. Its grants leave out the human columns
  and tables: it cannot pin or unpin (`bullets.pinned`), block or unblock
  (`blocked_patterns`), approve or reject (`proposals` updates) or resolve a conflict
  (`conflicts` updates);
* a **guard trigger** refuses, inside PostgreSQL, what grants cannot express: an agent
  moving a pinned rule, bringing a deprecated one back (a restore) or making a draft live
  (`playbook activate`), inserting a pinned rule or a decided proposal, and writing
  anything in a human's name (`actor = 'human'`);
* the **human** role (`playbook_human`) may do all of that (a reviewer's workbench and CLI).

Both are group roles (NOLOGIN): give each person or agent a login role in one of them
(`CREATE ROLE alice LOGIN PASSWORD '…' IN ROLE playbook_human`). The guard's refusals and
the missing grants come out as `PermissionDenied` (code `permission_denied`). Run it again
after an upgrade that adds tables. The schema's owner (who ran `playbook init`) and
superusers are neither, and keep every right.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

from ...errors import UsageError

if TYPE_CHECKING:
    from ..store import PlaybookStore

AGENT = "playbook_agent"
HUMAN = "playbook_human"

# What an agent's role may write, table by table ("*": the whole row).
AGENT_INSERT = (
    "bullets", "bullet_tokens", "vocab", "bullet_tags", "feedback", "receipts", "evidence",
    "edges", "maturity_log", "cache_blob", "watermarks", "proposals", "conflicts",
    "decisions", "meta",
)  # fmt: skip
AGENT_UPDATE = {
    "bullets": ("state", "valid_to", "maturity", "maturity_due", "rev"),  # not pinned
    "vocab": ("*",),
    "evidence": ("*",),
    "cache_blob": ("*",),
    "watermarks": ("*",),
    "meta": ("*",),
    "_playbook_changes": ("*",),
}
# The guard: (trigger name, table, event, condition) -> each fires playbook_agent_guard().
GUARDS = (
    ("agent_guard_pin", "bullets", "INSERT", "NEW.pinned <> 0"),
    ("agent_guard_rule", "bullets", "UPDATE",
     "OLD.pinned <> 0 OR OLD.maturity = 'deprecated' OR NEW.pinned <> OLD.pinned "
     "OR (NEW.state = 'active' AND OLD.state <> 'active')"),
    ("agent_guard_actor", "feedback", "INSERT", "NEW.actor = 'human'"),
    ("agent_guard_actor", "decisions", "INSERT", "NEW.actor = 'human'"),
    ("agent_guard_actor", "blocked_patterns", "INSERT", "NEW.actor = 'human'"),
    ("agent_guard_decided", "proposals", "INSERT", "NEW.status <> 'pending'"),
)  # fmt: skip

_NAME = re.compile(r"^[a-z_][a-z0-9_]{0,62}$")


def _check(name: str) -> str:
    if not _NAME.match(name):
        raise UsageError(f"a role name is lowercase letters, digits and _ ({name!r} is not)")
    return name


def roles_sql(schema: str, agent: str = AGENT, human: str = HUMAN) -> list[str]:
    """The statements that create (or bring up to date) the two roles on `schema`."""
    agent, human = _check(agent), _check(human)
    s = '"' + schema.replace('"', '""') + '"'
    out = [
        f"""DO $$ BEGIN
    IF NOT EXISTS (SELECT 1 FROM pg_roles WHERE rolname = '{agent}') THEN
        CREATE ROLE {agent} NOLOGIN;
    END IF;
    IF NOT EXISTS (SELECT 1 FROM pg_roles WHERE rolname = '{human}') THEN
        CREATE ROLE {human} NOLOGIN;
    END IF;
END $$""",
        f"GRANT USAGE ON SCHEMA {s} TO {agent}, {human}",
        f"GRANT SELECT ON ALL TABLES IN SCHEMA {s} TO {agent}, {human}",
        f"GRANT INSERT, UPDATE, DELETE ON ALL TABLES IN SCHEMA {s} TO {human}",
        f"GRANT USAGE, SELECT, UPDATE ON ALL SEQUENCES IN SCHEMA {s} TO {human}",
        f"GRANT USAGE, SELECT ON ALL SEQUENCES IN SCHEMA {s} TO {agent}",
        f"ALTER DEFAULT PRIVILEGES IN SCHEMA {s} GRANT SELECT ON TABLES TO {agent}, {human}",
    ]
    out += [f"GRANT INSERT ON {s}.{t} TO {agent}" for t in AGENT_INSERT]
    for table, columns in AGENT_UPDATE.items():
        what = "UPDATE" if columns == ("*",) else f"UPDATE ({', '.join(columns)})"
        out.append(f"GRANT {what} ON {s}.{table} TO {agent}")
    out.append(
        f"""CREATE OR REPLACE FUNCTION {s}.playbook_agent_guard() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
    IF NOT pg_has_role(current_user, '{agent}', 'MEMBER')
       OR pg_has_role(current_user, '{human}', 'MEMBER') THEN
        RETURN NEW;  -- a reviewer, the owner or a superuser
    END IF;
    IF TG_TABLE_NAME = 'bullets' AND TG_OP = 'UPDATE' THEN
        IF OLD.pinned <> 0 AND (NEW.maturity <> OLD.maturity OR NEW.state <> OLD.state) THEN
            RAISE EXCEPTION USING ERRCODE = 'insufficient_privilege',
                MESSAGE = 'an agent cannot change a pinned rule (' || OLD.id || ')';
        END IF;
        IF OLD.maturity = 'deprecated' AND NEW.maturity <> 'deprecated' THEN
            RAISE EXCEPTION USING ERRCODE = 'insufficient_privilege',
                MESSAGE = 'only a reviewer restores a deprecated rule (' || OLD.id || ')';
        END IF;
        IF NEW.pinned <> OLD.pinned THEN
            RAISE EXCEPTION USING ERRCODE = 'insufficient_privilege',
                MESSAGE = 'only a reviewer pins or unpins a rule (' || OLD.id || ')';
        END IF;
        IF NEW.state = 'active' AND OLD.state <> 'active' THEN
            RAISE EXCEPTION USING ERRCODE = 'insufficient_privilege',
                MESSAGE = 'only a reviewer makes a draft live (' || OLD.id || ')';
        END IF;
        RETURN NEW;
    END IF;
    RAISE EXCEPTION USING ERRCODE = 'insufficient_privilege',
        MESSAGE = CASE TG_NAME
            WHEN 'agent_guard_pin' THEN 'only a reviewer pins a rule'
            WHEN 'agent_guard_decided' THEN 'only a reviewer decides a proposal'
            ELSE 'an agent cannot act as a human (' || TG_TABLE_NAME || '.actor)' END;
END $$""",
    )
    for name, table, event, condition in GUARDS:
        out.append(f"DROP TRIGGER IF EXISTS {name} ON {s}.{table}")
        out.append(
            f"CREATE TRIGGER {name} BEFORE {event} ON {s}.{table} FOR EACH ROW "
            f"WHEN ({condition}) EXECUTE FUNCTION {s}.playbook_agent_guard()"
        )
    return out


def install_roles(store: PlaybookStore, agent: str = AGENT, human: str = HUMAN) -> list[str]:
    """Create the roles on `store`'s playbook (one transaction); returns the SQL run."""
    if store.sql.dialect != "postgresql":
        raise UsageError("roles are for a PostgreSQL playbook (--db postgresql://...)")
    statements = roles_sql(store.sql.schema, agent, human)  # type: ignore[attr-defined]
    with store.transaction():
        for statement in statements:
            store.sql.execute(statement)
    return statements


def schema_of(store: PlaybookStore) -> str:
    """The PostgreSQL schema that holds `store`'s playbook."""
    if store.sql.dialect != "postgresql":
        raise UsageError("roles are for a PostgreSQL playbook (--db postgresql://...)")
    return str(store.sql.schema)  # type: ignore[attr-defined]
