"""The append-only feedback log (and outcome receipts): events are only ever inserted.

The database itself refuses UPDATE and DELETE on `feedback` and `receipts` (triggers in the
schema). Each append folds its event into the evidence cache in the same transaction.
"""

from __future__ import annotations

from datetime import datetime
from typing import TYPE_CHECKING, TypedDict, Unpack, cast

from ..core.terms import refuse_future
from .base import Now, Part
from .bullets import _where
from .evidence import EvidenceRepo
from .records import EVENT_COLUMNS, event_of, event_point, iso
from .schema import next_seq

if TYPE_CHECKING:
    from ..core.model import FeedbackEvent
    from ..core.origin import Origin
    from .executor import Executor


_INSERT_EVENT = (
    "INSERT INTO feedback (bullet_id, kind, at, recorded_at, weight, reason, context, "
    "session_ref, byte_offset, actor, receipt, batch_id) VALUES (?,?,?,?,?,?,?,?,?,?,?,?)"
)


class FeedbackFields(TypedDict, total=False):
    """What a feedback event may say besides its bullet and kind (`add_feedback`)."""

    weight: float  # 1.0
    reason: str | None
    context: str | None
    provenance: Origin | None
    actor: str  # "agent"
    receipt: str | None
    at: datetime | None  # when it was observed (default: the clock), never later
    batch_id: str | None


class FeedbackLog(Part):
    """The feedback log (appended, folded into `evidence` as the transaction commits) and
    outcome receipts."""

    def __init__(self, sql: Executor, now: Now, evidence: EvidenceRepo) -> None:
        super().__init__(sql, now, evidence.transaction)
        self.evidence = evidence

    def add_feedback(self, bullet_id: str, kind: str, **fields: Unpack[FeedbackFields]) -> int:
        """Append one event (stamped with the store's clock) and return its id; it is
        folded into the cache before the transaction commits (`fold_at_commit`).

        `at` (when the event was observed) may be earlier than the clock, never later: a
        future event would never decay, so it is refused (`FutureTimestamp`, the message
        every surface shows) before anything is written."""
        row = self._feedback_row(bullet_id, kind, fields)
        with self.transaction():
            event_id = self.sql.insert(_INSERT_EVENT, row)
            self.evidence.fold_at_commit()
        return event_id

    def record_feedback(self, bullet_id: str, kind: str, **fields: Unpack[FeedbackFields]) -> None:
        """`add_feedback` for a caller that does not need the event's id: the write can wait
        for the transaction's next statement (`Executor.later`), so a batch of votes on
        PostgreSQL costs no round trip each."""
        row = self._feedback_row(bullet_id, kind, fields)
        with self.transaction():
            self.sql.later(_INSERT_EVENT, [row])
            self.evidence.fold_at_commit()

    def _feedback_row(self, bullet_id: str, kind: str, f: FeedbackFields) -> tuple[object, ...]:
        """The row of one event; a future `at` is refused before anything is written."""
        unknown = f.keys() - FeedbackFields.__annotations__.keys()
        if unknown:
            raise TypeError(f"unexpected feedback field(s): {', '.join(sorted(unknown))}")
        session_ref, byte_offset = _where(f.get("provenance"))
        recorded = self.now()
        at = f.get("at")
        if at is not None:
            refuse_future(at, recorded, "a feedback event")
        return (
            bullet_id,
            kind,
            iso(at or recorded),
            iso(recorded),
            f.get("weight", 1.0),
            f.get("reason"),
            f.get("context"),
            session_ref,
            byte_offset,
            f.get("actor", "agent"),
            f.get("receipt"),
            f.get("batch_id"),
        )

    def timeline(self, bullet_id: str) -> list[FeedbackEvent]:
        """Every feedback event of a bullet, oldest first (by observation time, then id)."""
        rows = self.sql.execute(
            f"SELECT {EVENT_COLUMNS} FROM feedback WHERE bullet_id = ? ORDER BY at, id",
            (bullet_id,),
        )
        return [event_of(r) for r in rows if event_point(r[0], r[3], r[5], r[4]) is not None]

    def latest_events(
        self, bullet_id: str, n: int, recorded_by: datetime | None = None
    ) -> list[FeedbackEvent]:
        """`timeline(bullet_id)[-n:]` (of the events recorded by `recorded_by`, if given),
        read from the end: a rule marked 270k times in a year is not read whole to show its
        last six (the conflicts views)."""
        if n <= 0:
            return []
        where, args = "bullet_id = ?", [bullet_id]
        if recorded_by is not None:
            where, args = where + " AND recorded_at <= ?", [*args, iso(recorded_by)]
        limit = n + 16  # room for malformed rows, which are left out
        rows = self.sql.all(
            f"SELECT {EVENT_COLUMNS} FROM feedback WHERE {where} ORDER BY at DESC, id DESC LIMIT ?",
            (*args, limit),
        )
        found = [event_of(r) for r in rows if event_point(r[0], r[3], r[5], r[4]) is not None]
        if len(found) < n and len(rows) == limit:  # more malformed rows than room: read all
            every = self.timeline(bullet_id)
            if recorded_by is not None:
                every = [e for e in every if e.recorded_at <= recorded_by]
            return every[-n:]
        return found[:n][::-1]

    def batch_events(self, bullet_id: str, batch_id: str) -> list[FeedbackEvent]:
        """The events one curate batch wrote on a bullet (what a mark stored), oldest first."""
        rows = self.sql.execute(
            f"SELECT {EVENT_COLUMNS} FROM feedback WHERE bullet_id = ? AND batch_id = ? "
            "ORDER BY id",
            (bullet_id, batch_id),
        )
        return [event_of(r) for r in rows]

    def event_count(self) -> int:
        return int(self.sql.scalar("SELECT COUNT(*) FROM feedback", default=0))

    # ---------------------------------------------------------------- outcome receipts
    def has_receipt(self, receipt: str) -> bool:
        return self.sql.one("SELECT 1 FROM receipts WHERE receipt = ?", (receipt,)) is not None

    def receipt_batch(self, receipt: str) -> str | None:
        """The batch a receipt was spent on (None: unknown receipt, or no batch)."""
        # a row of the database: a TEXT column, or None
        return cast(
            "str | None",
            self.sql.scalar("SELECT batch_id FROM receipts WHERE receipt = ?", (receipt,)),
        )

    def add_receipt(self, receipt: str, outcome: str, batch_id: str | None) -> None:
        self.sql.execute(
            "INSERT INTO receipts (receipt, recorded_at, outcome, batch_id, seq) "
            f"VALUES (?,?,?,?, {next_seq('receipts')})",
            (receipt, iso(self.now()), outcome, batch_id),
        )
