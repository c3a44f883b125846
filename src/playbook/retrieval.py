"""Recall (SPEC §6): what does the playbook say about this task?

Keyword points come from the store's token index (no content is rescanned); confidence
comes from the evidence cache; semantic similarity from `MemoryVectors` when given.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime
from typing import TYPE_CHECKING, Any

from . import scoring
from .model import Bullet
from .store import PlaybookStore, iso, parse_iso
from .text import query_tokens

if TYPE_CHECKING:
    from .vectors import MemoryVectors


@dataclass(frozen=True)
class RecallItem:
    """One recalled bullet and every number behind its rank."""

    bullet: Bullet
    keyword_score: float
    similarity: float | None
    relevance: float
    effective_score: float
    final_score: float

    def to_dict(self) -> dict[str, Any]:
        return {
            "bullet": self.bullet.model_dump(mode="json"),
            "keyword_score": self.keyword_score,
            "similarity": self.similarity,
            "relevance": self.relevance,
            "effective_score": self.effective_score,
            "final_score": self.final_score,
        }


@dataclass
class RecallResult:
    bullets: list[RecallItem] = field(default_factory=list)
    anti_patterns: list[RecallItem] = field(default_factory=list)
    deprecated_warnings: list[RecallItem] = field(default_factory=list)
    degraded: list[str] = field(default_factory=list)
    query_tokens: list[str] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        return {
            "query_tokens": self.query_tokens,
            "bullets": [i.to_dict() for i in self.bullets],
            "anti_patterns": [i.to_dict() for i in self.anti_patterns],
            "deprecated_warnings": [i.to_dict() for i in self.deprecated_warnings],
            "degraded": list(self.degraded),
        }


Scope = dict[str, str | None] | list[str] | str | None


def parse_scope(scope: Scope) -> dict[str, set[str | None]] | None:
    """The caller's scope as {kind: {keys}}; "language:python" strings or a mapping."""
    if scope is None:
        return None
    items: list[tuple[str, str | None]] = []
    if isinstance(scope, dict):
        items = [(k, v) for k, v in scope.items()]
    else:
        for s in [scope] if isinstance(scope, str) else scope:
            kind, _, key = s.partition(":")
            items.append((kind.strip(), key.strip() or None))
    out: dict[str, set[str | None]] = {}
    for kind, key in items:
        out.setdefault(kind.lower(), set()).add(key.lower() if key else None)
    return out


def scope_matches(bullet_scope: str, bullet_key: str | None, caller: dict[str, set] | None) -> bool:
    """Global bullets always match; scoped ones only when the caller's scope matches."""
    if caller is None or bullet_scope == "global":
        return True
    keys = caller.get(bullet_scope)
    if keys is None:
        return False
    return bullet_key is None or None in keys or bullet_key.lower() in keys


def keyword_scores(store: PlaybookStore, qtokens: list[str], policy: Any) -> dict[str, float]:
    """Per bullet: +3 per query token that is a token of it, else +1 if a substring of it,
    and +5 more when the token equals one of its tags."""
    scores: dict[str, float] = {}
    for q in qtokens:
        exact = set(store.token_postings(q))
        partial = set(store.substring_postings(q)) - exact
        for bid in exact:
            scores[bid] = scores.get(bid, 0.0) + policy.exact_points
        for bid in partial:
            scores[bid] = scores.get(bid, 0.0) + policy.substring_points
        for bid in store.tag_postings(q):
            scores[bid] = scores.get(bid, 0.0) + policy.tag_points
    return scores


def recall(
    store: PlaybookStore,
    query: str,
    *,
    vectors: MemoryVectors | None = None,
    limit: int = 10,
    as_of: datetime | None = None,
    scope: Scope = None,
) -> RecallResult:
    """Rank the playbook for `query`: rules, anti-patterns and deprecated warnings.

    `as_of` recalls the playbook as it stood then: bullets valid at that time, feedback
    recorded by then, maturity as it was, decay computed then. `scope` (e.g.
    ["language:python", "workspace:web"]) keeps global bullets and the matching scoped ones.
    """
    policy = store.policy
    caller = parse_scope(scope)
    qtokens = query_tokens(query)
    result = RecallResult(query_tokens=qtokens)
    keyword = keyword_scores(store, qtokens, policy)

    # Candidates: keyword matches, or (with vectors) every bullet valid at the time.
    when = as_of or store.now()
    candidates = store.recall_candidates(
        None if vectors is not None else list(keyword), at=iso(when) if as_of else None
    )
    candidates = [c for c in candidates if scope_matches(c[4], c[5], caller)]

    similarity: dict[str, float] = {}
    if vectors is not None and candidates:
        full = store.get_bullets(c[0] for c in candidates)
        sims = vectors.similarities(query, list(full.values()), scale=policy.similarity_scale)
        similarity = sims.values
        result.degraded.extend(sims.degraded)
        semantic = not any("failed" in d for d in sims.degraded)
    else:
        semantic = False

    w = policy.semantic_weight
    scored: list[tuple[str, str, str, float, float | None, float]] = []
    for bid, btype, maturity, *_ in candidates:
        kw = keyword.get(bid, 0.0)
        if semantic and bid in similarity:
            sim: float | None = similarity[bid]
            relevance = kw * (1 - w) + sim * w
        else:
            sim = None
            relevance = kw
        if relevance >= policy.min_relevance:
            scored.append((bid, btype, maturity, kw, sim, relevance))
    if not scored:
        return result

    ids = [s[0] for s in scored]
    evidence = store.evidence_many(ids, as_of=as_of)
    maturities = store.maturity_as_of(ids, as_of) if as_of is not None else {}
    lists: dict[str, list[tuple[float, float, str, float, float | None, float, float]]] = {
        "bullets": [],
        "anti_patterns": [],
        "deprecated_warnings": [],
    }
    for bid, btype, maturity, kw, sim, relevance in scored:
        maturity = maturities.get(bid, maturity)
        ev = evidence.get(bid)
        h, x = (ev.helpful, ev.harmful) if ev else (0.0, 0.0)
        eff = scoring.effective_score(h, x, maturity, policy)
        final = relevance * max(policy.min_confidence, eff)
        if maturity == "deprecated":
            key = "deprecated_warnings"
        elif btype == "anti-pattern":
            key = "anti_patterns"
        else:
            key = "bullets"
        lists[key].append((-final, -relevance, bid, kw, sim, relevance, eff))
    top = {k: sorted(v)[: max(0, limit)] for k, v in lists.items()}
    full = store.get_bullets(t[2] for v in top.values() for t in v)
    for key, rows in top.items():
        items = getattr(result, key)
        for neg_final, _, bid, kw, sim, relevance, eff in rows:
            bullet = full[bid]
            if as_of is not None and bid in maturities:
                bullet = bullet.model_copy(update={"maturity": maturities[bid]})
            items.append(RecallItem(bullet, kw, sim, relevance, eff, -neg_final))
    return result


def parse_when(text: str) -> datetime:
    """A user's date or datetime (ISO 8601; a bare date means its start, UTC)."""
    return parse_iso(text if "T" in text or " " in text else f"{text}T00:00:00+00:00")
