"""Review that scales: what a reviewer reads beside a proposal (a word-level diff of a
replace or merge, the closest existing rules) and decisions on many proposals at once.

`approve_many` and `reject_many` decide each proposal on its own, in its own transaction
(`queue.approve` / `queue.reject`): one bad id (unknown, decided already, stale, refused by
curation) is reported in its outcome and the others go on. Only a human decides; an agent
actor, or a rejection without a reason, is refused before anything is touched.
"""

from __future__ import annotations

import difflib
import re
from collections.abc import Iterable
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any

from ..core.errors import PlaybookError
from ..store import PlaybookStore
from .proposals import SIMILAR_LIMIT, SIMILAR_THRESHOLD, Proposal, Similar

if TYPE_CHECKING:
    from ..curation import CurateResult

DiffOps = list[tuple[str, str]]  # ("equal" | "insert" | "delete", text)

_TOKENS = re.compile(r"\s+|\S+")


def proposal_diff(old: str, new: str) -> DiffOps:
    """Word-level ops turning `old` into `new`: ("equal" | "delete" | "insert", text).

    Words and the whitespace between them are tokens of their own, so whitespace is kept:
    joining the equal and delete texts gives `old` back, the equal and insert texts `new`.
    Within a changed stretch the deleted text comes first, then the inserted text (a space
    between two changed words is not shown as kept).
    """
    a, b = _TOKENS.findall(old), _TOKENS.findall(new)
    raw: DiffOps = []
    matcher = difflib.SequenceMatcher(None, a, b, autojunk=False)
    for tag, i1, i2, j1, j2 in matcher.get_opcodes():
        if tag in ("delete", "replace"):
            raw.append(("delete", "".join(a[i1:i2])))
        if tag in ("insert", "replace"):
            raw.append(("insert", "".join(b[j1:j2])))
        if tag == "equal":
            raw.append(("equal", "".join(a[i1:i2])))
    out: DiffOps = []
    deleted, inserted = "", ""
    for k, (op, text) in enumerate(raw):
        between = 0 < k < len(raw) - 1 and raw[k - 1][0] != "equal" and raw[k + 1][0] != "equal"
        if op == "equal" and not (between and not text.strip()):
            if deleted:
                out.append(("delete", deleted))
            if inserted:
                out.append(("insert", inserted))
            deleted, inserted = "", ""
            out.append((op, text))
        elif op == "equal":  # whitespace between two changes: part of both sides
            deleted += text
            inserted += text
        elif op == "delete":
            deleted += text
        else:
            inserted += text
    if deleted:
        out.append(("delete", deleted))
    if inserted:
        out.append(("insert", inserted))
    return out


def proposal_diffs(store: PlaybookStore, proposal: Proposal) -> list[tuple[str, DiffOps]]:
    """(target id, ops) for each rule a replace or merge proposal rewrites: the target's
    text now against the proposed text (the edited text, for one approved with an edit).
    Other proposals, and targets that no longer exist, give nothing."""
    delta = proposal.edited_delta or proposal.delta
    content = delta.get("content")
    if delta.get("type") not in ("replace", "merge") or not isinstance(content, str):
        return []
    ids = list(delta.get("bullet_ids") or ()) or [delta.get("bullet_id")]
    bullets = store.get_bullets(i for i in ids if isinstance(i, str))
    return [(bid, proposal_diff(bullets[bid].content, content)) for bid in ids if bid in bullets]


def closest_rules(
    store: PlaybookStore, proposal: Proposal, k: int = SIMILAR_LIMIT
) -> list[Similar]:
    """The `k` existing rules nearest a proposal's text (token Jaccard of their subjects at
    least `SIMILAR_THRESHOLD`), best first, other than those it acts on: a near-duplicate a
    reviewer should see before approving. Nothing for a proposal without text."""
    from ..curation import similar_bullets

    content = proposal.delta.get("content")
    if not isinstance(content, str) or k <= 0:
        return []
    named = set(proposal.delta.get("bullet_ids") or ()) | {proposal.delta.get("bullet_id")}
    found = similar_bullets(store, content, SIMILAR_THRESHOLD, limit=k + len(named))
    return [
        Similar(b.id, b.content, round(score, 4), str(b.state), str(b.maturity))
        for score, b in found
        if b.id not in named  # the rules a replace or merge acts on are shown anyway
    ][:k]


def with_closest(store: PlaybookStore, proposal: Proposal, k: int = SIMILAR_LIMIT) -> Proposal:
    """`proposal` with `similar` filled by `closest_rules`."""
    return replace(proposal, similar=closest_rules(store, proposal, k))


# ------------------------------------------------------------------ many at once


@dataclass(frozen=True)
class Decided:
    """What became of one proposal in `approve_many` / `reject_many`."""

    proposal_id: str
    ok: bool
    status: str  # approved | rejected | refused
    code: str | None = None  # the error code when refused (not_found, not_pending, ...)
    message: str | None = None
    result: CurateResult | None = None  # an approval's curation
    block_id: str | None = None  # a rejection's block

    def to_dict(self) -> dict[str, Any]:
        return {
            "proposal": self.proposal_id,
            "ok": self.ok,
            "status": self.status,
            "code": self.code,
            "message": self.message,
            "result": self.result.to_dict() if self.result is not None else None,
            "block_id": self.block_id,
        }


def approve_many(store: PlaybookStore, ids: Iterable[str], actor: str = "human") -> list[Decided]:
    """Approve each proposal on its own (`queue.approve`); one outcome per distinct id, in
    the order given."""
    from . import queue

    queue.require_human(actor, "approve")
    out = []
    for pid in dict.fromkeys(ids):
        try:
            result = queue.approve(store, pid, actor=actor)
        except PlaybookError as exc:
            out.append(Decided(pid, False, "refused", exc.code, str(exc)))
            continue
        out.append(Decided(pid, True, "approved", result=result))
    return out


def reject_many(
    store: PlaybookStore,
    ids: Iterable[str],
    reason: str,
    block: bool = False,
    actor: str = "human",
) -> list[Decided]:
    """Reject each proposal on its own with one reason (`queue.reject`; `block` blocks each
    one's text as a pattern); one outcome per distinct id, in the order given."""
    from . import queue

    queue.require_human(actor, "reject")
    if not reason.strip():
        raise queue.QueueError("a rejection needs a reason")
    out = []
    for pid in dict.fromkeys(ids):
        try:
            block_id = queue.reject(store, pid, reason, block=block, actor=actor)
        except PlaybookError as exc:
            out.append(Decided(pid, False, "refused", exc.code, str(exc)))
            continue
        out.append(Decided(pid, True, "rejected", block_id=block_id))
    return out
