"""Recall's top k at a replayed moment: is the marked bullet among each candidate's k?

A context's words give the bullets recall would consider (keyword points: exact, substring
and tag hits, `KeywordIndex`); the bullet is in a candidate's top k when fewer than k of
them, in its own list and valid at the moment, rank before it by (final score, relevance,
id), as `recall(as_of=)` ranks them. Final score = relevance x max(min_confidence,
effective score).

`hit` ranks every bullet of the context at the engine's moment, `hit_at` at a moment of a
batch (`batch.View`); `hits.batch_hits` decides a batch's marks without ranking whole
contexts, from the words' parts (`part`, `slots`). Contexts repeat, so each one's bullets
and relevances are kept, within a memory budget (least recently used first out).
"""

from __future__ import annotations

from collections import OrderedDict
from typing import TYPE_CHECKING, Any, NamedTuple

import numpy as np

from ..core.text import query_tokens
from .engine import DEPRECATED

if TYPE_CHECKING:
    from numpy import ndarray

    from .batch import View
    from .engine import Engine
    from .keywords import KeywordIndex

CACHE_BYTES = 64 << 20  # the contexts' bullets and relevances kept between marks


class Context(NamedTuple):
    cols: np.ndarray  # the bullets a context's words match, sorted
    level: np.ndarray  # each one's relevance row, as an index into `levels`
    levels: np.ndarray  # (distinct relevance rows, candidates)
    full: np.ndarray | None  # (bullets, candidates): the relevance, when not `levels[level]`
    all_relevant: bool  # every one passes the relevance floor
    rmax: np.ndarray  # per candidate, the most relevance
    floors: np.ndarray  # (levels, candidates): relevance x min_confidence (-inf: filtered)

    def rows(self, at: Any = slice(None)) -> np.ndarray:
        """(bullets, candidates): the relevance of the bullets at `at`."""
        got: np.ndarray = self.levels[self.level[at]] if self.full is None else self.full[at]
        return got

    @property
    def nbytes(self) -> int:
        full = 0 if self.full is None else self.full.nbytes
        return self.cols.nbytes + self.level.nbytes + full


