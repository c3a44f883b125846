"""hook, hooks: Playbook inside the agent's lifecycle (Claude Code hooks, Codex notify).

`playbook hook EVENT` is what an agent runs: it always exits 0 and prints only the context
for the agent (see `playbook.hooks.run`). `playbook hooks install|uninstall AGENT` is what a
person runs once, to wire those hooks into the agent's settings.
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from enum import StrEnum
from pathlib import Path
from typing import TYPE_CHECKING

import typer

from . import app
from .common import CliError, emit, json_option, set_json, state, target

if TYPE_CHECKING:
    from ..hooks.install import Plan


@app.command("hook")
def hook(
    event: str = typer.Argument(
        ..., metavar="EVENT", help="prompt, session-start, session-end or codex-notify."
    ),
    payload: str | None = typer.Argument(
        None, metavar="[JSON]", help="The hook input, when not on stdin (Codex's notify)."
    ),
    reflector: str | None = typer.Option(
        None,
        "--reflector",
        help="session-end: reflect with the agent's own CLI (claude or codex); default "
        "$PLAYBOOK_REFLECTOR, else the RULE:/AVOID: lines only.",
    ),
) -> None:
    """Run one agent hook: the agent's hook JSON on stdin, context for the agent on stdout.

    Without --db (or $PLAYBOOK_DB) the playbook is the one the session's folder finds:
    the project's .playbook.toml, else the default file. Never fails: whatever goes wrong
    is one line in the hook log, and the exit status is 0.
    """
    from ..hooks.run import run_hook

    policy = Path(state.policy).expanduser() if state.policy else None
    db = state.db or None  # found from the payload's cwd when not given
    raise typer.Exit(
        run_hook(
            event,
            sys.stdin.buffer,
            sys.stdout,
            db=db,
            policy=policy,
            argument=payload,
            reflector=reflector,
        )
    )


class Agent(StrEnum):
    claude_code = "claude-code"
    codex = "codex"


hooks_app = typer.Typer(
    name="hooks",
    help="Wire Playbook's hooks into an agent's settings, or take them out.",
    no_args_is_help=True,
    rich_markup_mode=None,
)
app.add_typer(hooks_app, name="hooks")

_USER = typer.Option(False, "--user", help="~/.claude/settings.json instead of the project's.")
_PROJECT = typer.Option(
    False, "--project", help="The project's .claude/settings.json (the default)."
)


@hooks_app.command("install")
def hooks_install(
    agent: Agent = typer.Argument(..., help="claude-code or codex."),
    user: bool = _USER,
    project: bool = _PROJECT,
    dry_run: bool = typer.Option(False, "--dry-run", help="Print the change; write nothing."),
    json_out: bool = json_option(),
) -> None:
    """Add Playbook's hooks to the agent's settings, keeping everything else.

    Claude Code: SessionStart, UserPromptSubmit and SessionEnd run `playbook hook …` on this
    playbook. Codex: the MCP server and, if free, the notify program; prints the AGENTS.md
    paragraph that asks the agent to recall. Installing twice changes nothing.
    """
    set_json(json_out)
    from ..hooks import install as inst

    path = _settings_path(agent, user, project)
    policy = Path(state.policy).expanduser() if state.policy else None
    where = target()
    base = inst.hook_command(where, policy)
    planner = inst.plan_claude if agent is Agent.claude_code else inst.plan_codex
    plan = _plan(lambda: planner(path, base))
    from ..store import holds_playbook

    if not holds_playbook(where):
        plan.notes.append(f"no playbook at {where} yet: the hooks do nothing until 'playbook init'")
    if inst.has_password(where):
        plan.notes.append(
            "the database URL carries a password, which is now written in the agent's "
            "settings: prefer a ~/.pgpass file or $PGPASSWORD"
        )
    _carry_out(plan, dry_run, installing=True)
    if agent is Agent.codex and not json_out:
        sys.stdout.write("\nAdd this to the project's AGENTS.md:\n\n" + inst.AGENTS_MD)


@hooks_app.command("uninstall")
def hooks_uninstall(
    agent: Agent = typer.Argument(..., help="claude-code or codex."),
    user: bool = _USER,
    project: bool = _PROJECT,
    dry_run: bool = typer.Option(False, "--dry-run", help="Print the change; write nothing."),
    json_out: bool = json_option(),
) -> None:
    """Take out exactly what `hooks install` added: the original file back, byte for byte,
    when it has not changed since; otherwise only Playbook's entries."""
    set_json(json_out)
    from ..hooks import install as inst

    path = _settings_path(agent, user, project)
    _carry_out(_plan(lambda: inst.plan_uninstall(path, agent.value)), dry_run, installing=False)


def _settings_path(agent: Agent, user: bool, project: bool) -> Path:
    from ..hooks import install as inst

    if user and project:
        raise CliError("usage", "choose one of --user and --project")
    if agent is Agent.codex:
        if user or project:
            raise CliError("usage", "--user and --project are for claude-code")
        return inst.codex_config_path()
    return inst.claude_settings_path(user=user)


def _plan(make: Callable[[], Plan]) -> Plan:
    from ..hooks.install import InstallError

    try:
        return make()
    except InstallError as exc:
        raise CliError("invalid_input", str(exc)) from None


def _carry_out(plan: Plan, dry_run: bool, *, installing: bool) -> None:
    from ..hooks.install import apply

    if not dry_run:
        try:
            apply(plan, installing=installing)
        except OSError as exc:
            raise CliError("file_error", f"cannot write {plan.path}: {exc.strerror}") from None
    verb = "would change" if dry_run else "changed"
    if not plan.changes:
        summary = f"{plan.path}: already as it should be, nothing changed"
    elif plan.restore:
        summary = f"{plan.path}: {verb} back to the original, byte for byte"
    else:
        summary = f"{plan.path}: {verb}"
    data = {
        "path": str(plan.path),
        "changed": plan.changes and not dry_run,
        "dry_run": dry_run,
        "restored": plan.restore,
        "diff": plan.diff(),
        "notes": plan.notes,
    }
    human = [summary, *(f"note: {n}" for n in plan.notes)]
    if dry_run and plan.changes:
        human.append(plan.diff().rstrip("\n"))
    emit(data, "\n".join(human))
