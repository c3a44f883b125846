"""How recall ranks (SPEC §6): the three paths from the store's rank data to ranked rows.

- `rank_now`: the present moment, vectorised in numpy over the store's in-memory rank table;
- `rank_first` (`first_cut.py`): the same for a store's first keyword query, in
  plain Python (a one-shot `playbook recall` or prompt hook does not wait for numpy to
  load), reading only the candidates that can still enter a list;
- `rank_as_of`: the playbook as it stood at a past time, scored from the feedback log.

Each returns one list of `Ranked` rows (`ranked.py`) per recall list (`store.ranking.LISTS`:
rules, anti-patterns, deprecated warnings); `query.recall` turns them into `RecallItem`s.
The caller's scope (`ranked.scope_matches`) is applied here too.
"""

from __future__ import annotations

from datetime import datetime
from typing import TYPE_CHECKING

from ..core import scoring
from ..core.collector import paused
from ..core.terms import MATURITIES
from ..store import PlaybookStore, iso
from ..store.evidence_rule import rows_answer
from ..store.ranking import LISTS
from .first_cut import rank_first
from .ranked import Ranked, scope_matches, top

if TYPE_CHECKING:
    from .vectors import MemoryVectors


def rank_now(
    store: PlaybookStore,
    query: str,
    qtokens: list[str],
    vectors: MemoryVectors | None,
    caller: dict[str, set[str | None]] | None,
    limit: int,
    degraded: list[str],
) -> list[list[Ranked]]:
    """The present moment, vectorised over the in-memory rank table (a store's first
    keyword query: its candidates only, in plain Python, see `rank_first`)."""
    policy = store.policy
    lists = store.rank.keyword_lists(qtokens, policy)
    if vectors is None:
        points: dict[int, float] = {}
        for seqs, value in lists:
            for s in seqs:
                points[s] = points.get(s, 0.0) + value
        if store.rank.first_query():
            return rank_first(store, points, caller, limit)
    import numpy as np  # lazy: recall, hook prompt (not for a first query)

    from ..store.rank_table import keyword_array  # lazy: recall, hook prompt (not a first query)

    hits = [(np.array(seqs, dtype=np.intp), value) for seqs, value in lists]
    with paused():
        table = store.rank.table()
        if not len(table):
            return [[], [], []]
        if vectors is not None:
            sims = vectors.similarities(
                query,
                list(zip(table.seq.tolist(), table.content_hash, strict=True)),
                scale=policy.similarity_scale,
                contents=store.rank.contents_of,
            )
    keyword = keyword_array(table, hits)
    relevance = keyword.copy()
    sim = None
    if vectors is not None:
        degraded.extend(sims.degraded)
        if sims.ok and sims.array is not None and not np.isnan(sims.array).all():
            sim = sims.array  # aligned with the table, NaN where a bullet has no vector
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
    h, x = scoring.sums_at(  # a bullet without evidence (ref NaN) has sums 0 at any moment
        np.where(np.isnan(ref), now, ref),
        table.helpful[cand],
        table.harmful[cand],
        table.half_life[cand],
        now,
    )
    eff = scoring.effective_with(h, x, table.multiplier[cand], policy)
    # `exact`: the row's INEXACT flag clear and the cache not lagging (`rank_table`)
    slow = ~rows_answer(~table.exact[cand], ref, now, False)
    if slow.any():
        slow_ids = store.rank.ids_of(table.seq[cand[slow]].tolist())
        evidence = store.evidence_many(list(slow_ids.values()), at=now_t)
        for j in np.flatnonzero(slow):
            i = cand[j]
            ev = evidence[slow_ids[int(table.seq[i])]]
            maturity = MATURITIES[table.maturity[i]]
            eff[j] = scoring.effective_score(ev.helpful, ev.harmful, maturity, policy)
    rel = relevance[cand]
    final = scoring.final_score(rel, eff, policy)
    kinds = table.kind[cand]
    sels = []
    for k in range(len(LISTS)):
        sel = np.flatnonzero(kinds == k)
        if sel.size > limit > 0:
            # keep every row tied with the limit-th best; the exact order is settled below
            cut = np.partition(final[sel], sel.size - limit)[sel.size - limit]
            sel = sel[final[sel] >= cut]
        sels.append(sel)
    ids = store.rank.ids_of(table.seq[cand[np.concatenate(sels)]].tolist())
    out: list[list[Ranked]] = []
    for sel in sels:
        rows = [
            Ranked(
                ids[int(table.seq[cand[j]])],
                MATURITIES[table.maturity[cand[j]]],
                float(keyword[cand[j]]),
                None if sim is None or np.isnan(sim[cand[j]]) else float(sim[cand[j]]),
                float(rel[j]),
                float(eff[j]),
                float(final[j]),
            )
            for j in sel
        ]
        out.append(top(rows, limit))
    return out


def rank_as_of(
    store: PlaybookStore,
    query: str,
    qtokens: list[str],
    vectors: MemoryVectors | None,
    caller: dict[str, set[str | None]] | None,
    limit: int,
    as_of: datetime,
    degraded: list[str],
) -> list[list[Ranked]]:
    """The playbook as it stood at `as_of`, scored from the log itself."""
    policy = store.policy
    keyword = store.rank.keyword_points(qtokens, policy)
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
        degraded.extend(sims.degraded)
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
    lists: list[list[Ranked]] = [[], [], []]
    for r, kw, sim, relevance in scored:
        bid, btype = r[0], r[1]
        maturity = maturities.get(bid, r[2])
        ev = evidence[bid]
        eff = scoring.effective_score(ev.helpful, ev.harmful, maturity, policy)
        final = scoring.final_score(relevance, eff, policy)
        index = 2 if maturity == "deprecated" else 1 if btype == "anti-pattern" else 0
        lists[index].append(Ranked(bid, maturity, kw, sim, relevance, eff, final))
    return [top(rows_, limit) for rows_ in lists]
