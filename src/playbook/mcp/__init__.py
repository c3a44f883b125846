"""`playbook mcp`: the playbook served to agents over MCP (stdio)."""
