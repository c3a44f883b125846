"""Consolidation (SPEC §8): groups of near-duplicate active bullets, each with a merge proposal.

`topics(store)` is a pure read: bounded, deterministic, and it starts no background work.
`stage_topics(store, topics)` puts the proposed merges in the review queue, where a human
approves (curating the merge: a successor that inherits the members' evidence) or rejects.

How groups are found:

- Members are active bullets: not retired, not deprecated, with at least one subject word
  (`text.core_tokens`). Only bullets of the same type, polarity and scope are compared: a
  rule and its opposite ("Always X" / "Never X") are a conflict, not a duplicate, and a rule
  for one language is not a duplicate of a global one.
- Similarity is the token Jaccard of subjects, as in curation's duplicate test.
- Candidate pairs come from prefix filtering on an inverted index of the subjects' rarest
  words (two sets with Jaccard >= t must share one of them), so the work grows with the
  number of similar pairs, not with the square of the playbook.
- Groups are complete-linkage: pairs are taken most similar first, and two groups join only
  when every member of one is at least `threshold` similar to every member of the other and
  the result has at most `max_group_size` members. So every pair in a topic is a
  near-duplicate, and `Topic.similarity` is the least similar pair's.
- Topics are ordered by similarity (highest first), then size (largest first), then the age of
  their oldest member; at most `max_groups` are returned.

The merge's content is the wording of the best-evidenced member: the highest effective
score, then the most decayed helpful evidence, then the longest content, then the oldest.
"""

from __future__ import annotations

import math
from collections import defaultdict
from dataclasses import dataclass
from typing import Any

from ..core.model import Bullet, Maturity
from ..core.text import core_tokens, is_negative, jaccard
from ..store import PlaybookStore
from .queue import StageResult, list_proposals, stage

__all__ = [
    "DEFAULT_MAX_GROUPS",
    "DEFAULT_MAX_GROUP_SIZE",
    "DEFAULT_THRESHOLD",
    "Topic",
    "stage_topics",
    "topics",
]

# Below curation's fold threshold (0.85): adds that similar are folded already, so what is
# left to consolidate is the rephrasings between 0.6 and 0.85.
DEFAULT_THRESHOLD = 0.6
DEFAULT_MAX_GROUPS = 50
DEFAULT_MAX_GROUP_SIZE = 8
MAX_CANDIDATES_PER_BULLET = 200  # bounds the work on a playbook of near-identical bullets


@dataclass(frozen=True)
class Topic:
    bullet_ids: list[str]  # oldest first
    similarity: float  # of the least similar pair of members
    keep: str  # the member whose wording the merge keeps
    merge: dict[str, Any]  # the proposed merge delta

    def to_dict(self) -> dict[str, Any]:
        return {
            "bullet_ids": list(self.bullet_ids),
            "similarity": round(self.similarity, 4),
            "keep": self.keep,
            "merge": self.merge,
        }


def topics(
    store: PlaybookStore,
    *,
    threshold: float = DEFAULT_THRESHOLD,
    max_groups: int = DEFAULT_MAX_GROUPS,
    max_group_size: int = DEFAULT_MAX_GROUP_SIZE,
) -> list[Topic]:
    """Groups of near-duplicate active bullets (see the module doc), each with a merge delta."""
    if not 0 < threshold <= 1:
        raise ValueError("threshold must be in (0, 1]")
    if max_groups < 1 or max_group_size < 2:
        raise ValueError("max_groups must be >= 1 and max_group_size >= 2")
    bullets = [
        b for b in store.bullets() if b.state != "retired" and b.maturity != Maturity.DEPRECATED
    ]
    subjects = [core_tokens(b.content) for b in bullets]
    pairs = _similar_pairs(bullets, subjects, threshold)
    groups = _complete_linkage(pairs, subjects, threshold, max_group_size)

    found: list[tuple[float, list[int]]] = []
    for members in groups:
        members.sort()
        sim = min(
            jaccard(subjects[a], subjects[b])
            for i, a in enumerate(members)
            for b in members[i + 1 :]
        )
        found.append((sim, members))
    found.sort(key=lambda t: (-t[0], -len(t[1]), t[1][0]))
    found = found[:max_groups]

    ids = [bullets[i].id for _, members in found for i in members]
    scores = store.scores(ids) if ids else {}
    out: list[Topic] = []
    for sim, members in found:
        group = [bullets[i] for i in members]  # oldest first
        keep = min(
            group,
            key=lambda b: (-scores[b.id].effective, -scores[b.id].helpful, -len(b.content)),
        )  # min() keeps the first (oldest) of equals
        merge = {
            "type": "merge",
            "bullet_ids": [b.id for b in group],
            "content": keep.content,
            "reason": (
                f"{len(group)} near-duplicates (similarity >= {sim:.2f}); wording of {keep.id}"
            ),
        }
        out.append(Topic([b.id for b in group], sim, keep.id, merge))
    return out


