"""How the playbook meets a project: which workspace a folder is, and what its agents are told.

- ``workspace``: one identity for a repository on every teammate's machine (the normalised
  remote URL, else the folder's name), used by hooks, recall, import and the workbench;
- ``protocol``: the agent's protocol, one text for SessionStart, AGENTS.md and MCP.
"""
