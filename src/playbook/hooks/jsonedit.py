"""Minimal edits of a JSON file's text: what is not changed keeps its bytes.

An agent's settings file is the user's (or the team's, committed): an install that parses
it and dumps it again re-indents it, reorders nothing but still rewrites every line, and a
reviewer sees a diff of the whole file. Here an edit touches only the text of what it adds
or removes: a member added to an object, an element appended to an array, a member or an
element taken out, a value replaced. New text follows the file's own style: on a line of
its own, indented like its siblings, in a file laid out over lines; inline, with the
file's separators, in a compact one.

`JsonText(text)` parses the text's layout (it must be valid JSON: check with `json.loads`
first); every method returns the new text. Paths are lists of object keys and array
indexes from the top.
"""

from __future__ import annotations

import json
import re
from _json import scanstring  # what json.decoder.scanstring is on CPython (typeshed hides it)
from dataclasses import dataclass, field
from typing import Any

__all__ = ["JsonText"]

_WS = re.compile(r"[ \t\n\r]*")
_INDENT = re.compile(r"[ \t]*")
_SCALAR = re.compile(r"-?(?:0|[1-9]\d*)(?:\.\d+)?(?:[eE][+-]?\d+)?|true|false|null")


@dataclass
class _Node:
    start: int
    end: int  # one past the last character
    kind: str  # "object", "array" or "scalar"
    keys: list[str] = field(default_factory=list)
    key_starts: list[int] = field(default_factory=list)
    children: list[_Node] = field(default_factory=list)


def _skip_ws(text: str, pos: int) -> int:
    """The position past the whitespace at `pos` (the pattern matches the empty string too)."""
    m = _WS.match(text, pos)
    return pos if m is None else m.end()


def _parse(text: str, pos: int) -> _Node:
    pos = _skip_ws(text, pos)
    char = text[pos : pos + 1]
    if char == '"':
        _, end = scanstring(text, pos + 1)
        return _Node(pos, end, "scalar")
    if char in "{[":
        node = _Node(pos, pos, "object" if char == "{" else "array")
        closing = "}" if char == "{" else "]"
        pos = _skip_ws(text, pos + 1)
        while text[pos] != closing:
            if node.kind == "object":
                key, after = scanstring(text, pos + 1)
                node.keys.append(key)
                node.key_starts.append(pos)
                pos = _skip_ws(text, after) + 1  # the colon
            child = _parse(text, pos)
            node.children.append(child)
            pos = _skip_ws(text, child.end)
            if text[pos] == ",":
                pos = _skip_ws(text, pos + 1)
        node.end = pos + 1
        return node
    m = _SCALAR.match(text, pos)
    if m is None:
        raise ValueError(f"not JSON at character {pos}")
    return _Node(pos, m.end(), "scalar")


class JsonText:
    """The text of a JSON document, edited in place (see the module doc)."""

    def __init__(self, text: str) -> None:
        self.text = text
        self.root = _parse(text, 0)
        self.multiline = "\n" in text[self.root.start : self.root.end]
        found = re.search(r"\n([ \t]+)\S", text)
        self.unit = found.group(1) if found else "  "
        compact = re.search(r'"\s*:\s*', text)
        self.colon = compact.group(0)[1:] if compact else ": "
        self.comma = ", " if re.search(r",[ ]\S", text) or not compact else ","

    # ---------------------------------------------------------------- reading
    def _node(self, path: list[str | int]) -> _Node:
        node = self.root
        for step in path:
            if isinstance(step, str):
                node = node.children[node.keys.index(step)]
            else:
                node = node.children[step]
        return node

    def _indent_at(self, pos: int) -> str:
        line_start = self.text.rfind("\n", 0, pos) + 1
        m = _INDENT.match(self.text, line_start)  # (matches the empty string too)
        return "" if m is None else m.group(0)

    def _dump(self, value: Any, indent: str) -> str:
        if not self.multiline:
            return json.dumps(value, ensure_ascii=False, separators=(self.comma, self.colon))
        lines = json.dumps(value, ensure_ascii=False, indent=self.unit).split("\n")
        return "\n".join([lines[0], *(indent + line for line in lines[1:])])

    # ---------------------------------------------------------------- editing
    def _insert(self, container: _Node, member: str, value: Any) -> str:
        """`member` (a key's ``"key": `` or "") and `value` as the container's last item."""
        text = self.text
        if container.children:
            last = container.children[-1]
            first_start = container.key_starts[0] if container.keys else container.children[0].start
            if self.multiline and "\n" in text[container.start : first_start]:
                indent = self._indent_at(first_start)
                item = f",\n{indent}{member}{self._dump(value, indent)}"
            else:
                item = f"{self.comma}{member}{self._dump(value, self._indent_at(last.start))}"
            return text[: last.end] + item + text[last.end :]
        close = container.end - 1
        if self.multiline:
            outer = self._indent_at(container.start)
            indent = outer + self.unit
            item = f"\n{indent}{member}{self._dump(value, indent)}\n{outer}"
        else:
            item = f"{member}{self._dump(value, '')}"
        return text[: container.start + 1] + item + text[close:]

    def add_member(self, path: list[str | int], key: str, value: Any) -> str:
        """The object at `path` with `key` added last (it must not be there yet)."""
        member = json.dumps(key, ensure_ascii=False) + self.colon
        return self._insert(self._node(path), member, value)

    def append(self, path: list[str | int], value: Any) -> str:
        """The array at `path` with `value` appended."""
        return self._insert(self._node(path), "", value)

    def replace(self, path: list[str | int], value: Any) -> str:
        node = self._node(path)
        dumped = self._dump(value, self._indent_at(node.start))
        return self.text[: node.start] + dumped + self.text[node.end :]

    def remove(self, path: list[str | int]) -> str:
        """The document without the member or element at `path`, and its comma."""
        parent = self._node(path[:-1])
        step = path[-1]
        i = parent.keys.index(step) if isinstance(step, str) else step
        starts = parent.key_starts if parent.keys else [c.start for c in parent.children]
        text = self.text
        if len(parent.children) == 1:
            return text[: parent.start + 1] + text[parent.end - 1 :]
        if i > 0:  # from the end of the one before: its comma goes too
            return text[: parent.children[i - 1].end] + text[parent.children[i].end :]
        return text[: starts[0]] + text[starts[1] :]
