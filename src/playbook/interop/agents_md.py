"""The playbook as a block of AGENTS.md / CLAUDE.md: what an agent reads before it starts.

The block is the agent's protocol (`project.protocol`, the text SessionStart gives too)
and the project's live rules, best first, within a byte budget: coding agents read only so
much of their project docs (Codex stops at 32 KiB for all of them together), so the block
takes at most `DEFAULT_MAX_BYTES` unless told otherwise, and says how many rules it left
out and how to recall them.

- **Which rules**: live ones (state active, not deprecated) of this workspace: global rules
  and those scoped to the workspace identity (the filter recall's `scope` applies), or all
  of them without one. Rules a person vouched for (pinned) or the evidence proved
  (proven, established) first; candidates after them, marked, while their score is not
  negative (harm outweighing help keeps a rule out before it is deprecated).
- **Best first**: pinned, then proven, established, candidate; by effective score within
  each; the first rule that does not fit ends the list, so what is shown is always the top
  of the ranking (`top` caps the count too).
- **Layout**: grouped by category (in name order), rules before anti-patterns ("Avoid:
  ..."), each line ending with the rule's id so an agent can cite it.

Content is one Markdown-safe line: whitespace collapsed, control characters shown as
escapes, so a rule cannot add a heading or end the block. `agents_file` merges the block
into a file between its markers.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import TYPE_CHECKING

from ..core.inert import inert
from ..core.text import strip_avoid
from ..project.protocol import protocol_lines
from ..retrieval.ranked import parse_scope, scope_matches

if TYPE_CHECKING:
    from ..core.model import Bullet
    from ..store import PlaybookStore

__all__ = [
    "BEGIN",
    "DEFAULT_MAX_BYTES",
    "END",
    "AgentsBlock",
    "BudgetTooSmall",
    "build",
    "eligible",
    "render",
    "render_store",
]

DEFAULT_MAX_BYTES = 8 * 1024
TRUSTED = ("proven", "established")
TIER = {"proven": 1, "established": 2, "candidate": 3}
RECALL_HINT = 'playbook recall "<a few words>"'
BEGIN = (
    "<!-- playbook:begin (managed by `playbook export --format agents-md`; "
    "edit the playbook, not this block) -->"
)
END = "<!-- playbook:end -->"
INTRO = "Rules learned on this project, best first. How to use them:"
_SPACE = re.compile(r"\s+")


class BudgetTooSmall(ValueError):
    """The byte budget cannot hold the block even without a rule."""

    def __init__(self, needed: int, budget: int) -> None:
        super().__init__(
            f"--max-bytes {budget:,} is below the {needed:,} bytes the block needs without "
            "any rule (its markers, the agent's protocol and the line on recalling the rest)"
        )
        self.needed = needed


@dataclass(frozen=True)
class AgentsBlock:
    """The block's lines (no line endings), how many rules it shows of how many it may, and
    its size in bytes with `newline` between lines and after the last."""

    lines: list[str]
    shown: int
    total: int
    size: int

    def text(self, newline: str = "\n") -> str:
        return newline.join(self.lines) + newline


def _line(text: str) -> str:
    """One Markdown-safe line: whitespace collapsed, control characters shown as escapes."""
    return inert(_SPACE.sub(" ", text).strip(), one_line=True)


def eligible(bullet: Bullet, score: float) -> bool:
    """Whether a bullet may go in the block: live, and trusted or not harmful so far."""
    if bullet.state != "active" or bullet.maturity == "deprecated":
        return False
    return bullet.pinned or bullet.maturity in TRUSTED or score >= 0


def _rank(bullet: Bullet, score: float) -> tuple[int, float, str]:
    return (0 if bullet.pinned else TIER.get(bullet.maturity, 4), -score, bullet.id)


def _rule_line(b: Bullet) -> str:
    text = f"Avoid: {_line(strip_avoid(b.content))}" if b.type != "rule" else _line(b.content)
    mark = "" if b.pinned or b.maturity in TRUSTED else " (candidate)"
    return f"- {text} `{b.id}`{mark}"


def _size(lines: list[str], nl: int) -> int:
    return sum(len(line.encode("utf-8")) + nl for line in lines)


def _rest(shown: int, total: int) -> str:
    return (
        f"_{shown} of {total} rules are shown here, best first; `{RECALL_HINT}` finds the others._"
    )


def build(
    bullets: list[Bullet],
    scores: dict[str, float],
    *,
    title: str = "Playbook",
    max_bytes: int = DEFAULT_MAX_BYTES,
    top: int | None = None,
    newline: str = "\n",
) -> AgentsBlock:
    """The block for `bullets` (filtered by `eligible`), within `max_bytes` (see the module);
    BudgetTooSmall when not even the block without a rule fits."""
    ranked = sorted(
        (b for b in bullets if eligible(b, scores.get(b.id, 0.0))),
        key=lambda b: _rank(b, scores.get(b.id, 0.0)),
    )
    total = len(ranked)
    nl = len(newline.encode("utf-8"))
    head = [BEGIN, f"## {_line(title)}", "", INTRO, *protocol_lines(recall_hint=RECALL_HINT), ""]
    # Room for the closing lines, at their longest (every count as wide as `total`).
    closing = [_rest(total, total), END] if total else ["_No live rules yet._", "", END]
    size = _size(head, nl) + _size(closing, nl)
    if size > max_bytes:
        raise BudgetTooSmall(size, max_bytes)
    chosen: list[Bullet] = []
    seen: set[str] = set()
    for b in ranked[: top if top is not None else total]:
        category = _line(b.category) or "general"
        cost = len(_rule_line(b).encode("utf-8")) + nl
        if category not in seen:
            cost += len(f"### {category}".encode()) + 2 * nl  # its heading, a blank after
        if size + cost > max_bytes:
            break
        size += cost
        seen.add(category)
        chosen.append(b)
    lines = head + _body(chosen)
    if not total:
        lines += closing
    else:
        lines += [_rest(len(chosen), total)] if len(chosen) < total else []
        lines.append(END)
    return AgentsBlock(lines, len(chosen), total, _size(lines, nl))


def _body(chosen: list[Bullet]) -> list[str]:
    """The chosen rules by category (in name order), rules before anti-patterns, each list
    in the order chosen (best first)."""
    groups: dict[str, list[Bullet]] = {}
    for b in chosen:
        groups.setdefault(_line(b.category) or "general", []).append(b)
    out: list[str] = []
    for category in sorted(groups, key=str.casefold):
        group = groups[category]
        out.append(f"### {category}")
        out += [_rule_line(b) for b in group if b.type == "rule"]
        out += [_rule_line(b) for b in group if b.type != "rule"]
        out.append("")
    return out


def live_rules(store: PlaybookStore, workspace: str | None = None) -> list[Bullet]:
    """The active bullets of `workspace` (global ones and its own; every one without a
    workspace), as recall's `scope` filter keeps them."""
    caller = parse_scope([f"workspace:{workspace}"]) if workspace else None
    return [b for b in store.bullets(state="active") if scope_matches(b.scope, b.scope_key, caller)]


def build_store(
    store: PlaybookStore,
    *,
    title: str = "Playbook",
    workspace: str | None = None,
    max_bytes: int = DEFAULT_MAX_BYTES,
    top: int | None = None,
    newline: str = "\n",
) -> AgentsBlock:
    """The block for the playbook in `store`, as it stands now (see `build`)."""
    bullets = live_rules(store, workspace)
    scores = {bid: s.effective for bid, s in store.scores([b.id for b in bullets]).items()}
    return build(bullets, scores, title=title, max_bytes=max_bytes, top=top, newline=newline)


def render(bullets: list[Bullet], scores: dict[str, float], *, title: str = "Playbook") -> str:
    """The block's text for `bullets`, within the default budget."""
    return build(bullets, scores, title=title).text()


def render_store(
    store: PlaybookStore, *, title: str = "Playbook", workspace: str | None = None
) -> str:
    """The block's text for the playbook in `store`, within the default budget (the MCP
    resource's text)."""
    return build_store(store, title=title, workspace=workspace).text()
