"""Codex's ``config.toml``: Playbook's MCP server, and ``notify`` where Codex's hooks are off.

Each of Playbook's entries sits between marker comments, so it can be taken out again
without touching the rest: the MCP server (``[mcp_servers.playbook]``, appended) and, only
when the config turns Codex's hooks off (``[features] hooks = false``, or its older name
``codex_hooks``), ``notify`` (at the top: Codex runs it when a turn completes, and Playbook
reflects the session's rollout file past its watermark). With hooks on, the ``Stop`` hook
does that, so a ``notify`` block an earlier install added is taken out.
"""

from __future__ import annotations

import json
import re
import shlex
import tomllib
from pathlib import Path
from typing import TYPE_CHECKING

from .install_plan import InstallError, Plan, read_text

if TYPE_CHECKING:
    from .install_plan import Plan

__all__ = ["TRUST_NOTE", "hooks_off", "plan_config", "strip_config"]

MCP_BEGIN = "# >>> playbook mcp (added by `playbook hooks install codex`)"
MCP_END = "# <<< playbook mcp"
NOTIFY_BEGIN = "# >>> playbook notify (added by `playbook hooks install codex`)"
NOTIFY_END = "# <<< playbook notify"
TRUST_NOTE = (
    "Codex runs a new hook only once you trust it: open /hooks in Codex and trust Playbook's "
    "(it asks again whenever a hook's command changes)"
)


def hooks_off(text: str | None) -> bool:
    """Whether a Codex config turns its hooks off."""
    try:
        features = tomllib.loads(text or "").get("features", {})
    except tomllib.TOMLDecodeError:
        return False
    if not isinstance(features, dict):
        return False
    return features.get("hooks", features.get("codex_hooks")) is False


def plan_config(path: Path, base: list[str], reflector: str | None) -> Plan:
    """Add the MCP server; ``notify`` only where hooks are off (else take ours out)."""
    before = read_text(path)
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
    notify = [*base, "hook", "codex-notify", *(["--reflector", reflector] if reflector else [])]
    if not hooks_off(text):
        text = _strip(text, NOTIFY_BEGIN, NOTIFY_END)
    elif NOTIFY_BEGIN in text:
        text = _strip(text, NOTIFY_BEGIN, NOTIFY_END)
        text = f"{NOTIFY_BEGIN}\nnotify = {_toml_list(notify)}\n{NOTIFY_END}\n{text}"
    elif "notify" in config:
        notes.append(
            f"Codex already runs a notify program ({config['notify']!r}), so Playbook's "
            f"was not added; to reflect each turn, have it also run: {shlex.join(notify)} JSON"
        )
    else:
        text = f"{NOTIFY_BEGIN}\nnotify = {_toml_list(notify)}\n{NOTIFY_END}\n{text}"
    after = text if text != (before or "") else before
    return Plan(path, before, after, notes)


def strip_config(text: str) -> str:
    for begin, end in ((NOTIFY_BEGIN, NOTIFY_END), (MCP_BEGIN, MCP_END)):
        text = _strip(text, begin, end)
    return text


def _strip(text: str, begin: str, end: str) -> str:
    pattern = re.compile(rf"^{re.escape(begin)}\n.*?^{re.escape(end)}\n?", re.M | re.S)
    return pattern.sub("", text, count=1)


def _mcp_lines(base: list[str]) -> list[str]:
    return [f"command = {_toml_str(base[0])}", f"args = {_toml_list([*base[1:], 'mcp'])}"]


def _toml_str(value: str) -> str:
    return json.dumps(value, ensure_ascii=False)  # a JSON string is a TOML basic string


def _toml_list(values: list[str]) -> str:
    return "[" + ", ".join(_toml_str(v) for v in values) + "]"
