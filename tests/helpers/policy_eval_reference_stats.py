"""The statistics of `playbook policy eval` as computed before the log was read a page at a
time (issue 31): whole (marks x candidates) matrices. Kept verbatim (with the replay of
`policy_eval_reference`) as the reference the per-candidate computation must agree with to
the last bit; the parts that did not change are imported.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from playbook.core.errors import InvalidInput
from playbook.policy_eval import metrics
from playbook.policy_eval.bootstrap import (
    REPLICATES,
    SEED,
    Estimate,
    _summarise,
    resample,
    session_index,
)
from playbook.policy_eval.candidates import Candidate, default_grid, with_current
from playbook.policy_eval.evaluate import _too_few, _verdict, split_time
from playbook.policy_eval.metrics import placements
from playbook.policy_eval.report import EvalReport, LogSummary, Row

from .policy_eval_reference import Progress, replay

if TYPE_CHECKING:
    import numpy as np

    from playbook.core.policy import Policy
    from playbook.store import PlaybookStore


def session_key(event: object) -> str:
    """The unit the bootstrap resamples: the mark's session, else its curate batch, else
    the mark alone."""
    ref = getattr(event, "session_ref", None)
    if ref:
        return f"s:{ref}"
    batch = getattr(event, "batch_id", None)
    return f"b:{batch}" if batch else f"e:{getattr(event, 'id', '')}"


def evaluate(
    store: PlaybookStore,
    candidates: Sequence[Candidate] | None = None,
    *,
    current: Policy | None = None,
    split: float = 0.7,
    k: int = 10,
    replicates: int = REPLICATES,
    seed: int = SEED,
    progress: Progress | None = None,
) -> EvalReport:
    """Compare `candidates` (default: the half-life x harm-weight grid) with `current`
    (default: the store's policy) on the store's own log. Reads only."""
    import numpy as np  # lazy: numpy, only while evaluating

    if not 0.0 < split < 1.0:
        raise InvalidInput(f"split must be between 0 and 1 (not {split})")
    current = current or store.policy
    cands = with_current(current, list(candidates) if candidates is not None else
                         default_grid(current))  # fmt: skip
    history = store.past.read_history()
    events = history.events
    now = store.now()
    if not events:
        log = LogSummary(None, None, None, 0, 0, 0, 0, 0, 0, split, k, replicates, seed)
        verdict = _too_few(log)
        return EvalReport(now, log, [Row(c, None, {}) for c in cands], verdict)
    first, last = events[0].recorded_at, events[-1].recorded_at
    split_at = split_time(first, last, split)
    rep = replay(
        history,
        [c.policy for c in cands],
        split_at=split_at,
        k=k,
        matches=store.rank.token_matches,
        progress=progress,
    )
    held, train, y = rep.heldout, ~rep.heldout, rep.y
    x = metrics.feature(rep.scores)
    losses = np.empty_like(x)
    training: list[float | None] = []
    for c in range(len(cands)):
        a, b = metrics.fit_logistic(x[train, c], y[train])
        losses[:, c] = metrics.log_losses(x[:, c], y, a, b)
        training.append(float(losses[train, c].mean()) if train.any() else None)
    keys = [session_key(e) for e, h in zip(events, held, strict=True) if h]
    sess_held, n_sessions = session_index(keys)
    session = np.zeros(len(events), dtype=np.intp)
    session[held] = sess_held
    counts = resample(n_sessions, replicates, seed)
    helpful = y == 1
    per_metric = {
        "log_loss": mean_estimates(losses, held, session, counts, lower_is_better=True),
        "auc": auc_estimates(rep.scores, y, held, session, counts),
        "recall_at_k": mean_estimates(rep.hits.astype(float), rep.ranked & helpful, session,
                                      counts),
        "harm_at_k": mean_estimates(rep.hits.astype(float), rep.ranked & ~helpful, session,
                                    counts, lower_is_better=True),
    }  # fmt: skip
    rows = [
        Row(c, training[i], {m: est[i] for m, est in per_metric.items()})
        for i, c in enumerate(cands)
    ]
    log = LogSummary(
        first,
        last,
        split_at,
        len(events),
        int(train.sum()),
        int(held.sum()),
        n_sessions,
        int(helpful.sum()),
        int((~helpful).sum()),
        split,
        k,
        replicates,
        seed,
        ranked_events=int(rep.ranked.sum()),
    )
    return EvalReport(now, log, rows, _verdict(log, rows, y, held))


def _per_session(sess: np.ndarray, values: np.ndarray, n_sessions: int) -> np.ndarray:
    """(sessions, columns): the sum of each column of `values` over each session's marks."""
    import numpy as np  # lazy: numpy, only while evaluating

    cols = [np.bincount(sess, values[:, c], minlength=n_sessions) for c in range(values.shape[1])]
    return np.column_stack(cols).astype(np.float32) if cols else np.zeros((n_sessions, 0))


def mean_estimates(
    values: np.ndarray,
    mask: np.ndarray,
    session: np.ndarray,
    counts: np.ndarray,
    *,
    lower_is_better: bool = False,
) -> list[Estimate]:
    """Per candidate (column 0: the current policy), the mean of `values` over the marks in
    `mask`, and its paired difference against column 0 with a session-bootstrap interval."""
    import numpy as np  # lazy: numpy, only while evaluating

    v = values[mask]
    sess = session[mask]
    n_s = counts.shape[1]
    n = np.bincount(sess, minlength=n_s).astype(np.float32)
    events, sessions = len(v), int(np.count_nonzero(n))
    sign = -1.0 if lower_is_better else 1.0
    if not events:
        nan = float("nan")
        return [Estimate(nan, nan, nan, nan, nan, 0, 0) for _ in range(values.shape[1])]
    point = v.mean(axis=0)
    diffs = _per_session(sess, sign * (v - v[:, :1]), n_s)  # paired, per session
    with np.errstate(invalid="ignore", divide="ignore"):
        reps = (counts @ diffs) / (counts @ n)[:, None]  # (replicates, candidates)
    return [
        _summarise(float(point[c]), sign * float(point[c] - point[0]), reps[:, c], events,
                   sessions)
        for c in range(values.shape[1])
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

    s, yy, sess = scores[mask], y[mask], session[mask]
    n_s, n_c = counts.shape[1], scores.shape[1]
    events = len(yy)
    sessions = len(np.unique(sess))
    pos = yy == 1
    n_pos = counts @ np.bincount(sess[pos], minlength=n_s).astype(np.float32)
    n_neg = counts @ np.bincount(sess[~pos], minlength=n_s).astype(np.float32)
    place = np.column_stack([placements(s[:, c], yy)[0] for c in range(n_c)])
    point = [float(place[pos, c].mean()) if pos.any() and (~pos).any() else float("nan")
             for c in range(n_c)]  # fmt: skip
    if point[0] != point[0]:
        nan = float("nan")
        return [Estimate(nan, nan, nan, nan, nan, events, sessions) for _ in range(n_c)]
    d = place - place[:, :1]  # paired placement differences
    with np.errstate(invalid="ignore", divide="ignore"):
        reps = (counts @ _per_session(sess[pos], d[pos], n_s)) / n_pos[:, None] + (
            counts @ _per_session(sess[~pos], d[~pos], n_s)
        ) / n_neg[:, None]
    return [
        _summarise(point[c], point[c] - point[0], reps[:, c] - (point[c] - point[0]), events,
                   sessions)
        for c in range(n_c)
    ]  # fmt: skip
