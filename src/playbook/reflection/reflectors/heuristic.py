"""The heuristic reflector: proposes what a diary states explicitly, with no model."""

from __future__ import annotations

import re
from collections.abc import Iterator, Mapping
from typing import Any

from playbook.core.model import HarmReason
from playbook.reflection.diaries import TOOL_LINE_PREFIX, Diary

from .base import ProposedItem

__all__ = ["HARMFUL_REASONS", "HeuristicReflector"]

HARMFUL_REASONS = tuple(r.value for r in HarmReason)

# A Markdown quote, bullet or numbered-list prefix, any number of them ("> - 1. ").
_LINE_PREFIX = r"^\s*(?:(?:>|[-*+]|\d+[.)])\s*)*"
_EMPHASIS = r"(?:\*\*|__|\*|_)?"
_RULE_RE = re.compile(
    _LINE_PREFIX
    + _EMPHASIS
    + r"(?P<kw>rule|avoid)"
    + _EMPHASIS
    + r"\s*:"
    + _EMPHASIS
    + r"(?P<rest>.*)$",
    re.IGNORECASE,
)
_TAG_RE = re.compile(r"#[A-Za-z][\w.+/-]*")
# What joins a marker to the text after it ("]: it worked", "] - it worked", "] — ..."), or
# punctuation that ends the sentence ("]."): a run of these followed by a space or the end.
# "--force" is not one: the dashes are followed by a word.
_JOINER_RE = re.compile(r"^[:;,.!?\u2013\u2014-]+(?=\s|$)")
_MARKER_RE = re.compile(
    r"\[\s*playbook\s*:\s*(?P<verb>helpful|harmful|deprecate)\s+(?P<id>b-[0-9a-z]+)\b"
    r"(?P<inner>[^\[\]]*)\]",  # no brackets inside: each try stops at the next one
    re.IGNORECASE,
)


class HeuristicReflector:
    """Proposes what the diary states explicitly, with no model.

    Markers (case-insensitive; a line may start with Markdown quote/bullet/number prefixes
    and the keyword may be bold):

    - ``RULE: text #tag …`` → ``{"type": "add", "content": text, "bullet_type": "rule"}``
    - ``AVOID: text #tag …`` → ``{"type": "add", "content": "AVOID: text",
      "bullet_type": "anti-pattern"}``; trailing ``#tag`` words of either go to ``"tags"``
      (lower-cased).
    - ``[playbook: helpful b-xxxxxxxx]`` plus optional context text, inside the brackets or
      after them on the same line → ``{"type": "helpful", "bullet_id": …, "context": …}``
    - ``[playbook: harmful b-xxxxxxxx REASON free text]`` → ``harmful`` with ``reason`` when
      the first word is one of ``HARMFUL_REASONS`` (``caused-bug`` spelling accepted), else
      reason ``"other"`` and all the text as ``context``.
    - ``[playbook: deprecate b-xxxxxxxx reason text]`` → ``deprecate`` with ``reason`` (left
      out when no text is given, so validation reports it).

    Bullet ids are lower-cased. Lines that are tool summaries (``[tool…``) are ignored: what a
    tool printed is not what the agent decided. Each item's offset is that of the line
    holding its marker (``Passage.lines``; in a transcript, the record's line). Items equal
    to one in ``prior`` (or proposed earlier in the same diary) are not proposed again, so
    the caller's loop stops after one round.
    """

    def propose(
        self, diary: Diary, playbook: list[dict[str, Any]], prior: list[dict[str, Any]]
    ) -> list[ProposedItem]:
        seen = {key for key in map(_delta_key, prior) if key is not None}
        proposed: list[ProposedItem] = []
        for passage in diary.passages:
            for offset, line in passage.lines():
                for item in _markers(line):
                    key = _item_key(item)
                    if key in seen:
                        continue
                    seen.add(key)
                    proposed.append(ProposedItem(item=item, offset=offset))
        return proposed


def _markers(line: str) -> Iterator[dict[str, Any]]:
    if line.lstrip().startswith(TOOL_LINE_PREFIX):
        return
    m = _RULE_RE.match(line)
    if m:
        item = _rule_item(m.group("kw").lower(), m.group("rest"))
        if item is not None:
            yield item
    yield from _playbook_markers(line)


def _rule_item(keyword: str, rest: str) -> dict[str, Any] | None:
    words = rest.split()  # (splitting, not a regex: no backtracking on long blank runs)
    n = len(words)
    while n and _TAG_RE.fullmatch(words[n - 1]):
        n -= 1
    tags = list(dict.fromkeys(w[1:].lower() for w in words[n:]))
    words = words[:n]
    content = " ".join(words)
    if not content:
        return None
    item: dict[str, Any] = {"type": "add"}
    if keyword == "avoid":
        item.update(content=f"AVOID: {content}", bullet_type="anti-pattern")
    else:
        item.update(content=content, bullet_type="rule")
    if tags:
        item["tags"] = tags
    return item


def _playbook_markers(line: str) -> Iterator[dict[str, Any]]:
    matches = list(_MARKER_RE.finditer(line))
    for i, m in enumerate(matches):
        after_end = matches[i + 1].start() if i + 1 < len(matches) else len(line)
        inner = m.group("inner").strip()
        after = _JOINER_RE.sub("", line[m.end() : after_end].strip()).strip()
        verb, bullet_id = m.group("verb").lower(), m.group("id").lower()
        item: dict[str, Any] = {"type": verb, "bullet_id": bullet_id}
        if verb == "harmful":
            first, _, remainder = inner.partition(" ")
            reason = first.lower().replace("-", "_")
            if reason in HARMFUL_REASONS:
                item["reason"] = reason
                inner = remainder.strip()
            else:
                item["reason"] = "other"
        text = " ".join(part for part in (inner, after) if part)
        if text:
            item["reason" if verb == "deprecate" else "context"] = text
        yield item


def _delta_key(delta: object) -> tuple[str, ...] | None:
    """What makes two proposals the same: their type, target bullets and content."""
    return _item_key(delta) if isinstance(delta, Mapping) else None


def _item_key(delta: Mapping[str, Any]) -> tuple[str, ...]:
    ids = delta.get("bullet_ids")
    id_list = sorted(str(i).lower() for i in ids) if isinstance(ids, list) else []
    return (
        str(delta.get("type", "")).lower(),
        str(delta.get("bullet_id") or "").lower(),
        ",".join(id_list),
        " ".join(str(delta.get("content") or "").casefold().split()),
    )
