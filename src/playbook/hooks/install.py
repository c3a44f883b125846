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
  Codex asks the user to trust a new hook (``/hooks``) before it runs it.
- ``--reflector claude|codex``: the opt-in model reflector, this machine's choice: Claude
  Code's ``env`` setting ``PLAYBOOK_REFLECTOR`` (in ``settings.local.json``, or the user's
  settings), Codex's ``Stop`` command's ``--reflector``.

JSON files are edited in place (`jsonedit`): the file keeps its layout, and only Playbook's
entries change. Installing twice changes nothing. Uninstalling restores a file byte for byte
when it has not changed since the install (the original is kept under the state folder, mode
0600); when it has, only Playbook's entries are taken out and the other changes stay.
"""

from __future__ import annotations

import contextlib
import difflib
import hashlib
import json
import os
import re
import shlex
import shutil
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from . import install_codex as codex
from .jsonedit import JsonText
from .state import private_folder, state_dir

__all__ = [
    "CLAUDE_EVENTS",
    "CODEX_EVENTS",
    "InstallError",
    "Plan",
    "apply",
    "codex_agents_md",
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
HOOK_TIMEOUT = 10  # seconds the agent waits for a hook
REFLECTOR_ENV = "PLAYBOOK_REFLECTOR"
REFLECTOR_COST = {
    "claude": "one `claude -p` call at each session end",
    "codex": "one `codex exec` call at each turn's end (Codex's Stop hook)",
}
_OURS = re.compile(
    r"(?:^|[\s/\\\"'])playbook(?:\.exe)?[\"']?\s(?:.*\s)?hook\s+[a-z-]+"
    r"(?:\s+--reflector(?:=|\s+)[A-Za-z0-9_-]+)?\s*$"
)


class InstallError(ValueError):
    """A settings file that cannot be edited safely (not JSON, wrong shape), or an install
    that cannot be done as asked."""


@dataclass
class Plan:
    """An edit of one file: its text before (None: no file) and after, and notes."""

    path: Path
    before: str | None
    after: str | None
    notes: list[str] = field(default_factory=list)
    restore: bool = False  # an uninstall putting back the original bytes

    @property
    def changes(self) -> bool:
        return self.before != self.after

    def diff(self) -> str:
        lines = difflib.unified_diff(
            (self.before or "").splitlines(keepends=True),
            (self.after or "").splitlines(keepends=True),
            fromfile=f"{self.path} (now)" if self.before is not None else "/dev/null",
            tofile=f"{self.path} (after)" if self.after is not None else "/dev/null",
        )
        return "".join(line if line.endswith("\n") else line + "\n" for line in lines)


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
        from ..store import resolve_target

        where = resolve_target(req.db)
        args += ["--db", str(where.path.resolve()) if where.is_file else where.location]
    if req.policy is not None:
        args += ["--policy", str(req.policy.resolve())]
    return args


def codex_agents_md(recall_hint: str = 'playbook recall "<the task in a few words>"') -> str:
    """The AGENTS.md paragraph a Codex install prints: the agent's protocol."""
    from ..project.protocol import protocol_lines

    return "## Playbook\n\n" + "\n".join(protocol_lines(recall_hint=recall_hint)) + "\n"


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
        plan = _plan_hooks(user, hook_command(req, False), CLAUDE_EVENTS)
        if req.reflector:
            plan = _chain(plan, lambda text: _set_env(user, text, req.reflector))
        return [plan], notes
    folder = project_root(req.cwd) / ".claude"
    shared, local = folder / "settings.json", folder / "settings.local.json"
    reasons = machine_reasons(req)
    if req.scope == "project" and not reasons:
        plans = [_plan_hooks(shared, hook_command(req, True), CLAUDE_EVENTS)]
        stale = _strip_plan(local, "claude")  # an older install of this machine's
        if req.reflector:
            stale = _chain(stale, lambda text: _set_env(local, text, req.reflector))
        return [*plans, stale], notes
    if _has_ours(shared):
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
    plan = _plan_hooks(local, hook_command(req, False), CLAUDE_EVENTS)
    if req.reflector:
        plan = _chain(plan, lambda text: _set_env(local, text, req.reflector))
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
        plans = [_plan_hooks(path, hook_command(req, True), CODEX_EVENTS)]
        notes.append(codex.TRUST_NOTE)
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
        return [config, _strip_plan(hooks_path, "codex")], notes
    reflect = ("--reflector", req.reflector) if req.reflector else ()
    plan = _plan_hooks(hooks_path, base, CODEX_EVENTS, end_extra=reflect)
    notes.append(codex.TRUST_NOTE)
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


