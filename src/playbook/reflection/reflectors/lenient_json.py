"""Lenient JSON: the deltas in what a model printed, prose, fences and envelopes around them."""

from __future__ import annotations

import json
import re
from collections.abc import Iterator

from ...core.terms import DELTA_TYPES

__all__ = ["DELTA_TYPES", "parse_deltas"]

_FENCE_RE = re.compile(r"```[ \t]*(?:json[c5]?)?[ \t]*\r?\n(.*?)```", re.DOTALL | re.IGNORECASE)
_MAX_DECODE_ATTEMPTS = 500  # positions tried per text: bounds the work on garbage output
_decoder = json.JSONDecoder()


def parse_deltas(text: str) -> list[object] | None:
    """The deltas in a program's output, or None if it holds none.

    Tolerates prose before and after, ```json fences (tried first), a top-level
    ``{"deltas": [...]}`` object, a bare array, one delta object or several (one per line),
    and Claude Code's ``--output-format json`` envelope (``{"type": "result", "result": …}``).
    The first parseable value that fits wins; an array fits when it is empty or holds at
    least one object. Items are returned as parsed, not validated.
    """
    return _parse(text, depth=0)


def _parse(text: str, depth: int) -> list[object] | None:
    for fence in _FENCE_RE.finditer(text):
        found = _scan(fence.group(1), depth)
        if found is not None:
            return found
    return _scan(text, depth)


def _scan(text: str, depth: int) -> list[object] | None:
    singles: list[object] = []
    resume = 0
    for start, end, value in _json_values(text):
        if start < resume:
            continue  # inside an object already taken
        if isinstance(value, dict) and value.get("type") in DELTA_TYPES:
            singles.append(value)
            resume = end
            continue
        if singles:
            continue  # a run of single objects has begun: only more of them fit now
        fitted = _fit(value, depth)
        if fitted is not None:
            return fitted
    return singles or None


def _fit(value: object, depth: int) -> list[object] | None:
    if isinstance(value, list):
        return value if not value or any(isinstance(v, dict) for v in value) else None
    if isinstance(value, dict):
        deltas = value.get("deltas")
        if isinstance(deltas, list):
            return deltas
        result = value.get("result")
        if value.get("type") == "result" and isinstance(result, str) and depth == 0:
            return _parse(result, depth=1)
    return None


def _json_values(text: str) -> Iterator[tuple[int, int, object]]:
    """(start, end, value) for each JSON array or object that decodes at a ``[`` or ``{``."""
    attempts = 0
    pos = 0
    while attempts < _MAX_DECODE_ATTEMPTS:
        starts = [i for i in (text.find("[", pos), text.find("{", pos)) if i != -1]
        if not starts:
            return
        start = min(starts)
        attempts += 1
        try:
            value, end = _decoder.raw_decode(text, start)
        except (ValueError, RecursionError):
            pos = start + 1
            continue
        yield start, end, value
        pos = start + 1
