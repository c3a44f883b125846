"""What one reflection did (SPEC §7): the result types of `session.reflect_session`.

`ReflectionResult` is what every surface prints (the CLI's `reflect`, the session-end hook,
the demo); `ProposedDelta` and `RejectedItem` are its rows; the `STOP_*` strings say why the
loop stopped.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from ..curation import CurateResult

__all__ = [
    "STOP_ERROR",
    "STOP_MAX_DELTAS",
    "STOP_MAX_ITERATIONS",
    "STOP_NOTHING_NEW",
    "STOP_NOTHING_TO_READ",
    "ProposedDelta",
    "ReflectionResult",
    "RejectedItem",
]

STOP_NOTHING_NEW = "nothing-new"  # an iteration proposed no new valid delta
STOP_MAX_DELTAS = "max-deltas"  # Policy.reflect_max_deltas reached
STOP_MAX_ITERATIONS = "max-iterations"  # Policy.reflect_max_iterations run
STOP_NOTHING_TO_READ = "nothing-to-read"  # no passage past the watermark: reflector not called
STOP_ERROR = "error"  # the reflector failed, or the watermark moved under us: nothing stored


@dataclass(frozen=True)
class ProposedDelta:
    """A validated delta, the diary offset it came from, and the iteration that proposed it."""

    delta: dict[str, Any]
    byte_offset: int | None
    iteration: int

    def to_dict(self) -> dict[str, Any]:
        return {"delta": self.delta, "byte_offset": self.byte_offset, "iteration": self.iteration}


@dataclass(frozen=True)
class RejectedItem:
    """An item the reflector produced that is not a valid delta, and why."""

    iteration: int
    item: object
    reason: str
    byte_offset: int | None = None

    def to_dict(self) -> dict[str, Any]:
        return {
            "iteration": self.iteration,
            "item": self.item,
            "reason": self.reason,
            "byte_offset": self.byte_offset,
        }


@dataclass
class ReflectionResult:
    """What one reflection did. `ok` is False when `errors` is not empty; then nothing was
    stored and `watermark_after == watermark_before`."""

    session_ref: str
    applied: bool  # curated at once (True) or staged in the review queue (False)
    watermark_before: int
    watermark_after: int
    iterations: int = 0
    stopped: str = STOP_NOTHING_TO_READ
    proposed: list[ProposedDelta] = field(default_factory=list)
    rejected: list[RejectedItem] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)
    # Items left out because the delta cap was reached (not validated yet). Those placed in
    # the diary are read again by the next run (the watermark stops at the first of them);
    # `unplaced` of them had no place in the diary to resume from, and are not proposed again.
    truncated: int = 0
    unplaced: int = 0
    unfinished: int = 0  # bytes of a last line still being written: read next time
    already_read: int = 0  # passages a reflection of a copy of this session had read
    staged: list[str] = field(default_factory=list)  # proposal ids (apply=False)
    duplicates: list[ProposedDelta] = field(default_factory=list)  # already pending
    curated: list[CurateResult] = field(default_factory=list)  # one per offset (apply=True)

    @property
    def ok(self) -> bool:
        return not self.errors

    @property
    def deltas(self) -> list[dict[str, Any]]:
        return [p.delta for p in self.proposed]

    def to_dict(self) -> dict[str, Any]:
        return {
            "session_ref": self.session_ref,
            "ok": self.ok,
            "applied": self.applied,
            "iterations": self.iterations,
            "stopped": self.stopped,
            "watermark_before": self.watermark_before,
            "watermark_after": self.watermark_after,
            "proposed": [p.to_dict() for p in self.proposed],
            "rejected": [r.to_dict() for r in self.rejected],
            "errors": list(self.errors),
            "truncated": self.truncated,
            "unplaced": self.unplaced,
            "unfinished": self.unfinished,
            "already_read": self.already_read,
            "staged": list(self.staged),
            "duplicates": [p.to_dict() for p in self.duplicates],
            "curated": [c.to_dict() for c in self.curated],
        }
