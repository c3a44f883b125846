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

Modules: ``base`` (`Passage`, `Diary`), ``text`` (paragraphs), ``jsonl`` (transcripts);
this one chooses between them.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Literal

from .base import BOM, Diary, Passage, loads
from .jsonl import TOOL_LINE_PREFIX, TOOL_SUMMARY_MAX, read_jsonl_from, read_jsonl_transcript
from .text import read_text_diary, read_text_from

if TYPE_CHECKING:
    from playbook.core.files import Readable

__all__ = [
    "TOOL_LINE_PREFIX",
    "TOOL_SUMMARY_MAX",
    "Diary",
    "Passage",
    "detect_format",
    "read_diary",
    "read_jsonl_transcript",
    "read_text_diary",
]

_HEAD_BYTES = 1 << 20  # how much of a file format detection looks at
_JSONL_SUFFIXES = frozenset({".jsonl", ".ndjson"})


def read_diary(
    source: str | Path | Readable,
    *,
    start: int = 0,
    ref: str | None = None,
    limit: int | None = None,
) -> Diary:
    """Read the diary at ``source`` from byte ``start``, choosing the format by its content.

    ``source`` is a path or a binary file already open, which may be a pipe (``<(cmd)``,
    stdin): a stream is read whole and its bytes before ``start`` are skipped, so the
    watermark of a session fed through a pipe works as for a file that grows. ``ref``
    names the diary (default: the path, or the stream's name).

    The head of the file decides the format (see ``detect_format``); the extension only
    decides for an empty file. From a file, only the head and the part from the watermark
    on are read, so re-reading a long session costs what was appended. Only whole lines are
    read: a last line without its newline is left for the next read (``Diary.unfinished``).

    ``limit`` bounds the bytes read past ``start`` (a file that grew to gigabytes is read a
    part at a time, from one watermark to the next): the line the limit falls in is left for
    the next read, and a single line longer than ``limit`` is passed over whole (counted in
    ``Diary.skipped``) without being held in memory.
    Raises ``OSError`` if the source cannot be read, never on its content.
    """
    if limit is not None and limit < 1:
        raise ValueError("limit must be a positive number of bytes")
    if isinstance(source, str | Path):
        with Path(source).open("rb") as f:
            ref = str(source) if ref is None else ref
            return _read_open(f, start, ref, Path(source).suffix, limit)
    name = getattr(source, "name", "")
    name = name if isinstance(name, str) else ""
    return _read_open(source, start, name if ref is None else ref, Path(name).suffix, limit)


def _read_open(f: Readable, start: int, ref: str, suffix: str, limit: int | None) -> Diary:
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
    want = -1 if limit is None else max(0, start - base) + limit
    if data is not None:
        data = data[base:] if want < 0 else data[base : base + want]
    elif base <= len(head):
        data = head[base:]
        if want < 0 or len(data) < want:
            data += f.read(-1 if want < 0 else want - len(data))
        else:
            data = data[:want]
    else:
        f.seek(base)
        data = f.read(want)
    reader = read_jsonl_from if fmt == "jsonl" else read_text_from
    diary = reader(data, start=start, ref=ref, base=base)
    if limit is not None and not diary.passages and diary.end == start and len(data) >= want:
        return _past_long_line(f, diary, want)
    return diary


def _past_long_line(f: Readable, diary: Diary, read: int) -> Diary:
    """The diary past a line longer than the read limit (a file: found by scanning on, a
    chunk at a time); unchanged when the line has no end yet (it is still being written)."""
    if not f.seekable():
        return diary
    pos = diary.end
    f.seek(pos)
    while chunk := f.read(_HEAD_BYTES):
        nl = chunk.find(b"\n")
        if nl != -1:
            return Diary(diary.ref, [], pos + nl + 1, diary.skipped + 1, 0)
        pos += len(chunk)
    return diary


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
    if data.startswith(BOM):
        data = data[len(BOM) :]
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
    if first_cut or any(isinstance(loads(line), dict) for line, _ in lines):
        return "jsonl"
    return "text"
