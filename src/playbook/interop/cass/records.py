"""The neutral records a cass-memory file is read into (Playbook's field names, SPEC §3)."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime

from ...core.errors import InvalidImportError
from ..notes import Notes


class CassImportError(InvalidImportError):
    """The input is not a cass-memory file we can read; the message is one line."""


@dataclass(slots=True)
class ImportedBullet:
    """One cass-memory bullet."""

    source_id: str
    content: str
    category: str
    tags: list[str]
    scope: str
    scope_key: str | None
    type: str  # "rule" | "anti-pattern"
    kind: str
    state: str
    maturity: str
    pinned: bool
    pinned_reason: str | None
    half_life_days: float | None
    created_at: datetime
    valid_to: datetime | None  # retirement time, when the bullet is retired
    session_ref: str | None  # first source session, if any
    deprecation_reason: str | None = None
    deprecated_at: datetime | None = None
    replaced_by: str | None = None  # the successor's source id, as the file gives it


@dataclass(slots=True)
class ImportedEvent:
    """One feedback event; ``kind`` is helpful or harmful, ``reason`` only for harmful."""

    source_id: str
    kind: str
    at: datetime
    weight: float
    reason: str | None
    context: str | None
    session_ref: str | None


@dataclass(slots=True)
class ImportedEdge:
    """A lineage edge between two imported bullets (cass-memory's ``replacedBy``)."""

    kind: str  # "supersedes"
    successor_source_id: str
    original_source_id: str


@dataclass(slots=True)
class ImportedBlock:
    """A blocked pattern: a ``deprecatedPatterns`` entry or a ``blocked.log`` entry."""

    pattern: str
    reason: str
    at: datetime | None
    source_id: str | None = None  # blocked.log: the id of the bullet that was forgotten


@dataclass
class CassImport:
    """Everything read from one cass-memory file, plus what could not be mapped."""

    bullets: list[ImportedBullet] = field(default_factory=list)
    events: list[ImportedEvent] = field(default_factory=list)
    edges: list[ImportedEdge] = field(default_factory=list)
    blocks: list[ImportedBlock] = field(default_factory=list)
    notes: Notes = field(default_factory=Notes)
    kind: str = "playbook"  # "playbook" (playbook.yaml) or "blocked-log"

    @property
    def unmapped(self) -> list[str]:
        """The notes as plain lines, in order."""
        return self.notes.lines()
