"""The playbook in counts (`playbook stats`, the MCP `playbook_stats` tool): bullets by
state, maturity and type, effective-score buckets, stale rules, feedback and the queue."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, get_args

from ..core.terms import MATURITIES, BulletTypeName

if TYPE_CHECKING:
    from ..store import PlaybookStore

# Effective-score buckets: [min, max), None is unbounded.
SCORE_BUCKETS: tuple[tuple[str, float | None, float | None], ...] = (
    ("< -3", None, -3.0),
    ("-3..0", -3.0, 0.0),
    ("0..1", 0.0, 1.0),
    ("1..3", 1.0, 3.0),
    ("3..10", 3.0, 10.0),
    (">= 10", 10.0, None),
)

STATES = ("active", "draft", "retired")
TYPES = get_args(BulletTypeName)


def bucket(score: float) -> str:
    """The label of the bucket `score` falls in."""
    for label, lo, hi in SCORE_BUCKETS:
        if (lo is None or score >= lo) and (hi is None or score < hi):
            return label
    raise AssertionError(score)  # pragma: no cover - the buckets cover every float


def playbook_stats(store: PlaybookStore) -> dict[str, Any]:
    """Counts of the whole playbook, read in one pass (no write)."""
    from . import queue  # lazy: stats

    counts = store.reports.bullet_counts()
    ids = store.active_ids()
    scores = store.scores(ids) if ids else {}
    feedback = store.reports.feedback_counts()
    buckets = dict.fromkeys((b[0] for b in SCORE_BUCKETS), 0)
    for s in scores.values():
        buckets[bucket(s.effective)] += 1
    return {
        "bullets": {
            "total": sum(counts["state"].values()),
            "by_state": {k: counts["state"].get(k, 0) for k in STATES},
            "by_maturity": {k: counts["maturity"].get(k, 0) for k in MATURITIES},
            "by_type": {k: counts["type"].get(k, 0) for k in TYPES},
            "pinned": counts["pinned"].get("pinned", 0),
        },
        "score_buckets": [
            {"label": label, "min": lo, "max": hi, "count": buckets[label]}
            for label, lo, hi in SCORE_BUCKETS
        ],
        "stale": sum(1 for s in scores.values() if s.stale),
        "stale_after_days": store.policy.stale_after_days,
        "feedback": {"events": sum(feedback.values()), **feedback},
        "blocked_patterns": len(store.blocked()),
        "open_conflicts": len(store.conflicts()),
        "pending_proposals": queue.count_pending(store),
    }
