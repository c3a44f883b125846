"""The replay's view of the playbook at one moment, for every candidate at once.

The view is the core's `as_of` view (SPEC §6, §8): at the moment a mark was recorded, the
bullets valid then, only the feedback recorded before it, lineage as it stood, maturity as
the maturity log had it, decay computed then. It is kept incrementally, for all candidates
at once, with the exponential-decay identity of SPEC §4's scale note:

    Σ w·0.5^((now − tᵢ)/h) = 0.5^((now − T₀)/h) · Σ w·0.5^((T₀ − tᵢ)/h)

so each bullet holds one sum per candidate, referenced to a shared T₀; folding a mark is
O(1) per bullet it touches (the bullet and the successors that inherit its evidence), and
reading a score is one multiplication. T₀ moves forward before the sums could overflow.

Maturity is held at its logged value for every candidate (the maturity log records human
deprecations, restores and pins, which no policy replay can re-derive), so a candidate
changes the decay, the harm weight, the maturity multipliers and the recall constants, and
the current policy's view is exactly what `store.score(id, at=)` and `recall(as_of=)` say.

Memory is bounded by the playbook, not by the log: a bullet's own marks are kept (to hand
them to a successor) only when a lineage edge of the log will ask for them.
"""

from __future__ import annotations

import heapq
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

import numpy as np

from ..core.scoring import carry
from ..core.terms import MATURITIES

if TYPE_CHECKING:
    from numpy import ndarray

    from ..core.policy import Policy
    from ..store.log_replay import LogBullet

DEPRECATED = 3
REBASE_HALF_LIVES = 400.0  # 2**400 is far from float overflow (2**1024)


