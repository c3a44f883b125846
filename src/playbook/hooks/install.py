"""`playbook hooks install|uninstall claude-code|codex`: edit an agent's settings, touching
nothing but Playbook's own entries.

Claude Code (``.claude/settings.json`` of the project, or ``~/.claude/settings.json``): the
three hooks are merged into ``hooks`` (``SessionStart``, ``UserPromptSubmit``,
``SessionEnd``), every other hook and setting kept in order; the file keeps its indentation.

Codex (``$CODEX_HOME/config.toml``, ``~/.codex/config.toml``): Codex has no prompt hooks, so
Playbook adds what its configuration supports, each in a block between marker comments: the
MCP server (``[mcp_servers.playbook]``, appended) and, unless another program is already
set, ``notify`` (at the top: Codex runs it when a turn completes, and Playbook reflects the
session's rollout file past its watermark). The AGENTS.md paragraph that asks the agent to
recall is printed for the user to paste.

Installing twice changes nothing. Uninstalling restores the file byte for byte when it has
not changed since the install (the original is kept under the state folder); when it has,
only Playbook's entries are taken out and the other changes stay.
"""

from __future__ import annotations

import contextlib
import difflib
import hashlib
import json
import os
import re
import shlex
import sys
import tomllib
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from .state import state_dir

if TYPE_CHECKING:
    from ..store import Target

__all__ = [
    "AGENTS_MD",
    "InstallError",
    "Plan",
    "apply",
    "claude_settings_path",
    "codex_config_path",
    "hook_command",
    "plan_claude",
    "plan_codex",
    "plan_uninstall",
]

CLAUDE_EVENTS = {  # Claude Code event -> `playbook hook` event
    "SessionStart": "session-start",
    "UserPromptSubmit": "prompt",
    "SessionEnd": "session-end",
}
HOOK_TIMEOUT = 10  # seconds Claude Code waits for a hook (it gives up at 5 s itself)
_OURS = re.compile(r"(?:^|[\s/\\\"'])playbook(?:\.exe)?[\"']?\s(?:.*\s)?hook\s+(?:[a-z-]+)\s*$")
MCP_BEGIN = "# >>> playbook mcp (added by `playbook hooks install codex`)"
MCP_END = "# <<< playbook mcp"
NOTIFY_BEGIN = "# >>> playbook notify (added by `playbook hooks install codex`)"
NOTIFY_END = "# <<< playbook notify"

AGENTS_MD = """\
## Playbook

Before you start a task, run `playbook recall "<the task in a few words>"` (or call the
`recall` tool of the `playbook` MCP server) and follow what it returns: the rules to apply,
the anti-patterns to avoid, and the deprecated advice to stop following. When a rule helped,
write `[playbook: helpful <id>]` in your reply; when one misled you, write
`[playbook: harmful <id> <reason>]`. Write a lesson worth keeping on its own line as
`RULE: <what to do>` or `AVOID: <what not to do>`. Playbook reads these from the session
when a turn ends and puts the new rules in the review queue for a person to approve.
"""


class InstallError(ValueError):
    """A settings file that cannot be edited safely (not JSON, wrong shape)."""


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


# ------------------------------------------------------------------------ where


def claude_settings_path(user: bool, cwd: Path | None = None) -> Path:
    if user:
        return Path.home() / ".claude" / "settings.json"
    return _project_root(cwd or Path.cwd()) / ".claude" / "settings.json"


def has_password(db: Target) -> bool:
    """Whether a database URL carries a password (which would be written into settings)."""
    return not db.is_file and str(db) != db.location


def codex_config_path() -> Path:
    home = os.environ.get("CODEX_HOME") or str(Path.home() / ".codex")
    return Path(home) / "config.toml"


def _project_root(cwd: Path) -> Path:
    """The repository's top folder (where Claude Code keeps project settings), else `cwd`."""
    for folder in (cwd, *cwd.parents):
        if (folder / ".git").exists():
            return folder
    return cwd


def hook_command(db: Path | Target, policy: Path | None) -> list[str]:
    """How an agent runs this Playbook: the console script beside this interpreter (an
    agent may not have the virtualenv on its PATH), on this playbook (a file, made
    absolute, or a database URL as given)."""
    from ..store import resolve_target

    where = resolve_target(db)
    script = Path(sys.executable).with_name("playbook")
    location = str(where.path.resolve()) if where.is_file else where.location
    args = [str(script) if script.exists() else "playbook", "--db", location]
    if policy is not None:
        args += ["--policy", str(policy.resolve())]
    return args


# ------------------------------------------------------------------------ Claude Code


def plan_claude(path: Path, base: list[str]) -> Plan:
    """Merge Playbook's three hooks into the settings at `path`."""
    before = _read(path)
    settings = _load_json(path, before)
    hooks = settings.setdefault("hooks", {})
    if not isinstance(hooks, dict):
        raise InstallError(f'{path}: "hooks" is not an object; nothing changed')
    for agent_event, event in CLAUDE_EVENTS.items():
        groups = hooks.setdefault(agent_event, [])
        if not isinstance(groups, list):
            raise InstallError(f"{path}: hooks.{agent_event} is not a list; nothing changed")
        command = shlex.join([*base, "hook", event])
        entry = {"type": "command", "command": command, "timeout": HOOK_TIMEOUT}
        kept = [g for g in (_without_ours(g) for g in groups) if g is not None]
        ours = [g for g in groups if g not in kept]
        if ours != [{"hooks": [entry]}]:  # not installed, or installed differently: replace
            groups[:] = [*kept, {"hooks": [entry]}]
    after = _dump_json(settings, before)
    return Plan(path, before, before if _same_json(before, after) else after)


