"""How one proposal reads in the Proposals pane: the change, the bullets it acts on as they
are now (a target retired meanwhile makes it stale, said before anyone approves), and the
existing bullets it resembles. Rich renderables only; the facts come from the queue."""

from __future__ import annotations

from typing import TYPE_CHECKING

from rich.console import Group, RenderableType
from rich.style import Style
from rich.table import Table
from rich.text import Text

from .. import format as fmt

if TYPE_CHECKING:
    from ...review.proposal_view import DiffOps
    from ...review.proposals import Proposal, Target

FIELDS = ("content", "bullet_id", "bullet_ids", "reason", "context", "bullet_type")
LOOKING = "looking for close rules…"  # a new rule's nearest bullets, being read


DELETED = fmt.DIFF_DELETED
INSERTED = fmt.DIFF_INSERTED


def diff_text(ops: DiffOps) -> Text:
    """A word-level diff: deleted words struck through in red, inserted ones underlined
    in green, the rest as it was (all of it inert text)."""
    text = Text()
    previous = "equal"
    for op, part in ops:
        style = DELETED if op == "delete" else INSERTED if op == "insert" else Style()
        if {previous, op} == {"delete", "insert"} and not (
            text.plain[-1:].isspace() or part[:1].isspace()
        ):
            text.append(" ")  # "log, not" then "log and": two changes, each read on its own
        text.append_text(fmt.untrusted(part, style=style))
        previous = op
    return text


def delta_grid(
    p: Proposal, type_style: dict[str, str], diffs: list[tuple[str, DiffOps]] | None = None
) -> RenderableType:
    """The proposed change, field by field; a rewrite (replace, merge) shows what it
    changes in each target, word by word; a stale proposal starts with why approving it
    would fail (the queue's own words)."""
    d = p.delta
    grid = Table.grid(padding=(0, 2))
    grid.add_column(style=fmt.MUTED, no_wrap=True)
    grid.add_column()
    kind = str(d.get("type"))
    grid.add_row("type", Text(kind, style=type_style.get(kind, "")))
    for target, ops in diffs or []:  # first: what the rewrite changes, word by word
        grid.add_row(f"vs {target}", diff_text(ops))
    for key in FIELDS:
        if key in d:
            value = d[key]
            text = ", ".join(value) if isinstance(value, list) else str(value)
            style = "bold" if key == "content" else ""
            grid.add_row(key.replace("_", " "), fmt.untrusted(text, style=style))
    if d.get("tags"):
        grid.add_row("tags", Text(fmt.tags(list(d["tags"])), style=fmt.TAGS))
    grid.add_row("proposal", Text(f"{p.id} ({p.origin})", style=fmt.MUTED))
    if not p.stale:
        return grid
    warning = Text()
    warning.append("STALE ", style=fmt.BAD_BADGE)
    warning.append(f" {p.stale}; approving it will fail. Reject it (x).", style=fmt.BAD)
    return Group(warning, grid)


def target_line(t: Target) -> Text:
    """A bullet the proposal acts on, as it stands now."""
    text = Text()
    text.append(t.bullet_id, style=fmt.ID_BOLD)
    if not t.exists:
        text.append("  no such bullet", style=fmt.BAD)
        return text
    text.append("  ")
    text.append_text(fmt.maturity(t.maturity or "?"))
    if t.state == "retired":
        after = f" (succeeded by {', '.join(t.successors)})" if t.successors else ""
        text.append(f"  retired since{after}", style=fmt.BAD_BOLD)
    elif t.state:
        text.append(f"  {t.state}", style=fmt.MUTED)
    if t.content:
        text.append("\n")
        text.append_text(fmt.untrusted(t.content))
    return text


def near_text(p: Proposal, *, looking: bool = False) -> tuple[str, RenderableType]:
    """(box title, renderable): the bullets a proposal acts on, now; or, for a new rule,
    the nearest existing bullets with their similarity. `looking`: those are being read
    (not known yet, which is not the same as none)."""
    if p.targets:
        title = "The bullet it acts on" if len(p.targets) == 1 else "The bullets it acts on"
        near = Text()
        for t in p.targets:
            near.append_text(target_line(t))
            near.append("\n\n")
        near.rstrip()
        if not p.similar:
            return f"{title} (now)", near
        return f"{title} (now)", Group(
            near, Text(), Text("also close:", style=fmt.MUTED), _similar(p)
        )
    kind = str(p.delta.get("type", "?"))
    if looking and isinstance(p.delta.get("content"), str):
        return "Nearest existing bullets", Text(LOOKING, style=fmt.MUTED)
    if not p.similar:
        return "Nearest existing bullets", Text(
            "nothing close: this would be a new rule"
            if kind == "add"
            else "(only adds and rewrites are compared)",
            style=fmt.MUTED,
        )
    return "Nearest existing bullets", _similar(p)


def _similar(p: Proposal) -> Group:
    """Each close bullet: its similarity, id and rung on one line (cut at the edge, never
    wrapped: "○" on one line and "candidate" on the next), then its text."""
    parts: list[RenderableType] = []
    for s in p.similar:
        head = Text(no_wrap=True, overflow="ellipsis")
        filled = round(s.similarity * 10)
        head.append("█" * filled, style=fmt.ACCENT)
        head.append("░" * (10 - filled), style=fmt.MUTED)
        head.append(f" {s.similarity:.2f}  ", style=fmt.ACCENT)
        head.append(s.bullet_id, style=fmt.ID)
        head.append("  ")
        head.append_text(fmt.maturity(s.maturity))
        if s.state == "retired":
            head.append(" retired", style=fmt.MUTED)
        if parts:
            parts.append(Text())
        parts += [head, fmt.untrusted(s.content)]
    return Group(*parts)
