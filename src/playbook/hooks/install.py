"""`playbook hooks install|uninstall claude-code|codex`: edit an agent's settings, touching
nothing but Playbook's own entries.

Where the hooks go (`plan_install`):

- Claude Code, a project (the default): the project's ``.claude/settings.json`` is the file a
  team commits, so it only ever gets commands that work on every teammate's machine:
  ``playbook hook EVENT``, found on the PATH, on the playbook the session's folder finds
  (`project.config`). What belongs to this machine (a ``playbook`` that is not on the PATH,
  a ``--db`` or ``--policy`` given here) makes the hooks this machine's: they go to
  ``.claude/settings.local.json`` instead (``--local`` asks for that), and the install says
  why. ``--user``: ``~/.claude/settings.json``, this machine's.
- Codex: its hooks (``SessionStart``, ``UserPromptSubmit``, ``Stop``: the same input as
  Claude Code's) in ``$CODEX_HOME/hooks.json`` (``--project``: the repository's
  ``.codex/hooks.json``, portable commands only), the MCP server in ``config.toml``; where the
  config turns hooks off (``[features] hooks = false``), ``notify`` instead (each turn's end).
  Codex asks the user to trust a new hook (``/hooks``) before it runs it. The install
  names the AGENTS.md export (`agents_md_note`), which writes the agent's protocol and the
  live rules into the project's AGENTS.md.
- ``--reflector claude|codex``: the opt-in model reflector, this machine's choice: Claude
  Code's ``env`` setting ``PLAYBOOK_REFLECTOR`` (in ``settings.local.json``, or the user's
  settings), Codex's ``Stop`` command's ``--reflector``.

JSON files are edited in place (`jsonedit`): the file keeps its layout, and only Playbook's
entries change. Installing twice changes nothing. Uninstalling restores a file byte for byte
when it has not changed since the install (the original is kept under the state folder, mode
0600); when it has, only Playbook's entries are taken out and the other changes stay.
"""

from __future__ import annotations

import os
import shutil
import sys
from dataclasses import dataclass
from pathlib import Path

from ..store import resolve_target
from ..store.urls import url_without_password
from . import install_codex as codex
from .install_plan import InstallError, Plan, apply, check, load_backup, read_text, restored
from .install_settings import has_ours, plan_hooks, set_env, strip_hooks, strip_plan, then

__all__ = [
    "CLAUDE_EVENTS",
    "CODEX_EVENTS",
    "InstallError",
    "Plan",
    "agents_md_note",
    "apply",
    "check",
    "plan_install",
    "plan_uninstall",
]

CLAUDE_EVENTS = {  # Claude Code event -> `playbook hook` event
    "SessionStart": "session-start",
    "UserPromptSubmit": "prompt",
    "SessionEnd": "session-end",
}
CODEX_EVENTS = {  # Codex's: its Stop runs when each turn ends (it has no session end hook)
    "SessionStart": "session-start",
    "UserPromptSubmit": "prompt",
    "Stop": "session-end",
}
REFLECTOR_COST = {
    "claude": "one `claude -p` call at each session end",
    "codex": "one `codex exec` call at each turn's end (Codex's Stop hook)",
}


@dataclass
class Request:
    """What the person asked: the agent, where (`scope`: project, local, user), and what
    this machine adds (`db`, `policy` given here, a `reflector`)."""

    agent: str  # "claude-code" or "codex"
    scope: str  # "project", "local" or "user"
    cwd: Path
    db: str | None = None  # --db / $PLAYBOOK_DB given at install time
    policy: Path | None = None
    reflector: str | None = None


# ------------------------------------------------------------------------ where, what


def project_root(cwd: Path) -> Path:
    """The repository's top folder (where agents keep project settings), else `cwd`."""
    for folder in (cwd, *cwd.parents):
        if (folder / ".git").exists():
            return folder
    return cwd


