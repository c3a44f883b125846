"""Recall (SPEC §6): what does the playbook say about this task?

Keyword points come from the store's token index (no content is rescanned); confidence
comes from the evidence cache; semantic similarity from `MemoryVectors` when given.
"""

from __future__ import annotations

import heapq
from dataclasses import dataclass, field
from datetime import datetime
from functools import cached_property
from typing import TYPE_CHECKING, Any

from . import scoring
from .store import PlaybookStore, iso, parse_iso
from .store.ranking import (
    LISTS,
    MATURITIES,
    first_rows,
    ids_of,
    keyword_array,
    keyword_hits,
    keyword_lists,
    keyword_points,
    rank_table,
)
from .store.records import BulletRecord, bullet_json, bullet_of
from .text import query_tokens

if TYPE_CHECKING:
    from .model import Bullet
    from .vectors import MemoryVectors


@dataclass(frozen=True)
class RecallItem:
    """One recalled bullet and every number behind its rank.

    `bullet` (a `Bullet` model) is built from the stored `record` on first use. Printing a
    recall (`to_dict`, or the record's fields) needs no model, so `playbook recall` and the
    prompt hook load no pydantic.
    """

    record: BulletRecord = field(repr=False)  # the bullet as stored, maturity as recalled
    keyword_score: float
    similarity: float | None
    relevance: float
    effective_score: float
    final_score: float

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
        ranked = _rank_now(store, query, qtokens, vectors, caller, limit, result)
    else:
        ranked = _rank_as_of(store, query, qtokens, vectors, caller, limit, as_of, result)
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


@dataclass(frozen=True, slots=True)
class _Ranked:
    bullet_id: str
    maturity: str
    keyword: float
    similarity: float | None
    relevance: float
    effective: float
    final: float

    def order(self) -> tuple[float, float, str]:
        return (-self.final, -self.relevance, self.bullet_id)


def _top(rows: list[_Ranked], limit: int) -> list[_Ranked]:
    return heapq.nsmallest(max(0, limit), rows, key=_Ranked.order)


def _rank_now(
    store: PlaybookStore,
    query: str,
    qtokens: list[str],
    vectors: MemoryVectors | None,
    caller: dict[str, set[str | None]] | None,
    limit: int,
    result: RecallResult,
) -> list[list[_Ranked]]:
    """The present moment, vectorised over the in-memory rank table (a store's first
    keyword query: its candidates only, in plain Python, see `_rank_first`)."""
    policy = store.policy
    lists = keyword_lists(store, qtokens, policy)
    if vectors is None:
        points: dict[int, float] = {}
        for seqs, value in lists:
            for s in seqs:
                points[s] = points.get(s, 0.0) + value
        rows = first_rows(store, sorted(points))
        if rows is not None:
            return _rank_first(store, rows, points, caller, limit)
    import numpy as np

    hits = [(np.array(seqs, dtype=np.intp), value) for seqs, value in lists]
    table = rank_table(store)
    if not len(table):
        return [[], [], []]
    keyword = keyword_array(table, hits)
    relevance = keyword.copy()
    sim = None
    if vectors is not None:
        sims = vectors.similarities(
            query,
            list(zip(table.ids, table.content_hash, strict=True)),
            scale=policy.similarity_scale,
            contents=lambda ids: {b.id: b.content for b in store.get_bullets(ids).values()},
        )
        result.degraded.extend(sims.degraded)
        if sims.ok and sims.array is not None and not np.isnan(sims.array).all():
            sim = sims.array  # aligned with table.ids, NaN where a bullet has no vector
            w = policy.semantic_weight
            relevance = np.where(np.isnan(sim), keyword, keyword * (1 - w) + sim * w)
    mask = relevance >= policy.min_relevance
    if caller is not None:
        for i, scope, key in table.scoped:
            if mask[i] and not scope_matches(scope, key, caller):
                mask[i] = False
    cand = np.flatnonzero(mask)
    if not cand.size:
        return [[], [], []]

    now_t = store.now()
    now = scoring.days(now_t)
    ref = table.ref[cand]
    has = ~np.isnan(ref)
    factor = np.where(has, 0.5 ** ((now - np.where(has, ref, now)) / table.half_life[cand]), 0.0)
    eff = scoring.effective_with(
        table.helpful[cand] * factor, table.harmful[cand] * factor, table.multiplier[cand], policy
    )
    slow = ~table.exact[cand] | (has & (ref > now))
    if slow.any():
        slow_ids = [table.ids[i] for i in cand[slow]]
        evidence = store.evidence_many(slow_ids, at=now_t)
        for j in np.flatnonzero(slow):
            i = cand[j]
            ev = evidence[table.ids[i]]
            eff[j] = scoring.effective_score(ev.helpful, ev.harmful, table.maturity[i], policy)
    rel = relevance[cand]
    final = scoring.final_score(rel, eff, policy)
    kinds = table.kind[cand]
    out: list[list[_Ranked]] = []
    for k in range(len(LISTS)):
        sel = np.flatnonzero(kinds == k)
        if sel.size > limit > 0:
            # keep every row tied with the limit-th best; the exact order is settled below
            cut = np.partition(final[sel], sel.size - limit)[sel.size - limit]
            sel = sel[final[sel] >= cut]
        rows = [
            _Ranked(
                table.ids[cand[j]],
                table.maturity[cand[j]],
                float(keyword[cand[j]]),
                None if sim is None or np.isnan(sim[cand[j]]) else float(sim[cand[j]]),
                float(rel[j]),
                float(eff[j]),
                float(final[j]),
            )
            for j in sel
        ]
        out.append(_top(rows, limit))
    return out


