"""mcp: the playbook served to agents over stdio."""

from __future__ import annotations

import os

from .common import CliError, db_target, load_policy_option, read_target
from .registry import app


@app.command()
def mcp() -> None:
    """Serve the playbook to agents over MCP (stdio): recall, rules, stats, feedback,
    outcomes, proposals, reflection. No tool approves, pins, blocks or deletes anything.
    With --read-db / $PLAYBOOK_READ_DB, recall, rules, stats and AGENTS.md read the replica.
    Needs the 'mcp' extra (exit 1, error code not_installed, without it)."""
    from ..mcp.server import INSTALL, McpUnavailable, serve  # lazy: every typer command
    from ..project.workspace import workspace_of  # lazy: every typer command

    try:  # the agent starts the server in the project's folder
        here = workspace_of(os.getcwd())
    except OSError:  # a folder removed since
        here = None
    try:
        serve(
            db_target(),
            policy=load_policy_option(),
            workspace=here.key if here else None,
            read_db=read_target(),
        )
    except McpUnavailable as exc:
        raise CliError("not_installed", str(exc), INSTALL) from None