def codex_home() -> Path:
    return Path(os.environ.get("CODEX_HOME") or Path.home() / ".codex")


def playbook_script() -> tuple[str, bool]:
    """How this Playbook is run: the console script beside this interpreter, and whether
    ``playbook`` on the PATH is that same script (then the bare name works here too)."""
    script = Path(sys.executable).with_name("playbook")
    found = shutil.which("playbook")
    if not script.exists():
        return "playbook", found is not None
    same = found is not None and os.path.realpath(found) == os.path.realpath(script)
    return str(script), same


def machine_reasons(req: Request) -> list[str]:
    """Why the hooks would not work on a teammate's machine (empty: they would)."""
    reasons = []
    if req.db is not None:
        reasons.append("--db (or $PLAYBOOK_DB) names this machine's playbook")
    if req.policy is not None:
        reasons.append("--policy names a file of this machine")
    if not playbook_script()[1]:
        reasons.append("playbook is not on the PATH here (the hooks run it by its full path)")
    return reasons


def hook_command(req: Request, portable: bool) -> list[str]:
    """The command line the agent runs, before ``hook EVENT``."""
    if portable:
        return ["playbook"]
    script, on_path = playbook_script()
    args = ["playbook" if on_path else script]
    if req.db is not None:
        where = resolve_target(req.db)  # a URL's password stays out of every file: libpq
        args += [  # reads it from ~/.pgpass or $PGPASSWORD (the install says so)
            "--db",
            str(where.path.resolve()) if where.is_file else url_without_password(where.location),
        ]
    if req.policy is not None:
        args += ["--policy", str(req.policy.resolve())]
    return args


AGENTS_MD_COMMAND = "playbook export --format agents-md -o AGENTS.md"


def agents_md_note(hooks_on: bool) -> str:
    """What a Codex install says about AGENTS.md: the export writes the protocol and the
    live rules there (a managed block), which is all Codex learns where no hook runs."""
    why = (
        "so that Codex sees the protocol and this project's rules without a hook too (and "
        "so does any other agent)"
        if hooks_on
        else "the only way Codex learns the protocol (cite the rules, write lessons down as "
        "RULE:/AVOID: lines) while its hooks are off"
    )
    return (
        f"AGENTS.md: in the repository, run {AGENTS_MD_COMMAND}, {why}: it writes a "
        "block of its own between markers, keeping the rest of the file; run it again "
        "when the rules change"
    )


# ------------------------------------------------------------------------ install


def plan_install(req: Request) -> tuple[list[Plan], list[str]]:
    """The edits an install makes (one per file) and what it tells the person."""
    if req.agent == "claude-code":
        return _install_claude(req)
    return _install_codex(req)


def _install_claude(req: Request) -> tuple[list[Plan], list[str]]:
    notes: list[str] = []
    if req.scope == "user":
        user = Path.home() / ".claude" / "settings.json"
        plan = plan_hooks(user, hook_command(req, False), CLAUDE_EVENTS)
        if req.reflector:
            plan = then(plan, lambda text: set_env(user, text, req.reflector))
        return [plan], notes
    folder = project_root(req.cwd) / ".claude"
    shared, local = folder / "settings.json", folder / "settings.local.json"
    reasons = machine_reasons(req)
    if req.scope == "project" and not reasons:
        plans = [plan_hooks(shared, hook_command(req, True), CLAUDE_EVENTS)]
        stale = strip_plan(local, "claude")  # an older install of this machine's
        if req.reflector:
            stale = then(stale, lambda text: set_env(local, text, req.reflector))
        return [*plans, stale], notes
    if has_ours(shared):
        raise InstallError(
            f"{shared} (the team's, committed) already runs Playbook's hooks; a second set "
            f"in {local.name} would run each hook twice (uninstall first, or install "
            "without what makes it this machine's)"
        )
    if req.scope == "project":
        notes.append(
            f"the hooks are this machine's, in {local} (not shared: "
            + "; ".join(reasons)
            + "). For hooks the team can commit: playbook on the PATH, and the playbook named "
            "by the project's .playbook.toml"
        )
    plan = plan_hooks(local, hook_command(req, False), CLAUDE_EVENTS)
    if req.reflector:
        plan = then(plan, lambda text: set_env(local, text, req.reflector))
    return [plan], notes


