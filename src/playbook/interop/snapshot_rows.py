"""The rows of a Playbook export, validated: one pydantic model per fact table.

`Snapshot` is a validated export document; `Snapshot.rows(section)` gives a section as table
rows (provenance flattened, derived columns filled) for the importer. `check_references`
then checks what the models cannot: ids unique, references to bullets that exist.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Annotated, Any, Literal

from pydantic import AfterValidator, BaseModel, ConfigDict, Field, ValidationError

from ..core.errors import InvalidImportError
from ..core.inert import inert
from ..core.model import (
    ActorName,
    BulletTypeName,
    FeedbackKindName,
    HarmReasonName,
    MaturityName,
    ScopeName,
    SourceName,
    StateName,
)
from ..core.text import content_hash, normalize
from ..store import iso, parse_iso
from .notes import Note


class SnapshotError(InvalidImportError):
    """The input is not a Playbook export we can read; the message is one line."""


def _stamp(value: str) -> str:
    """A timestamp in the store's canonical form (naive ones are read as UTC)."""
    try:
        return iso(parse_iso(value))
    except (ValueError, TypeError):
        raise ValueError(f"not an ISO 8601 timestamp: {value!r}") from None


Stamp = Annotated[str, AfterValidator(_stamp)]


class _Row(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=False, allow_inf_nan=False)


class ProvenanceRow(_Row):
    session_ref: str | None = None
    byte_offset: int | None = Field(default=None, ge=0)


class BulletRow(_Row):
    id: str = Field(min_length=1)
    content: str
    category: str = "general"
    tags: list[str] = Field(default_factory=list)
    scope: ScopeName = "global"
    scope_key: str | None = None
    type: BulletTypeName = "rule"
    kind: str = "workflow_rule"
    source: SourceName = "learned"
    state: StateName = "active"
    maturity: MaturityName = "candidate"
    pinned: bool = False
    pinned_reason: str | None = None
    half_life_days: float | None = Field(default=None, gt=0)
    provenance: ProvenanceRow = Field(default_factory=ProvenanceRow)
    created_at: Stamp
    valid_from: Stamp | None = None  # defaults to created_at
    valid_to: Stamp | None = None
    content_hash: str | None = None  # derived: recomputed on import
    batch_id: str | None = None


class FeedbackRow(_Row):
    id: int = Field(ge=1)
    bullet_id: str
    kind: FeedbackKindName
    at: Stamp
    recorded_at: Stamp
    weight: float = Field(default=1.0, ge=0)
    reason: HarmReasonName | None = None
    context: str | None = None
    provenance: ProvenanceRow = Field(default_factory=ProvenanceRow)
    actor: ActorName = "agent"
    receipt: str | None = None
    batch_id: str | None = None


class EdgeRow(_Row):
    id: int = Field(ge=1)
    kind: Literal["supersedes", "inverts"]
    src: str
    dst: str
    at: Stamp
    batch_id: str | None = None


class MaturityRow(_Row):
    id: int = Field(ge=1)
    bullet_id: str
    at: Stamp
    maturity: MaturityName
    batch_id: str | None = None


class BlockRow(_Row):
    id: str = Field(min_length=1)
    pattern: str
    normalized: str | None = None  # derived: recomputed on import
    reason: str
    actor: ActorName = "human"
    created_at: Stamp
    active: bool = True
    unblocked_at: Stamp | None = None


class ReceiptRow(_Row):
    receipt: str
    recorded_at: Stamp
    outcome: str
    batch_id: str | None = None


class ProposalRow(_Row):
    id: str = Field(min_length=1)
    delta: dict[str, Any]
    provenance: ProvenanceRow = Field(default_factory=ProvenanceRow)
    status: Literal["pending", "approved", "rejected"] = "pending"
    origin: str = "reflection"
    created_at: Stamp
    decided_at: Stamp | None = None
    decided_by: str | None = None
    reason: str | None = None
    edited_delta: dict[str, Any] | None = None
    result: dict[str, Any] | None = None


class ConflictRow(_Row):
    id: int = Field(ge=1)
    a: str
    b: str
    reason: str
    created_at: Stamp
    status: Literal["open", "resolved"] = "open"
    resolved_at: Stamp | None = None
    resolution: str | None = None
    batch_id: str | None = None