def stage_topics(store: PlaybookStore, found: list[Topic]) -> StageResult:
    """Put each topic's merge in the review queue (origin "consolidation").

    A topic whose exact set of bullets already has a merge pending, or had one rejected, is
    not staged again (it is counted in `duplicates`, by index): a reviewer says no once.
    """
    with store.transaction():
        asked = {
            frozenset(p.delta["bullet_ids"])
            for p in list_proposals(store)
            if p.delta.get("type") == "merge" and p.status in ("pending", "rejected")
        }
        fresh = [i for i, t in enumerate(found) if frozenset(t.bullet_ids) not in asked]
        staged = stage(store, [found[i].merge for i in fresh], origin="consolidation")
    return StageResult(
        staged=staged.staged,
        rejected=[(fresh[i], reason) for i, reason in staged.rejected],
        duplicates=sorted(
            {i for i in range(len(found)) if i not in set(fresh)}
            | {fresh[i] for i in staged.duplicates}
        ),
    )


def _bucket(b: Bullet) -> tuple[str, bool, str, str]:
    return (str(b.type), is_negative(b.content, str(b.type)), str(b.scope), b.scope_key or "")


def _similar_pairs(
    bullets: list[Bullet], subjects: list[frozenset[str]], threshold: float
) -> list[tuple[float, int, int]]:
    """(similarity, i, j) with i < j for every pair at or above `threshold` (prefix filter)."""
    t = threshold - 1e-9
    df: dict[str, int] = defaultdict(int)
    for s in subjects:
        for tok in s:
            df[tok] += 1
    buckets = [_bucket(b) for b in bullets]
    # prefix token (within a bucket) -> earlier bullets that have it in their prefix
    index: dict[tuple[tuple[str, bool, str, str], str], list[int]] = defaultdict(list)
    pairs: list[tuple[float, int, int]] = []
    for j, s in enumerate(subjects):
        if not s:
            continue
        n = len(s)
        ordered = sorted(s, key=lambda tok: (df[tok], tok))
        keys = [(buckets[j], tok) for tok in ordered[: n - math.ceil(t * n) + 1]]
        candidates: dict[int, None] = {}
        for key in keys:
            candidates.update(dict.fromkeys(index[key][:MAX_CANDIDATES_PER_BULLET]))
            if len(candidates) >= MAX_CANDIDATES_PER_BULLET:
                break
        for i in candidates:
            other = subjects[i]
            m = len(other)
            if min(n, m) < t * max(n, m):
                continue  # size filter: Jaccard <= |small| / |large|
            inter = len(s & other)
            sim = inter / (n + m - inter)
            if sim >= t:
                pairs.append((sim, i, j))
        for key in keys:
            index[key].append(j)
    pairs.sort(key=lambda p: (-p[0], p[1], p[2]))
    return pairs


def _complete_linkage(
    pairs: list[tuple[float, int, int]],
    subjects: list[frozenset[str]],
    threshold: float,
    max_size: int,
) -> list[list[int]]:
    t = threshold - 1e-9
    group_of: dict[int, list[int]] = {}
    for _, i, j in pairs:
        gi = group_of.get(i, [i])
        gj = group_of.get(j, [j])
        if gi is gj or len(gi) + len(gj) > max_size:
            continue
        if any(jaccard(subjects[a], subjects[b]) < t for a in gi for b in gj if (a, b) != (i, j)):
            continue
        merged = gi + gj
        for m in merged:
            group_of[m] = merged
    seen: set[int] = set()
    groups: list[list[int]] = []
    for g in group_of.values():
        if id(g) not in seen:
            seen.add(id(g))
            groups.append(list(g))
    return groups
