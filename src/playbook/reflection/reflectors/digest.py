"""A session within a character budget: what a model reflector reads of a long transcript.

A Claude Code transcript of 3.5 MB reduces to ~90,000 characters of diary and a Codex
rollout to ~140,000, mostly tool output; sent whole, three times per session, that is what
a model reflector would cost. `digest(diary, budget)` keeps what a lesson comes from,
in this order, until the budget is spent:

1. what the agent marked itself (``RULE:``, ``AVOID:``, ``[playbook: …]`` lines), what the
   user asked, and the final state (the agent's last words);
2. the errors (a tool result flagged as an error, or one that reads like one) and what the
   agent wrote right after each (its fix);
3. the rest of the agent's own words;
4. its tool calls (one line each);
5. the other tool output, shortest of all.

Each passage is clipped first (its head and its tail kept: an error's cause is often at
the end), and within a tier the passages nearest the start and the end of the session go
first. What is kept is rendered in the session's order with the ``[@offset role]`` markers
of `Diary.render`, and each gap says how many passages it stands for.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from playbook.reflection.diaries import TOOL_LINE_PREFIX, Diary, Passage

__all__ = ["digest"]

# Characters of one passage kept, by what it is.
ASK_MAX = 2000
SAID_MAX = 1200
ERROR_MAX = 600
CALL_MAX = 200
OUTPUT_MAX = 160
FINAL_PASSAGES = 2  # the agent's last passages of text: the state the session ended in

_MARKED = re.compile(r"^\s*(?:[-*]\s*)?(?:RULE|AVOID)\s*:|\[playbook:", re.IGNORECASE | re.M)
_ERROR_WORDS = re.compile(
    r"\b(?:error|errors|failed|failure|traceback|exception|panicked|fatal|denied|"
    r"not found|exit(?:ed)?(?: with)?(?: code| status)?:? [1-9]\d*)\b",
    re.IGNORECASE,
)


@dataclass
class _Piece:
    index: int
    passage: Passage
    tier: int
    text: str

    def rendered(self) -> str:
        p = self.passage
        marker = f"[@{p.offset} {p.role}]" if p.role else f"[@{p.offset}]"
        return f"{marker}\n{self.text}"


def digest(diary: Diary, budget: int) -> str:
    """`diary` rendered within `budget` characters (see the module doc); the whole diary,
    as `Diary.render` gives it, when it fits."""
    whole = diary.render()
    if len(whole) <= budget:
        return whole
    pieces = _pieces(diary.passages)
    chosen: set[int] = set()
    size = 0
    for tier in range(5):
        for piece in _ends_first([p for p in pieces if p.tier == tier]):
            cost = len(piece.rendered()) + 2
            if size + cost + _GAP_COST <= budget:
                chosen.add(piece.index)
                size += cost + _GAP_COST
    blocks: list[str] = []
    left_out = 0
    for piece in pieces:
        if piece.index in chosen:
            if left_out:
                blocks.append(_gap(left_out))
                left_out = 0
            blocks.append(piece.rendered())
        else:
            left_out += 1
    if left_out:
        blocks.append(_gap(left_out))
    return "\n\n".join(blocks)


_GAP_COST = len("[… 99999 passages left out …]") + 2  # room kept for the gap a piece may open


def _gap(count: int) -> str:
    return f"[… {count} passage{'s' if count != 1 else ''} left out …]"


def _pieces(passages: list[Passage]) -> list[_Piece]:
    pieces: list[_Piece] = []
    said = [i for i, p in enumerate(passages) if p.role != "user" and not _is_tool(p.text)]
    final = set(said[-FINAL_PASSAGES:])
    after_error = False
    for i, p in enumerate(passages):
        tool = _is_tool(p.text)
        error = tool and _is_error(p.text)
        if _MARKED.search(p.text) and not tool:
            tier, limit = 0, max(SAID_MAX, ASK_MAX)
        elif p.role == "user" and not tool:
            tier, limit = 0, ASK_MAX
        elif i in final:
            tier, limit = 0, SAID_MAX
        elif error:
            tier, limit = 1, ERROR_MAX
        elif not tool and after_error:
            tier, limit = 1, SAID_MAX
        elif not tool:
            tier, limit = 2, SAID_MAX
        elif p.role != "user":
            tier, limit = 3, CALL_MAX
        else:
            tier, limit = 4, OUTPUT_MAX
        if error:
            after_error = True
        elif not tool:
            after_error = False
        pieces.append(_Piece(i, p, tier, _clip(p.text, limit)))
    return pieces


def _is_tool(text: str) -> bool:
    return all(line.startswith(TOOL_LINE_PREFIX) for line in text.splitlines() if line.strip())


def _is_error(text: str) -> bool:
    return text.startswith("[tool error]") or bool(_ERROR_WORDS.search(text))


def _clip(text: str, limit: int) -> str:
    """`text` within `limit` characters: its head and its tail, the middle marked."""
    if len(text) <= limit:
        return text
    head = (limit * 2) // 3
    tail = limit - head - 3
    return f"{text[:head].rstrip()} … {text[len(text) - tail :].lstrip()}"


def _ends_first(pieces: list[_Piece]) -> list[_Piece]:
    """`pieces` from the ends inwards: first, last, second, second to last, ..."""
    out: list[_Piece] = []
    lo, hi = 0, len(pieces) - 1
    while lo <= hi:
        out.append(pieces[lo])
        if hi != lo:
            out.append(pieces[hi])
        lo += 1
        hi -= 1
    return out
