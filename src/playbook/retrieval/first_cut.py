"""A store's first keyword recall, in plain Python (see `rank.rank_now`).

A one-shot `playbook recall` or prompt hook scores its candidates in less time than numpy
takes to load. At 100k rules a common query has tens of thousands of candidates, and
bringing each one's rank row into Python costs more than everything else the command does,
so the candidates are read in decreasing order of keyword relevance, and once each list
holds `limit` rows, a candidate is read only if an upper bound on its final score reaches
the list's current `limit`-th score (`_floors`): the rows left unread cannot enter any list,
so the result is the one a full read gives, item for item and to the last bit.
"""

from __future__ import annotations

import heapq
from collections.abc import Iterator
from typing import Any

from ..core import scoring
from ..core.scoring import effective_with, final_score, sums_at
from ..core.terms import MATURITIES
from ..store import PlaybookStore
from ..store.evidence_rule import lags, row_answers
from .ranked import Ranked, scope_matches, top

# A batch of relevance groups is read in one query once it holds this many candidates
# (a query costs about what a hundred rows do).
BATCH = 256
# How far below the cut a bound may fall and still be read: it absorbs the rounding of
# the bound (computed in SQL) against the score (computed here), so nothing that could
# reach the cut is ever left unread.
SLACK = 1e-9
# From a batch of this many candidates on, one pass over the evidence cache may find those
# worth reading sooner than a look-up per candidate: `_scan_pays` weighs the two, in
# microseconds (measured at 100k rules): a look-up per candidate left, against the pass
# (per cached bullet), a look-up of each bullet it finds (estimated from the helpful sums
# of the rows read so far) and, when a list is read whole, a lighter look-up per candidate
# left (`store.rank.first_worth` sends the candidates only then).
SCAN_LEAST = 2000
COST_LOOKUP = 2.5  # SQLite's; a backend's own is `store.rank.lookup_cost` (PostgreSQL: 7)
COST_PASS = 0.1
COST_FOUND = 4.0
COST_LEFT = 0.75


def rank_first(
    store: PlaybookStore,
    points: dict[int, float],
    caller: dict[str, set[str | None]] | None,
    limit: int,
    *,
    cut: bool = True,
) -> list[list[Ranked]]:
    """`rank_now` for a store's first keyword query, row by row without numpy: the same
    `scoring` functions in their float form, which gives the bits of their array form
    (tests/test_startup.py checks that both paths give the same items, order and numbers;
    tests/test_recall_first_cut.py that the cut leaves them unchanged). Ids are read only
    for the rows that need one: the best of each list, and those whose evidence the cache
    cannot answer. `cut=False` reads every candidate (what the tests compare against)."""
    policy = store.policy
    now_t = store.now()
    now = scoring.days(now_t)
    lagging = lags(store.read_only, store.evidence_behind)
    default_hl = policy.half_life_days
    harm = policy.harm_multiplier
    floor = policy.min_relevance
    mult = [policy.multiplier(m) for m in MATURITIES]
    # The bound (final <= relevance * max(min_conf, helpful at ref * multiplier)) holds only
    # when no factor can turn harm into help and every relevance is positive; a lagging
    # cache answers nothing as it is.
    cut = cut and not lagging and harm >= 0 and min(mult) >= 0 and floor > 0 and limit > 0
    lists: list[list[list[Any]]] = [[], [], []]  # [relevance, eff, seq, maturity code]
    best: list[list[float]] = [[], [], []]  # per list, a min-heap of its `limit` best finals
    slow: list[list[Any]] = []
    reading = _rows(store, _batches(points, floor), best, now, limit if cut else 0)
    for seq, kind, code, scope, key, b_hl, inexact, ref, helpful, harmful in reading:
        rel = points[seq]
        if caller is not None and scope is not None and not scope_matches(scope, key, caller):
            continue
        if ref is None:
            eff = effective_with(0.0, 0.0, mult[code], policy)
        else:
            h, x = sums_at(ref, helpful, harmful, b_hl or default_hl, now)
            eff = effective_with(h, x, mult[code], policy)
        row = [rel, eff, seq, code]
        lists[kind].append(row)
        if not row_answers(inexact, ref, now, lagging):
            slow.append(row)  # scored below, from the log: no part of the cut
        elif cut:
            final = final_score(rel, eff, policy)
            heap = best[kind]
            if len(heap) < limit:
                heapq.heappush(heap, final)
            elif final > heap[0]:
                heapq.heapreplace(heap, final)
    ids = store.rank.ids_of([row[2] for row in slow]) if slow else {}
    if slow:
        evidence = store.evidence_many(list(ids.values()), at=now_t)
        for row in slow:
            ev = evidence[ids[row[2]]]
            row[1] = scoring.effective_score(ev.helpful, ev.harmful, MATURITIES[row[3]], policy)
    chosen: list[list[tuple[Any, ...]]] = []
    for found in lists:
        scored = [
            (-final_score(rel, eff, policy), -rel, seq, code, eff) for rel, eff, seq, code in found
        ]
        kept = heapq.nsmallest(max(0, limit), scored)
        if kept:  # every row tied with the last one kept: ids settle their order
            last = kept[-1][:2]
            kept = [s for s in scored if s[:2] <= last]
        chosen.append(kept)
    missing = [s[2] for kept in chosen for s in kept if s[2] not in ids]
    if missing:  # the ids of every list's rows, in one read
        ids.update(store.rank.ids_of(missing))
    return [
        top(
            [
                Ranked(ids[seq], MATURITIES[code], -r, None, -r, eff, -f)
                for f, r, seq, code, eff in kept
            ],
            limit,
        )
        for kept in chosen
    ]


