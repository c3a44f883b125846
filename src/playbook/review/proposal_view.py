"""What a reviewer reads beside a proposal: a word-level diff of a replace or merge, and
the closest existing rules (decisions on many proposals at once are `bulk`'s)."""

from __future__ import annotations

import difflib
import re
from dataclasses import replace

from ..curation import similar_bullets
from ..store import PlaybookStore
from .proposals import SIMILAR_LIMIT, SIMILAR_THRESHOLD, Proposal, Similar

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


def with_similar(store: PlaybookStore, p: Proposal) -> Proposal:
    """`p` with `similar` filled: for a proposal with content, the nearest existing bullets
    (token Jaccard of subjects >= SIMILAR_THRESHOLD) other than those it acts on."""
    return with_closest(store, p, SIMILAR_LIMIT)
