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
from ..store.log_pages import LAST
from ..store.records import event_point
from . import metrics
from .bootstrap import REPLICATES, SEED, auc_estimates, mean_estimates, resample
from .candidates import Candidate, default_grid, with_current
from .replay import Progress, replay
from .report import EvalReport, LogSummary, Row, Verdict

if TYPE_CHECKING:
    from ..core.policy import Policy
    from ..store import PlaybookStore
    from ..store.log_pages import LogPages

MIN_HELDOUT_EVENTS = 100
MIN_HELDOUT_SESSIONS = 10
MIN_TRAINING_EVENTS = 50


def split_time(first: str, last: str, split: float) -> str:
    """The moment `split` of the way from the first to the last mark (ISO, as stored)."""
    a, b = parse_iso(first), parse_iso(last)
    return iso(a + (b - a) * split)


def _ends(log: LogPages) -> tuple[str | None, str | None]:
    """The recording times of the log's first and last well-formed marks: the least and
    greatest recording time when a well-formed mark has it (one pass over the log), else
    read in order from that end until one is."""
    ends = log.event_range()
    return _end(log, False, ends[0]), _end(log, True, ends[1])


def _end(log: LogPages, last: bool, recorded_at: str | None) -> str | None:
    if recorded_at is None:
        return None
    if any(event_point(*row) is not None for row in log.events_at(recorded_at, last)):
        return str(recorded_at)
    after = None
    while True:
        rows = log.event_end(last, after)
        for key, at, weight, recorded in rows:
            if event_point(key, at, weight, recorded) is not None:
                return str(recorded)
        if len(rows) < LAST:
            return None
        after = (rows[-1][3], rows[-1][0])


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
    log = store.log
    now = store.now()
    with log.snapshot():  # the bounds and every page: one state of the playbook
        first, last = _ends(log)
        if first is None or last is None:
            summary = LogSummary(None, None, None, 0, 0, 0, 0, 0, 0, split, k, replicates, seed)
            verdict = _too_few(summary)
            return EvalReport(now, summary, [Row(c, None, {}) for c in cands], verdict)
        split_at = split_time(first, last, split)
        rep = replay(
            log,
            [c.policy for c in cands],
            split_at=split_at,
            k=k,
            size=log.event_count(),
            progress=progress,
        )
    held, train, y = rep.heldout, ~rep.heldout, rep.y
    # A candidate at a time (a column of `rep.scores`): the link fitted on the training
    # span, every mark's log-loss, the held-out ones kept for the interval.
    losses = np.empty((int(held.sum()), len(cands)))
    training: list[float | None] = []
    for c in range(len(cands)):
        x = metrics.feature(rep.scores[:, c])
        a, b = metrics.fit_logistic(x[train], y[train])
        loss = metrics.log_losses(x, y, a, b)
        losses[:, c] = loss[held]
        training.append(float(loss[train].mean()) if train.any() else None)
        del x, loss
    session = np.zeros(len(rep), dtype=np.intp)
    session[held] = rep.session
    counts = resample(rep.sessions, replicates, seed)
    helpful = y == 1
    hit_helpful = helpful[rep.ranked]
    per_metric = {
        "log_loss": mean_estimates(losses, None, rep.session, counts, lower_is_better=True),
        "auc": auc_estimates(rep.scores, y, held, session, counts),
        "recall_at_k": mean_estimates(rep.hits, hit_helpful, session[rep.ranked], counts),
        "harm_at_k": mean_estimates(rep.hits, ~hit_helpful, session[rep.ranked], counts,
                                    lower_is_better=True),
    }  # fmt: skip
    rows = [
        Row(c, training[i], {m: est[i] for m, est in per_metric.items()})
        for i, c in enumerate(cands)
    ]
    summary = LogSummary(
        first,
        last,
        split_at,
        len(rep),
        int(train.sum()),
        int(held.sum()),
        rep.sessions,
        int(helpful.sum()),
        int((~helpful).sum()),
        split,
        k,
        replicates,
        seed,
        ranked_events=int(rep.ranked.sum()),
    )
    return EvalReport(now, summary, rows, _verdict(summary, rows, y, held))


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
