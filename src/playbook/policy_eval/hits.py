"""Top-k recall for every held-out mark of a batch at once (`TopK.hit`, decided without
ranking whole contexts).

A context's bullets are the union of its words' parts (`hit_parts`): for each word, the
bullets where it is a token, a substring of one, or a tag. At a team's year a context holds
thousands of bullets, and the marked bullet is in a candidate's top k when fewer than k of
them rank before it. The decision needs far fewer:

- from each part, its `TOP` bullets by an upper bound of their score over the batch
  (`View.bounds`, any candidate) are scored exactly, at the mark's moment;
- every other bullet of a part scores no more than the part's largest bound among the rest
  (per candidate, the marked bullet's own left out), so its final score is at most the
  context's largest relevance x max(min_confidence, that bound);
- a candidate is decided when k of the scored bullets rank before the marked one, or when
  that bound stays below its final score.

A mark left undecided is looked at again with the bullets of several of its context's
parts (scored where their bound can reach), since past those a bullet's relevance is its
one part's points: the bound of the rest uses that instead of the largest. The few left
then are ranked whole (`TopK.hit_at`).

All of it with arrays over every (mark, bullet) pair of the batch. A relevance is counts of
each kind of match x whole points, exact however summed; with other points (a candidates
file) the marks are ranked whole.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from .engine import DEPRECATED
from .hit_parts import Parts

if TYPE_CHECKING:
    from .batch import View
    from .engine import Engine
    from .topk import TopK

TOP = 16  # bullets of a part scored first
# (x TOP bullets of each part, with those of several parts): each tier for the marks the
# one before left undecided
TIERS = ((1, False), (1, True), (4, True), (16, True))
MARGIN = 1.0 + 1e-9  # on a bound, for the last bits of a decay factor
PAIRS = 1 << 17  # (mark, bullet) pairs scored at a time, at most
NONE = np.zeros(0, dtype=np.intp)


def batch_hits(top: TopK, view: View, items: list[tuple[int, str, int]]) -> np.ndarray:
    """(marks, candidates): for each (bullet, context, moment of the batch) whose context
    has words, whether the bullet is in each candidate's top-k recall."""
    eng, k = top.eng, top.k
    c = len(eng.harm)
    out = np.zeros((len(items), c), dtype=bool)
    if not items:
        return out
    if not eng.whole_points:
        for h, (b_h, text, m) in enumerate(items):
            out[h] = top.hit_at(b_h, text, view, m)
        return out
    rows_of = [top.slots(text) for _, text, _ in items]
    width = max(len(r[0]) for r in rows_of if r is not None)
    pid = np.full((len(items), width), -1, dtype=np.intp)
    weight = np.zeros((len(items), width), dtype=np.int64)
    base = np.ones(len(items), dtype=np.int64)
    for h, got in enumerate(rows_of):
        if got is not None:
            ids, w, base[h] = got
            pid[h, : len(ids)], weight[h, : len(ids)] = ids, w
    used = np.unique(pid[pid >= 0])
    parts = Parts(top, view, used)
    b = np.array([it[0] for it in items], dtype=np.intp)
    moment = np.array([it[2] for it in items], dtype=np.intp)
    order = view.order(moment)
    # the marked bullet: in the context? its relevance, list and final score
    code_b = _code(parts, pid, weight, np.arange(len(items)), b)
    rb = _relevance(top, code_b, base)
    valid, mat = view.flags(b, order)
    list_b = np.where(mat == DEPRECATED, 2, eng.anti[b])
    fb = rb * np.maximum(eng.min_conf, view.scaled_at(b, order) * view.factors(b, moment))
    ok_b = (code_b > 0)[:, None] & valid[:, None] & (rb >= eng.min_rel)
    most = _most_relevance(top, pid)
    open_ = ok_b.any(axis=1)
    mark = _Marks(b, order, moment, list_b, fb, rb, pid, weight, base)
    mark.most_of = most.max(axis=1, initial=0.0)
    texts = [it[1] for it in items]
    for times, several in TIERS:
        size = times * TOP
        step = max(1, PAIRS // (4 * size * pid.shape[1]))  # marks at a time: pairs stay few
        for rows in np.array_split(np.flatnonzero(open_), max(1, -(-open_.sum() // step))):
            if not len(rows):
                continue
            extra = _several(parts, size, rows, mark, texts) if several else None
            beat = _beaten(top, view, parts, size, rows, mark, most, extra)
            decided = ((beat >= k) | ~ok_b[rows]).all(axis=1)
            if not decided.all():  # (the rest bounded only for the marks it can decide)
                ask = np.flatnonzero(~decided)
                rest = _rest(parts, size, rows[ask], mark, most, eng, several)
                decided[ask] = ((beat[ask] >= k) | (rest < fb[rows[ask]]) | ~ok_b[rows[ask]]).all(
                    axis=1
                )
            out[rows[decided]] = (ok_b[rows] & (beat < k))[decided]
            open_[rows[decided]] = False
    for h in np.flatnonzero(open_).tolist():  # ranked whole
        out[h] = top.hit_at(int(b[h]), items[h][1], view, int(moment[h]))
    return out


class _Marks:
    """Per mark: its bullet, moment, list, final score and relevance, and its parts."""

    def __init__(self, b: np.ndarray, order: np.ndarray, moment: np.ndarray,
                 list_b: np.ndarray, fb: np.ndarray, rb: np.ndarray, pid: np.ndarray,
                 weight: np.ndarray, base: np.ndarray) -> None:  # fmt: skip
        self.b, self.order, self.moment, self.list_b = b, order, moment, list_b
        self.fb, self.rb, self.pid, self.weight, self.base = fb, rb, pid, weight, base
        self.least_fb = fb.min(axis=1)  # (a pair's first test in `_can_reach`)
        self.most_of = np.zeros(len(b))  # the context's most relevance, any candidate


def _code(parts: Parts, pid: np.ndarray, weight: np.ndarray, h: np.ndarray,
          col: np.ndarray) -> np.ndarray:  # fmt: skip
    """Each pair's bullet's code in its mark's context: its counts of each kind of match,
    as digits (0: not in the context)."""
    slots = pid[h]
    used = slots >= 0
    held = np.zeros(slots.shape, dtype=np.int64)
    held[used] = parts.holds(slots[used], np.broadcast_to(col[:, None], slots.shape)[used])
    code: np.ndarray = (held * weight[h]).sum(axis=1)
    return code


def _relevance(top: TopK, code: np.ndarray, base: np.ndarray) -> np.ndarray:
    """(len(code), c): counts of exact, substring and tag matches x the points (a row per
    distinct (code, base), looked up: pairs share few; whole points make a row exact)."""
    span = int(base.max(initial=1)) + 1
    key = code * span + base
    most = int(key.max(initial=0))
    if most < max(1 << 16, 8 * len(key)):  # (few distinct keys: found without a sort)
        seen = np.zeros(most + 1, dtype=bool)
        seen[key] = True
        keys, which = np.flatnonzero(seen), (np.cumsum(seen) - 1)[key]
    else:
        keys, which = np.unique(key, return_inverse=True)
    code, base = keys // span, keys % span
    counts = np.stack([code // base**j % base for j in range(3)], axis=1).astype(np.float64)
    out: np.ndarray = (counts @ top.eng.points.T)[which.reshape(-1)]
    return out


def _most_relevance(top: TopK, pid: np.ndarray) -> np.ndarray:
    """(marks, c): no bullet of a context has more relevance (a word is a token or a
    substring of one, and may be a tag)."""
    points = top.eng.points
    has = (pid >= 0).reshape(len(pid), -1, 3)
    word = np.maximum(has[:, :, 0, None] * points[None, None, :, 0],
                      has[:, :, 1, None] * points[None, None, :, 1])  # fmt: skip
    out: np.ndarray = (word + has[:, :, 2, None] * points[None, None, :, 2]).sum(axis=1)
    return out


def _several(parts: Parts, size: int, rows: np.ndarray, m: _Marks,
             texts: list[str]) -> tuple[np.ndarray, ...]:  # fmt: skip
    """(mark, bullet) pairs: the bullets of several parts of each mark's context (among
    its parts of more than `size` bullets)."""
    found = [parts.several(texts[h], m.pid[h], size) for h in rows.tolist()]
    h = np.repeat(rows, [len(f) for f in found])
    return h, np.concatenate(found) if found else NONE


def _beaten(top: TopK, view: View, parts: Parts, size: int, rows: np.ndarray, m: _Marks,
            most: np.ndarray, extra: tuple[np.ndarray, ...] | None) -> np.ndarray:  # fmt: skip
    """For the marks `rows`, per candidate: how many of their parts' `size` bullets of
    largest bound (and the `extra` pairs that can reach) rank before the marked bullet (in
    its list, valid at the moment)."""
    eng, c = top.eng, len(top.eng.harm)
    width = m.pid.shape[1]
    pid = m.pid[rows]
    key = np.where(pid >= 0, pid * 3 + m.list_b[rows][:, None], -1).reshape(-1)
    keys, which = np.unique(key, return_inverse=True)
    got = [parts.listed(q // 3, size, q % 3)[0] if q >= 0 else NONE for q in keys.tolist()]
    sizes = np.array([len(g) for g in got], dtype=np.intp)
    starts = np.concatenate([[0], np.cumsum(sizes)[:-1]])
    flat = np.concatenate(got).astype(np.intp) if got else NONE
    lengths = sizes[which]
    h = np.repeat(np.repeat(rows, width), lengths)
    at = np.repeat(starts[which] - np.cumsum(lengths) + lengths, lengths) + np.arange(len(h))
    h, j = _may_reach(eng, parts, m, h, flat[at])
    if extra is not None:  # (the bullets of several parts: only those that can reach)
        eh, ej = extra
        eh, ej = _can_reach(eng, parts, most, m, *_may_reach(eng, parts, m, eh, ej))
        ecode = _code(parts, m.pid, m.weight, eh, ej)
        r = _relevance(top, ecode, m.base[eh])
        reach = r * np.maximum(eng.min_conf, parts.bounds[ej] * MARGIN) >= m.fb[eh]
        keep = reach.any(axis=1)
        h, j = np.concatenate([h, eh[keep]]), np.concatenate([j, ej[keep]])
    pair = np.sort(h.astype(np.int64) * parts.n + j)  # each pair once, by mark then bullet
    first = np.ones(len(pair), dtype=bool)
    first[1:] = pair[1:] != pair[:-1]
    pair = pair[first]
    h, j = pair // parts.n, pair % parts.n
    keep = j != m.b[h]
    h, j = _can_reach(eng, parts, most, m, h[keep], j[keep])
    r = _relevance(top, _code(parts, m.pid, m.weight, h, j), m.base[h])
    valid, mat = view.flags(j, m.order[h])
    sel = valid & (np.where(mat == DEPRECATED, 2, eng.anti[j]) == m.list_b[h])
    h, j, r = h[sel], j[sel], r[sel]
    final = r * np.maximum(
        eng.min_conf, view.scaled_at(j, m.order[h]) * view.factors(j, m.moment[h])
    )
    low = r < eng.min_rel
    if low.any():
        final[low] = -np.inf
    f_b, r_b = m.fb[h], m.rb[h]
    before = final > f_b
    tied = final == f_b
    if tied.any():
        earlier = (eng.id_rank[j] < eng.id_rank[m.b[h]])[:, None]
        before |= tied & ((r > r_b) | ((r == r_b) & earlier))
    out = np.zeros((len(rows), c))
    if len(h):  # (pairs are in the order of their marks: a sum per run)
        at = np.searchsorted(rows, h)
        starts = np.flatnonzero(np.r_[True, at[1:] != at[:-1]])
        out[at[starts]] = np.add.reduceat(before.view(np.int8), starts, axis=0, dtype=np.int64)
    return out


def _may_reach(eng: Engine, parts: Parts, m: _Marks, h: np.ndarray,
               j: np.ndarray) -> tuple[np.ndarray, np.ndarray]:  # fmt: skip
    """`_can_reach`'s first test, with one number a pair: every candidate's most relevance
    and bound against the least final score of the mark."""
    top = float(eng.min_conf.max(initial=-np.inf))
    high = m.most_of[h] * np.maximum(top, parts.most[j] * MARGIN)
    can = high >= m.least_fb[h]
    return h[can], j[can]


def _can_reach(eng: Engine, parts: Parts, most: np.ndarray, m: _Marks, h: np.ndarray,
               j: np.ndarray) -> tuple[np.ndarray, np.ndarray]:  # fmt: skip
    """The (mark, bullet) pairs whose bullet can rank before the marked one for some
    candidate: with the context's most relevance for its own, a final score that can reach
    the mark's. The others rank after it for every candidate (final score below), so they
    are left out before their relevance and score are looked up; what is counted is the
    same. (Rounding is monotone: the products bound the exact ones; min_confidence and the
    bounds are not negative.)"""
    bound = np.maximum(eng.min_conf, parts.bounds[j] * MARGIN)
    bound *= most[h]
    reach = (bound >= m.fb[h]).any(axis=1)
    return h[reach], j[reach]


def _rest(parts: Parts, size: int, rows: np.ndarray, m: _Marks, most: np.ndarray,
          eng: Engine, several: bool) -> np.ndarray:  # fmt: skip
    """For the marks `rows`, per candidate: a bound of the final score of every bullet of
    their contexts not scored (-inf: there is none). With the bullets of several parts
    scored, a bullet of the rest has its one part's points."""
    c = len(eng.min_conf)
    pid = m.pid[rows]
    key = np.where(pid >= 0, pid * 3 + m.list_b[rows][:, None], -1)  # (part, list)
    keys, slot = np.unique(key, return_inverse=True)
    slot = slot.reshape(key.shape)
    top1 = np.full((len(keys), c), -np.inf)  # (a key -1: no part, left at -inf)
    second = np.full((len(keys), c), -np.inf)
    arg = np.full((len(keys), c), -1, dtype=np.intp)
    for i, q in enumerate(keys.tolist()):
        if q >= 0:
            if several:
                top1[i], arg[i], second[i] = parts.rest(q // 3, size, q % 3)
            else:
                _, top1[i], arg[i], second[i] = parts.listed(q // 3, size, q % 3)
    own = arg[slot] == m.b[rows][:, None, None]
    bound = np.where(own, second[slot], top1[slot])  # (marks, slots, c)
    if several:  # a slot's kind: 3 x word + kind
        kind = np.arange(pid.shape[1]) % 3
        relevance = eng.points[:, kind].T[None, :, :]  # (1, slots, c)
    else:
        relevance = most[rows][:, None, :]
    with np.errstate(invalid="ignore"):
        final = relevance * np.maximum(eng.min_conf, bound * MARGIN)
    final[np.isneginf(bound)] = -np.inf
    out: np.ndarray = final.max(axis=1)
    return out
