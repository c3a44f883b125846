"""Many moments of the replay at once, with array operations (the fast path of `replay`).

Between two moments the engine folds the marks of the earlier one and applies what the
logs say happened (a bullet created or retired, a maturity change). Done a mark at a time
that is a dozen small numpy calls per mark; a `Batch` collects a range of moments and does
the same arithmetic for all of them at once:

- every fold is an increment of its bullet's (and its successors') sums, every maturity
  change a reset of the scaled sum (`Engine.set_maturity`); each bullet's operations, in
  the replay's order, are summed with `np.cumsum`, which adds in order, so every sum is the
  double the mark-at-a-time engine computes;
- the state after each operation is kept (`View`), so the view at any moment of the range
  is a look-up: the scores just before each mark, and what `TopK` asks of a moment.

A range holds no lineage edge, no mark dated after its recording and no change of the
reference time (`replay` applies those one moment at a time with the engine), so the
successors of each bullet stay as they are and no mark is pending.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import numpy as np

from ..core.scoring import carry

if TYPE_CHECKING:
    from .engine import Engine

BEFORE, FOLDS, AFTER = range(3)  # phases of a moment's transition (`replay`)
VALID, MATURITY = 0, 1


def _segments(start: np.ndarray, incs: np.ndarray, row: np.ndarray, pos: np.ndarray) -> np.ndarray:
    """The running sum after each increment: row r starts at `start[r]` and adds, in order,
    the increments whose `row` is r (`pos`: 1, 2, ... within the row). `np.cumsum` adds in
    order: every value is the double a loop adding one at a time gives."""
    out = np.empty_like(incs)
    if not len(incs):
        return out
    length = np.bincount(row, minlength=len(start))
    bucket = np.zeros(len(start), dtype=np.intp)
    has = length > 0
    bucket[has] = np.ceil(np.log2(length[has])).astype(np.intp)
    for b in np.unique(bucket[has]).tolist():
        rows = np.flatnonzero(has & (bucket == b))
        where = np.full(len(start), -1, dtype=np.intp)
        where[rows] = np.arange(len(rows))
        take = np.flatnonzero(where[row] >= 0)
        grid = np.zeros((len(rows), (1 << b) + 1, incs.shape[1]))
        grid[:, 0] = start[rows]
        grid[where[row[take]], pos[take]] = incs[take]
        np.cumsum(grid, axis=1, out=grid)
        out[take] = grid[where[row[take]], pos[take]]
    return out


def _runs(keys: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(run index of each element, position within its run from 1) of sorted `keys`."""
    first = np.ones(len(keys), dtype=bool)
    first[1:] = keys[1:] != keys[:-1]
    run = np.cumsum(first) - 1
    starts = np.flatnonzero(first)
    return run, np.arange(len(keys)) - starts[run] + 1


def each_row(moment: Any, rows: int) -> np.ndarray:
    """The moment of each of `rows` rows: one for all, or one each (an array)."""
    got: np.ndarray = np.broadcast_to(np.asarray(moment, dtype=np.int64), (rows,))
    return got


@dataclass
class Batch:
    """A range of moments: their transitions' folds and applies, and the marks read."""

    now: list[float] = field(default_factory=list)  # per moment: the view's moment
    # (moment, page, s, e): the marks s:e of a page folded at a moment (or one each, an array)
    folds: list[tuple[Any, Any, int, int]] = field(default_factory=list)
    applies: list[tuple[int, int, int, int, int]] = field(default_factory=list)
    # (moment, page, s, e, the page's first row, held out): the marks read at a moment (or
    # one each, an array)
    reads: list[tuple[Any, Any, int, int, int, bool]] = field(default_factory=list)
    marks: int = 0  # marks read

    def __len__(self) -> int:
        return len(self.now)


