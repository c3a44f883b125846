"""Session diaries: read a diary into passages that keep their byte offsets (SPEC §7).

A diary is what a reflector reads: plain text or Markdown notes, or an agent transcript in
JSON Lines (Claude Code ``~/.claude/projects/*/*.jsonl``, Codex
``~/.codex/sessions/**/rollout-*.jsonl``, both its current ``{timestamp, type, payload}``
envelope and the older flat format where each line is the item itself).

Every passage carries the byte offset where it starts in the file, so a proposal can point
at the place in the session that produced it, and ``Diary.end`` is the next watermark:
reading again with ``start=diary.end`` returns only what was written since.

Reading never raises on content: invalid UTF-8 is decoded with replacement characters,
malformed JSON lines are skipped and counted in ``Diary.skipped``.
"""

from __future__ import annotations

import bisect
import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, BinaryIO, Literal

__all__ = [
    "TOOL_LINE_PREFIX",
    "Diary",
    "Passage",
    "detect_format",
    "read_diary",
    "read_jsonl_transcript",
    "read_text_diary",
]

# Tool calls and results are reduced to one line starting with this prefix, so that readers
# (the heuristic reflector) can tell what the agent wrote from what a tool printed.
TOOL_LINE_PREFIX = "[tool"
TOOL_SUMMARY_MAX = 200  # characters of a tool call or result kept in its one-line summary

_BOM = b"\xef\xbb\xbf"
_HEAD_BYTES = 1 << 20  # how much of a file format detection looks at
_JSONL_SUFFIXES = frozenset({".jsonl", ".ndjson"})
# Text a Codex session injects as "user" input that nobody typed in this session.
_INJECTED_PREFIXES = ("<environment_context>", "<user_instructions>", "# AGENTS.md instructions")
_TEXT_BLOCKS = frozenset({"text", "input_text", "output_text"})
_SKIPPED_BLOCKS = frozenset({"thinking", "redacted_thinking", "reasoning", "image", "input_image"})
_CODEX_TOOL_CALLS = frozenset(
    {"function_call", "custom_tool_call", "local_shell_call", "web_search_call"}
)
_CODEX_TOOL_OUTPUTS = frozenset({"function_call_output", "custom_tool_call_output"})
_SUMMARY_KEYS = ("command", "cmd", "file_path", "path", "pattern", "query", "url", "description")


@dataclass(frozen=True)
class Passage:
    """One unit of a diary: a paragraph of text, or one transcript record reduced to text."""

    offset: int  # byte offset in the file where this passage starts (line start for JSONL)
    text: str
    role: str | None  # "user" / "assistant" for transcripts, None for plain text
    # Text paragraphs: the byte offset in the file of each line of `text` (split on "\n").
    # Empty for a transcript record, which is one line of the file whatever its text holds.
    line_starts: tuple[int, ...] = field(default=(), compare=False, repr=False)

    def lines(self) -> list[tuple[int, str]]:
        """Each line of the text with the byte offset of the line of the file it came from.

        For a text paragraph that is the line's own offset; the lines of a transcript record
        all share the record's offset.
        """
        parts = self.text.split("\n") if self.line_starts else self.text.splitlines()
        if len(parts) == len(self.line_starts):
            return list(zip(self.line_starts, parts, strict=True))
        return [(self.offset, part) for part in parts]

    def since(self, offset: int) -> Passage | None:
        """The part of this passage from byte ``offset`` on: the whole passage if it starts
        there or later, its lines from ``offset`` on for a paragraph that straddles it, None
        if nothing of it is left."""
        if self.offset >= offset:
            return self
        kept = [(o, line) for o, line in self.lines() if o >= offset]
        if not kept or not self.line_starts:
            return None
        return Passage(
            offset=kept[0][0],
            text="\n".join(line for _, line in kept),
            role=self.role,
            line_starts=tuple(o for o, _ in kept),
        )


