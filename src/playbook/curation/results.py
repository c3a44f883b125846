"""What a curate batch reports: one outcome per input delta, and what changed."""

from __future__ import annotations

from typing import Any

from ..core.record import NEW, Record
from ..core.text import plural

STATUSES = (
    "added",
    "folded",
    "conflict",
    "applied",
    "refused-blocked",
    "refused-zombie",
    "refused-pinned",
    "dropped-duplicate",
    "rejected-invalid",
)
# The statuses that changed the playbook; every other one applied nothing.
APPLIED = ("added", "folded", "conflict", "applied")
# The machine code of an outcome that applied nothing, by its status. Where one status has
# several causes, the maker of the outcome sets a finer code: a rejected delta naming a
# bullet that does not exist is `not_found`, one naming a retired bullet `retired`
# (`Batch.check`). Code branches on `code`, never on the text of `reason`.
CODES = {
    "refused-blocked": "blocked",
    "refused-zombie": "zombie",
    "refused-pinned": "pinned",
    "dropped-duplicate": "duplicate",
    "rejected-invalid": "invalid",
}


class DeltaOutcome(Record):
    index: int
    status: str
    bullet_id: str | None
    reason: str | None  # for a person; its text is not a contract
    type: str | None
    # why nothing applied (CODES, or finer); when applied, None or a note: `not_carried`
    # (a successor that does not inherit an original's evidence: opposite polarity)
    code: str | None

    def __init__(
        self,
        index: int,
        status: str,
        bullet_id: str | None = None,
        reason: str | None = None,
        type: str | None = None,
        code: str | None = None,
    ) -> None:
        self.index = index
        self.status = status
        self.bullet_id = bullet_id
        self.reason = reason
        self.type = type
        self.code = CODES.get(status) if code is None else code

    def to_dict(self) -> dict[str, Any]:
        """Its fields by name, in order (what `dataclasses.asdict` gave)."""
        return dict(zip(self._field_names, type(self)._field_values(self), strict=True))


class CurateResult(Record):
    batch_id: str
    outcomes: list[DeltaOutcome]
    added: list[str]
    conflicts: list[tuple[str, str]]
    inversions: list[tuple[str, str]]
    maturity_changes: list[tuple[str, str, str]]

    def __init__(
        self,
        batch_id: str,
        outcomes: list[DeltaOutcome] = NEW,
        added: list[str] = NEW,
        conflicts: list[tuple[str, str]] = NEW,
        inversions: list[tuple[str, str]] = NEW,
        maturity_changes: list[tuple[str, str, str]] = NEW,
    ) -> None:
        self.batch_id = batch_id
        self.outcomes = [] if outcomes is NEW else outcomes
        self.added = [] if added is NEW else added
        self.conflicts = [] if conflicts is NEW else conflicts
        self.inversions = [] if inversions is NEW else inversions
        self.maturity_changes = [] if maturity_changes is NEW else maturity_changes

    @property
    def rejected(self) -> list[DeltaOutcome]:
        return [o for o in self.outcomes if o.status == "rejected-invalid"]

    @property
    def not_applied(self) -> list[DeltaOutcome]:
        """Outcomes that changed nothing: rejected, refused or dropped."""
        return [o for o in self.outcomes if o.status not in APPLIED]

    @property
    def applied_count(self) -> int:
        return len(self.outcomes) - len(self.not_applied)

    @property
    def nothing_applied(self) -> bool:
        """True for a batch that changed nothing (an empty batch included): a failure for
        the caller, who asked for changes and got none."""
        return self.applied_count == 0

    @property
    def partial(self) -> bool:
        """Some deltas applied and some did not."""
        return 0 < self.applied_count < len(self.outcomes)

    def summary(self) -> str:
        """One plain sentence: how much of the batch applied."""
        total = len(self.outcomes)
        if not total:
            return "the batch is empty: nothing to curate"
        if self.nothing_applied:
            return f"nothing applied: {plural(total, 'delta')}, none applied"
        if self.partial:
            return f"partly applied: {self.applied_count} of {plural(total, 'delta')} applied"
        return f"applied: {plural(total, 'delta')}"

    def reasons(self, limit: int = 5) -> str:
        """The first `limit` deltas that applied nothing, as `[i] status: reason; ...`."""
        parts = []
        for o in self.not_applied[:limit]:
            parts.append(f"[{o.index}] {o.status}" + (f": {o.reason}" if o.reason else ""))
        more = len(self.not_applied) - limit
        if more > 0:
            parts.append(f"and {more} more")
        return "; ".join(parts)

    def to_dict(self) -> dict[str, Any]:
        return {
            "batch_id": self.batch_id,
            "outcomes": [o.to_dict() for o in self.outcomes],
            "rejected": [o.to_dict() for o in self.rejected],
            "added": list(self.added),
            "conflicts": [list(p) for p in self.conflicts],
            "inversions": [list(p) for p in self.inversions],
            "maturity_changes": [list(c) for c in self.maturity_changes],
            "applied_count": self.applied_count,
            "not_applied_count": len(self.not_applied),
            "partial": self.partial,
        }