def _batches(points: dict[int, float], floor: float) -> list[tuple[float, list[int]]]:
    """The candidates that reach `floor`, in decreasing order of relevance, in batches of
    whole relevance groups of at least `BATCH` candidates (the last may be smaller), each
    with the highest relevance in it."""
    groups: dict[float, list[int]] = {}
    for seq, relevance in points.items():
        if relevance >= floor:
            group = groups.get(relevance)
            if group is None:
                groups[relevance] = [seq]
            else:
                group.append(seq)
    out: list[tuple[float, list[int]]] = []
    batch: list[int] = []
    high = 0.0
    for relevance in sorted(groups, reverse=True):
        if not batch:
            high = relevance
        batch += groups[relevance]
        if len(batch) >= BATCH:
            out.append((high, sorted(batch)))
            batch = []
    if batch:
        out.append((high, sorted(batch)))
    return out


def _rows(
    store: PlaybookStore,
    batches: list[tuple[float, list[int]]],
    best: list[list[float]],
    now: float,
    limit: int,
) -> Iterator[tuple[Any, ...]]:
    """The rank rows of the batches' candidates that may enter a list, batch by batch, the
    floors of each batch taken from `best` as the caller has filled it by then (`limit` 0:
    every row). When it costs less (`_scan_pays`), the rest is found in one pass over the
    evidence cache (`first_worth`) instead."""
    policy = store.policy
    mult = [policy.multiplier(m) for m in MATURITIES]
    # the most a multiplier can be, per list (deprecated bullets have a list of their own)
    most = (max(mult[:-1]), max(mult[:-1]), mult[-1])
    left = sum(len(seqs) for _, seqs in batches)
    helps: list[float] = []  # the cached helpful sums of the rows read so far
    size: int | None = None
    for i, (relevance, seqs) in enumerate(batches):
        floors = _floors(best, relevance, policy.min_confidence, limit) if limit else None
        # the least helpful sum that reaches a floor (a list without one is read whole)
        reach = [f / m for f, m in zip(floors or (), most, strict=False) if f > 0 < m]
        if floors is not None and reach and len(seqs) >= SCAN_LEAST:
            least = min(reach) * (1 - SLACK)
            size = store.rank.playbook_size() if size is None else size
            whole = tuple(f < 0 for f in floors)
            share = sum(h >= least for h in helps) / (len(helps) or 1)
            if _scan_pays(left, size, share, any(whole), store.rank.lookup_cost):
                rest = sorted(s for _, group in batches[i:] for s in group)
                yield from store.rank.first_rows(
                    store.rank.first_worth(rest, now, least, whole), now
                )
                return
        for row in store.rank.first_rows(seqs, now, floors):
            helps.append(row[8] or 0.0)
            yield row
        left -= len(seqs)


def _scan_pays(
    left: int, size: int, share: float, whole: bool, lookup: float = COST_LOOKUP
) -> bool:
    """Whether one pass over a playbook of `size` bullets, a `share` of which it finds,
    costs less than looking up the `left` candidates one by one at `lookup` microseconds
    each (`whole`: a list is read whole, whose candidates the pass looks up too)."""
    scan = COST_PASS * size + COST_FOUND * share * size + (COST_LEFT * left if whole else 0.0)
    return scan < lookup * left


def _floors(
    best: list[list[float]], relevance: float, min_conf: float, limit: int
) -> tuple[float, float, float] | None:
    """Per list, the least `helpful at ref * multiplier` a candidate of this relevance (or
    less) must have to be read: its final score is at most `relevance * max(min_conf,
    helpful * multiplier)` (decay and harm only lower it), and a row below the list's
    `limit`-th final so far cannot enter the list. -1 (every row: the product is never
    negative) where the list is not full yet, or min_conf alone could reach the cut. None
    when no list cuts anything."""
    if relevance <= 0:
        return None
    out = []
    for heap in best:
        if len(heap) < limit or heap[0] <= 0 or relevance * min_conf >= heap[0] * (1 - SLACK):
            out.append(-1.0)
        else:
            need = heap[0] / relevance
            out.append(need - SLACK * need)
    if max(out) < 0:
        return None
    return out[0], out[1], out[2]
