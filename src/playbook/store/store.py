"""PlaybookStore: the playbook's facts, behind one object. The store package holds every SQL
statement of Playbook.

The store is composed of one part per aggregate, each in its own module, all running SQL
through one private executor (`self.sql`, see `store/executor.py`):

* `bullets.py`   — bullets, their lifecycle (maturity, retire, pin) and the token index
* `evidence.py`  — the evidence cache folded from the log, and scores
* `feedback.py`  — the append-only feedback log and outcome receipts
* `review.py`    — lineage edges, blocked patterns, conflict flags, the decision log
* `blobs.py`     — the embedding cache and reflection watermarks
* `base.py`      — what they share: executor, policy, clock, meta, the decision-log writer

The formulas live in `playbook.core.scoring`; the human-only rule in `playbook.core.authority`.
Open a store with `open_store(target)` (`store/target.py`).
"""

from __future__ import annotations

from ..core.errors import StoreError
from .blobs import BlobsMixin
from .feedback import FeedbackMixin
from .ids import new_batch_id, new_id, random_hex
from .records import BlockedPattern, Conflict, Decision, Evidence, Lineage, iso, parse_iso
from .rulings import ReviewMixin


class PlaybookStore(FeedbackMixin, ReviewMixin, BlobsMixin):
    """The playbook in one database.

    `PlaybookStore(db, policy=..., clock=...)` takes what `open_database(path)` returns (or
    a `sqlite3.Connection`) and migrates it; `open_store(target)` is the usual way in.
    A store is a context manager: leaving the block closes it.
    """


__all__ = [
    "BlockedPattern",
    "Conflict",
    "Decision",
    "Evidence",
    "Lineage",
    "PlaybookStore",
    "StoreError",
    "iso",
    "new_batch_id",
    "new_id",
    "parse_iso",
    "random_hex",
]
