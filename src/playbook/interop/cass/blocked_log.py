"""cass-memory's ``blocked.log``: the rules ``cm forget`` took out, one JSON object a line.

Each entry (``{"id", "content", "reason", "forgottenAt"}``) becomes a blocked pattern: its
content is the pattern, with its reason and time. cass-memory skips lines that are not JSON
and entries without ``id`` and ``content`` (``loadBlockedLog``); so does this reader, with a
note for each. An entry repeating the content of an earlier one is read once.
"""

from __future__ import annotations

import json
from typing import Any

from ...core.text import normalize
from .records import CassImport, CassImportError, ImportedBlock
from .schema import BLOCKED_ENTRY_KEYS
from .values import parse_time, show, type_name


def looks_like_blocked_log(head: bytes) -> bool:
    """Whether the first line of `head` is a blocked.log entry (a JSON object on one line
    with an id and content)."""
    first = head.lstrip(b"\xef\xbb\xbf \t\r\n").split(b"\n", 1)[0].strip()
    if not first.startswith(b"{"):
        return False
    try:
        entry = json.loads(first)
    except (ValueError, RecursionError):
        return False
    return isinstance(entry, dict) and "content" in entry and "id" in entry


def parse_blocked_log(data: bytes | str) -> CassImport:
    """Parse a blocked.log into blocks; raises CassImportError only when no line is usable
    because the file is not a blocked.log at all. An empty one holds no blocks."""
    if isinstance(data, bytes | bytearray | memoryview):
        try:
            text = bytes(data).decode("utf-8-sig")
        except UnicodeDecodeError as exc:
            raise CassImportError(f"not UTF-8 text (byte {exc.start})") from None
    else:
        text = data
    out = CassImport(kind="blocked-log")
    note = out.notes.add
    seen: set[str] = set()
    lines = 0
    for number, line in enumerate(text.splitlines(), start=1):
        line = line.strip()
        if not line:
            continue
        lines += 1
        where = f"line {number}"
        try:
            entry: Any = json.loads(line)
        except (ValueError, RecursionError):
            note(where, f"skipped, not JSON: {show(line, 40)}", "lines that are not JSON skipped")
            continue
        if not isinstance(entry, dict):
            note(where, f"skipped, it is {type_name(entry)}, not an object", "not objects")
            continue
        content = entry.get("content")
        if not isinstance(content, str) or not content.strip() or not entry.get("id"):
            note(where, "skipped, no 'id' and 'content'", "entries without id and content skipped")
            continue
        for key in entry:
            if key not in BLOCKED_ENTRY_KEYS:
                note(where, f"field {show(key)} is not in cass-memory's schema; dropped")
        key = normalize(content)
        if key in seen:
            note(where, "repeats an earlier entry's content; read once", "repeated entries")
            continue
        seen.add(key)
        reason = entry.get("reason")
        if not isinstance(reason, str) or not reason.strip():
            note(where, "no reason given; recorded as 'forgotten in cass-memory'")
            reason = "forgotten in cass-memory"
        at = parse_time(entry.get("forgottenAt"))
        if at is None and entry.get("forgottenAt") is not None:
            note(where, f"forgottenAt {show(entry.get('forgottenAt'))} is not a timestamp")
        source = entry.get("id")
        out.blocks.append(
            ImportedBlock(
                pattern=content,
                reason=reason,
                at=at,
                source_id=source if isinstance(source, str) else str(source),
            )
        )
    if lines == 0:
        return out  # what cass-memory leaves when nothing was forgotten
    if not out.blocks:
        raise CassImportError(
            "not a cass-memory blocked.log: no line is an entry with an id and content"
        )
    return out
