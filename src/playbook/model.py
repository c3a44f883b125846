"""The data model of SPEC §3: bullets, feedback events, provenance and their enums."""

from __future__ import annotations

from datetime import UTC, datetime
from enum import StrEnum

from pydantic import BaseModel, ConfigDict, Field


class BulletType(StrEnum):
    RULE = "rule"
    ANTI_PATTERN = "anti-pattern"


class Scope(StrEnum):
    GLOBAL = "global"
    WORKSPACE = "workspace"
    LANGUAGE = "language"
    FRAMEWORK = "framework"
    TASK = "task"


class Source(StrEnum):
    LEARNED = "learned"
    MANUAL = "manual"
    IMPORTED = "imported"
    INVERTED = "inverted"
    MERGED = "merged"


class State(StrEnum):
    DRAFT = "draft"
    ACTIVE = "active"
    RETIRED = "retired"


class Maturity(StrEnum):
    CANDIDATE = "candidate"
    ESTABLISHED = "established"
    PROVEN = "proven"
    DEPRECATED = "deprecated"


class FeedbackKind(StrEnum):
    HELPFUL = "helpful"
    HARMFUL = "harmful"


class HarmReason(StrEnum):
    CAUSED_BUG = "caused_bug"
    WASTED_TIME = "wasted_time"
    CONTRADICTED_REQUIREMENTS = "contradicted_requirements"
    WRONG_CONTEXT = "wrong_context"
    OUTDATED = "outdated"
    OTHER = "other"


class Actor(StrEnum):
    AGENT = "agent"
    HUMAN = "human"


class Provenance(BaseModel):
    """Where a bullet or an event came from: a session and a byte offset in its diary."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    session_ref: str | None = None
    byte_offset: int | None = Field(default=None, ge=0)


class Bullet(BaseModel):
    """One rule or anti-pattern. Content never changes: a replacement is a new bullet."""

    model_config = ConfigDict(frozen=True)

    id: str
    content: str
    category: str = "general"
    tags: list[str] = Field(default_factory=list)
    scope: Scope = Scope.GLOBAL
    scope_key: str | None = None
    type: BulletType = BulletType.RULE
    kind: str = "workflow_rule"
    source: Source = Source.LEARNED
    state: State = State.ACTIVE
    maturity: Maturity = Maturity.CANDIDATE
    pinned: bool = False
    pinned_reason: str | None = None
    half_life_days: float | None = None
    provenance: Provenance = Field(default_factory=Provenance)
    created_at: datetime
    valid_from: datetime
    valid_to: datetime | None = None
    content_hash: str


class FeedbackEvent(BaseModel):
    """One immutable entry of the feedback log."""

    model_config = ConfigDict(frozen=True)

    id: int
    bullet_id: str
    kind: FeedbackKind
    at: datetime
    recorded_at: datetime
    weight: float = 1.0
    reason: HarmReason | None = None
    context: str | None = None
    provenance: Provenance = Field(default_factory=Provenance)
    actor: Actor = Actor.AGENT
    receipt: str | None = None


class Score(BaseModel):
    """A bullet's confidence as derived from the log at one moment."""

    model_config = ConfigDict(frozen=True)

    helpful: float
    harmful: float
    effective: float
    earned: Maturity
    stale: bool


def utcnow() -> datetime:
    return datetime.now(UTC)
