"""pg: what a team's PostgreSQL playbook needs besides the data (roles for agents and
reviewers)."""

from __future__ import annotations

import typer

from .common import CliError, emit, json_option, open_store, set_json, target
from .registry import app

pg_app = typer.Typer(
    name="pg",
    help="A team's playbook on PostgreSQL: roles for agents and reviewers.",
    no_args_is_help=True,
    rich_markup_mode=None,
)
app.add_typer(pg_app, name="pg")


@pg_app.command("roles")
def roles(
    agent: str = typer.Option("playbook_agent", "--agent", help="The agents' group role."),
    human: str = typer.Option("playbook_human", "--human", help="The reviewers' group role."),
    sql: bool = typer.Option(False, "--sql", help="Print the SQL instead of running it."),
    json_out: bool = json_option(),
) -> None:
    """Create the agent and reviewer roles on the --db playbook (run it as the schema's
    owner, with the right to create roles). Agents may record rules, feedback, outcomes
    and proposals; approving, pinning, blocking, restoring and resolving conflicts are
    refused inside PostgreSQL unless the role is a reviewer's. Safe to run again; run it
    again after changing the policy (--policy): the database's own fold takes its constants,
    and the evidence kept at another half-life is folded again at its own, in the same
    transaction (as doctor --fix does)."""
    set_json(json_out)
    from ..store.postgres.roles import roles_sql  # lazy: every typer command

    where = target()
    if where.is_file:
        raise CliError("usage", f"roles are for a PostgreSQL playbook, not a file ({where})")
    folded = 0
    with open_store(create=False) as store:
        schema = store.roles.schema()
        if sql:
            statements = roles_sql(schema, agent, human)
        else:  # the database's own fold and the evidence cache at one half-life, at once
            with store.transaction():
                statements = store.roles.install(agent, human)
                folded = store.refold()
    data = {"agent": agent, "human": human, "schema": schema, "ran": not sql, "sql": statements}
    data["folded_again"] = folded
    if sql:
        emit(data, ";\n\n".join(statements) + ";")
        return
    emit(
        data,
        f"roles ready on schema {schema}: {agent} (records; cannot approve, pin, block or "
        f"restore) and {human} (reviews)\n"
        f"give each login one of them: CREATE ROLE alice LOGIN PASSWORD '...' IN ROLE {human};"
        + (
            f"\nfolded again at this policy's half-life: the evidence of {folded} "
            f"rule{'' if folded == 1 else 's'}"
            if folded
            else ""
        ),
    )
