"""What a curate batch reports: one outcome per input delta, and what changed."""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any

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


@dataclass
class DeltaOutcome:
    index: int
    status: str
    bullet_id: str | None = None
    reason: str | None = None
    type: str | None = None


@dataclass
class CurateResult:
    batch_id: str
    outcomes: list[DeltaOutcome] = field(default_factory=list)
    added: list[str] = field(default_factory=list)
    conflicts: list[tuple[str, str]] = field(default_factory=list)
    inversions: list[tuple[str, str]] = field(default_factory=list)
    maturity_changes: list[tuple[str, str, str]] = field(default_factory=list)

    @property
    def rejected(self) -> list[DeltaOutcome]:
        return [o for o in self.outcomes if o.status == "rejected-invalid"]

    def to_dict(self) -> dict[str, Any]:
        return {
            "batch_id": self.batch_id,
            "outcomes": [asdict(o) for o in self.outcomes],
            "rejected": [asdict(o) for o in self.rejected],
            "added": list(self.added),
            "conflicts": [list(p) for p in self.conflicts],
            "inversions": [list(p) for p in self.inversions],
            "maturity_changes": [list(c) for c in self.maturity_changes],
        }
