"""The replay as `playbook policy eval` computed it before it read the log a page at a time
(issue 31): the whole history in memory, a mark at a time, a query per context word. Kept
verbatim as the reference the paged, columnar replay must agree with to the last bit
(`tests/test_policy_eval_paged.py`); `reference_evaluate` is its statistics.
"""

from __future__ import annotations

import heapq
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import timedelta
from typing import TYPE_CHECKING, Any

import numpy as np

from playbook.core import scoring
from playbook.core.scoring import carry
from playbook.core.terms import MATURITIES
from playbook.core.text import query_tokens
from playbook.store import parse_iso

if TYPE_CHECKING:
    from numpy import ndarray  # (a method's `np` is the module it imported)

    from playbook.core.policy import Policy
    from playbook.store.log_replay import History, LogEvent

DEPRECATED = 3
REBASE_HALF_LIVES = 400.0  # 2**400 is far from float overflow (2**1024)
ONE_US = timedelta(microseconds=1)
# What changes the view, in the order applied when several share a timestamp.
VALID_FROM, MATURITY, EDGE, EVENT, VALID_TO = range(5)

Matches = Callable[[str], tuple[list[int], list[int], list[int]]]
Progress = Callable[[int, int], None]


@dataclass(frozen=True)
class Replay:
    """Per event (in replay order) and per candidate: the view just before the event."""

    events: list[LogEvent]
    y: np.ndarray  # 1 helpful, 0 harmful
    heldout: np.ndarray  # bool: recorded at or after the split
    scores: np.ndarray  # (events, candidates): effective score just before the event
    ranked: np.ndarray  # bool: held out, with a context that has query words
    hits: np.ndarray  # (events, candidates) bool: in the candidate's top-k recall


def _days(cache: dict[str, float], text: str) -> float:
    value = cache.get(text)
    if value is None:
        value = cache[text] = scoring.days(parse_iso(text))
    return value


class _Engine:
    def __init__(
        self, history: History, policies: Sequence[Policy], k: int, matches: Matches
    ) -> None:
        self.np = np
        self.k = k
        self.matches = matches
        bullets = history.bullets
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
        self.sign = {"helpful": np.ones(c), "harmful": -self.harm}
        self.net = np.zeros((n, c))
        self.scaled = np.zeros((n, c))  # net x the maturity multiplier: what recall ranks by
        self.pend = np.zeros((n, c))
        self.pend_own = np.zeros((n, c))
        self.n_pending = 0
        self.pending: list[tuple[float, int, int, str, float]] = []
        self.folded: list[list[tuple[float, str, float]]] = [[] for _ in range(n)]
        self.anc: list[set[int]] = [set() for _ in range(n)]
        self.desc: list[set[int]] = [set() for _ in range(n)]
        self.t0 = 0.0
        self.hl_c = hl
        self.own = np.array([bool(b.half_life_days) for b in bullets], dtype=bool)
        self.now = float("nan")
        self.fc = np.ones(c)  # 0.5 ** ((now − t0) / half-life) per candidate, at `now`
        self.days: dict[str, float] = {}
        self.token_cache: dict[str, tuple[np.ndarray, np.ndarray, np.ndarray]] = {}
        self.query_cache: dict[str, tuple[np.ndarray, np.ndarray, bool] | None] = {}

    # ------------------------------------------------------------------ folding
    def _add(self, b: int, kind: str, at: float, w: float) -> None:
        """Fold one event of bullet `b` into b and every successor that inherits it."""
        self.folded[b].append((at, kind, w))
        v = w * self.sign[kind]
        if self.desc[b]:
            cols = [b, *self.desc[b]]
            add = v * carry(self.t0, at, self.hl[cols])
            self.net[cols] += add
            self.scaled[cols] += add * self.mult[self.mat[cols]]
        else:
            add = v * carry(self.t0, at, self.hl[b])
            self.net[b] += add
            self.scaled[b] += add * self.mult[self.mat[b]]

    def fold(self, ev: LogEvent) -> None:
        b = self.col[ev.bullet_id]
        at = _days(self.days, ev.at)
        if at > _days(self.days, ev.recorded_at):
            # Observed in the future of its recording: it counts at age 0 (full weight)
            # until a view reaches its time (SPEC §4: future events have age 0).
            heapq.heappush(self.pending, (at, ev.id, b, ev.kind, ev.weight))
            v = ev.weight * self.sign[ev.kind]
            self.pend_own[b] += v
            for x in (b, *self.desc[b]):
                self.pend[x] += v
            self.n_pending += 1
            return
        self._add(b, ev.kind, at, ev.weight)

    def flush(self, now: float) -> None:
        while self.pending and self.pending[0][0] <= now:
            at, _, b, kind, w = heapq.heappop(self.pending)
            v = w * self.sign[kind]
            self.pend_own[b] -= v
            for x in (b, *self.desc[b]):
                self.pend[x] -= v
            self.n_pending -= 1
            self._add(b, kind, at, w)

    def supersede(self, src: str, dst: str) -> None:
        """`src` now inherits the evidence of `dst` and of everything `dst` inherits."""
        s, a = self.col[src], self.col[dst]
        members = {a} | self.anc[a]
        for x in (s, *self.desc[s]):
            for m in sorted(members - self.anc[x] - {x}):
                self.anc[x].add(m)
                self.desc[m].add(x)
                for at, kind, w in self.folded[m]:
                    add = w * self.sign[kind] * carry(self.t0, at, self.hl[x])
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
        np = self.np
        f: Any = self.fc
        own = self.own[cols]
        if own.any():
            f = np.broadcast_to(self.fc, (len(cols), len(self.fc))).copy()
            f[own] = carry(self.now, self.t0, self.hl[cols[own]])
        out: ndarray = self.scaled[cols] * f
        if self.n_pending:
            out += self.pend[cols] * self.mult[self.mat[cols]]
        return out

    def _token(self, token: str) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        got = self.token_cache.get(token)
        if got is None:
            np = self.np
            exact, substring, tag = (
                np.array([self.seq_col[s] for s in seqs if s in self.seq_col], dtype=np.intp)
                for seqs in self.matches(token)
            )
            got = self.token_cache[token] = (exact, substring, tag)
        return got

    def query(self, text: str) -> tuple[np.ndarray, np.ndarray, bool] | None:
        """(columns, relevance (m, candidates), whether every one passes the relevance
        floor) of the bullets a context's words match (keyword points: exact, substring
        and tag hits), or None when it has no words."""
        if text in self.query_cache:
            return self.query_cache[text]
        np = self.np
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
            rel = counts.astype(np.float64) @ self.points.T
            out = (uniq, rel, bool((rel >= self.min_rel).all()))
        self.query_cache[text] = out
        return out

    def hit(self, b: int, q: tuple[np.ndarray, np.ndarray, bool]) -> np.ndarray:
        """Whether bullet `b` is in each candidate's top-k recall for the query `q`: fewer
        than k bullets of its list rank before it by (final score, relevance, id)."""
        np = self.np
        cols, rel, all_relevant = q
        c = len(self.harm)
        j = int(np.searchsorted(cols, b))
        if j >= len(cols) or cols[j] != b or not self.valid[b]:
            none: ndarray = np.zeros(c, dtype=bool)
            return none  # not recallable for it: no keyword, or not valid
        mat = self.mat[cols]
        lists = np.where(mat == DEPRECATED, 2, self.anti[cols])
        sel = self.valid[cols] & (lists == lists[j])
        if not sel.all():  # compare within b's list, among the bullets valid now
            j = int(np.count_nonzero(sel[:j]))
            cols, rel = cols[sel], rel[sel]
        final = rel * np.maximum(self.min_conf, self.effective_many(cols))
        ok_b: Any = True
        if not all_relevant:
            ok = rel >= self.min_rel
            final[~ok] = -np.inf  # filtered out by relevance: ranks nowhere
            ok_b = ok[j]
        fb, rb = final[j], rel[j]
        rank = np.count_nonzero(final > fb, axis=0)
        tied = final == fb
        tied[j] = False
        if tied.any():
            earlier = (self.id_rank[cols] < self.id_rank[b])[:, None]
            rank += np.count_nonzero(tied & ((rel > rb) | ((rel == rb) & earlier)), axis=0)
        hits: ndarray = ok_b & (rank < self.k)
        return hits


