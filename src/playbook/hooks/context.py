"""What a hook adds to the agent's context: the agent's protocol at a session's start, and
rules to follow, patterns to avoid, deprecated advice to stop following, each with the id
the agent cites, within a character budget.

The text is plain and short, for a model to read:

    Playbook rules for this prompt. Cite the ones you use: [playbook: helpful b-…], or
    [playbook: harmful b-… reason] when one misled you.
    Rules:
    - [b-7f3a9c2e] Pin npm to 11 in release jobs (proven)
    Avoid:
    - [b-0c1d2e3f] sudo npm ci (established)
    Deprecated, do not follow any more:
    - [b-1a2b3c4d] Use yarn 1 in release jobs

Items are taken best first (recall's final score, or effective score at session start)
while the whole text stays within `Policy.hook_context_chars`; the first item that does not
fit ends the list, so what is shown is always the top of the ranking. Rules already given
earlier in the session are not given again.

At a session's start the context opens with the protocol (`project.protocol`): how to
cite a rule and how to write a lesson down, what the session's end reads back.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from playbook.core.record import FrozenRecord
from playbook.core.text import strip_avoid
from playbook.project.workspace import same_workspace

if TYPE_CHECKING:
    from playbook.core.model import Bullet
    from playbook.project.workspace import Workspace
    from playbook.store import PlaybookStore
    from playbook.store.records import BulletRecord

__all__ = ["Item", "prompt_items", "protocol_text", "render", "session_start_items"]

ITEM_MAX = 400  # characters of one rule's text; `playbook show ID` has the rest
PROMPT_LIMIT = 8  # bullets recalled per list for a prompt
PROMPT_QUERY_MAX = 4000  # characters of the prompt recall reads (a pasted log says little)
SESSION_START_LIMIT = 8  # proven bullets given at a session's start
CITE = (
    "Cite the ones you use: [playbook: helpful b-…], or [playbook: harmful b-… reason] "
    "when one misled you."
)
PROTOCOL_HEADING = "Playbook: this project keeps the lessons of past sessions as rules."
SECTIONS = (
    ("rule", "Rules:"),
    ("anti-pattern", "Avoid:"),
    ("deprecated", "Deprecated, do not follow any more:"),
)


class Item(FrozenRecord):
    """One bullet to show: its id, its section, its text and its rung."""

    bullet_id: str
    section: str  # "rule", "anti-pattern" or "deprecated"
    text: str
    maturity: str

    def __init__(self, bullet_id: str, section: str, text: str, maturity: str) -> None:
        object.__setattr__(self, "bullet_id", bullet_id)
        object.__setattr__(self, "section", section)
        object.__setattr__(self, "text", text)
        object.__setattr__(self, "maturity", maturity)

    @classmethod
    def of(cls, bullet: Bullet | BulletRecord, section: str | None = None) -> Item:
        if section is None:
            section = "anti-pattern" if bullet.type == "anti-pattern" else "rule"
        text = " ".join(bullet.content.split())
        if section == "anti-pattern":
            text = strip_avoid(text)
        if len(text) > ITEM_MAX:
            text = text[: ITEM_MAX - 1].rstrip() + "…"
        return cls(bullet.id, section, text, str(bullet.maturity))

    def line(self) -> str:
        rung = "" if self.section == "deprecated" else f" ({self.maturity})"
        return f"- [{self.bullet_id}] {self.text}{rung}"


def protocol_text(recall_hint: str | None = None) -> str:
    """The agent's protocol as a session's context opens with it."""
    from playbook.project.protocol import protocol_lines  # lazy: hook prompt

    lines = protocol_lines(recall_hint=recall_hint) if recall_hint else protocol_lines()
    return "\n".join([PROTOCOL_HEADING, *lines])


def render(
    heading: str, items: list[Item], budget: int, *, cite: bool = True
) -> tuple[str, list[Item]]:
    """The context text for `items` (best first) and the items it holds, within `budget`
    characters; ("", []) when not even the first item fits. `cite`: the heading says how
    to cite (unless the protocol said it already)."""
    head = f"{heading} {CITE}" if cite else heading
    chosen: list[Item] = []
    size = len(head)
    sections: set[str] = set()
    for item in items:
        header = next(h for s, h in SECTIONS if s == item.section)
        extra = len(item.line()) + 1 + (0 if item.section in sections else len(header) + 1)
        if size + extra > budget:
            break
        chosen.append(item)
        sections.add(item.section)
        size += extra
    if not chosen:
        return "", []
    lines = [head]
    for section, header in SECTIONS:
        mine = [i for i in chosen if i.section == section]
        if mine:
            lines.append(header)
            lines.extend(i.line() for i in mine)
    return "\n".join(lines), chosen


def prompt_items(
    store: PlaybookStore, prompt: str, workspace: Workspace | None, skip: set[str]
) -> list[Item]:
    """What the playbook says about `prompt`, best first, without the ids in `skip`; of the
    scoped rules, only those of this `workspace` (`project.workspace`)."""
    from playbook.retrieval.query import recall  # lazy: hook session-start

    scope = [f"workspace:{workspace.key}"] if workspace else None
    limit = PROMPT_LIMIT + len(skip)
    found = recall(store, prompt[:PROMPT_QUERY_MAX], limit=limit, scope=scope)
    ranked = [
        (item.final_score, Item.of(item.record, section))
        for section, items in (
            (None, found.bullets),
            (None, found.anti_patterns),
            ("deprecated", found.deprecated_warnings),
        )
        for item in items
        if item.record.id not in skip
    ]
    ranked.sort(key=lambda pair: -pair[0])  # stable: recall's own order breaks ties
    return [item for _, item in ranked]


def session_start_items(
    store: PlaybookStore, workspace: Workspace | None, skip: set[str]
) -> list[Item]:
    """The proven bullets for this workspace (global ones and its own), best first."""
    proven = [
        b
        for b in store.bullets(state="active", maturity="proven")
        if b.id not in skip
        and (b.scope == "global" or (b.scope == "workspace" and _mine(b.scope_key, workspace)))
    ]
    if not proven:
        return []
    scores = store.scores([b.id for b in proven])
    proven.sort(key=lambda b: (-scores[b.id].effective, b.id))
    return [Item.of(b) for b in proven[:SESSION_START_LIMIT]]


def _mine(key: str | None, workspace: Workspace | None) -> bool:
    """A workspace rule without a key is every workspace's; one with a key, its own."""
    return key is None or same_workspace(key, workspace)