def _install_codex(req: Request) -> tuple[list[Plan], list[str]]:
    notes: list[str] = []
    if req.scope == "project":
        reasons = machine_reasons(req)
        if reasons or req.reflector:
            why = reasons + (["--reflector is each person's choice"] if req.reflector else [])
            raise InstallError(
                "the repository's .codex/hooks.json is committed, and these hooks would be "
                "this machine's (" + "; ".join(why) + "): install them for this user instead "
                "(without --project)"
            )
        path = project_root(req.cwd) / ".codex" / "hooks.json"
        plans = [plan_hooks(path, hook_command(req, True), CODEX_EVENTS)]
        notes += [codex.TRUST_NOTE, agents_md_note(hooks_on=True)]
        return plans, notes
    base = hook_command(req, False)
    config_path = codex_home() / "config.toml"
    config = codex.plan_config(config_path, base, req.reflector)
    notes += config.notes
    hooks_path = codex_home() / "hooks.json"
    if codex.hooks_off(config.before):
        notes.append(
            "Codex's hooks are off in its config ([features] hooks = false): Playbook "
            "reflects each turn through notify instead, and adds no context to prompts"
        )
        notes.append(agents_md_note(hooks_on=False))
        return [config, strip_plan(hooks_path, "codex")], notes
    reflect = ("--reflector", req.reflector) if req.reflector else ()
    plan = plan_hooks(hooks_path, base, CODEX_EVENTS, end_extra=reflect)
    notes += [codex.TRUST_NOTE, agents_md_note(hooks_on=True)]
    return [config, plan], notes


def reflector_note(reflector: str, prompt_chars: int, iterations: int) -> str:
    return (
        f"session ends are reflected by {reflector}: {REFLECTOR_COST[reflector]}, more (up "
        f"to {iterations}) only while the calls keep proposing new rules; each prompt is at "
        f"most {prompt_chars:,} characters (a digest of the session, about "
        f"{prompt_chars // 4:,} tokens) plus the answer, on your own plan. Without "
        "--reflector no model is called: only the RULE:/AVOID: lines and citations the "
        "agent writes are read"
    )


# ------------------------------------------------------------------------ JSON settings


# ------------------------------------------------------------------------ uninstall


def uninstall_paths(agent: str, scope: str, cwd: Path) -> list[tuple[Path, str]]:
    """The files an uninstall looks at, with the kind of each."""
    if agent == "claude-code":
        if scope == "user":
            return [(Path.home() / ".claude" / "settings.json", "claude")]
        folder = project_root(cwd) / ".claude"
        return [(folder / "settings.json", "claude"), (folder / "settings.local.json", "claude")]
    if scope == "project":
        return [(project_root(cwd) / ".codex" / "hooks.json", "codex")]
    return [(codex_home() / "hooks.json", "codex"), (codex_home() / "config.toml", "toml")]


def plan_uninstall(path: Path, kind: str) -> Plan:
    """Take Playbook's entries out of `path`: the original bytes back if the file is as the
    install left it, else only Playbook's entries removed."""
    back = restored(path)
    if back is not None:
        return back
    before = read_text(path)
    if before is None:
        return Plan(path, None, None, ["nothing to remove: the file does not exist"])
    after = codex.strip_config(before) if kind == "toml" else strip_hooks(path, before)
    notes = [] if after != before else ["nothing of Playbook's to remove"]
    if load_backup(path) is not None and after != before:
        notes.append("the file changed since the install: only Playbook's entries were removed")
    return Plan(path, before, after, notes)
