"""What a proposal is, and what a reviewer sees with it: the bullets it acts on as they
are now (a target retired meanwhile makes it stale) and the nearest existing bullets."""

from __future__ import annotations

import json
from dataclasses import dataclass, field, replace
from datetime import datetime
from typing import Any

from ..core.model import Provenance
from ..store import PlaybookStore, iso, parse_iso

SIMILAR_THRESHOLD = 0.3  # show existing bullets at least this close to a proposed add
SIMILAR_LIMIT = 3


@dataclass(frozen=True)
class Target:
    """A bullet a proposal acts on, as it stands now."""

    bullet_id: str
    exists: bool
    state: str | None = None
    maturity: str | None = None
    content: str | None = None
    successors: tuple[str, ...] = ()

    @property
    def stale(self) -> str | None:
        """Why a proposal on this target cannot apply any more, or None."""
        if not self.exists:
            return f"its target {self.bullet_id} does not exist"
        if self.state != "retired":
            return None
        after = f" (succeeded by {', '.join(self.successors)})" if self.successors else ""
        return f"its target {self.bullet_id} was retired{after}"


@dataclass(frozen=True)
class Similar:
    bullet_id: str
    content: str
    similarity: float
    state: str
    maturity: str


@dataclass(frozen=True)
class Proposal:
    id: str
    delta: dict[str, Any]
    provenance: Provenance
    status: str
    origin: str
    created_at: datetime
    decided_at: datetime | None = None
    decided_by: str | None = None
    reason: str | None = None
    edited_delta: dict[str, Any] | None = None
    result: dict[str, Any] | None = None
    similar: list[Similar] = field(default_factory=list)
    targets: list[Target] = field(default_factory=list)

    @property
    def stale(self) -> str | None:
        """Why approving cannot work any more (a target retired meanwhile), or None."""
        reasons = [t.stale for t in self.targets if t.stale]
        return "; ".join(reasons) if reasons else None

    def to_dict(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "delta": self.delta,
            "provenance": self.provenance.model_dump(mode="json"),
            "status": self.status,
            "origin": self.origin,
            "created_at": iso(self.created_at),
            "decided_at": iso(self.decided_at) if self.decided_at else None,
            "decided_by": self.decided_by,
            "reason": self.reason,
            "edited_delta": self.edited_delta,
            "result": self.result,
            "similar": [s.__dict__ for s in self.similar],
            "targets": [
                {**t.__dict__, "successors": list(t.successors), "stale": t.stale}
                for t in self.targets
            ],
            "stale": self.stale,
        }


def _proposal(row: tuple[Any, ...]) -> Proposal:
    return Proposal(
        id=row[0],
        delta=json.loads(row[1]),
        provenance=Provenance(session_ref=row[2], byte_offset=row[3]),
        status=row[4],
        origin=row[5],
        created_at=parse_iso(row[6]),
        decided_at=parse_iso(row[7]) if row[7] else None,
        decided_by=row[8],
        reason=row[9],
        edited_delta=json.loads(row[10]) if row[10] else None,
        result=json.loads(row[11]) if row[11] else None,
    )


def delta_targets(store: PlaybookStore, delta: dict[str, Any]) -> list[Target]:
    """The bullets a delta acts on (a replace's, a merge's, a mark's...), as they are now."""
    ids = list(delta.get("bullet_ids") or ())
    if isinstance(delta.get("bullet_id"), str):
        ids.append(delta["bullet_id"])
    ids = [i for i in dict.fromkeys(ids) if isinstance(i, str)]
    if not ids:
        return []
    bullets = store.get_bullets(ids)
    out = []
    for bid in ids:
        b = bullets.get(bid)
        if b is None:
            out.append(Target(bid, exists=False))
            continue
        successors = (
            tuple(s for _, s in store.lineage(bid).successors) if b.state == "retired" else ()
        )
        out.append(Target(bid, True, str(b.state), str(b.maturity), b.content, successors))
    return out


def with_targets(store: PlaybookStore, p: Proposal) -> Proposal:
    """`p` with `targets` filled: what each bullet it acts on is now (and so `stale`)."""
    return replace(p, targets=delta_targets(store, p.delta))
