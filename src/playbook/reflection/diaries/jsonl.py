"""Agent transcripts in JSON Lines (Claude Code, Codex): one passage per record with text.

Tool calls and results are reduced to one line starting with ``TOOL_LINE_PREFIX``, so that
readers (the heuristic reflector) can tell what the agent wrote from what a tool printed.

What nobody typed in the session is left out: Claude Code's meta records and its compaction
summary (``isCompactSummary``: the model's summary of the conversation so far, which would
repeat every lesson of it), and the blocks Codex injects as user input (its environment,
instructions, permissions, plugin lists: a user message that is one ``<compound_tag>…``
element, or starts with one of ``_INJECTED_PREFIXES``).

Each passage carries its record's identity (`record_identity`), which a copy of the session
keeps: Claude Code's ``uuid``, or for Codex (whose items have none, and whose fork writes
them again with new timestamps) a digest of the item itself.
"""

from __future__ import annotations

import hashlib
import json
import re
from typing import Any

from .base import Diary, Passage, loads

TOOL_LINE_PREFIX = "[tool"
TOOL_SUMMARY_MAX = 200  # characters of a tool call or result kept in its one-line summary

# Text a Codex session injects as "user" input that nobody typed in this session.
_INJECTED_PREFIXES = (
    "<environment_context>",
    "<user_instructions>",
    "<permissions instructions>",
    "<recommended_plugins>",
    "# AGENTS.md instructions",
)
# A whole message made of elements with compound tag names (``<turn_aborted>…
# </turn_aborted>``, ``<system-reminder>…``, ``<command-name>/clear</command-name>
# <command-message>…``): an agent's own wrapping, never a person's words.
_OPENING = re.compile(r"\s*<([a-z][a-z0-9]*(?:[ _-][a-z0-9]+)+)>")
_MAX_RECORD_ID = 128  # characters of a uuid worth keeping as an identity
_TEXT_BLOCKS = frozenset({"text", "input_text", "output_text"})
_SKIPPED_BLOCKS = frozenset({"thinking", "redacted_thinking", "reasoning", "image", "input_image"})
_CODEX_TOOL_CALLS = frozenset(
    {"function_call", "custom_tool_call", "local_shell_call", "web_search_call"}
)
_CODEX_TOOL_OUTPUTS = frozenset({"function_call_output", "custom_tool_call_output"})
_SUMMARY_KEYS = ("command", "cmd", "file_path", "path", "pattern", "query", "url", "description")


def read_jsonl_transcript(data: bytes, *, start: int = 0, ref: str = "") -> Diary:
    """An agent transcript in JSON Lines: one passage per record that carries text.

    Only whole lines that start at byte ``start`` or later are read. A trailing line without
    its newline is still being written: it is not consumed, and ``end`` stops before it.
    User and assistant text is kept; tool calls and results become one short line each
    (``[tool: Bash] git status``, ``[tool result] ...``); thinking and metadata records are
    dropped; lines that are not JSON objects, or objects of no known shape, are counted in
    ``skipped``.
    """
    return read_jsonl_from(data, start=start, ref=ref, base=0)


def read_jsonl_from(data: bytes, *, start: int, ref: str, base: int) -> Diary:
    """``read_jsonl_transcript`` over ``data`` = the file from byte ``base`` on.

    ``base`` is at most ``start - 1`` (or 0), so the byte before the watermark is in ``data``.
    """
    size = len(data)
    pos = max(start, 0) - base
    if pos > size:
        return Diary(ref=ref, passages=[], end=start)
    if pos > 0 and data[pos - 1 : pos] != b"\n":  # the watermark fell inside a line
        nl = data.find(b"\n", pos)
        pos = size if nl == -1 else nl + 1
    passages: list[Passage] = []
    skipped = 0
    end = pos
    while pos < size:
        nl = data.find(b"\n", pos)
        if nl == -1:
            break  # an incomplete last line: leave it for the next read
        line = data[pos:nl]
        if line.strip():
            record = loads(line)
            if not isinstance(record, dict):
                skipped += 1
            else:
                reduced = _reduce_record(record)
                if reduced is None:
                    skipped += 1
                elif reduced[1]:
                    passages.append(
                        Passage(
                            offset=base + pos,
                            text=reduced[1],
                            role=reduced[0],
                            record=record_identity(record),
                        )
                    )
        pos = nl + 1
        end = pos
    return Diary(
        ref=ref,
        passages=passages,
        end=max(base + end, start),
        skipped=skipped,
        unfinished=size - end,
    )


def record_identity(record: dict[str, Any]) -> str | None:
    """What a record is, wherever it is written: ``cc:<uuid>`` for Claude Code (each record
    has one, kept when a fork or a resume copies the history into a new file); ``cx:<digest>``
    for a Codex item (a digest of its payload, which a fork writes again unchanged)."""
    uuid = record.get("uuid")
    if isinstance(uuid, str) and 0 < len(uuid) <= _MAX_RECORD_ID:
        return f"cc:{uuid}"
    payload = record.get("payload")
    item = payload if isinstance(payload, dict) else record
    try:
        text = json.dumps(item, sort_keys=True, ensure_ascii=False, separators=(",", ":"))
    except (TypeError, ValueError, RecursionError):
        return None
    digest = hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()[:32]
    return f"cx:{digest}"