def _plan_hooks(
    path: Path, base: list[str], events: dict[str, str], *, end_extra: tuple[str, ...] = ()
) -> Plan:
    """Merge Playbook's hooks (one group per event) into the JSON settings at `path` (a new
    file is written with two-space indents)."""
    before = _read(path)
    groups = {
        agent_event: {
            "hooks": [
                {
                    "type": "command",
                    "command": shlex.join(
                        [*base, "hook", event, *(end_extra if event == "session-end" else [])]
                    ),
                    "timeout": HOOK_TIMEOUT,
                }
            ]
        }
        for agent_event, event in events.items()
    }
    if before is None or not before.strip():
        doc = {"hooks": {e: [g] for e, g in groups.items()}}
        return Plan(path, before, json.dumps(doc, indent=2, ensure_ascii=False) + "\n")
    hooks = _load_json(path, before).get("hooks")
    if hooks is not None and not isinstance(hooks, dict):
        raise InstallError(f'{path}: "hooks" is not an object; nothing changed')
    text = before
    for agent_event, group in groups.items():
        text = _merge_event(path, text, agent_event, group)
    return Plan(path, before, text)


def _merge_event(path: Path, text: str, agent_event: str, group: dict[str, Any]) -> str:
    doc = _load_json(path, text)
    hooks = doc.get("hooks")
    if hooks is None:
        return JsonText(text).add_member([], "hooks", {agent_event: [group]})
    groups = hooks.get(agent_event)
    if groups is None:
        return JsonText(text).add_member(["hooks"], agent_event, [group])
    if not isinstance(groups, list):
        raise InstallError(f"{path}: hooks.{agent_event} is not a list; nothing changed")
    if [g for g in groups if _ours_in(g)] == [group]:
        return text  # installed as it should be
    text = _strip_event(text, agent_event)
    doc = _load_json(path, text)
    if agent_event not in doc.get("hooks", {}):
        return JsonText(text).add_member(["hooks"], agent_event, [group])
    return JsonText(text).append(["hooks", agent_event], group)


def _ours_in(group: object) -> list[int]:
    if not isinstance(group, dict) or not isinstance(group.get("hooks"), list):
        return []
    return [i for i, h in enumerate(group["hooks"]) if _is_ours(h)]


def _is_ours(hook: object) -> bool:
    return isinstance(hook, dict) and bool(_OURS.search(str(hook.get("command", ""))))


def _strip_event(text: str, agent_event: str) -> str:
    """`text` without Playbook's hooks under `agent_event` (a group left empty goes too;
    the event goes when nothing is left of it)."""
    doc = json.loads(text)
    groups = doc["hooks"][agent_event]
    for gi in reversed(range(len(groups))):
        mine = _ours_in(groups[gi])
        if not mine:
            continue
        if len(mine) == len(groups[gi]["hooks"]):
            text = JsonText(text).remove(["hooks", agent_event, gi])
        else:
            for hi in reversed(mine):
                text = JsonText(text).remove(["hooks", agent_event, gi, "hooks", hi])
    if not json.loads(text)["hooks"][agent_event] and groups:
        text = JsonText(text).remove(["hooks", agent_event])
    return text


def strip_hooks(path: Path, text: str) -> str:
    """`text` without any of Playbook's hooks, nor its ``PLAYBOOK_REFLECTOR`` setting."""
    doc = _load_json(path, text)
    hooks = doc.get("hooks")
    if isinstance(hooks, dict):
        for agent_event, groups in hooks.items():
            if isinstance(groups, list) and any(_ours_in(g) for g in groups):
                text = _strip_event(text, agent_event)
        if not json.loads(text)["hooks"]:
            text = JsonText(text).remove(["hooks"])
    return _set_env(path, text, None)


def _set_env(path: Path, text: str, value: str | None) -> str:
    """`text` with ``env.PLAYBOOK_REFLECTOR`` set to `value` (None: taken out)."""
    doc = _load_json(path, text)
    env = doc.get("env")
    if env is not None and not isinstance(env, dict):
        raise InstallError(f'{path}: "env" is not an object; nothing changed')
    if value is None:
        if env is None or REFLECTOR_ENV not in env:
            return text
        text = JsonText(text).remove(["env", REFLECTOR_ENV])
        return JsonText(text).remove(["env"]) if not json.loads(text)["env"] else text
    if env is None:
        return JsonText(text).add_member([], "env", {REFLECTOR_ENV: value})
    if env.get(REFLECTOR_ENV) == value:
        return text
    if REFLECTOR_ENV in env:
        return JsonText(text).replace(["env", REFLECTOR_ENV], value)
    return JsonText(text).add_member(["env"], REFLECTOR_ENV, value)


