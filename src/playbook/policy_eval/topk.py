"""Recall's top k at a replayed moment: is the marked bullet among each candidate's k?

A context's words give the bullets recall would consider (keyword points: exact, substring
and tag hits, `KeywordIndex`); the bullet is in a candidate's top k when fewer than k of
them, in its own list and valid at the moment, rank before it by (final score, relevance,
id), as `recall(as_of=)` ranks them.

Contexts repeat, so each one's bullets and relevances are kept, within a memory budget
(least recently used first out): a team's year has hundreds of thousands of contexts,
each matching thousands of bullets.
"""

from __future__ import annotations

from collections import OrderedDict
from typing import TYPE_CHECKING, Any

import numpy as np

from ..core.text import query_tokens
from .engine import DEPRECATED

if TYPE_CHECKING:
    from numpy import ndarray

    from .engine import Engine
    from .keywords import KeywordIndex

Query = tuple[np.ndarray, np.ndarray, bool]
CACHE_BYTES = 64 << 20  # the contexts' bullets and relevances kept between marks


class TopK:
    def __init__(self, eng: Engine, index: KeywordIndex, k: int) -> None:
        self.eng = eng
        self.index = index
        self.k = k
        self.token_cache: dict[str, tuple[np.ndarray, np.ndarray, np.ndarray]] = {}
        self.query_cache: OrderedDict[str, Query | None] = OrderedDict()
        self.cached_bytes = 0

    def _token(self, token: str) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        got = self.token_cache.get(token)
        if got is None:
            seq_col = self.eng.seq_col
            exact, substring, tag = (
                np.array([seq_col[s] for s in seqs.tolist() if s in seq_col], dtype=np.intp)
                for seqs in self.index.matches(token)
            )
            got = self.token_cache[token] = (exact, substring, tag)
        return got

    def query(self, text: str) -> Query | None:
        """(columns, relevance (m, candidates), whether every one passes the relevance
        floor) of the bullets a context's words match (keyword points: exact, substring
        and tag hits), or None when it has no words."""
        cache = self.query_cache
        if text in cache:
            cache.move_to_end(text)
            return cache[text]
        eng = self.eng
        toks = query_tokens(text)
        out = None
        if toks:
            parts = [self._token(t) for t in toks]
            cols = np.concatenate([p[j] for p in parts for j in range(3)])
            kinds = np.concatenate(
                [np.full(len(p[j]), j, dtype=np.intp) for p in parts for j in range(3)]
            )
            uniq, inv = np.unique(cols, return_inverse=True)
            counts = np.bincount(inv * 3 + kinds, minlength=3 * len(uniq)).reshape(-1, 3)
            rel = counts.astype(np.float64) @ eng.points.T
            out = (uniq, rel, bool((rel >= eng.min_rel).all()))
            self.cached_bytes += uniq.nbytes + rel.nbytes
        cache[text] = out
        while self.cached_bytes > CACHE_BYTES and len(cache) > 1:
            old = cache.popitem(last=False)[1]
            if old is not None:
                self.cached_bytes -= old[0].nbytes + old[1].nbytes
        return out

    def hit(self, b: int, q: Query) -> np.ndarray:
        """Whether bullet `b` is in each candidate's top-k recall for the query `q`: fewer
        than k bullets of its list rank before it by (final score, relevance, id)."""
        eng = self.eng
        cols, rel, all_relevant = q
        c = len(eng.harm)
        j = int(np.searchsorted(cols, b))
        if j >= len(cols) or cols[j] != b or not eng.valid[b]:
            none: ndarray = np.zeros(c, dtype=bool)
            return none  # not recallable for it: no keyword, or not valid
        mat = eng.mat[cols]
        lists = np.where(mat == DEPRECATED, 2, eng.anti[cols])
        sel = eng.valid[cols] & (lists == lists[j])
        if not sel.all():  # compare within b's list, among the bullets valid now
            j = int(np.count_nonzero(sel[:j]))
            cols, rel = cols[sel], rel[sel]
        final = rel * np.maximum(eng.min_conf, eng.effective_many(cols))
        ok_b: Any = True
        if not all_relevant:
            ok = rel >= eng.min_rel
            final[~ok] = -np.inf  # filtered out by relevance: ranks nowhere
            ok_b = ok[j]
        fb, rb = final[j], rel[j]
        rank = np.count_nonzero(final > fb, axis=0)
        tied = final == fb
        tied[j] = False
        if tied.any():
            earlier = (eng.id_rank[cols] < eng.id_rank[b])[:, None]
            rank += np.count_nonzero(tied & ((rel > rb) | ((rel == rb) & earlier)), axis=0)
        hits: ndarray = ok_b & (rank < self.k)
        return hits
