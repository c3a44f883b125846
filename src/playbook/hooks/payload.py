"""The JSON an agent gives a hook on stdin, read leniently.

Claude Code's hook input (hooks reference, "common input fields"): every event carries
``session_id``, ``transcript_path``, ``cwd``, ``permission_mode`` and ``hook_event_name``;
``UserPromptSubmit`` adds ``prompt``, ``SessionStart`` adds ``source`` (``startup``,
``resume``, ``clear``, ``compact``), ``SessionEnd`` adds ``reason``, ``Stop`` adds
``stop_hook_active``. Codex's hooks send the same fields (its ``Stop`` runs when a turn
ends, and adds ``turn_id``). Fields a hook does not use are ignored; a missing or mistyped
field it needs is a `PayloadError`. The workspace a session works in is
`project.workspace.workspace_of(cwd)`.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

from playbook.core.record import FrozenRecord

__all__ = [
    "MAX_PAYLOAD_BYTES",
    "HookInput",
    "PayloadError",
    "parse_codex_notify",
    "parse_payload",
]

MAX_PAYLOAD_BYTES = 8 << 20  # a prompt can hold a pasted log; more than this is not a payload


class PayloadError(ValueError):
    """The hook input is not the JSON object the hook needs."""


class HookInput(FrozenRecord):
    """The fields of a hook input that a hook reads (a record: no dataclass compiled at the
    import of every hook, `core.record`)."""

    session_id: str
    cwd: str | None
    transcript_path: str | None
    prompt: str | None
    source: str | None  # SessionStart: startup, resume, clear, compact
    event: str | None  # hook_event_name, as sent
    turn_id: str | None  # Codex's hooks send it (Claude Code's do not)

    def __init__(
        self,
        session_id: str,
        cwd: str | None = None,
        transcript_path: str | None = None,
        prompt: str | None = None,
        source: str | None = None,
        event: str | None = None,
        turn_id: str | None = None,
    ) -> None:
        object.__setattr__(self, "session_id", session_id)
        object.__setattr__(self, "cwd", cwd)
        object.__setattr__(self, "transcript_path", transcript_path)
        object.__setattr__(self, "prompt", prompt)
        object.__setattr__(self, "source", source)
        object.__setattr__(self, "event", event)
        object.__setattr__(self, "turn_id", turn_id)

    def need(self, name: str) -> str:
        value = getattr(self, name)
        if not value:
            raise PayloadError(f"hook input has no {name}")
        return str(value)


def _object(data: bytes) -> dict[str, Any]:
    if len(data) > MAX_PAYLOAD_BYTES:
        raise PayloadError(f"hook input is {len(data):,} bytes, over {MAX_PAYLOAD_BYTES:,}")
    try:
        doc = json.loads(data.decode("utf-8", errors="replace").lstrip("\ufeff") or "null")
    except (ValueError, RecursionError) as exc:
        raise PayloadError(f"hook input is not JSON ({_short(exc)})") from None
    if not isinstance(doc, dict):
        raise PayloadError(f"hook input is a JSON {type(doc).__name__}, not an object")
    return doc


def parse_payload(data: bytes) -> HookInput:
    """The hook input in `data`; PayloadError if it is not a JSON object with a session id."""
    doc = _object(data)
    session = doc.get("session_id")
    if not isinstance(session, str) or not session.strip():
        raise PayloadError("hook input has no session_id")
    return HookInput(
        session_id=session,
        cwd=_text(doc, "cwd"),
        transcript_path=_text(doc, "transcript_path"),
        prompt=_text(doc, "prompt"),
        source=_text(doc, "source"),
        event=_text(doc, "hook_event_name"),
        turn_id=_text(doc, "turn_id"),
    )


def parse_codex_notify(data: bytes, codex_home: Path) -> HookInput:
    """Codex's ``notify`` JSON (``{"type": "agent-turn-complete", "thread-id", "cwd", ...}``,
    given as the program's last argument) as hook input: the thread is the session, and its
    transcript is the rollout file Codex writes for it under ``sessions/``."""
    doc = _object(data)
    if doc.get("type") != "agent-turn-complete":
        raise PayloadError(f"not a turn-complete notification (type {doc.get('type')!r})")
    thread = doc.get("thread-id")
    if not isinstance(thread, str) or not re.fullmatch(r"[A-Za-z0-9_-]{1,100}", thread):
        raise PayloadError("notification has no usable thread-id")
    found = sorted((codex_home / "sessions").glob(f"*/*/*/rollout-*-{thread}.jsonl"))
    if not found:
        raise PayloadError(f"no Codex rollout file for thread {thread}")
    return HookInput(session_id=thread, cwd=_text(doc, "cwd"), transcript_path=str(found[-1]))


def _text(doc: dict[str, Any], key: str) -> str | None:
    value = doc.get(key)
    if value is None:
        return None
    if not isinstance(value, str):
        raise PayloadError(f"hook input field {key} is a {type(value).__name__}, not a string")
    return value


def _short(exc: BaseException) -> str:
    return " ".join(str(exc).split())[:120]
