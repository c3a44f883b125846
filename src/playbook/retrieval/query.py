"""Recall (SPEC §6): what does the playbook say about this task?

This module is the API (`recall`, its result types, the keyword relevance a filter ranks
by); how the rows are ranked lives in `rank`.

Keyword points come from the store's token index (no content is rescanned); confidence
comes from the evidence cache; semantic similarity from `MemoryVectors` when given.
"""

from __future__ import annotations

from datetime import datetime
from functools import cached_property
from typing import TYPE_CHECKING, Any

from ..core.record import NEW, FrozenRecord, Record
from ..core.text import query_tokens
from ..store import PlaybookStore, parse_iso
from ..store.ranking import LISTS
from ..store.records import BulletRecord, bullet_json, bullet_of
from .rank import rank_as_of, rank_now
from .ranked import Scope, parse_scope, scope_matches

if TYPE_CHECKING:
    from ..core.model import Bullet
    from .vectors import MemoryVectors

__all__ = [
    "RecallItem",
    "RecallResult",
    "Scope",
    "keyword_postings",
    "keyword_relevance",
    "parse_scope",
    "parse_when",
    "query_terms",
    "recall",
    "scope_matches",
]


class RecallItem(FrozenRecord):
    """One recalled bullet and every number behind its rank.

    `bullet` (a `Bullet` model) is built from the stored `record` on first use. Printing a
    recall (`to_dict`, or the record's fields) needs no model, so `playbook recall` and the
    prompt hook load no pydantic.
    """

    record: BulletRecord  # the bullet as stored, maturity as recalled (not in its repr)
    keyword_score: float
    similarity: float | None
    relevance: float
    effective_score: float
    final_score: float
    _repr_names = ("keyword_score", "similarity", "relevance", "effective_score", "final_score")

    def __init__(
        self,
        record: BulletRecord,
        keyword_score: float,
        similarity: float | None,
        relevance: float,
        effective_score: float,
        final_score: float,
    ) -> None:
        object.__setattr__(self, "record", record)
        object.__setattr__(self, "keyword_score", keyword_score)
        object.__setattr__(self, "similarity", similarity)
        object.__setattr__(self, "relevance", relevance)
        object.__setattr__(self, "effective_score", effective_score)
        object.__setattr__(self, "final_score", final_score)

    @cached_property
    def bullet(self) -> Bullet:
        return bullet_of(self.record)

    def to_dict(self) -> dict[str, Any]:
        return {
            "bullet": bullet_json(self.record),
            "keyword_score": self.keyword_score,
            "similarity": self.similarity,
            "relevance": self.relevance,
            "effective_score": self.effective_score,
            "final_score": self.final_score,
        }


class RecallResult(Record):
    bullets: list[RecallItem]
    anti_patterns: list[RecallItem]
    deprecated_warnings: list[RecallItem]
    degraded: list[str]
    query_tokens: list[str]

    def __init__(
        self,
        bullets: list[RecallItem] = NEW,
        anti_patterns: list[RecallItem] = NEW,
        deprecated_warnings: list[RecallItem] = NEW,
        degraded: list[str] = NEW,
        query_tokens: list[str] = NEW,
    ) -> None:
        self.bullets = [] if bullets is NEW else bullets
        self.anti_patterns = [] if anti_patterns is NEW else anti_patterns
        self.deprecated_warnings = [] if deprecated_warnings is NEW else deprecated_warnings
        self.degraded = [] if degraded is NEW else degraded
        self.query_tokens = [] if query_tokens is NEW else query_tokens

    def to_dict(self) -> dict[str, Any]:
        return {
            "query_tokens": self.query_tokens,
            "bullets": [i.to_dict() for i in self.bullets],
            "anti_patterns": [i.to_dict() for i in self.anti_patterns],
            "deprecated_warnings": [i.to_dict() for i in self.deprecated_warnings],
            "degraded": list(self.degraded),
        }


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
    ["language:python", "workspace:web"]) keeps global bullets and the matching scoped ones;
    without it nothing is filtered by scope.
    """
    caller = parse_scope(scope)
    qtokens = query_terms(store, query)
    result = RecallResult(query_tokens=qtokens)
    if not qtokens and vectors is None:
        return result
    if as_of is None:
        ranked = rank_now(store, query, qtokens, vectors, caller, limit, result.degraded)
    else:
        ranked = rank_as_of(store, query, qtokens, vectors, caller, limit, as_of, result.degraded)
    full = store.bullet_records(r.bullet_id for rows in ranked for r in rows)
    for key, rows in zip(LISTS, ranked, strict=True):
        items = getattr(result, key)
        for r in rows:
            record = full[r.bullet_id]
            if r.maturity != record.maturity:  # as it was at `as_of`
                record = record._replace(maturity=r.maturity)
            items.append(
                RecallItem(record, r.keyword, r.similarity, r.relevance, r.effective, r.final)
            )
    return result


def query_terms(store: PlaybookStore, text: str) -> list[str]:
    """The query's tokens as recall scores them: distinct, the policy's stop words dropped."""
    return query_tokens(text, store.policy.stop_words())


def keyword_relevance(store: PlaybookStore, text: str) -> dict[str, float]:
    """Recall's keyword relevance (SPEC §6) of every bullet that reaches
    `Policy.min_relevance` for `text`, by id (retired bullets included: a caller that lists
    them filters itself). What a filter ranks by; `final_score` turns it into recall's rank."""
    terms = query_terms(store, text)
    if not terms:
        return {}
    floor = store.policy.min_relevance
    return {b: p for b, p in store.rank.keyword_points(terms, store.policy).items() if p >= floor}


def keyword_postings(store: PlaybookStore, text: str) -> list[tuple[Any, float]]:
    """The same points as raw postings, (numpy array of bullet seqs, points) per match, for
    callers that rank in numpy by seq (the workbench's large-table path)."""
    terms = query_terms(store, text)
    return store.rank.keyword_hits(terms, store.policy) if terms else []


def parse_when(text: str) -> datetime:
    """A user's date or datetime (ISO 8601; a bare date means its start, UTC)."""
    return parse_iso(text if "T" in text or " " in text else f"{text}T00:00:00+00:00")
