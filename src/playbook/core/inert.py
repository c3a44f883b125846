"""Untrusted text made inert for terminals: control, escape and bidi characters shown as text.

Rule content comes from agents and models. Printed raw, an ANSI/OSC escape could recolour
or retitle a terminal, and a right-to-left override could disguise what a rule says. The
CLI and the workbench show such characters as visible escapes (`\\x1b`, `\\u202e`) instead.
"""

from __future__ import annotations

import functools
import json
import math
import re
from typing import Any

# Every character a terminal acts on or does not show: C0 controls except tab/newline, DEL,
# C1 controls, and all format characters (Unicode category Cf: bidi marks, embeddings,
# overrides and isolates, zero-width characters, the invisible "tag" characters that can
# smuggle hidden text, the BOM, the soft hyphen), line/paragraph separators, and lone
# surrogates (no terminal can be sent them: writing one to stdout raises).
_INVISIBLE = (
    "\xad\u0600-\u0605\u061c\u06dd\u070f\u0890\u0891\u08e2\u180e\u200b-\u200f"
    "\u2028-\u202e\u2060-\u2064\u2066-\u206f\ud800-\udfff\ufeff\ufff9-\ufffb"
    "\U000110bd\U000110cd\U00013430-\U0001343f\U0001bca0-\U0001bca3"
    "\U0001d173-\U0001d17a\U000e0001\U000e0020-\U000e007f"
)
_UNSAFE_CLASS = f"[\x00-\x08\x0b-\x1f\x7f-\x9f{_INVISIBLE}]"
_UNSAFE_ONE_LINE_CLASS = f"[\x00-\x1f\x7f-\x9f{_INVISIBLE}]"


@functools.cache
def _unsafe(one_line: bool) -> re.Pattern[str]:
    """The characters to escape, compiled on first use (about 5 million instructions each:
    most text has none of them, which `_plain` tells without the pattern)."""
    return re.compile(_UNSAFE_ONE_LINE_CLASS if one_line else _UNSAFE_CLASS)


def _plain(text: str, one_line: bool) -> bool:
    """True when `text` holds no character to escape, told without the pattern: each of
    them is a character `str.isprintable` refuses (tests/test_inert.py checks every code
    point), and of the others only newline and tab are kept unless `one_line`. False says
    only that the pattern must look."""
    if text.isprintable():
        return True
    return not one_line and text.replace("\n", "").replace("\t", "").isprintable()


def _escape(m: re.Match[str]) -> str:
    c = m.group(0)
    code = ord(c)
    if c == "\n":
        return "\\n"
    if c == "\t":
        return "\\t"
    if code < 0x100:
        return f"\\x{code:02x}"
    return f"\\u{code:04x}" if code < 0x10000 else f"\\U{code:08x}"


def inert(text: str, *, one_line: bool = False) -> str:
    """`text` with every character that could act on a terminal replaced by its escape."""
    if _plain(text, one_line):
        return text
    return _unsafe(one_line).sub(_escape, text)


def has_unsafe(text: str) -> bool:
    return not _plain(text, False) and bool(_unsafe(False).search(text))


def _json_escape(m: re.Match[str]) -> str:
    return json.dumps(m.group(0))[1:-1]  # \\uXXXX, a surrogate pair above U+FFFF


def dumps(data: Any, *, indent: int | None = 2) -> str:
    """JSON for a terminal: UTF-8 kept readable, but C1 and bidi controls escaped too. Always
    JSON: a number that is not finite (a statistic of too little data) is written null, never
    as `NaN` or `Infinity`, which no JSON reader accepts."""
    try:
        text = json.dumps(data, ensure_ascii=False, indent=indent, default=str, allow_nan=False)
    except ValueError:
        text = json.dumps(_finite(data), ensure_ascii=False, indent=indent, default=str)
    return text if _plain(text, False) else _unsafe(False).sub(_json_escape, text)


def _finite(data: Any) -> Any:
    """`data` with every float that is not finite replaced by None."""
    if isinstance(data, float):
        return data if math.isfinite(data) else None
    if isinstance(data, dict):
        return {k: _finite(v) for k, v in data.items()}
    if isinstance(data, list | tuple):
        return [_finite(v) for v in data]
    return data
