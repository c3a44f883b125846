"""`evaluate(store)`: which policy would have predicted our own feedback best?

1. Read the whole history once and split it in time: the first `split` of the log's time
   span (by recording time) is the training span, the rest is held out.
2. Replay it (see `replay`): every candidate's effective score of the marked bullet just
   before each mark, and for held-out marks with a context, whether the candidate's recall
   would have had the bullet in its top k.
3. Fit each candidate's logistic link on the training span. The **registered challenger**
   is the candidate with the lowest training log-loss; it is chosen before the held-out
   span is looked at, so the held-out comparison is one registered comparison, not the
   best of fifteen.
4. On the held-out span, every candidate gets each metric with its paired difference
   against the current policy, a session-bootstrap interval and a minimum detectable
   effect. The verdict recommends the challenger only when its interval on the primary
   metric (held-out log-loss) lies above zero; otherwise it is inert.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from ..core.errors import InvalidInput
from ..store import iso, parse_iso
from . import metrics
from .bootstrap import REPLICATES, SEED, auc_estimates, mean_estimates, resample, session_index
from .candidates import Candidate, default_grid, with_current
from .replay import Progress, replay
from .report import EvalReport, LogSummary, Row, Verdict

if TYPE_CHECKING:
    from ..core.policy import Policy
    from ..store import PlaybookStore

MIN_HELDOUT_EVENTS = 100
MIN_HELDOUT_SESSIONS = 10
MIN_TRAINING_EVENTS = 50


def split_time(first: str, last: str, split: float) -> str:
    """The moment `split` of the way from the first to the last mark (ISO, as stored)."""
    a, b = parse_iso(first), parse_iso(last)
    return iso(a + (b - a) * split)


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


def _too_few(log: LogSummary) -> Verdict:
    return Verdict(
        "inert",
        None,
        f"too few events: {log.heldout_events} held-out events in {log.heldout_sessions} "
        f"sessions, {log.training_events} training events (need at least "
        f"{MIN_HELDOUT_EVENTS} held-out events in {MIN_HELDOUT_SESSIONS} sessions, and "
        f"{MIN_TRAINING_EVENTS} training events, with both helpful and harmful marks)",
    )


def _verdict(log: LogSummary, rows: list[Row], y: object, held: object) -> Verdict:
    import numpy as np  # lazy: numpy, only while evaluating

    yy, hh = np.asarray(y), np.asarray(held)
    both = all(
        len(np.unique(yy[m])) == 2 for m in (hh, ~hh)
    )  # AUC and the link need both kinds of mark on each side of the split
    if (
        log.heldout_events < MIN_HELDOUT_EVENTS
        or log.heldout_sessions < MIN_HELDOUT_SESSIONS
        or log.training_events < MIN_TRAINING_EVENTS
        or not both
    ):
        return _too_few(log)
    challengers = [r for r in rows[1:] if r.training_log_loss is not None]
    if not challengers:
        return Verdict("inert", None, "no challenger to compare")
    best = min(challengers, key=lambda r: (r.training_log_loss, r.candidate.name))
    base = rows[0].training_log_loss
    best_loss = best.training_log_loss  # (never None: a challenger has one)
    if base is not None and best_loss is not None and best_loss >= base:
        return Verdict(
            "inert", None, "no challenger fits the training span better than the current policy"
        )
    est = best.metrics["log_loss"]
    if est.lo != est.lo:  # nan: too few sessions to resample
        return Verdict("inert", best.candidate.name, "the interval could not be estimated")
    if est.lo > 0:
        return Verdict("recommended", best.candidate.name, "its interval lies above zero")
    where = "spans zero" if est.hi >= 0 else "lies below zero"
    return Verdict("inert", best.candidate.name, f"the interval {where}")