class DecisionRow(_Row):
    id: int = Field(ge=1)
    at: Stamp
    batch_id: str | None = None
    actor: ActorName
    action: str
    bullet_id: str | None = None
    status: str
    reason: str | None = None
    detail: dict[str, Any] = Field(default_factory=dict)


class WatermarkRow(_Row):
    session_ref: str
    byte_offset: int = Field(ge=0)
    updated_at: Stamp


class Snapshot(_Row):
    """A validated export document."""

    format: Literal["playbook-export"]
    version: int
    schema_: dict[str, int] = Field(default_factory=dict, alias="schema")
    bullets: list[BulletRow] = Field(default_factory=list)
    feedback: list[FeedbackRow] = Field(default_factory=list)
    edges: list[EdgeRow] = Field(default_factory=list)
    maturity_log: list[MaturityRow] = Field(default_factory=list)
    blocked_patterns: list[BlockRow] = Field(default_factory=list)
    receipts: list[ReceiptRow] = Field(default_factory=list)
    proposals: list[ProposalRow] = Field(default_factory=list)
    conflicts: list[ConflictRow] = Field(default_factory=list)
    decisions: list[DecisionRow] = Field(default_factory=list)
    watermarks: list[WatermarkRow] = Field(default_factory=list)

    def rows(self, section: str, notes: list[Note] | None = None) -> Iterator[dict[str, Any]]:
        """One section as table rows (provenance flattened, derived columns filled). A tag
        written twice on a bullet is kept once, with a note in `notes`."""
        for i, item in enumerate(getattr(self, section)):
            row = item.model_dump(by_alias=False)
            prov = row.pop("provenance", None)
            if prov is not None:
                row["session_ref"] = prov["session_ref"]
                row["byte_offset"] = prov["byte_offset"]
            if section == "bullets":
                row["valid_from"] = row["valid_from"] or row["created_at"]
                row["content_hash"] = content_hash(row["content"])
                tags = [t.strip() for t in row["tags"] if t.strip()]
                row["tags"] = list(dict.fromkeys(tags))
                if len(row["tags"]) != len(tags) and notes is not None:
                    notes.append(
                        Note(
                            f"bullets[{i}]",
                            f"a tag written more than once on {row['id']} kept once",
                            "tags written more than once on a bullet kept once",
                        )
                    )
            elif section == "blocked_patterns":
                row["normalized"] = normalize(row["pattern"])
            yield row


def first_error(exc: ValidationError) -> str:
    err = exc.errors(include_url=False)[0]
    loc = "".join(f"[{p}]" if isinstance(p, int) else f".{p}" for p in err["loc"]).lstrip(".")
    msg = str(err["msg"])
    if msg.startswith("Value error, "):
        msg = msg[len("Value error, ") :]
    more = len(exc.errors()) - 1
    tail = f" (and {more} more problem{'s' * (more > 1)})" if more else ""
    # A field name is the file's text: keep the message on one line whatever it holds.
    return inert(f"{loc or 'document'}: {msg}{tail}", one_line=True)


def check_references(snap: Snapshot) -> None:
    def unique(section: str, key: Callable[[Any], Any]) -> None:
        seen: set[Any] = set()
        for i, item in enumerate(getattr(snap, section)):
            k = key(item)
            if k in seen:
                raise SnapshotError(f"{section}[{i}]: duplicate id {k!r}")
            seen.add(k)

    unique("bullets", lambda b: b.id)
    for section in ("feedback", "edges", "maturity_log", "conflicts", "decisions"):
        unique(section, lambda r: r.id)
    unique("blocked_patterns", lambda b: b.id)
    unique("proposals", lambda p: p.id)
    unique("receipts", lambda r: r.receipt)
    unique("watermarks", lambda w: w.session_ref)
    ids = {b.id for b in snap.bullets}

    def known(section: str, field: str) -> None:
        for i, item in enumerate(getattr(snap, section)):
            value = getattr(item, field)
            if value is not None and value not in ids:
                raise SnapshotError(f"{section}[{i}].{field}: no bullet with id {value!r}")

    known("feedback", "bullet_id")
    known("edges", "src")
    known("edges", "dst")
    known("maturity_log", "bullet_id")
    known("conflicts", "a")
    known("conflicts", "b")
