"""Every workbench action in one table: its key, what it applies to, the dialog it asks
first, and the write it makes (a function of `tui.writes`, through the public API). What a
dialog shows about its subject is in `cards.py`."""

from __future__ import annotations

from typing import TYPE_CHECKING

from .. import format as fmt
from .. import writes
from ..screens.modals import Field
from .cards import (
    bullet_card,
    marked_list,
    merge_explain,
    merge_fields,
    proposal_text,
    restore_explain,
    side,
)
from .spec import ActionSpec, Ask

if TYPE_CHECKING:
    from ...store.views import BulletRow
    from ..data import Source


def _harmful(source: Source, row: BulletRow, v: dict[str, str]) -> str:
    return writes.mark(source, row.id, "harmful", v.get("reason"), v.get("context") or None)


def _deprecate_side(which: str) -> ActionSpec:
    where = "left" if which == "a" else "right"
    return ActionSpec(
        f"deprecate_{which}",
        "conflict",
        "left_square_bracket" if which == "a" else "right_square_bracket",
        f"Depr. {where}",  # short: the footer at 80 columns keeps room for Merge
        f"Deprecate the {where} bullet and resolve",
        f"Deprecate the {where} bullet of",
        lambda s, v, f: writes.deprecate_in_conflict(
            s, v.conflict.id, (v.a if which == "a" else v.b).bullet_id, f["reason"]
        ),
        Ask(
            "form",
            lambda v: f"Deprecate {(v.a if which == 'a' else v.b).bullet_id} and resolve",
            lambda v, h: "The other bullet stays as it is; the conflict is closed.",
            "Deprecate",
            "error",
            lambda v: [Field("reason", "Why", placeholder="e.g. the team decided the opposite")],
            lambda v, h: bullet_card(side(v, which)),
        ),
    )


