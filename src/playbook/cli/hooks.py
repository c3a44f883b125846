"""hook, hooks: Playbook inside the agent's lifecycle (Claude Code hooks, Codex notify).

`playbook hook EVENT` is what an agent runs: it always exits 0 and prints only the context
for the agent (see `playbook.hooks.run`). `playbook hooks install|uninstall AGENT` is what a
person runs once, to wire those hooks into the agent's settings.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Callable
from enum import StrEnum
from pathlib import Path
from typing import TYPE_CHECKING

import typer

from ..core.policy import DEFAULT_POLICY
from .common import CliError, emit, json_option, load_policy_option, set_json, state
from .registry import app

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
    from ..hooks.run import run_hook  # lazy: every typer command

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
            read_db=state.read_db or os.environ.get("PLAYBOOK_READ_DB") or None,
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

_USER = typer.Option(
    False, "--user", help="This user's settings (~/.claude/settings.json; Codex: $CODEX_HOME)."
)
_PROJECT = typer.Option(
    False,
    "--project",
    help="The repository's settings, committed for the team (Claude Code's default).",
)
_LOCAL = typer.Option(
    False, "--local", help="Claude Code: the project's settings.local.json, this machine's only."
)
_REFLECTOR = typer.Option(
    None,
    "--reflector",
    help="Reflect each session with the agent's own CLI run headless: claude or codex "
    "(a model call per session end; the install says what it costs).",
)


@hooks_app.command("install")
def hooks_install(
    agent: Agent = typer.Argument(..., help="claude-code or codex."),
    user: bool = _USER,
    project: bool = _PROJECT,
    local: bool = _LOCAL,
    reflector: str | None = _REFLECTOR,
    dry_run: bool = typer.Option(False, "--dry-run", help="Print the change; write nothing."),
    json_out: bool = json_option(),
) -> None:
    """Add Playbook's hooks to the agent's settings, keeping everything else.

    Claude Code: SessionStart, UserPromptSubmit and SessionEnd run `playbook hook …`, in the
    project's .claude/settings.json when the commands work on any teammate's machine, else
    in .claude/settings.local.json. Codex: SessionStart, UserPromptSubmit and Stop in
    $CODEX_HOME/hooks.json (--project: the repository's .codex/hooks.json) and the MCP
    server; it names the export that writes the protocol and the rules into AGENTS.md.
    Installing twice changes nothing.
    """
    set_json(json_out)
    from ..hooks import install as inst  # lazy: every typer command
    from ..hooks.session_end import REFLECTORS  # lazy: every typer command

    scope = _scope(agent, user, project, local)
    if reflector is not None and reflector not in REFLECTORS:
        raise CliError(
            "usage", f"--reflector: expected one of {', '.join(REFLECTORS)}, not {reflector!r}"
        )
    req = inst.Request(
        agent=agent.value,
        scope=scope,
        cwd=Path.cwd(),
        db=state.db,
        policy=Path(state.policy).expanduser() if state.policy else None,
        reflector=reflector,
    )
    plans, notes = _planned(lambda: inst.plan_install(req))
    plans = [p for p in plans if p.before is not None or p.after is not None]
    notes += _playbook_notes()
    if reflector is not None:
        policy = load_policy_option() or DEFAULT_POLICY
        notes.append(
            inst.reflector_note(
                reflector, policy.reflect_prompt_chars, policy.reflect_max_iterations
            )
        )
    _carry_out(plans, notes, dry_run, installing=True)


@hooks_app.command("uninstall")
def hooks_uninstall(
    agent: Agent = typer.Argument(..., help="claude-code or codex."),
    user: bool = _USER,
    project: bool = _PROJECT,
    dry_run: bool = typer.Option(False, "--dry-run", help="Print the change; write nothing."),
    json_out: bool = json_option(),
) -> None:
    """Take out exactly what `hooks install` added: each file back, byte for byte, when it
    has not changed since; otherwise only Playbook's entries."""
    set_json(json_out)
    from ..hooks import install as inst  # lazy: every typer command

    scope = _scope(agent, user, project, False)
    if agent is Agent.claude_code and scope == "local":
        scope = "project"
    paths = inst.uninstall_paths(agent.value, scope, Path.cwd())
    plans = _planned(lambda: ([inst.plan_uninstall(p, kind) for p, kind in paths], []))[0]
    present = [p for p in plans if p.before is not None] or plans[:1]
    _carry_out(present, [], dry_run, installing=False)


def _scope(agent: Agent, user: bool, project: bool, local: bool) -> str:
    if sum((user, project, local)) > 1:
        raise CliError("usage", "choose one of --user, --project and --local")
    if local and agent is Agent.codex:
        raise CliError("usage", "--local is for claude-code (Codex has no per-project local file)")
    if user:
        return "user"
    if local:
        return "local"
    if agent is Agent.codex:
        return "project" if project else "user"
    return "project"


def _playbook_notes() -> list[str]:
    """Which playbook the hooks use from here, and whether it is there yet."""
    from ..hooks.install import project_root  # lazy: every typer command
    from ..project.config import ProjectConfigError, locate_playbook  # lazy: every typer command
    from ..store import holds_playbook, resolve_target  # lazy: every typer command
    from ..store.urls import has_password  # lazy: every typer command

    try:
        located = locate_playbook(state.db, project_root(Path.cwd()))
    except ProjectConfigError as exc:
        return [f"the hooks will find no playbook here: {exc}"]
    where = resolve_target(located.target)
    notes = [f"from this project the hooks use the playbook at {where} ({located.describe()})"]
    if not holds_playbook(where):
        notes.append(f"no playbook at {where} yet: the hooks do nothing until 'playbook init'")
    if located.source == "--db" and not where.is_file and has_password(where.location):
        notes.append(
            "the database URL's password is not written in the agent's settings: libpq "
            "reads it from ~/.pgpass or $PGPASSWORD where the agent runs (see 'A shared "
            "playbook for a team' in the README)"
        )
    return notes


def _planned(make: Callable[[], tuple[list[Plan], list[str]]]) -> tuple[list[Plan], list[str]]:
    from ..hooks.install import InstallError  # lazy: every typer command

    try:
        return make()
    except InstallError as exc:
        raise CliError("invalid_input", str(exc)) from None


def _carry_out(plans: list[Plan], notes: list[str], dry_run: bool, *, installing: bool) -> None:
    from ..core.files import UnsafePath  # lazy: every typer command
    from ..hooks.install import apply, check  # lazy: every typer command

    if not dry_run:
        try:
            check(plans)  # all the files can be written, or none is
        except UnsafePath as exc:
            raise CliError(
                "file_error",
                f"{exc}; nothing was changed",
                "to edit that file, see the change with --dry-run and make it by hand",
            ) from None
        for plan in plans:
            try:
                apply(plan, installing=installing)
            except UnsafePath as exc:
                raise CliError("file_error", str(exc)) from None
            except OSError as exc:
                raise CliError("file_error", f"cannot write {plan.path}: {exc.strerror}") from None
    verb = "would change" if dry_run else "changed"
    files = []
    human: list[str] = []
    for plan in plans:
        if not plan.changes:
            human.append(f"{plan.path}: already as it should be, nothing changed")
        elif plan.restore:
            human.append(f"{plan.path}: {verb} back to the original, byte for byte")
        else:
            human.append(f"{plan.path}: {verb}")
        human += [f"note: {n}" for n in plan.notes]
        if dry_run and plan.changes:
            human.append(plan.diff().rstrip("\n"))
        files.append(
            {
                "path": str(plan.path),
                "changed": plan.changes and not dry_run,
                "restored": plan.restore,
                "diff": plan.diff(),
                "notes": plan.notes,
            }
        )
    human += [f"note: {n}" for n in notes]
    data = {
        "files": files,
        "changed": any(f["changed"] for f in files),
        "dry_run": dry_run,
        "notes": notes,
    }
    emit(data, "\n".join(human))
