"""Playbook's hooks in an agent's JSON settings (Claude Code's ``settings.json``, Codex's
``hooks.json``: the same shape, ``{"hooks": {EVENT: [{"hooks": [{"type": "command",
"command": …}]}]}}``), and the opt-in reflector in Claude Code's ``env``, edited in place
(`jsonedit`): a command is Playbook's when it runs ``playbook … hook EVENT``."""

from __future__ import annotations

import json
import re
import shlex
from pathlib import Path
from typing import Any

from .install_plan import InstallError, Plan, load_backup, read_text
from .jsonedit import JsonText
from .session_end import REFLECTOR_ENV

__all__ = [
    "has_ours",
    "plan_hooks",
    "set_env",
    "strip_hooks",
    "strip_plan",
    "then",
]

HOOK_TIMEOUT = 10  # seconds the agent waits for a hook
_OURS = re.compile(
    r"(?:^|[\s/\\\"'])playbook(?:\.exe)?[\"']?\s(?:.*\s)?hook\s+[a-z-]+"
    r"(?:\s+--reflector(?:=|\s+)[A-Za-z0-9_-]+)?\s*$"
)


def plan_hooks(
    path: Path, base: list[str], events: dict[str, str], *, end_extra: tuple[str, ...] = ()
) -> Plan:
    """Merge Playbook's hooks (one group per event) into the JSON settings at `path` (a new
    file is written with two-space indents)."""
    before = read_text(path)
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
    return set_env(path, text, None)


def set_env(path: Path, text: str, value: str | None) -> str:
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


def then(plan: Plan, edit: Any) -> Plan:
    """`plan` with one more edit of its file's text."""
    text = plan.after if plan.after is not None else "{\n}\n"
    after = edit(text)
    if plan.before is None and after.strip() in ("{}", ""):
        after = None
    return Plan(plan.path, plan.before, after, plan.notes)


def strip_plan(path: Path, kind: str) -> Plan:
    """Playbook's hooks taken out of `path` (an earlier install's); the file goes when an
    install made it and nothing else is left in it."""
    before = read_text(path)
    if before is None or not before.strip():
        return Plan(path, before, before)
    stripped = strip_hooks(path, before) if kind in ("claude", "codex") else before
    saved = load_backup(path)
    made_by_install = bool(saved) and saved.get("original") is None
    if stripped != before and made_by_install and json.loads(stripped) == {}:
        return Plan(path, before, None)
    return Plan(path, before, stripped)


def has_ours(path: Path) -> bool:
    text = read_text(path)
    if not text or not text.strip():
        return False
    try:
        return strip_hooks(path, text) != set_env(path, text, None)
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