class Engine:
    """Every candidate's view of every bullet, moved forward one moment at a time."""

    def __init__(
        self, bullets: Sequence[LogBullet], policies: Sequence[Policy], keep: set[int]
    ) -> None:
        n, c = len(bullets), len(policies)
        self.col = {b.id: i for i, b in enumerate(bullets)}
        self.seq_col = {b.seq: i for i, b in enumerate(bullets)}
        hl = np.array([p.half_life_days for p in policies], dtype=np.float64)
        self.hl = np.tile(hl, (n, 1))  # (bullets, candidates): a bullet's own half-life wins
        for i, b in enumerate(bullets):
            if b.half_life_days:
                self.hl[i, :] = float(b.half_life_days)
        self.min_hl = float(self.hl.min()) if n else 1.0
        self.harm = np.array([p.harm_multiplier for p in policies], dtype=np.float64)
        self.mult = np.array([[p.multiplier(m) for p in policies] for m in MATURITIES])
        self.points = np.array(
            [[p.exact_points, p.substring_points, p.tag_points] for p in policies]
        )  # (candidates, 3)
        # whole points: a relevance (a few counts x points) is a whole number, exact
        self.whole_points = bool((self.points == np.round(self.points)).all()) and bool(
            (np.abs(self.points) < 2**40).all()
        )
        self.min_conf = np.array([p.min_confidence for p in policies], dtype=np.float64)
        self.min_rel = np.array([p.min_relevance for p in policies], dtype=np.float64)
        code = {m: i for i, m in enumerate(MATURITIES)}
        self.mat = np.array([code[b.maturity] for b in bullets], dtype=np.int8)
        self.code = code
        self.anti = np.array([b.type == "anti-pattern" for b in bullets], dtype=np.int8)
        self.valid = np.zeros(n, dtype=bool)
        order = sorted(range(n), key=lambda i: bullets[i].id)
        self.id_rank = np.empty(n, dtype=np.int64)
        self.id_rank[order] = np.arange(n)
        # Per bullet and candidate, the harm-weighted net H − w·X referenced to t0, and the
        # same for marks dated in the future (they count at full weight until their date).
        self.sign = (-self.harm, np.ones(c))  # by `helpful`
        self.net = np.zeros((n, c))
        self.scaled = np.zeros((n, c))  # net x the maturity multiplier: what recall ranks by
        self.pend = np.zeros((n, c))
        self.pend_own = np.zeros((n, c))
        self.n_pending = 0
        self.pending: list[tuple[float, int, int, bool, float]] = []
        # A bullet's own marks (at, helpful, weight), for the bullets in `keep` only: those a
        # lineage edge will hand to a successor (the edges' `dst`); nobody asks for others.
        self.keep = keep
        self.folded: dict[int, list[tuple[float, bool, float]]] = {b: [] for b in keep}
        self.anc: list[set[int]] = [set() for _ in range(n)]
        self.desc: list[set[int]] = [set() for _ in range(n)]
        self.has_desc = np.zeros(n, dtype=bool)
        self.t0 = 0.0
        self.hl_c = hl
        self.own = np.array([bool(b.half_life_days) for b in bullets], dtype=bool)
        self.now = float("nan")
        self.fc = np.ones(c)  # 0.5 ** ((now − t0) / half-life) per candidate, at `now`

    # ------------------------------------------------------------------ folding
    def _add(self, b: int, helpful: bool, at: float, w: float) -> None:
        """Fold one event of bullet `b` into b and every successor that inherits it."""
        if b in self.keep:
            self.folded[b].append((at, helpful, w))
        v = w * self.sign[helpful]
        if self.desc[b]:
            cols = [b, *self.desc[b]]
            add = v * carry(self.t0, at, self.hl[cols])
            self.net[cols] += add
            self.scaled[cols] += add * self.mult[self.mat[cols]]
        else:
            add = v * carry(self.t0, at, self.hl[b])
            self.net[b] += add
            self.scaled[b] += add * self.mult[self.mat[b]]

    def fold(self, b: int, helpful: bool, at: float, recorded: float, key: int, w: float) -> None:
        """Fold the mark `key` of bullet `b` (observed `at`, recorded `recorded`, in days)."""
        if at > recorded:
            # Observed in the future of its recording: it counts at age 0 (full weight)
            # until a view reaches its time (SPEC §4: future events have age 0).
            heapq.heappush(self.pending, (at, key, b, helpful, w))
            v = w * self.sign[helpful]
            self.pend_own[b] += v
            for x in (b, *self.desc[b]):
                self.pend[x] += v
            self.n_pending += 1
            return
        self._add(b, helpful, at, w)

    def flush(self, now: float) -> None:
        while self.pending and self.pending[0][0] <= now:
            at, _, b, helpful, w = heapq.heappop(self.pending)
            v = w * self.sign[helpful]
            self.pend_own[b] -= v
            for x in (b, *self.desc[b]):
                self.pend[x] -= v
            self.n_pending -= 1
            self._add(b, helpful, at, w)

    def supersede(self, src: str, dst: str) -> None:
        """`src` now inherits the evidence of `dst` and of everything `dst` inherits."""
        s, a = self.col[src], self.col[dst]
        members = {a} | self.anc[a]
        for x in (s, *self.desc[s]):
            for m in sorted(members - self.anc[x] - {x}):
                self.anc[x].add(m)
                self.desc[m].add(x)
                self.has_desc[m] = True
                for at, helpful, w in self.folded[m]:
                    add = w * self.sign[helpful] * carry(self.t0, at, self.hl[x])
                    self.net[x] += add
                    self.scaled[x] += add * self.mult[self.mat[x]]
                self.pend[x] += self.pend_own[m]

    def set_maturity(self, b: int, code: int) -> None:
        self.mat[b] = code
        self.scaled[b] = self.net[b] * self.mult[code]

    def at(self, now: float) -> None:
        """Move the view to `now`: fold marks whose date has come, keep the sums bounded."""
        self.flush(now)
        if (now - self.t0) / self.min_hl >= REBASE_HALF_LIVES:
            factor = carry(now, self.t0, self.hl)
            self.net *= factor
            self.scaled *= factor
            self.t0 = now
        self.now = now
        self.fc = carry(now, self.t0, self.hl_c)

    # ------------------------------------------------------------------ views
    def effective(self, b: int) -> np.ndarray:
        """Bullet `b`'s effective score at the view's moment, per candidate."""
        f = self.fc if not self.own[b] else carry(self.now, self.t0, self.hl[b])
        got: np.ndarray
        if self.n_pending:
            got = (self.net[b] * f + self.pend[b]) * self.mult[self.mat[b]] + 0.0
        else:
            got = self.scaled[b] * f + 0.0
        return got

    def effective_many(self, cols: np.ndarray) -> np.ndarray:
        """(len(cols), candidates): the same for many bullets (-0.0 may stay -0.0)."""
        f: Any = self.fc
        own = self.own[cols]
        if own.any():
            f = np.broadcast_to(self.fc, (len(cols), len(self.fc))).copy()
            f[own] = carry(self.now, self.t0, self.hl[cols[own]])
        out: ndarray = self.scaled[cols] * f
        if self.n_pending:
            out += self.pend[cols] * self.mult[self.mat[cols]]
        return out