def replay(
    history: History,
    policies: Sequence[Policy],
    *,
    split_at: str,
    k: int,
    matches: Matches,
    progress: Progress | None = None,
) -> Replay:
    """Walk the history once; for each event, every candidate's score of its bullet just
    before it, and for held-out events with a context, whether each candidate's recall
    would have put the bullet in its top `k`."""

    eng = _Engine(history, policies, k, matches)
    events = history.events
    n_ev, n_c = len(events), len(policies)
    scores = np.zeros((n_ev, n_c))
    hits = np.zeros((n_ev, n_c), dtype=bool)
    ranked = np.zeros(n_ev, dtype=bool)
    # Everything that changes the view, applied once its time is before the view's moment.
    applies: list[tuple[str, int, int, Any]] = []
    for b in history.bullets:
        applies.append((b.valid_from, VALID_FROM, b.seq, b.id))
        if b.valid_to:
            applies.append((b.valid_to, VALID_TO, b.seq, b.id))
    for m in history.maturity:
        applies.append((m.at, MATURITY, m.id, m))
    for e in history.supersedes:
        applies.append((e.at, EDGE, e.id, e))
    for ev in events:
        applies.append((ev.recorded_at, EVENT, ev.id, ev))
    applies.sort(key=lambda a: a[:3])
    if events:
        eng.t0 = _days(eng.days, events[0].recorded_at)
    ai, n_ap = 0, len(applies)
    step = max(1, n_ev // 100)
    i = 0
    while i < n_ev:
        t = events[i].recorded_at
        while ai < n_ap and applies[ai][0] < t:
            _apply(eng, applies[ai][1], applies[ai][3])
            ai += 1
        now = scoring.days(parse_iso(t) - ONE_US)  # as_of: just before the mark
        eng.at(now)
        held = t >= split_at
        while i < n_ev and events[i].recorded_at == t:
            ev = events[i]
            col = eng.col[ev.bullet_id]
            scores[i] = eng.effective(col)
            if held and ev.context:
                q = eng.query(ev.context)
                if q is not None:
                    ranked[i] = True
                    hits[i] = eng.hit(col, q)
            i += 1
            if progress is not None and i % step == 0:
                progress(i, n_ev)
    if progress is not None:
        progress(n_ev, n_ev)
    y = np.fromiter((e.kind == "helpful" for e in events), dtype=np.int8, count=n_ev)
    heldout = np.fromiter((e.recorded_at >= split_at for e in events), dtype=bool, count=n_ev)
    return Replay(list(events), y, heldout, scores, ranked, hits)


def _apply(eng: _Engine, what: int, item: Any) -> None:
    if what == EVENT:
        eng.fold(item)
    elif what in (VALID_FROM, VALID_TO):
        eng.valid[eng.col[item]] = what == VALID_FROM
    elif what == MATURITY:
        eng.set_maturity(eng.col[item.bullet_id], eng.code[item.maturity])
    else:
        eng.supersede(item.src, item.dst)
