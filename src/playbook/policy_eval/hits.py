"""Top-k recall for every held-out mark of a batch at once (`TopK.hit`, decided without
ranking whole contexts).

A context's bullets are the union of its words' parts: for each word, the bullets where it
is a token, a substring of one, or a tag (`TopK.part`). At a team's year a context holds
thousands of bullets, and the marked bullet is in a candidate's top k when fewer than k of
them rank before it. The decision needs far fewer:

- from each part, its `TOP` bullets by an upper bound of their score over the batch
  (`View.bounds`, any candidate) are scored exactly, at the mark's moment;
- every other bullet of the part scores no more than the part's largest bound among the
  rest (per candidate, the marked bullet's own left out), so its final score is at most the
  context's largest relevance x max(min_confidence, that bound);
- a candidate is decided when k of the scored bullets rank before the marked one, or when
  that bound stays below its final score; the marks left undecided are looked at again with
  more bullets per part (`MORE`), then (few) ranked whole (`TopK.hit_at`).

All of it with arrays over every (mark, bullet) pair of the batch. A relevance is counts of
each kind of match x whole points, exact however summed; with other points (a candidates
file) the marks are ranked whole.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from .engine import DEPRECATED

if TYPE_CHECKING:
    from .batch import View
    from .topk import TopK

TOP, MORE = 16, 256  # bullets of a part scored, then for the marks left undecided
MARGIN = 1.0 + 1e-9  # on a bound, for the last bits of a decay factor
SMALL_PART = 64  # parts this small are looked up by key, larger ones by a mask
NONE = np.zeros(0, dtype=np.intp)


class _Parts:
    """The parts a batch's contexts use: who holds whom, and their bullets by bound."""

    def __init__(self, top: TopK, view: View, used: np.ndarray) -> None:
        eng = top.eng
        self.top, self.bounds = top, view.bounds()
        self.most = self.bounds.max(axis=1)
        n = len(self.most)
        self.n = n
        # each bullet's list (rule, anti-pattern, deprecated) at the batch's start, 3 if not
        # valid then, 4 if that changes in the batch (it is then listed for every list)
        self.state = np.where(eng.valid, np.where(eng.mat == DEPRECATED, 2, eng.anti), 3)
        self.state[view.flagged] = 4
        members = top.parts
        sizes = np.array([len(members[p]) for p in used.tolist()], dtype=np.int64)
        self.row = np.full(len(members), -1, dtype=np.intp)  # a large part's mask row
        big = used[sizes > SMALL_PART]
        self.row[big] = np.arange(len(big))
        self.masks = np.zeros((len(big), n), dtype=bool)
        for row, p in enumerate(big.tolist()):
            self.masks[row, members[p]] = True
        small = used[sizes <= SMALL_PART].tolist()
        keys = [p * n + members[p].astype(np.int64) for p in small]
        self.keys = np.sort(np.concatenate(keys)) if keys else np.zeros(0, dtype=np.int64)
        self.lists: dict[tuple[int, int, int], tuple[np.ndarray, ...]] = {}

    def holds(self, pid: np.ndarray, col: np.ndarray) -> np.ndarray:
        """Whether part `pid` (-1: none) holds bullet `col`, pair by pair."""
        out = np.zeros(len(col), dtype=bool)
        if not len(self.row):  # no part in the batch's contexts: every pid is -1
            return out
        row = np.where(pid >= 0, self.row[np.maximum(pid, 0)], -1)
        big = row >= 0
        if big.any():
            out[big] = self.masks[row[big], col[big]]
        small = (pid >= 0) & ~big
        if small.any() and len(self.keys):
            key = pid[small].astype(np.int64) * self.n + col[small]
            at = np.minimum(np.searchsorted(self.keys, key), len(self.keys) - 1)
            out[small] = self.keys[at] == key
        return out

    def listed(self, pid: int, size: int, kind: int) -> tuple[np.ndarray, ...]:
        """Of the part's bullets in list `kind` (or changing in the batch): the `size` of
        largest bound; per candidate, the largest bound among the rest, its bullet, and the
        second largest (-inf where none)."""
        got = self.lists.get((pid, size, kind))
        if got is None:
            members = self.top.parts[pid]
            state = self.state[members]
            members = members[(state == kind) | (state == 4)]
            c = self.bounds.shape[1]
            if len(members) <= size:
                none = np.full(c, -np.inf)
                got = (members, none, np.full(c, -1, dtype=np.intp), none)
            else:
                split = np.argpartition(-self.most[members], size - 1)
                first, rest = members[split[:size]], members[split[size:]]
                values = self.bounds[rest]
                arg = values.argmax(axis=0)
                top1 = values[arg, np.arange(c)]
                values[arg, np.arange(c)] = -np.inf
                got = (first, top1, rest[arg], values.max(axis=0))
            self.lists[(pid, size, kind)] = got
        return got


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
    parts = _Parts(top, view, used)
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
    for size in (TOP, MORE):
        rows = np.flatnonzero(open_)
        if not len(rows):
            return out
        beat = _beaten(top, view, parts, size, rows, mark)
        rest = _rest(parts, size, rows, mark, most, eng.min_conf)
        decided = ((beat >= k) | (rest < fb[rows]) | ~ok_b[rows]).all(axis=1)
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


