"""What an action's dialog shows about its subject: the bullet card, a conflict's sides,
the merge form, the marked proposals, and the words that explain a restore or a merge."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from rich.text import Text

from ... import review
from .. import format as fmt
from ..screens.modals import Field
from .spec import Context, Marked

if TYPE_CHECKING:
    from ...core.model import Bullet
    from ...review import ConflictView
    from ...review.proposals import Proposal
    from ...store.views import BulletRow


# ------------------------------------------------------------------------------ subjects


def subject_id(subject: Any) -> str:
    if subject is None:
        return ""
    conflict = getattr(subject, "conflict", None)
    if conflict is not None:
        return f"conflict {conflict.id}"
    return str(subject.id)


def bullet_card(row: BulletRow | Bullet | None, bullet_id: str = "") -> Text:
    """A bullet as a dialog shows it: id, rung, and its text (inert)."""
    text = Text()
    text.append(row.id if row else bullet_id, style=fmt.ID_BOLD)
    if row is not None:
        text.append("  ")
        text.append_text(fmt.maturity(row.maturity))
        text.append("\n")
        text.append_text(fmt.untrusted(row.content))
    return text


def side(view: ConflictView, which: str) -> Bullet | None:
    """The left ("a") or right ("b") bullet of a conflict (None: it no longer exists)."""
    return (view.a if which == "a" else view.b).bullet


def _pinned_sides(view: ConflictView) -> list[Bullet]:
    return [b for b in (side(view, "a"), side(view, "b")) if b is not None and b.pinned]


def merge_fields(view: ConflictView) -> list[Field]:
    a = side(view, "a")
    fields = [Field("content", "Merged rule", value=a.content if a else "", multiline=True)]
    pinned = _pinned_sides(view)
    if pinned:
        ids = " and ".join(b.id for b in pinned)
        fields.append(Field("keep_pin", f"Keep the pin of {ids} on the merged rule", check=True))
    return fields


def merge_explain(view: ConflictView, ctx: Context) -> str:
    text = (
        "Both retire and the rule you write replaces them. It inherits the evidence of the "
        "side whose polarity it shares; the other side's evidence is not carried over "
        "(its meaning flips)."
    )
    if _pinned_sides(view):
        text += " A pin carries over only if you tick the box below."
    return text


def proposal_text(p: Proposal, ctx: Context) -> Text:
    return fmt.untrusted(fmt.short_delta(p.delta))


def marked_list(m: Marked) -> Text:
    text = Text()
    for p in m.proposals:
        kind = str(p.delta.get("type", "?"))
        text.append(f"{p.id}  ", style=fmt.MUTED)
        text.append(f"{kind:<9} ")
        text.append_text(fmt.untrusted(fmt.short_delta(p.delta), one_line=True))
        text.append("\n")
    text.rstrip()
    return text


def restore_explain(row: BulletRow, ctx: Context) -> str:
    target = review.restore_target(row.helpful, row.harmful, ctx.policy)
    return (
        f"It goes back to {target} (what its evidence earns now, at least candidate). If "
        "the evidence still condemns it, the next curation deprecates it again: pin it to "
        "make the restore stick."
    )