class View:
    """The state after each operation of a batch, looked up by bullet and moment."""

    def __init__(self, eng: Engine, batch: Batch) -> None:
        self.eng = eng
        self.now = np.array(batch.now)
        self.fc = carry(self.now[:, None], eng.t0, eng.hl_c[None, :])  # (moments, c)
        self.span = 1 + max(len(batch.applies), sum(e - s for _, _, s, e in batch.folds))
        self._fold(batch)
        self._flags(batch)

    def order(self, moment: np.ndarray | int) -> Any:
        """Where the marks of `moment` are read: after its transition, before the next."""
        return (np.asarray(moment, dtype=np.int64) + 1) * 3 * self.span

    # ------------------------------------------------------------- the sums
    def _fold(self, batch: Batch) -> None:
        eng, span = self.eng, self.span
        parts = [(m, p, s, e) for m, p, s, e in batch.folds if e > s]
        cols = np.concatenate([p.cols[s:e] for _, p, s, e in parts]) if parts else np.zeros(0, int)
        self.fold_cols = cols
        moment = np.concatenate([each_row(m, e - s) for m, _, s, e in parts]) \
            if parts else np.zeros(0, np.int64)  # fmt: skip
        helpful = (
            np.concatenate([p.helpful[s:e] for _, p, s, e in parts]) if parts else np.zeros(0, bool)
        )
        at = np.concatenate([p.at[s:e] for _, p, s, e in parts]) if parts else np.zeros(0)
        w = np.concatenate([p.weight[s:e] for _, p, s, e in parts]) if parts else np.zeros(0)
        self.fold_at, self.fold_w, self.fold_helpful = at, w, helpful
        # each fold adds to its bullet and to every successor that inherits its evidence
        event = np.arange(len(cols))
        targets, events = [cols], [event]
        for i in np.flatnonzero(eng.has_desc[cols]).tolist():
            d = sorted(eng.desc[int(cols[i])])
            targets.append(np.array(d, dtype=np.intp))
            events.append(np.full(len(d), i))
        x = np.concatenate(targets)
        ev = np.concatenate(events)
        c = len(eng.hl_c)
        if len(ev):
            sign = np.where(helpful[ev, None], 1.0, -eng.harm[None, :])
            v = w[ev, None] * sign
            adds = v * carry(eng.t0, at[ev, None], eng.hl[x])
        else:
            adds = np.zeros((0, c))
        order = (moment[ev] * 3 + FOLDS) * span + ev
        # maturity changes reset the scaled sum: operations with no increment of net
        mats = [(m, ph, i, col, code) for i, (m, ph, what, col, code) in enumerate(batch.applies)
                if what == MATURITY]  # fmt: skip
        m_x = np.array([a[3] for a in mats], dtype=np.intp)
        m_order = np.array([(a[0] * 3 + a[1]) * span + a[2] for a in mats], dtype=np.int64)
        m_code = np.array([a[4] for a in mats], dtype=np.intp)
        n_f = len(x)
        x_all = np.concatenate([x, m_x])
        o_all = np.concatenate([order, m_order])
        inc = np.concatenate([adds, np.zeros((len(m_x), c))])
        code_all = np.concatenate([np.full(n_f, -1, dtype=np.intp), m_code])
        srt = np.lexsort((o_all, x_all))
        x_s, o_s, inc_s, code_s = x_all[srt], o_all[srt], inc[srt], code_all[srt]
        # net: every operation of a bullet in order (a maturity change adds nothing)
        run, pos = _runs(x_s)
        bullets = x_s[pos == 1]
        net = _segments(eng.net[bullets], inc_s, run, pos)
        # scaled: restarts at each maturity change (net x the new multiplier)
        is_mat = code_s >= 0
        seg_first = (pos == 1) | is_mat
        seg = np.cumsum(seg_first) - 1
        seg_at = np.flatnonzero(seg_first)
        seg_code = np.where(is_mat[seg_at], code_s[seg_at], eng.mat[x_s[seg_at]])
        seg_start = np.where(
            is_mat[seg_at, None], net[seg_at] * eng.mult[seg_code], eng.scaled[x_s[seg_at]]
        )
        grow = ~is_mat
        scaled = np.empty_like(net)
        scaled[is_mat] = seg_start[seg[is_mat]]
        g_seg = seg[grow]
        # a fold's place in its segment (a segment that starts at a maturity change holds
        # it first: its folds come from the second place on)
        g_pos = np.arange(len(seg))[grow] - seg_at[g_seg] + ~is_mat[seg_at[g_seg]]
        scaled[grow] = _segments(seg_start, inc_s[grow] * eng.mult[seg_code[g_seg]], g_seg, g_pos)
        self.x, self.key, self.scaled, self.net = x_s, x_s * self._stride() + o_s, scaled, net
        last = np.ones(len(x_s), dtype=bool)
        last[:-1] = x_s[1:] != x_s[:-1]
        self.final = (x_s[last], net[last], scaled[last])
        first = pos == 1
        by_first = np.argsort(o_s[first], kind="stable")
        self.touched = x_s[first][by_first]  # bullets by the order of their first change
        self.touched_at = o_s[first][by_first]

    def _stride(self) -> int:
        return (len(self.now) + 2) * 3 * self.span

    # ------------------------------------------------------------- validity, maturity
    def _flags(self, batch: Batch) -> None:
        eng, span = self.eng, self.span
        self.flag_ops: dict[int, list[tuple[int, int, int]]] = {}  # bullet -> (order, what, value)
        for i, (m, ph, what, col, value) in enumerate(batch.applies):
            self.flag_ops.setdefault(col, []).append(((m * 3 + ph) * span + i, what, value))
        self.final_flags = {col: self._flag(col, self._stride()) for col in self.flag_ops}
        # when each bullet first changes in the batch (sums, validity or maturity)
        first = np.full(len(eng.mat), np.iinfo(np.int64).max, dtype=np.int64)
        first[self.touched] = self.touched_at
        self.flagged = np.zeros(len(eng.mat), dtype=bool)  # validity or maturity changes
        for col, ops in self.flag_ops.items():
            first[col] = min(first[col], ops[0][0])
            self.flagged[col] = True
        self.first_change = first

    def _flag(self, col: int, order: int) -> tuple[bool, int]:
        valid, mat = bool(self.eng.valid[col]), int(self.eng.mat[col])
        for at, what, value in self.flag_ops.get(col, ()):
            if at >= order:
                break
            if what == VALID:
                valid = bool(value)
            else:
                mat = value
        return valid, mat

    def flags(self, cols: np.ndarray, order: Any) -> tuple[np.ndarray, np.ndarray]:
        """(valid, maturity code) of each bullet just before `order` (one or per col)."""
        valid, mat = self.eng.valid[cols], self.eng.mat[cols]
        if self.flag_ops:
            at = np.broadcast_to(order, cols.shape)
            for i in np.flatnonzero(self.flagged[cols]).tolist():
                valid[i], mat[i] = self._flag(int(cols[i]), int(at[i]))
        return valid, mat

    def bounds(self) -> np.ndarray:
        """(bullets, c): an upper bound of each bullet's effective score, per candidate, at
        every moment of the batch: the largest of its sums (at the start, after each change)
        times the decay factor of the first moment they are seen at (later ones are
        smaller), and 0. A score changes with its sums only, or decays."""
        eng = self.eng
        n = len(eng.mat)
        out: np.ndarray = np.maximum(
            eng.scaled * self.factors(np.arange(n), np.zeros(n, np.intp)), 0.0
        )
        if len(self.x):
            moment = (self.key % self._stride()) // (3 * self.span)
            seen = self.scaled * self.factors(self.x, moment)
            starts = np.flatnonzero(np.r_[True, self.x[1:] != self.x[:-1]])
            most = np.maximum.reduceat(seen, starts, axis=0)
            out[self.x[starts]] = np.maximum(out[self.x[starts]], most)
        return out

    # ------------------------------------------------------------- look-ups
    def scaled_at(self, cols: np.ndarray, order: Any) -> np.ndarray:
        """(len(cols), c): each bullet's scaled sums just before `order` (one or per col)."""
        out: np.ndarray = self.eng.scaled[cols]
        if not len(self.key):
            return out
        key = cols.astype(np.int64) * self._stride() + order
        i = np.searchsorted(self.key, key) - 1
        found = (i >= 0) & (self.x[np.maximum(i, 0)] == cols)
        if found.any():
            out[found] = self.scaled[i[found]]
        return out

    def factors(self, cols: np.ndarray, moment: np.ndarray) -> np.ndarray:
        """(len(cols), c): the decay factor of each bullet at each (its) moment."""
        eng = self.eng
        f: np.ndarray = self.fc[moment]
        own = eng.own[cols]
        if own.any():
            f[own] = carry(self.now[moment[own], None], eng.t0, eng.hl[cols[own]])
        return f

    def commit(self) -> None:
        """Leave the engine as it is after the batch's last moment."""
        eng = self.eng
        bullets, net, scaled = self.final
        eng.net[bullets] = net
        eng.scaled[bullets] = scaled
        for col, (valid, mat) in self.final_flags.items():
            eng.valid[col] = valid
            eng.mat[col] = mat
        if len(self.now):
            eng.now = float(self.now[-1])
            eng.fc = self.fc[-1].copy()
        keep = eng.keep
        if keep:
            for i in np.flatnonzero(np.isin(self.fold_cols, list(keep))).tolist():
                eng.folded[int(self.fold_cols[i])].append(
                    (float(self.fold_at[i]), bool(self.fold_helpful[i]), float(self.fold_w[i]))
                )
