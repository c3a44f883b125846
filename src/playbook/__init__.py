"""Playbook: a decaying rule playbook for coding agents.

The public API of SPEC §2. Names are imported lazily so that `import playbook` (and the
`playbook` command) stays fast and never pulls in numpy or Textual until they are used.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from .lazy import lazy_exports

__version__ = "0.1.0"

_EXPORTS = {
    "open_store": "playbook.store",
    "open_database": "playbook.store",
    "run_migrations": "playbook.store",
    "memory_migration": "playbook.store",
    "PlaybookStore": "playbook.store",
    "curate": "playbook.curation",
    "CurateResult": "playbook.curation",
    "recall": "playbook.retrieval",
    "RecallResult": "playbook.retrieval",
    "RecallItem": "playbook.retrieval",
    "reflect_session": "playbook.reflect",
    "apply_outcome": "playbook.outcomes",
    "project_outcome_confidence": "playbook.outcomes",
    "topics": "playbook.consolidation",
    "stage_topics": "playbook.consolidation",
    "ReflectionResult": "playbook.reflect",
    "MemoryVectors": "playbook.vectors",
    "HashTrigramEmbedder": "playbook.vectors",
    "Policy": "playbook.policy",
    "DEFAULT_POLICY": "playbook.policy",
    "Bullet": "playbook.model",
    "FeedbackEvent": "playbook.model",
    "Score": "playbook.model",
    "PlaybookDelta": "playbook.deltas",
}

__all__ = sorted(_EXPORTS)

if TYPE_CHECKING:
    from .consolidation import stage_topics, topics
    from .curation import CurateResult, curate
    from .deltas import PlaybookDelta
    from .model import Bullet, FeedbackEvent, Score
    from .outcomes import apply_outcome, project_outcome_confidence
    from .policy import DEFAULT_POLICY, Policy
    from .reflect import ReflectionResult, reflect_session
    from .retrieval import RecallItem, RecallResult, recall
    from .store import (
        PlaybookStore,
        memory_migration,
        open_database,
        open_store,
        run_migrations,
    )
    from .vectors import HashTrigramEmbedder, MemoryVectors


__getattr__ = lazy_exports(__name__, _EXPORTS)


def __dir__() -> list[str]:
    return sorted([*globals(), *_EXPORTS])