def _rank_first(
    store: PlaybookStore,
    rows: list[tuple[Any, ...]],
    points: dict[int, float],
    caller: dict[str, set[str | None]] | None,
    limit: int,
) -> list[list[_Ranked]]:
    """`_rank_now` for a store's first keyword query, row by row without numpy: a one-shot
    `playbook recall` or prompt hook scores its candidates in less time than numpy takes to
    load. The formulas are `scoring.effective_with` and `scoring.final_score` written out
    for floats (tests/test_startup.py checks that both paths give the same items, order and
    numbers). Ids are read only for the rows that need one: the best of each list, and
    those whose evidence the cache cannot answer."""
    policy = store.policy
    now_t = store.now()
    now = scoring.days(now_t)
    lagging = store.read_only and store.evidence_behind()
    default_hl = policy.half_life_days
    harm = policy.harm_multiplier
    floor = policy.min_relevance
    min_conf = policy.min_confidence
    mult = [policy.multiplier(m) for m in MATURITIES]
    lists: list[list[list[Any]]] = [[], [], []]  # [relevance, eff, seq, maturity code]
    slow: list[list[Any]] = []
    for seq, kind, code, scope, key, b_hl, inexact, ref, helpful, harmful in rows:
        relevance = points[seq]
        if relevance < floor:
            continue
        if caller is not None and scope is not None and not scope_matches(scope, key, caller):
            continue
        if ref is None:
            eff = (0.0 - harm * 0.0) * mult[code] + 0.0
        else:
            factor = 0.5 ** ((now - ref) / (b_hl or default_hl))
            eff = (helpful * factor - harm * (harmful * factor)) * mult[code] + 0.0
        row = [relevance, eff, seq, code]
        lists[kind].append(row)
        if inexact or lagging or (ref is not None and ref > now):
            slow.append(row)
    ids = ids_of(store, [row[2] for row in slow])
    if slow:
        evidence = store.evidence_many(list(ids.values()), at=now_t)
        for row in slow:
            ev = evidence[ids[row[2]]]
            row[1] = scoring.effective_score(ev.helpful, ev.harmful, MATURITIES[row[3]], policy)
    out: list[list[_Ranked]] = []
    for found in lists:
        scored = [
            (-(rel * (min_conf if min_conf >= eff else eff)), -rel, seq, code, eff)
            for rel, eff, seq, code in found
        ]
        best = heapq.nsmallest(max(0, limit), scored)
        if best:  # every row tied with the last one kept: ids settle their order
            cut = best[-1][:2]
            best = [s for s in scored if s[:2] <= cut]
            ids.update(ids_of(store, [s[2] for s in best if s[2] not in ids]))
        ranked = [
            _Ranked(ids[seq], MATURITIES[code], -r, None, -r, eff, -f)
            for f, r, seq, code, eff in best
        ]
        out.append(_top(ranked, limit))
    return out


def _rank_as_of(
    store: PlaybookStore,
    query: str,
    qtokens: list[str],
    vectors: MemoryVectors | None,
    caller: dict[str, set[str | None]] | None,
    limit: int,
    as_of: datetime,
    result: RecallResult,
) -> list[list[_Ranked]]:
    """The playbook as it stood at `as_of`, scored from the log itself."""
    policy = store.policy
    keyword = keyword_points(store, qtokens, policy)
    rows = store.recall_candidates(None if vectors is not None else list(keyword), at=iso(as_of))
    cands = [r for r in rows if scope_matches(r[4], r[5], caller)]
    similarity: dict[str, float] = {}
    if vectors is not None and cands:
        sims = vectors.similarities(
            query,
            [(r[0], r[6]) for r in cands],
            scale=policy.similarity_scale,
            contents=lambda ids: {b.id: b.content for b in store.get_bullets(ids).values()},
        )
        result.degraded.extend(sims.degraded)
        similarity = sims.values if sims.ok else {}
    w = policy.semantic_weight
    scored = []
    for r in cands:
        kw = keyword.get(r[0], 0.0)
        sim = similarity.get(r[0])
        relevance = kw if sim is None else kw * (1 - w) + sim * w
        if relevance >= policy.min_relevance:
            scored.append((r, kw, sim, relevance))
    ids = [s[0][0] for s in scored]
    evidence = store.evidence_many(ids, as_of=as_of)
    maturities = store.maturity_as_of(ids, as_of)
    lists: list[list[_Ranked]] = [[], [], []]
    for r, kw, sim, relevance in scored:
        bid, btype = r[0], r[1]
        maturity = maturities.get(bid, r[2])
        ev = evidence[bid]
        eff = scoring.effective_score(ev.helpful, ev.harmful, maturity, policy)
        final = scoring.final_score(relevance, eff, policy)
        index = 2 if maturity == "deprecated" else 1 if btype == "anti-pattern" else 0
        lists[index].append(_Ranked(bid, maturity, kw, sim, relevance, eff, final))
    return [_top(rows_, limit) for rows_ in lists]


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
    return {b: p for b, p in keyword_points(store, terms, store.policy).items() if p >= floor}


def keyword_postings(store: PlaybookStore, text: str) -> list[tuple[Any, float]]:
    """The same points as raw postings, (numpy array of bullet seqs, points) per match, for
    callers that rank in numpy by seq (the workbench's large-table path)."""
    terms = query_terms(store, text)
    return keyword_hits(store, terms, store.policy) if terms else []


def parse_when(text: str) -> datetime:
    """A user's date or datetime (ISO 8601; a bare date means its start, UTC)."""
    return parse_iso(text if "T" in text or " " in text else f"{text}T00:00:00+00:00")
