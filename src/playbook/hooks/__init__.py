"""Agent hooks (SPEC §10): Playbook inside the agent's own lifecycle.

Claude Code runs a command at `SessionStart`, `UserPromptSubmit` and `SessionEnd`, with the
event as JSON on stdin, and adds what the command prints
(`{"hookSpecificOutput": {"additionalContext": ...}}`) to the agent's context. This package
is what `playbook hook EVENT` and `playbook hooks install|uninstall` do:

- ``run``: the hook entry point; whatever goes wrong, a hook exits 0, prints nothing into
  the agent's context and writes one line to its log.
- ``payload``: the hook's JSON (Claude Code's, which Codex's hooks send too), read leniently.
- ``context``: the agent's protocol at a session's start, and the rules, anti-patterns and
  deprecated warnings given to the agent, with ids to cite, within a character budget,
  never twice in one session.
- ``session_end``, ``worker``: the session's transcript reflected into the review queue by
  a detached process, a part at a time, and the agent's citations recorded as feedback.
- ``state``: the hook log, the per-session memory, all the user's only.
- ``upgrade``: a playbook at an older schema, never upgraded by a hook (minutes of work
  under a deadline of seconds): read as it is if it can be, one log line, and the user told
  once per session to run ``playbook migrate``.
- ``install`` (with ``install_plan``, ``install_settings``, ``install_codex``,
  ``jsonedit``): Claude Code's and Codex's settings, edited in place without touching
  anything else; what a team commits holds nothing of one machine.

Nothing here imports the CLI: the command line resolves the playbook's path and passes it.
"""