@dataclass
class Diary:
    """A diary read from ``start`` onwards; ``end`` is the watermark for the next read.

    ``unfinished`` counts the bytes after ``end`` that were not read: a last line without
    its newline yet (the agent is still writing it). They are read next time, whole.
    """

    ref: str
    passages: list[Passage]
    end: int
    skipped: int = 0
    unfinished: int = 0
    _offsets: list[int] = field(default_factory=list, init=False, repr=False, compare=False)

    def render(self) -> str:
        """The diary as prompt text: each passage under a marker such as ``[@4096 assistant]``."""
        blocks = []
        for p in self.passages:
            marker = f"[@{p.offset} {p.role}]" if p.role else f"[@{p.offset}]"
            blocks.append(f"{marker}\n{p.text}")
        return "\n\n".join(blocks)

    def passage_at(self, offset: int) -> Passage | None:
        """The passage that covers ``offset``: the last one starting at or before it.

        None before the first passage and at or past ``end``.
        """
        if len(self._offsets) != len(self.passages):
            self._offsets = [p.offset for p in self.passages]
        if offset >= self.end:
            return None
        i = bisect.bisect_right(self._offsets, offset) - 1
        return self.passages[i] if i >= 0 else None

    def line_offsets(self) -> set[int]:
        """Every offset a proposal may point at: each passage's start and each line's."""
        found = {p.offset for p in self.passages}
        for p in self.passages:
            found.update(p.line_starts)
        return found

    def since(self, offset: int) -> Diary:
        """This diary without the text before byte ``offset`` (a session's watermark)."""
        kept = [q for q in (p.since(offset) for p in self.passages) if q is not None]
        if len(kept) == len(self.passages) and all(
            a is b for a, b in zip(kept, self.passages, strict=True)
        ):
            return self
        return Diary(self.ref, kept, self.end, self.skipped, self.unfinished)


# ---------------------------------------------------------------------------------- entry


def read_diary(source: str | Path | BinaryIO, *, start: int = 0, ref: str | None = None) -> Diary:
    """Read the diary at ``source`` from byte ``start``, choosing the format by its content.

    ``source`` is a path or a binary file already open, which may be a pipe (``<(cmd)``,
    stdin): a stream is read whole and its bytes before ``start`` are skipped, so the
    watermark of a session fed through a pipe works as for a file that grows. ``ref``
    names the diary (default: the path, or the stream's name).

    The head of the file decides the format (see ``detect_format``); the extension only
    decides for an empty file. From a file, only the head and the part from the watermark
    on are read, so re-reading a long session costs what was appended. Only whole lines are
    read: a last line without its newline is left for the next read (``Diary.unfinished``).
    Raises ``OSError`` if the source cannot be read, never on its content.
    """
    if isinstance(source, str | Path):
        with Path(source).open("rb") as f:
            return _read_open(f, start, str(source) if ref is None else ref, Path(source).suffix)
    name = getattr(source, "name", "")
    name = name if isinstance(name, str) else ""
    return _read_open(source, start, name if ref is None else ref, Path(name).suffix)


def _read_open(f: BinaryIO, start: int, ref: str, suffix: str) -> Diary:
    if f.seekable():
        f.seek(0)
        head = f.read(_HEAD_BYTES)
        data = None
    else:  # a pipe: no seeking, read it all
        data = f.read()
        head = data[:_HEAD_BYTES]
    fmt = detect_format(head, complete=len(head) < _HEAD_BYTES)
    if fmt is None:
        fmt = "jsonl" if suffix.lower() in _JSONL_SUFFIXES else "text"
    # JSONL needs the byte before the watermark, to tell whether it falls on a line start.
    base = max(0, start - 1) if fmt == "jsonl" else max(0, start)
    if data is not None:
        data = data[base:]
    elif base <= len(head):
        data = head[base:] + f.read()
    else:
        f.seek(base)
        data = f.read()
    if fmt == "jsonl":
        return _read_jsonl(data, start=start, ref=ref, base=base)
    return _read_text(data, start=start, ref=ref, base=base)


def detect_format(
    data: bytes, *, sample_lines: int = 5, complete: bool = True
) -> Literal["jsonl", "text"] | None:
    """``"jsonl"`` if the file is JSON Lines, ``"text"`` if not, None if it is empty.

    JSON Lines means: the first non-blank line starts with ``{`` and at least one of the first
    ``sample_lines`` non-blank lines parses as a JSON object. ``complete=False`` says ``data``
    is only the head of the file: a first line cut off by the end of the head (one huge
    record) then counts as an object. Detection always looks at the head of the file,
    whatever the watermark.
    """
    if data.startswith(_BOM):
        data = data[len(_BOM) :]
    segments = data.split(b"\n", 64)  # the head is enough; never split a huge file fully
    lines: list[tuple[bytes, bool]] = []  # (line, cut off by the end of a partial head)
    for i, raw in enumerate(segments):
        line = raw.strip()
        if line:
            lines.append((line, not complete and i == len(segments) - 1 and len(segments) <= 64))
            if len(lines) >= sample_lines:
                break
    if not lines:
        return None
    first, first_cut = lines[0]
    if not first.startswith(b"{"):
        return "text"
    if first_cut or any(isinstance(_loads(line), dict) for line, _ in lines):
        return "jsonl"
    return "text"


# ---------------------------------------------------------------------------------- text