def _code(parts: _Parts, pid: np.ndarray, weight: np.ndarray, h: np.ndarray,
          col: np.ndarray) -> np.ndarray:  # fmt: skip
    """Each pair's bullet's code in its mark's context: its counts of each kind of match,
    as digits (0: not in the context)."""
    code = np.zeros(len(col), dtype=np.int64)
    for s in range(pid.shape[1]):
        code += parts.holds(pid[h, s], col) * weight[h, s]
    return code


def _relevance(top: TopK, code: np.ndarray, base: np.ndarray) -> np.ndarray:
    """(len(code), c): counts of exact, substring and tag matches x the points."""
    counts = np.stack([code // base**j % base for j in range(3)], axis=1).astype(np.float64)
    out: np.ndarray = counts @ top.eng.points.T
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


def _beaten(top: TopK, view: View, parts: _Parts, size: int, rows: np.ndarray,
            m: _Marks) -> np.ndarray:  # fmt: skip
    """For the marks `rows`, per candidate: how many of their parts' `size` bullets of
    largest bound rank before the marked bullet (in its list, valid at the moment)."""
    eng, c = top.eng, len(top.eng.harm)
    width = m.pid.shape[1]
    kinds = np.repeat(m.list_b[rows], width).tolist()
    got = [parts.listed(p, size, x)[0] if p >= 0 else NONE
           for p, x in zip(m.pid[rows].reshape(-1).tolist(), kinds, strict=True)]  # fmt: skip
    lengths = np.array([len(g) for g in got], dtype=np.intp)
    h = np.repeat(np.repeat(rows, width), lengths)
    j = np.concatenate(got).astype(np.intp) if got else np.zeros(0, dtype=np.intp)
    _, first = np.unique(h.astype(np.int64) * parts.n + j, return_index=True)  # each pair once
    h, j = h[first], j[first]
    keep = j != m.b[h]
    h, j = h[keep], j[keep]
    r = _relevance(top, _code(parts, m.pid, m.weight, h, j), m.base[h])
    valid, mat = view.flags(j, m.order[h])
    sel = valid & (np.where(mat == DEPRECATED, 2, eng.anti[j]) == m.list_b[h])
    h, j, r = h[sel], j[sel], r[sel]
    final = r * np.maximum(
        eng.min_conf, view.scaled_at(j, m.order[h]) * view.factors(j, m.moment[h])
    )
    final[r < eng.min_rel] = -np.inf
    f_b, r_b = m.fb[h], m.rb[h]
    before = final > f_b
    tied = final == f_b
    if tied.any():
        earlier = (eng.id_rank[j] < eng.id_rank[m.b[h]])[:, None]
        before |= tied & ((r > r_b) | ((r == r_b) & earlier))
    at = np.searchsorted(rows, h)
    out = np.zeros((len(rows), c))
    for x in range(c):
        out[:, x] = np.bincount(at, before[:, x], minlength=len(rows))
    return out


def _rest(parts: _Parts, size: int, rows: np.ndarray, m: _Marks, most: np.ndarray,
          min_conf: np.ndarray) -> np.ndarray:  # fmt: skip
    """For the marks `rows`, per candidate: a bound of the final score of every bullet of
    their contexts not among the `size` looked at (-inf: there is none)."""
    c = len(min_conf)
    pid = m.pid[rows]
    key = np.where(pid >= 0, pid * 3 + m.list_b[rows][:, None], -1)  # (part, list)
    keys, slot = np.unique(key, return_inverse=True)
    slot = slot.reshape(key.shape)
    top1 = np.full((len(keys), c), -np.inf)  # (a key -1: no part, left at -inf)
    second = np.full((len(keys), c), -np.inf)
    arg = np.full((len(keys), c), -1, dtype=np.intp)
    for i, q in enumerate(keys.tolist()):
        if q >= 0:
            _, top1[i], arg[i], second[i] = parts.listed(q // 3, size, q % 3)
    own = arg[slot] == m.b[rows][:, None, None]
    bound = np.where(own, second[slot], top1[slot])  # (marks, slots, c)
    with np.errstate(invalid="ignore"):
        final = most[rows][:, None, :] * np.maximum(min_conf, bound * MARGIN)
    final[np.isneginf(bound)] = -np.inf
    out: np.ndarray = final.max(axis=1)
    return out