def _is_ours(hook: object) -> bool:
    return isinstance(hook, dict) and bool(_OURS.search(str(hook.get("command", ""))))


def _without_ours(group: object) -> object | None:
    """`group` without Playbook's hooks (None if nothing else was in it)."""
    if not isinstance(group, dict) or not isinstance(group.get("hooks"), list):
        return group
    rest = [h for h in group["hooks"] if not _is_ours(h)]
    if len(rest) == len(group["hooks"]):
        return group
    return {**group, "hooks": rest} if rest else None


def _strip_claude(path: Path, text: str) -> str:
    settings = _load_json(path, text)
    hooks = settings.get("hooks")
    if not isinstance(hooks, dict):
        return text
    for agent_event in CLAUDE_EVENTS:
        groups = hooks.get(agent_event)
        if isinstance(groups, list):
            kept = [g for g in (_without_ours(g) for g in groups) if g is not None]
            if kept:
                hooks[agent_event] = kept
            elif kept != groups:
                del hooks[agent_event]
    if not hooks:
        del settings["hooks"]
    after = _dump_json(settings, text)
    return text if _same_json(text, after) else after


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


def _dump_json(doc: dict[str, Any], like: str | None) -> str:
    """`doc` as JSON indented the way `like` is (two spaces by default)."""
    indent: str | int = 2
    if like:
        m = re.search(r"\n([ \t]+)\S", like)
        if m:
            indent = m.group(1)
    text = json.dumps(doc, indent=indent, ensure_ascii=False)
    return text + "\n" if like is None or like.endswith("\n") else text


def _same_json(a: str | None, b: str) -> bool:
    try:
        return a is not None and json.loads(a) == json.loads(b)
    except ValueError:
        return False


# ------------------------------------------------------------------------ Codex


def plan_codex(path: Path, base: list[str]) -> Plan:
    """Add the MCP server and, if Codex runs no other program, `notify`."""
    before = _read(path)
    text = before or ""
    try:
        config = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise InstallError(f"{path}: not valid TOML ({exc}); nothing changed") from None
    notes: list[str] = []
    servers = config.get("mcp_servers")
    if MCP_BEGIN not in text:
        if isinstance(servers, dict) and "playbook" in servers:
            notes.append("Codex already has an MCP server named playbook; left as it is")
        else:
            block = "\n".join([MCP_BEGIN, "[mcp_servers.playbook]", *_mcp_lines(base), MCP_END])
            sep = "" if not text or text.endswith("\n") else "\n"
            text = f"{text}{sep}{block}\n"
    if NOTIFY_BEGIN not in text:
        if "notify" in config:
            mine = shlex.join([*base, "hook", "codex-notify"])
            notes.append(
                f"Codex already runs a notify program ({config['notify']!r}), so Playbook's "
                f"was not added; to reflect each turn, have it also run: {mine} JSON"
            )
        else:
            notify = _toml_list([*base, "hook", "codex-notify"])
            text = f"{NOTIFY_BEGIN}\nnotify = {notify}\n{NOTIFY_END}\n{text}"
    after = text if text != (before or "") else before
    return Plan(path, before, after, notes)


def _mcp_lines(base: list[str]) -> list[str]:
    return [f"command = {_toml_str(base[0])}", f"args = {_toml_list([*base[1:], 'mcp'])}"]


def _toml_str(value: str) -> str:
    return json.dumps(value, ensure_ascii=False)  # a JSON string is a TOML basic string


def _toml_list(values: list[str]) -> str:
    return "[" + ", ".join(_toml_str(v) for v in values) + "]"


def _strip_codex(text: str) -> str:
    for begin, end in ((NOTIFY_BEGIN, NOTIFY_END), (MCP_BEGIN, MCP_END)):
        pattern = re.compile(rf"^{re.escape(begin)}\n.*?^{re.escape(end)}\n?", re.M | re.S)
        text = pattern.sub("", text, count=1)
    return text


# ------------------------------------------------------------------------ uninstall


def plan_uninstall(path: Path, agent: str) -> Plan:
    """Take Playbook's entries out of `path`: the original bytes back if the file is as the
    install left it, else only Playbook's entries removed."""
    before = _read(path)
    saved = _load_backup(path)
    if saved is not None and before is not None and _digest(before) == saved.get("installed"):
        return Plan(path, before, saved.get("original"), restore=True)
    if before is None:
        return Plan(path, None, None, ["nothing to remove: the file does not exist"])
    after = _strip_claude(path, before) if agent == "claude-code" else _strip_codex(before)
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
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_text(json.dumps({"path": str(path.resolve()), **saved}), encoding="utf-8")