class TopK:
    def __init__(self, eng: Engine, index: KeywordIndex, k: int) -> None:
        self.eng = eng
        self.index = index
        self.k = k
        self.token_cache: dict[str, tuple[np.ndarray, np.ndarray, np.ndarray]] = {}
        self.query_cache: OrderedDict[str, Context | None] = OrderedDict()
        self.cached_bytes = 0
        self.part_ids: dict[tuple[str, int], int] = {}
        self.parts: list[np.ndarray] = []
        self.slot_cache: dict[str, tuple[np.ndarray, np.ndarray, int] | None] = {}
        self.several_cache: OrderedDict[tuple[str, int], np.ndarray] = OrderedDict()
        self.several_bytes = 0
        self.mask_cache: OrderedDict[int, np.ndarray] = OrderedDict()
        self.mask_bytes = 0

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

    def query(self, text: str) -> Context | None:
        """The bullets a context's words match (keyword points: exact, substring and tag
        hits) and their relevance, or None when it has no words."""
        cache = self.query_cache
        if text in cache:
            cache.move_to_end(text)
            return cache[text]
        toks = query_tokens(text)
        out = None
        if toks:
            out = self._context([self._token(t) for t in toks], len(toks) + 1)
            self.cached_bytes += out.nbytes
        cache[text] = out
        while self.cached_bytes > CACHE_BYTES and len(cache) > 1:
            old = cache.popitem(last=False)[1]
            if old is not None:
                self.cached_bytes -= old.nbytes
        return out

    def _context(self, parts: list[tuple[np.ndarray, ...]], base: int) -> Context:
        """The bullets of the words' matches (each part sorted) with their relevance:
        counts of exact, substring and tag matches x the candidates' points."""
        eng = self.eng
        cols = np.concatenate([p[j] for p in parts for j in range(3)])
        codes = np.concatenate(
            [np.full(len(p[j]), base**j, dtype=np.int64) for p in parts for j in range(3)]
        )  # a bullet's code: its counts of each kind, as digits in base (words + 1)
        by = np.argsort(cols, kind="stable")
        cols, codes = cols[by], codes[by]
        first = np.ones(len(cols), dtype=bool)
        first[1:] = cols[1:] != cols[:-1]
        starts = np.flatnonzero(first)
        code = np.add.reduceat(codes, starts) if len(cols) else np.zeros(0, dtype=np.int64)
        seen = np.bincount(code) if len(code) else np.zeros(0, dtype=np.int64)
        present = np.flatnonzero(seen)
        lookup = np.zeros(len(seen), dtype=np.int32)
        lookup[present] = np.arange(len(present))

        def counts(c: np.ndarray) -> np.ndarray:
            return np.stack([c // base**j % base for j in range(3)], axis=1).astype(np.float64)

        levels = counts(present) @ eng.points.T
        # Whole points give whole relevances, the same however summed; other points: each
        # row as recall has it, from one product over every bullet.
        full = None if eng.whole_points else counts(code) @ eng.points.T
        rel = levels if full is None else full
        floors = levels * eng.min_conf
        floors[levels < eng.min_rel] = -np.inf
        all_relevant = bool((rel >= eng.min_rel).all())
        return Context(cols[starts], lookup[code], levels, full, all_relevant,
                       rel.max(axis=0, initial=0.0), floors)  # fmt: skip

    def hit(self, b: int, q: Context) -> np.ndarray:
        """Whether bullet `b` is in each candidate's top-k recall for the context `q` at
        the engine's moment: fewer than k bullets of its list rank before it."""
        eng = self.eng
        cols, rel, all_relevant = q.cols, q.rows(), q.all_relevant
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

    def hit_at(self, b: int, text: str, view: View, moment: int) -> np.ndarray:
        """`hit` at a moment of a batch (`batch.View`): every bullet of the context ranked."""
        eng = self.eng
        c = len(eng.harm)
        q = self.query(text)
        order = int(view.order(moment))
        one = np.array([b])
        valid_b, mat_b = view.flags(one, order)
        cols = q.cols if q is not None else np.zeros(0, dtype=np.intp)
        j = int(np.searchsorted(cols, b))
        if q is None or j >= len(cols) or cols[j] != b or not valid_b[0]:
            return np.zeros(c, dtype=bool)
        rel = q.rows()
        at = np.full(len(cols), moment)
        eff = view.scaled_at(cols, order) * view.factors(cols, at)
        valid, mat = view.flags(cols, order)
        lists = np.where(mat == DEPRECATED, 2, eng.anti[cols])
        sel = valid & (lists == (2 if mat_b[0] == DEPRECATED else eng.anti[b]))
        final = rel * np.maximum(eng.min_conf, eff)
        ok = rel >= eng.min_rel
        final[~ok] = -np.inf
        fb, rb = final[j], rel[j]
        sel[j] = False
        final, rel, cols = final[sel], rel[sel], cols[sel]
        rank = np.count_nonzero(final > fb, axis=0)
        tied = final == fb
        if tied.any():
            earlier = (eng.id_rank[cols] < eng.id_rank[b])[:, None]
            rank += np.count_nonzero(tied & ((rel > rb) | ((rel == rb) & earlier)), axis=0)
        hits: ndarray = ok[j] & (rank < self.k)
        return hits

    # ------------------------------------------------------------- parts (`hits.py`)
    def part(self, token: str, kind: int) -> int:
        """The id of a word's part of one kind: its bullets as a token (0), a substring of
        one (1), or a tag (2); -1 when it has none."""
        got = self.part_ids.get((token, kind))
        if got is None:
            members = self._token(token)[kind]
            got = self.part_ids[(token, kind)] = len(self.parts) if len(members) else -1
            if len(members):
                self.parts.append(members)
        return got

    def slots(self, text: str) -> tuple[np.ndarray, np.ndarray, int] | None:
        """(part ids, their weights in a bullet's code, the code's base) of a context's
        words, three parts a word; None without words."""
        got = self.slot_cache.get(text)
        if got is None and text not in self.slot_cache:
            words = query_tokens(text)
            if words:
                base = len(words) + 1
                ids = [self.part(w, kind) for w in words for kind in range(3)]
                weights = [base**kind for _ in words for kind in range(3)]
                got = (np.array(ids, dtype=np.intp), np.array(weights, dtype=np.int64), base)
            self.slot_cache[text] = got
        return got
