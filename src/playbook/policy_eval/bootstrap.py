"""Paired, session-clustered bootstrap intervals (seed 001's registered comparison).

Marks of one session are not independent (one agent, one task, one day), so the bootstrap
resamples *sessions* with replacement and keeps every mark of a drawn session. The same
resampled sessions serve every candidate, so each difference is paired. The interval is
the 2.5th..97.5th percentile of the replicated difference; the minimum detectable effect
is 1.96 × its standard error (the bootstrap SD), seed 001's precision diagnostic: a true
difference smaller than that would usually not be told from zero with this much data.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from .metrics import placements

if TYPE_CHECKING:
    import numpy as np

REPLICATES = 2000
SEED = 18  # fixed (the number): the same log always gives the same report
Z95 = 1.959963984540054


@dataclass(frozen=True)
class Estimate:
    """One candidate on one metric, against the current policy."""

    value: float  # the candidate's metric on the held-out marks
    diff: float  # improvement over the current policy (positive: the candidate is better)
    lo: float  # 95 % interval of `diff`
    hi: float
    mde: float  # 1.96 x the standard error of `diff`
    events: int
    sessions: int

    def to_dict(self) -> dict[str, Any]:
        return {
            "value": self.value,
            "diff": self.diff,
            "interval": [self.lo, self.hi],
            "mde": self.mde,
            "events": self.events,
            "sessions": self.sessions,
        }


def session_index(keys: Sequence[str]) -> tuple[np.ndarray, int]:
    """Each mark's session as an index into the sorted distinct keys."""
    import numpy as np  # lazy: numpy, only while evaluating

    names = sorted(set(keys))
    where = {k: i for i, k in enumerate(names)}
    return np.fromiter((where[k] for k in keys), dtype=np.intp, count=len(keys)), len(names)


def resample(n_sessions: int, replicates: int = REPLICATES, seed: int = SEED) -> np.ndarray:
    """(replicates, sessions): how many times each session is drawn in each replicate."""
    import numpy as np  # lazy: numpy, only while evaluating

    rng = np.random.default_rng(seed)
    if n_sessions == 0:
        return np.zeros((replicates, 0), dtype=np.float32)
    # n draws with replacement per replicate, counted: a multinomial(n, 1/n each) sample
    draws = rng.integers(0, n_sessions, size=(replicates, n_sessions))
    draws += np.arange(replicates)[:, None] * n_sessions
    counts = np.bincount(draws.ravel(), minlength=replicates * n_sessions)
    # float32: counts are small integers (exact), and the replicates are matrix products
    return counts.reshape(replicates, n_sessions).astype(np.float32)


def _per_session(sess: np.ndarray, columns: list[np.ndarray], n_sessions: int) -> np.ndarray:
    """(sessions, columns): the sum of each column over each session's marks."""
    import numpy as np  # lazy: numpy, only while evaluating

    sums = [np.bincount(sess, col, minlength=n_sessions) for col in columns]
    return np.column_stack(sums).astype(np.float32) if sums else np.zeros((n_sessions, 0))


def _column(values: np.ndarray, c: int) -> np.ndarray:
    import numpy as np  # lazy: numpy, only while evaluating

    col: np.ndarray = values[:, c]
    return col.astype(np.float64) if col.dtype == np.bool_ else col


def _summarise(value: float, diff: float, reps: np.ndarray, events: int, sessions: int) -> Estimate:
    import numpy as np  # lazy: numpy, only while evaluating

    ok = reps[~np.isnan(reps)]
    if len(ok) < 2:
        nan = float("nan")
        return Estimate(value, diff, nan, nan, nan, events, sessions)
    lo, hi = np.quantile(ok, [0.025, 0.975])
    se = float(np.std(ok, ddof=1))
    return Estimate(value, diff, float(lo), float(hi), Z95 * se, events, sessions)


def mean_estimates(
    values: np.ndarray,
    mask: np.ndarray | None,
    session: np.ndarray,
    counts: np.ndarray,
    *,
    lower_is_better: bool = False,
) -> list[Estimate]:
    """Per candidate (column 0: the current policy), the mean of `values` over the marks in
    `mask` (None: every row), and its paired difference against column 0 with a
    session-bootstrap interval. Bools count as 0 and 1 (the same means, exactly: their sums
    are whole numbers), without a float copy of the whole."""
    import numpy as np  # lazy: numpy, only while evaluating

    v = values if mask is None else values[mask]
    sess = session if mask is None else session[mask]
    n_s = counts.shape[1]
    n = np.bincount(sess, minlength=n_s).astype(np.float32)
    events, sessions = len(v), int(np.count_nonzero(n))
    sign = -1.0 if lower_is_better else 1.0
    n_c = values.shape[1]
    if not events:
        nan = float("nan")
        return [Estimate(nan, nan, nan, nan, nan, 0, 0) for _ in range(n_c)]
    # (a float mean is numpy's own over the rows, whose order of addition it fixes)
    point = np.count_nonzero(v, axis=0) / events if v.dtype == np.bool_ else v.mean(axis=0)
    base = _column(v, 0)
    diffs = _per_session(sess, [sign * (_column(v, c) - base) for c in range(n_c)], n_s)
    with np.errstate(invalid="ignore", divide="ignore"):
        reps = (counts @ diffs) / (counts @ n)[:, None]  # (replicates, candidates)
    return [
        _summarise(float(point[c]), sign * float(point[c] - point[0]), reps[:, c], events,
                   sessions)
        for c in range(n_c)
    ]  # fmt: skip


def auc_estimates(
    scores: np.ndarray, y: np.ndarray, mask: np.ndarray, session: np.ndarray, counts: np.ndarray
) -> list[Estimate]:
    """Per candidate, the AUC of its scores for helpful vs harmful marks, paired as above.

    A replicate's AUC is its first-order expansion in DeLong's placement values: the
    weighted mean placement of the helpful marks plus that of the harmful marks, minus the
    AUC (`metrics.placements`). It has the variance of re-ranking every replicate to first
    order, at the cost of a matrix product instead of a sort per replicate and candidate.
    """
    import numpy as np  # lazy: numpy, only while evaluating

    yy, sess = y[mask], session[mask]
    n_s, n_c = counts.shape[1], scores.shape[1]
    events = len(yy)
    sessions = len(np.unique(sess))
    pos = yy == 1
    n_pos = counts @ np.bincount(sess[pos], minlength=n_s).astype(np.float32)
    n_neg = counts @ np.bincount(sess[~pos], minlength=n_s).astype(np.float32)
    both = bool(pos.any() and (~pos).any())
    point: list[float] = []
    helpful: list[np.ndarray] = []
    harmful: list[np.ndarray] = []
    base: np.ndarray | None = None
    for c in range(n_c):  # a column at a time: paired placement differences against column 0
        place = placements(scores[:, c][mask], yy)[0]
        point.append(float(place[pos].mean()) if both else float("nan"))
        if base is None:
            base = place
        d = place - base
        helpful.append(d[pos])
        harmful.append(d[~pos])
    if point[0] != point[0]:
        nan = float("nan")
        return [Estimate(nan, nan, nan, nan, nan, events, sessions) for _ in range(n_c)]
    with np.errstate(invalid="ignore", divide="ignore"):
        reps = (counts @ _per_session(sess[pos], helpful, n_s)) / n_pos[:, None] + (
            counts @ _per_session(sess[~pos], harmful, n_s)
        ) / n_neg[:, None]
    return [
        _summarise(point[c], point[c] - point[0], reps[:, c] - (point[c] - point[0]), events,
                   sessions)
        for c in range(n_c)
    ]  # fmt: skip
