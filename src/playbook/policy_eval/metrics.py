"""How well a score just before a mark predicted the mark: AUC and calibrated log-loss.

Pure numpy on arrays the replay produced. The logistic link maps an effective score to a
probability that the next mark is helpful: p = σ(a + b·asinh(score)), with (a, b) fitted on
the training span. asinh is monotone (so AUC is unchanged) and keeps the link sane across
the range effective scores take: near zero it is linear, for a proven rule with fifty
decayed votes it grows like a logarithm instead of saturating the link at once.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import numpy as np

P_CLIP = 1e-6  # probabilities are kept in [1e-6, 1 - 1e-6]: one mark costs at most ~13.8 nats
RIDGE = 1.0  # a weak pull of the slope towards 0: a perfectly separated span stays finite


def feature(scores: np.ndarray) -> np.ndarray:
    import numpy as np  # lazy: numpy, only while evaluating

    out: np.ndarray = np.arcsinh(scores)
    return out


def fit_logistic(x: np.ndarray, y: np.ndarray, iterations: int = 50) -> tuple[float, float]:
    """(a, b) minimising the log-loss of σ(a + b·x) plus RIDGE/2·b², by Newton's method."""
    import numpy as np  # lazy: numpy, only while evaluating

    x = np.asarray(x, dtype=np.float64)
    y = np.asarray(y, dtype=np.float64)
    if not len(x):
        return 0.0, 0.0
    rate = min(max(y.mean(), P_CLIP), 1 - P_CLIP)
    theta = np.array([np.log(rate / (1 - rate)), 0.0])
    design = np.column_stack([np.ones_like(x), x])
    penalty = np.diag([1e-9, RIDGE])
    for _ in range(iterations):
        p = 1.0 / (1.0 + np.exp(-(design @ theta)))
        grad = design.T @ (p - y) + penalty @ theta
        hess = (design * (p * (1 - p))[:, None]).T @ design + penalty
        step = np.linalg.solve(hess, grad)
        theta -= step
        if np.max(np.abs(step)) < 1e-10:
            break
    return float(theta[0]), float(theta[1])


def log_losses(x: np.ndarray, y: np.ndarray, a: float, b: float) -> np.ndarray:
    """Per-event log-loss (nats) of σ(a + b·x) against y."""
    import numpy as np  # lazy: numpy, only while evaluating

    p = 1.0 / (1.0 + np.exp(-(a + b * x)))
    p = np.clip(p, P_CLIP, 1 - P_CLIP)
    losses: np.ndarray = -(y * np.log(p) + (1 - y) * np.log1p(-p))
    return losses


def placements(scores: np.ndarray, y: np.ndarray) -> tuple[np.ndarray, float]:
    """DeLong's placement values and the AUC (the Mann-Whitney statistic, ties half).

    For a helpful mark: the share of harmful marks scored below it; for a harmful mark: the
    share of helpful marks scored above it (ties count half). The AUC is the mean of either
    kind, and AUC ≈ mean(helpful placements) + mean(harmful placements) − AUC to first order
    (the U-statistic's projection), which is what the session bootstrap resamples.
    Returns (placement per mark, AUC); nan when one kind is missing.
    """
    import numpy as np  # lazy: numpy, only while evaluating

    helpful, harmful = y == 1, y == 0
    s_pos, s_neg = scores[helpful], scores[harmful]
    out = np.full(len(scores), np.nan)
    if not len(s_pos) or not len(s_neg):
        return out, float("nan")
    # each kind sorted, and looked up in the other in that order (a merge, not a search
    # over all of it per mark), then put back in the marks' order: the same counts
    by_pos, by_neg = np.argsort(s_pos, kind="stable"), np.argsort(s_neg, kind="stable")
    pos, neg = s_pos[by_pos], s_neg[by_neg]
    count = np.empty((2, len(pos)), dtype=np.intp)
    lo, hi = np.searchsorted(neg, pos, "left"), np.searchsorted(neg, pos, "right")
    count[0, by_pos], count[1, by_pos] = lo, hi - lo  # below, equal
    out[helpful] = (count[0] + 0.5 * count[1]) / len(neg)
    count = np.empty((2, len(neg)), dtype=np.intp)
    lo, hi = np.searchsorted(pos, neg, "left"), np.searchsorted(pos, neg, "right")
    count[0, by_neg], count[1, by_neg] = len(pos) - hi, hi - lo  # above, equal
    out[harmful] = (count[0] + 0.5 * count[1]) / len(pos)
    return out, float(out[helpful].mean())


def auc(scores: np.ndarray, y: np.ndarray) -> float:
    return placements(scores, y)[1]