def _chain(plan: Plan, edit: Any) -> Plan:
    """`plan` with one more edit of its file's text."""
    text = plan.after if plan.after is not None else "{\n}\n"
    after = edit(text)
    if plan.before is None and after.strip() in ("{}", ""):
        after = None
    return Plan(plan.path, plan.before, after, plan.notes)


def _strip_plan(path: Path, kind: str) -> Plan:
    """Playbook's hooks taken out of `path` (an earlier install's); the file goes when an
    install made it and nothing else is left in it."""
    before = _read(path)
    if before is None or not before.strip():
        return Plan(path, before, before)
    after: str | None = strip_hooks(path, before) if kind in ("claude", "codex") else before
    saved = _load_backup(path)
    if after != before and saved and saved.get("original") is None and json.loads(after) == {}:
        after = None
    return Plan(path, before, after)


def _has_ours(path: Path) -> bool:
    text = _read(path)
    if not text or not text.strip():
        return False
    try:
        return strip_hooks(path, text) != _set_env(path, text, None)
    except InstallError:
        return False


def _load_json(path: Path, text: str | None) -> dict[str, Any]:
    if text is None or not text.strip():
        return {}
    try:
        doc = json.loads(text)
    except ValueError as exc:
        raise InstallError(f"{path}: not valid JSON ({exc}); nothing changed") from None
    if not isinstance(doc, dict):
        raise InstallError(f"{path}: not a JSON object; nothing changed")
    return doc


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
    before = _read(path)
    saved = _load_backup(path)
    if saved is not None and before is not None and _digest(before) == saved.get("installed"):
        return Plan(path, before, saved.get("original"), restore=True)
    if before is None:
        return Plan(path, None, None, ["nothing to remove: the file does not exist"])
    after = codex.strip_config(before) if kind == "toml" else strip_hooks(path, before)
    notes = [] if after != before else ["nothing of Playbook's to remove"]
    if saved is not None and after != before:
        notes.append("the file changed since the install: only Playbook's entries were removed")
    return Plan(path, before, after, notes)


def apply(plan: Plan, *, installing: bool) -> None:
    """Write the plan (atomically) and keep what an uninstall needs to restore the file."""
    if not plan.changes:
        return
    if plan.after is None:
        plan.path.unlink(missing_ok=True)
        for folder in _load_backup(plan.path, {}).get("created", []):
            with contextlib.suppress(OSError):  # only if Playbook made it and it is empty again
                Path(folder).rmdir()
    else:
        created = [str(p) for p in _missing_parents(plan.path)]
        plan.path.parent.mkdir(parents=True, exist_ok=True)
        tmp = plan.path.with_name(f".{plan.path.name}.playbook-tmp")
        tmp.write_text(plan.after, encoding="utf-8", newline="")
        os.replace(tmp, plan.path)
        if installing:
            saved = _load_backup(plan.path) or {"original": plan.before, "created": created}
            saved["installed"] = _digest(plan.after)
            _save_backup(plan.path, saved)
            return
    _backup_path(plan.path).unlink(missing_ok=True)


def _missing_parents(path: Path) -> list[Path]:
    missing = []
    for folder in path.parents:
        if folder.exists():
            break
        missing.append(folder)
    return missing  # innermost first: the order they can be removed in


def _read(path: Path) -> str | None:
    try:
        with path.open(encoding="utf-8", newline="") as f:
            return f.read()
    except FileNotFoundError:
        return None
    except (OSError, UnicodeDecodeError) as exc:
        raise InstallError(f"cannot read {path}: {exc}") from None


def _digest(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def _backup_path(path: Path) -> Path:
    key = hashlib.sha256(str(path.resolve()).encode("utf-8", "surrogatepass")).hexdigest()[:24]
    return state_dir() / "installs" / f"{key}.json"


def _load_backup(path: Path, default: Any = None) -> Any:
    try:
        saved = json.loads(_backup_path(path).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return default
    return saved if isinstance(saved, dict) else default


def _save_backup(path: Path, saved: dict[str, Any]) -> None:
    target = _backup_path(path)
    private_folder(target.parent)
    data = json.dumps({"path": str(path.resolve()), **saved}).encode("utf-8")
    fd = os.open(target, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "wb") as f:
        f.write(data)
