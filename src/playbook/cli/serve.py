"""mcp: the playbook served to agents over stdio."""

from __future__ import annotations

from . import app
from .common import CliError


@app.command()
def mcp() -> None:
    """Serve the playbook to agents over MCP (stdio): recall, rules, stats, feedback,
    outcomes, proposals, reflection. No tool approves, pins, blocks or deletes anything.
    Needs the 'mcp' extra (exit 1, error code not_installed, without it)."""
    from ..mcp_server import INSTALL, McpUnavailable, serve
    from .common import db_target, load_policy_option

    try:
        serve(db_target(), policy=load_policy_option())
    except McpUnavailable as exc:
        raise CliError("not_installed", str(exc), INSTALL) from None
