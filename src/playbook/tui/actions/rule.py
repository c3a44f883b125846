"""Which actions apply to the selected thing: one function for the footer, the palette
and the app.

`why_not(name, subject, ctx)` is the one place that decides whether an action applies to
the selected thing (a bullet row, a proposal, a conflict, a blocked pattern): the panes'
`check_action` (what the footer shows or dims), the palette (what it offers) and the app
(what a dimmed key says when pressed) all ask it.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from textual.binding import Binding

from .. import format as fmt
from .cards import side
from .spec import ActionSpec, Context, Marked, Refusal, Subject
from .table import ACTIONS

if TYPE_CHECKING:
    from ...review import ConflictView
    from ...review.proposals import Proposal
    from ...store.views import BulletRow

NOUN = {
    "bullet": "bullet",
    "proposal": "proposal",
    "marked": "marked proposal",
    "conflict": "conflict",
    "blocked": "pattern",
}


def actions_on(*subjects: Subject) -> list[ActionSpec]:
    return [spec for spec in ACTIONS.values() if spec.on in subjects]


def bindings_for(*subjects: Subject) -> list[Binding]:
    """The key bindings of the actions on these subjects (a pane's BINDINGS)."""
    return [
        Binding(spec.key, spec.name, spec.label, tooltip=spec.tooltip, id=spec.binding_id)
        for spec in actions_on(*subjects)
    ]


# ------------------------------------------------------------------------------ the rule


READ_ONLY = "Read-only: this is the playbook as of {when}. T comes back to now."


def why_not(name: str, subject: Any, ctx: Context) -> Refusal | None:
    """None when action `name` applies to `subject`; otherwise why not, in one line. While
    the workbench travels in time every action is dimmed and says so."""
    refusal = _why_not(name, subject, ctx)
    if ctx.as_of is not None and (refusal is None or not refusal.hide):
        return Refusal(READ_ONLY.format(when=fmt.moment(ctx.as_of)))
    return refusal


def _why_not(name: str, subject: Any, ctx: Context) -> Refusal | None:
    spec = ACTIONS[name]
    if spec.on == "none":
        return None
    if spec.on == "marked" and subject is None:  # the key acts on the cursor's proposal
        return Refusal("No proposal is marked (space marks one).", hide=True)
    if spec.on == "proposal" and isinstance(subject, Marked):  # a, x act on the marks now
        hide = name in ("approve", "reject")
        return Refusal(f"{subject.id}: this acts on one proposal; escape clears the marks.", hide)
    if subject is None:
        return Refusal(f"No {NOUN[spec.on]} is selected here.")
    if spec.on == "bullet":
        return _why_not_bullet(name, subject)
    if spec.on == "proposal":
        return _why_not_proposal(name, subject, ctx)
    if spec.on == "conflict":
        return _why_not_conflict(name, subject)
    return None


def _why_not_bullet(name: str, row: BulletRow) -> Refusal | None:
    if row.state == "retired":
        hide = name in ("unpin", "restore", "activate")
        return Refusal(f"{row.id} is retired (superseded or inverted): it can only be read.", hide)
    if name == "pin" and row.pinned:
        return Refusal(f"{row.id} is already pinned.", hide=True)
    if name == "unpin" and not row.pinned:
        return Refusal(f"{row.id} is not pinned.", hide=True)
    if name == "deprecate" and row.maturity == "deprecated":
        return Refusal(f"{row.id} is already deprecated.", hide=True)
    if name == "activate" and row.state != "draft":
        return Refusal(f"{row.id} is live already.", hide=True)
    if name == "restore" and row.maturity != "deprecated":
        return Refusal(f"{row.id} is {row.maturity}, not deprecated: nothing to restore.", True)
    return None


def _why_not_proposal(name: str, p: Proposal, ctx: Context) -> Refusal | None:
    kind = str(p.delta.get("type", "?"))
    if name in ("edit", "reject_block") and not isinstance(p.delta.get("content"), str):
        verb = "edit" if name == "edit" else "block"
        return Refusal(f"A {kind} proposal has no text to {verb}.")
    if name in ("approve", "edit") and p.stale:
        # The queue's own words (`Proposal.stale`), as `queue.approve` would refuse it.
        return Refusal(f"Stale: {p.stale}; approving it would fail. Reject it (x).")
    return None


def _why_not_conflict(name: str, view: ConflictView) -> Refusal | None:
    if name in ("deprecate_a", "deprecate_b"):
        row = side(view, name[-1])
        if row is None or row.state == "retired":
            return Refusal("That bullet is retired already: keep both to close the flag.")
    if name == "merge":
        live = [b for b in (view.a.bullet, view.b.bullet) if b is not None and b.state != "retired"]
        if len(live) < 2:
            return Refusal("One side is retired: only a live pair can be merged.")
    return None


def check(name: str, subject: Any, ctx: Context) -> bool | None:
    """`check_action`'s answer: True shown, None dimmed, False left out."""
    refusal = why_not(name, subject, ctx)
    if refusal is None:
        return True
    return False if refusal.hide else None