ACTIONS: dict[str, ActionSpec] = {
    spec.name: spec
    for spec in (
        # ---- a bullet (Bullets and Detail)
        ActionSpec(
            "helpful",
            "bullet",
            "plus,equals_sign",
            "Helpful",
            "Mark helpful",
            "Mark helpful",
            lambda s, r, v: writes.mark(s, r.id, "helpful", None, "marked in the workbench"),
        ),
        ActionSpec(
            "harmful",
            "bullet",
            "minus",
            "Harmful",
            "Mark harmful, with a reason",
            "Mark harmful",
            _harmful,
            Ask(
                "harmful",
                lambda r: "Mark harmful",
                lambda r, h: "",
                subject=lambda r, h: bullet_card(r),
            ),
        ),
        ActionSpec(
            "pin",
            "bullet",
            "p",
            "Pin",
            "Pin: its maturity never moves",
            "Pin",
            lambda s, r, v: writes.pin(s, r.id, v["reason"]),
            Ask(
                "form",
                lambda r: f"Pin {r.id}",
                lambda r, h: (
                    "A pinned bullet keeps its maturity whatever the feedback says, "
                    "and agents cannot retire or replace it."
                ),
                "Pin",
                "primary",
                lambda r: [
                    Field("reason", "Why pin it", placeholder="e.g. team policy since the incident")
                ],
                lambda r, h: bullet_card(r),
            ),
        ),
        ActionSpec(
            "unpin",
            "bullet",
            "p",
            "Unpin",
            "Unpin: maturity follows evidence",
            "Unpin",
            lambda s, r, v: writes.unpin(s, r.id),
            Ask(
                "confirm",
                lambda r: f"Unpin {r.id}?",
                lambda r, h: "Its maturity will follow the evidence again at the next curation.",
                "Unpin",
                "warning",
                subject=lambda r, h: bullet_card(r),
            ),
        ),
        ActionSpec(
            "block",
            "bullet",
            "b",
            "Block",
            "Block this bullet's pattern",
            "Block the pattern of",
            lambda s, r, v: writes.block(s, v["pattern"], v["reason"]),
            Ask(
                "form",
                lambda r: "Block this pattern",
                lambda r, h: (
                    "From now on the curator refuses any add that matches this "
                    "pattern. The bullet itself stays; deprecate it separately if it should go."
                ),
                "Block",
                "error",
                lambda r: [
                    Field("pattern", "Pattern", value=r.content),
                    Field("reason", "Why", placeholder="what goes wrong when agents do this"),
                ],
                lambda r, h: bullet_card(r),
            ),
        ),
        ActionSpec(
            "deprecate",
            "bullet",
            "d",
            "Deprecate",
            "Deprecate, with a reason",
            "Deprecate",
            lambda s, r, v: writes.deprecate(s, r.id, v["reason"]),
            Ask(
                "form",
                lambda r: f"Deprecate {r.id}",
                lambda r, h: (
                    "A deprecated bullet scores 0 and recall lists it as a warning "
                    "(don't do this any more). You can restore it later."
                ),
                "Deprecate",
                "error",
                lambda r: [
                    Field("reason", "Why", placeholder="e.g. superseded by the new CI image")
                ],
                lambda r, h: bullet_card(r),
            ),
        ),
        ActionSpec(
            "restore",
            "bullet",
            "r",
            "Restore",
            "Restore a deprecated bullet",
            "Restore",
            lambda s, r, v: writes.restore(s, r.id, v["reason"]),
            Ask(
                "form",
                lambda r: f"Restore {r.id}",
                restore_explain,
                "Restore",
                "primary",
                lambda r: [Field("reason", "Why", required=False)],
                lambda r, h: bullet_card(r),
            ),
        ),
        ActionSpec(
            "activate",
            "bullet",
            "a",
            "Make live",
            "Make this draft live: agents are shown it",
            "Make live",
            lambda s, r, v: writes.activate(s, r.id),
            Ask(
                "confirm",
                lambda r: f"Make {r.id} live?",
                lambda r, h: (
                    "A draft is kept but never shown to agents. Live, it is given at session "
                    "start, in the AGENTS.md export and by recall, and earns its trust from "
                    "their feedback."
                ),
                "Make live",
                "primary",
                subject=lambda r, h: bullet_card(r),
            ),
        ),
        # ---- a proposal
        ActionSpec(
            "approve",
            "proposal",
            "a",
            "Approve",
            "Curate it, with its recorded provenance",
            "Approve proposal",
            lambda s, p, v: writes.approve(s, p.id),
        ),
        ActionSpec(
            "edit",
            "proposal",
            "e",
            "Edit+approve",
            "Edit the text, then approve",
            "Edit and approve proposal",
            lambda s, p, v: writes.approve(s, p.id, v["content"]),
            Ask(
                "form",
                lambda p: f"Edit and approve {p.id}",
                lambda p, h: (
                    "The edited text is curated with the proposal's provenance; "
                    "both versions are kept in the queue."
                ),
                "Approve",
                "success",
                lambda p: [Field("content", "Text", value=p.delta["content"], multiline=True)],
            ),
        ),
        ActionSpec(
            "reject",
            "proposal",
            "x",
            "Reject",
            "Reject, with a reason",
            "Reject proposal",
            lambda s, p, v: writes.reject(s, p.id, v["reason"], False),
            Ask(
                "form",
                lambda p: f"Reject {p.id}",
                lambda p, h: (
                    "The proposal is closed with your reason; nothing changes in the playbook."
                ),
                "Reject",
                "warning",
                lambda p: [Field("reason", "Why", placeholder="e.g. too specific to one repo")],
                proposal_text,
            ),
        ),
        ActionSpec(
            "reject_block",
            "proposal",
            "B",
            "Reject+block",
            "Reject and block the pattern for good",
            "Reject proposal and block its pattern",
            lambda s, p, v: writes.reject(s, p.id, v["reason"], True),
            Ask(
                "form",
                lambda p: f"Reject {p.id} and block its pattern",
                lambda p, h: (
                    "Rejects the proposal and blocks its text: any later add like "
                    "it, from any agent, is refused."
                ),
                "Reject and block",
                "error",
                lambda p: [
                    Field("reason", "Why", placeholder="what goes wrong when agents do this")
                ],
                proposal_text,
            ),
        ),
        # ---- the marked proposals (space marks; a and x then act on all of them)
        ActionSpec(
            "approve_marked",
            "marked",
            "a",
            "Approve marked",
            "Approve every marked proposal, after one confirmation",
            "Approve",
            lambda s, m, v: writes.approve_many(s, m.ids),
            Ask(
                "confirm",
                lambda m: f"Approve {m.id}?",
                lambda m, h: (
                    "Each is curated with its own recorded provenance. One that cannot apply "
                    "(stale, blocked) stays pending and is named afterwards."
                ),
                "Approve all",
                "success",
                subject=lambda m, h: marked_list(m),
            ),
        ),
        ActionSpec(
            "reject_marked",
            "marked",
            "x",
            "Reject marked",
            "Reject every marked proposal with one reason",
            "Reject",
            lambda s, m, v: writes.reject_many(s, m.ids, v["reason"]),
            Ask(
                "form",
                lambda m: f"Reject {m.id}",
                lambda m, h: "Each is closed with this reason; nothing changes in the playbook.",
                "Reject all",
                "warning",
                lambda m: [Field("reason", "Why", placeholder="e.g. one session's noise")],
                lambda m, h: marked_list(m),
            ),
        ),
        # ---- a conflict
        ActionSpec(
            "keep",
            "conflict",
            "k",
            "Keep both",
            "Both stay; the flag is resolved",
            "Keep both bullets of",
            lambda s, v, f: writes.keep_both(s, v.conflict.id),
        ),
        _deprecate_side("a"),
        _deprecate_side("b"),
        ActionSpec(
            "merge",
            "conflict",
            "m",
            "Merge",
            "Merge both into one rule you write",
            "Merge both bullets of",
            lambda s, v, f: writes.merge_conflict(
                s, v.conflict.id, f["content"], keep_pin=bool(f.get("keep_pin"))
            ),
            Ask(
                "form",
                lambda v: f"Merge {v.a.bullet_id} and {v.b.bullet_id}",
                merge_explain,
                "Merge",
                "warning",
                merge_fields,
            ),
        ),
        # ---- the blocked patterns
        ActionSpec(
            "block_new",
            "none",
            "n",
            "Block pattern",
            "Block a new pattern",
            "Block a pattern",
            lambda s, _, v: writes.block(s, v["pattern"], v["reason"]),
            Ask(
                "form",
                lambda _: "Block a pattern",
                lambda _, h: (
                    "The curator refuses any add that matches it: exactly, by token "
                    "overlap, or fuzzily."
                ),
                "Block",
                "error",
                lambda _: [
                    Field("pattern", "Pattern", placeholder="e.g. Disable the failing test"),
                    Field("reason", "Why", placeholder="what goes wrong when agents do this"),
                ],
            ),
        ),
        ActionSpec(
            "unblock",
            "blocked",
            "u",
            "Unblock",
            "Allow adds like it again",
            "Unblock",
            lambda s, b, v: writes.unblock(s, b.id),
            Ask(
                "confirm",
                lambda b: f"Unblock {b.id}?",
                lambda b, h: "Adds like this pattern will be accepted again.",
                "Unblock",
                "warning",
                subject=lambda b, h: fmt.untrusted(b.pattern, style="bold"),
            ),
        ),
    )
}
