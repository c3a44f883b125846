"""Playbook: a decaying rule playbook for coding agents.

The public API of SPEC §2. Names are imported lazily so that `import playbook` (and the
`playbook` command) stays fast and never pulls in numpy or Textual until they are used.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from .core.lazy import lazy_exports

_EXPORTS = {
    "open_store": "playbook.store",
    "open_database": "playbook.store",
    "run_migrations": "playbook.store",
    "memory_migration": "playbook.store",
    "PlaybookStore": "playbook.store",
    "curate": "playbook.curation",
    "CurateResult": "playbook.curation",
    "recall": "playbook.retrieval.query",
    "RecallResult": "playbook.retrieval.query",
    "RecallItem": "playbook.retrieval.query",
    "reflect_session": "playbook.reflection.session",
    "apply_outcome": "playbook.curation.outcomes",
    "project_outcome_confidence": "playbook.curation.outcomes",
    "topics": "playbook.review.topics",
    "stage_topics": "playbook.review.topics",
    "ReflectionResult": "playbook.reflection.session",
    "MemoryVectors": "playbook.retrieval.vectors",
    "HashTrigramEmbedder": "playbook.retrieval.vectors",
    "Policy": "playbook.core.policy",
    "DEFAULT_POLICY": "playbook.core.policy",
    "Bullet": "playbook.core.model",
    "FeedbackEvent": "playbook.core.model",
    "Score": "playbook.core.model",
    "PlaybookDelta": "playbook.core.deltas",
}

__all__ = sorted(_EXPORTS)

if TYPE_CHECKING:
    from .core.deltas import PlaybookDelta
    from .core.model import Bullet, FeedbackEvent, Score
    from .core.policy import DEFAULT_POLICY, Policy
    from .curation import CurateResult, curate
    from .curation.outcomes import apply_outcome, project_outcome_confidence
    from .reflection.session import ReflectionResult, reflect_session
    from .retrieval.query import RecallItem, RecallResult, recall
    from .retrieval.vectors import HashTrigramEmbedder, MemoryVectors
    from .review.topics import stage_topics, topics
    from .store import PlaybookStore, memory_migration, open_database, open_store, run_migrations


# `__version__` too, from core/version.py, loaded only when asked for.
_LAZY = {**_EXPORTS, "__version__": "playbook.core.version"}

__getattr__ = lazy_exports(__name__, _LAZY)


def __dir__() -> list[str]:
    return sorted({*globals(), *_LAZY})