def _reduce_record(record: dict[str, Any]) -> tuple[str | None, str] | None:
    """(role, text) for a record; text "" for a known record without text; None if unknown."""
    rtype = record.get("type")
    payload = record.get("payload")
    # Codex, current envelope: {"timestamp", "type", "payload": {...}}
    if isinstance(payload, dict) and isinstance(rtype, str):
        if rtype == "response_item":
            return _reduce_item(payload)
        return None, ""  # session_meta, turn_context, event_msg (duplicates items), compacted
    # Claude Code: {"type": "user" | "assistant", "message": {"role", "content"}, ...}
    message = record.get("message")
    if rtype in ("user", "assistant") and isinstance(message, dict):
        if record.get("isMeta") is True or record.get("isCompactSummary") is True:
            return None, ""
        role = message.get("role")
        return (role if isinstance(role, str) else rtype), _content_text(message.get("content"))
    if isinstance(rtype, str):
        # Codex flat items, or any other typed record (summary, system, progress, ...)
        return _reduce_item(record)
    if isinstance(record.get("record_type"), str):
        return None, ""  # Codex {"record_type": "state"}
    if "role" in record and "content" in record:  # a bare chat message
        return _reduce_item({**record, "type": "message"})
    if "id" in record and "timestamp" in record:
        return None, ""  # Codex flat-format session header
    return None


def _reduce_item(item: dict[str, Any]) -> tuple[str | None, str]:
    """A Codex response item (or any typed record) reduced to (role, text)."""
    itype = item.get("type")
    if itype == "message":
        role = item.get("role")
        if role not in ("user", "assistant"):
            return None, ""  # developer / system instructions
        return role, _content_text(item.get("content"))
    if itype in _CODEX_TOOL_CALLS:
        return "assistant", _codex_tool_call(item)
    if itype in _CODEX_TOOL_OUTPUTS:
        return "user", _tool_line("[tool result]", _flatten(_maybe_json(item.get("output"))))
    return None, ""


def _injected(text: str) -> bool:
    return text.lstrip().startswith(_INJECTED_PREFIXES) or _only_elements(text)


def _only_elements(text: str) -> bool:
    """Whether `text` is nothing but one or more ``<compound_tag>…</compound_tag>``."""
    pos = 0
    while True:
        m = _OPENING.match(text, pos)
        if m is None:
            return False
        close = text.find(f"</{m.group(1)}>", m.end())
        if close == -1:
            return False
        pos = close + len(m.group(1)) + 3
        if not text[pos:].strip():
            return True


def _content_text(content: object) -> str:
    """Text of a message's content: a string, or a list of typed blocks."""
    if isinstance(content, str):
        return "" if _injected(content) else content.strip()
    if not isinstance(content, list):
        return ""
    parts: list[str] = []
    for block in content:
        text = _block_text(block)
        if text:
            parts.append(text)
    return "\n".join(parts)


def _block_text(block: object) -> str:
    if isinstance(block, str):
        return block.strip()
    if not isinstance(block, dict):
        return ""
    btype = block.get("type")
    if btype in _SKIPPED_BLOCKS:
        return ""
    if btype == "tool_use":
        return _tool_line(f"[tool: {_name(block.get('name'))}]", _summarize(block.get("input")))
    if btype == "tool_result":
        label = "[tool error]" if block.get("is_error") is True else "[tool result]"
        return _tool_line(label, _flatten(block.get("content")))
    text = block.get("text")
    if isinstance(text, str) and (btype in _TEXT_BLOCKS or btype is None):
        return "" if _injected(text) else text.strip()
    return ""


def _codex_tool_call(item: dict[str, Any]) -> str:
    itype = item.get("type")
    if itype == "local_shell_call":
        action = item.get("action")
        arg = action.get("command") if isinstance(action, dict) else None
        return _tool_line("[tool: shell]", _summarize(arg))
    if itype == "web_search_call":
        return _tool_line("[tool: web_search]", _summarize(item.get("action")))
    args = item.get("arguments") if itype == "function_call" else item.get("input")
    return _tool_line(f"[tool: {_name(item.get('name'))}]", _summarize(_maybe_json(args)))


def _name(value: object) -> str:
    return value if isinstance(value, str) and value else "?"


def _summarize(value: object) -> str:
    """The most telling part of a tool input: its command, path or query, else all of it."""
    if isinstance(value, dict):
        for key in _SUMMARY_KEYS:
            if key in value:
                return _summarize(value[key])
    if isinstance(value, list) and all(isinstance(v, str) for v in value):
        return " ".join(value)
    return _flatten(value)


def _flatten(value: object) -> str:
    """Any JSON value as plain text: strings as they are, text blocks joined, else JSON."""
    if value is None:
        return ""
    if isinstance(value, str):
        return value
    if isinstance(value, list):
        return " ".join(t for t in (_flatten_block(v) for v in value) if t)
    if isinstance(value, dict):
        for key in ("output", "text", "content"):
            if isinstance(value.get(key), str | list):
                return _flatten(value[key])
    try:
        return json.dumps(value, ensure_ascii=False, default=str)
    except (TypeError, ValueError, RecursionError):
        return ""


def _flatten_block(value: object) -> str:
    text = value.get("text") if isinstance(value, dict) else None
    return text if isinstance(text, str) else _flatten(value)


def _tool_line(label: str, detail: str) -> str:
    detail = " ".join(detail.split())
    if len(detail) > TOOL_SUMMARY_MAX:
        detail = detail[: TOOL_SUMMARY_MAX - 1].rstrip() + "…"
    return f"{label} {detail}" if detail else label


def _maybe_json(value: object) -> object:
    """Codex stores tool arguments and outputs as JSON inside a string; unwrap when it is."""
    if isinstance(value, str) and value.lstrip()[:1] in ("{", "["):
        parsed = loads(value)
        if parsed is not None:
            return parsed
    return value
