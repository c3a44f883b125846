"""Untrusted text made inert for terminals: control, escape and bidi characters shown as text.

Rule content comes from agents and models. Printed raw, an ANSI/OSC escape could recolour
or retitle a terminal, and a right-to-left override could disguise what a rule says. The
CLI and the workbench show such characters as visible escapes (`\\x1b`, `\\u202e`) instead.
"""

from __future__ import annotations

import json
import re
from typing import Any

# C0 controls except tab/newline, DEL, C1 controls, bidi embeddings/overrides/isolates,
# zero-width and line/paragraph separators, and lone surrogates (no terminal can be sent
# them: writing one to stdout raises UnicodeEncodeError).
_UNSAFE = re.compile(
    "[\x00-\x08\x0b-\x1f\x7f-\x9f\u200b-\u200f\u2028-\u202e\u2066-\u2069\ufeff\ud800-\udfff]"
)
_UNSAFE_ONE_LINE = re.compile(
    "[\x00-\x1f\x7f-\x9f\u200b-\u200f\u2028-\u202e\u2066-\u2069\ufeff\ud800-\udfff]"
)


def _escape(m: re.Match[str]) -> str:
    c = m.group(0)
    code = ord(c)
    if c == "\n":
        return "\\n"
    if c == "\t":
        return "\\t"
    return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}"


def inert(text: str, *, one_line: bool = False) -> str:
    """`text` with every character that could act on a terminal replaced by its escape."""
    return (_UNSAFE_ONE_LINE if one_line else _UNSAFE).sub(_escape, text)


def has_unsafe(text: str) -> bool:
    return bool(_UNSAFE.search(text))


def _json_escape(m: re.Match[str]) -> str:
    return f"\\u{ord(m.group(0)):04x}"


def dumps(data: Any, *, indent: int | None = 2) -> str:
    """JSON for a terminal: UTF-8 kept readable, but C1 and bidi controls escaped too."""
    return _UNSAFE.sub(
        _json_escape, json.dumps(data, ensure_ascii=False, indent=indent, default=str)
    )