def read_text_diary(data: bytes, *, start: int = 0, ref: str = "") -> Diary:
    """Plain text or Markdown: passages are paragraphs separated by blank lines.

    Reading begins at byte ``start``. Each passage's offset is the byte offset of its first
    line in ``data``, ``line_starts`` those of each of its lines, and its text is that
    paragraph as written (trailing whitespace removed), so ``data[offset:]`` starts with the
    passage's UTF-8 bytes whenever they are valid. A last line without its newline is still
    being written: it is not read, and ``end`` stops before it.
    """
    return _read_text(data, start=start, ref=ref, base=0)


def _read_text(data: bytes, *, start: int, ref: str, base: int) -> Diary:
    """``read_text_diary`` over ``data`` = the file from byte ``base`` on (``base <= start``)."""
    size = len(data)
    pos = min(max(start - base, 0), size)
    if base + pos == 0 and data.startswith(_BOM):
        pos = len(_BOM)
    passages: list[Passage] = []
    lines: list[int] = []  # where the lines of the paragraph being read start, in `data`
    para_end = pos
    while pos < size:
        nl = data.find(b"\n", pos)
        if nl == -1:
            break  # an incomplete last line: leave it for the next read
        if data[pos:nl].strip():
            lines.append(pos)
            para_end = nl
        elif lines:
            passages.append(_text_passage(data, lines, para_end, base))
            lines = []
        pos = nl + 1
    if lines:
        passages.append(_text_passage(data, lines, para_end, base))
    return Diary(ref=ref, passages=passages, end=max(start, base + pos), unfinished=size - pos)


def _text_passage(data: bytes, lines: list[int], end: int, base: int) -> Passage:
    return Passage(
        offset=base + lines[0],
        text=_decode(data[lines[0] : end]).rstrip(),
        role=None,
        line_starts=tuple(base + i for i in lines),
    )


# ---------------------------------------------------------------------------------- JSONL


def read_jsonl_transcript(data: bytes, *, start: int = 0, ref: str = "") -> Diary:
    """An agent transcript in JSON Lines: one passage per record that carries text.

    Only whole lines that start at byte ``start`` or later are read. A trailing line without
    its newline is still being written: it is not consumed, and ``end`` stops before it.
    User and assistant text is kept; tool calls and results become one short line each
    (``[tool: Bash] git status``, ``[tool result] ...``); thinking and metadata records are
    dropped; lines that are not JSON objects, or objects of no known shape, are counted in
    ``skipped``.
    """
    return _read_jsonl(data, start=start, ref=ref, base=0)


def _read_jsonl(data: bytes, *, start: int, ref: str, base: int) -> Diary:
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
            record = _loads(line)
            if not isinstance(record, dict):
                skipped += 1
            else:
                reduced = _reduce_record(record)
                if reduced is None:
                    skipped += 1
                elif reduced[1]:
                    passages.append(Passage(offset=base + pos, text=reduced[1], role=reduced[0]))
        pos = nl + 1
        end = pos
    return Diary(
        ref=ref,
        passages=passages,
        end=max(base + end, start),
        skipped=skipped,
        unfinished=size - end,
    )


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
        if record.get("isMeta") is True:
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


def _content_text(content: object) -> str:
    """Text of a message's content: a string, or a list of typed blocks."""
    if isinstance(content, str):
        return "" if content.lstrip().startswith(_INJECTED_PREFIXES) else content.strip()
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
        return "" if text.lstrip().startswith(_INJECTED_PREFIXES) else text.strip()
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
    if isinstance(value, dict) and isinstance(value.get("text"), str):
        return value["text"]
    return _flatten(value)


def _tool_line(label: str, detail: str) -> str:
    detail = " ".join(detail.split())
    if len(detail) > TOOL_SUMMARY_MAX:
        detail = detail[: TOOL_SUMMARY_MAX - 1].rstrip() + "…"
    return f"{label} {detail}" if detail else label


def _maybe_json(value: object) -> object:
    """Codex stores tool arguments and outputs as JSON inside a string; unwrap when it is."""
    if isinstance(value, str) and value.lstrip()[:1] in ("{", "["):
        parsed = _loads(value)
        if parsed is not None:
            return parsed
    return value


def _loads(raw: bytes | str) -> object:
    """json.loads that never raises: None for anything that is not JSON."""
    text = _decode(raw) if isinstance(raw, bytes) else raw
    try:
        return json.loads(text.lstrip("\ufeff"))
    except (ValueError, RecursionError):
        return None


def _decode(raw: bytes) -> str:
    return raw.decode("utf-8", errors="replace")
