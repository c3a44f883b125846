"""Playbook's version, written once: `playbook --version`, `playbook.__version__`, the MCP
server's name, the demo cache's key, and the package metadata (pyproject.toml reads it)."""

__version__ = "0.1.0"
