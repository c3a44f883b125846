"""The data model of SPEC §3: bullets, feedback events, provenance and their enums."""

from __future__ import annotations

from datetime import datetime
from typing import Annotated

from pydantic import AfterValidator, BaseModel, ConfigDict, Field
from pydantic_core import PydanticCustomError

# The vocabulary lives in `terms` (no pydantic there, for the hot paths); every name stays
# importable from here.
from .terms import (
    HARM_REASONS,
    Actor,
    ActorName,
    BulletType,
    BulletTypeName,
    FeedbackKind,
    FeedbackKindName,
    FutureTimestamp,
    HarmReason,
    HarmReasonName,
    Maturity,
    MaturityName,
    Scope,
    ScopeName,
    Source,
    SourceName,
    State,
    StateName,
    refuse_future,
    utcnow,
)

__all__ = [
    "HARM_REASONS",
    "Actor",
    "ActorName",
    "Bullet",
    "BulletType",
    "BulletTypeName",
    "FeedbackEvent",
    "FeedbackKind",
    "FeedbackKindName",
    "FutureTimestamp",
    "HarmReason",
    "HarmReasonName",
    "Maturity",
    "MaturityName",
    "Provenance",
    "Scope",
    "ScopeName",
    "Score",
    "Source",
    "SourceName",
    "State",
    "StateName",
    "StorableText",
    "invalid",
    "refuse_future",
    "utcnow",
]


def _storable(value: str) -> str:
    """`value`, if it is text both backends can store: UTF-8 without a NUL character.
    `json.loads` turns "\\ud800" into a lone surrogate, which no encoder accepts, and
    "\\u0000" into a NUL, which PostgreSQL cannot store: refused here, as invalid input,
    so that it is reported instead of failing the write."""
    if "\x00" in value:
        raise invalid(
            f"a NUL character (\\x00) cannot be stored (at position {value.index(chr(0))})"
        )
    try:
        value.encode("utf-8")
    except UnicodeEncodeError as exc:
        code = ord(value[exc.start])
        raise invalid(
            f"not valid Unicode text (lone surrogate U+{code:04X} at position {exc.start})"
        ) from None
    return value


def invalid(message: str) -> PydanticCustomError:
    """A validator's error whose message pydantic reports as it is (a plain ValueError
    comes back as "Value error, ...", wording that must not reach a user)."""
    return PydanticCustomError("value_error", message)


StorableText = Annotated[str, AfterValidator(_storable)]


class Provenance(BaseModel):
    """Where a bullet or an event came from: a session and a byte offset in its diary."""

    model_config = ConfigDict(extra="forbid", frozen=True, defer_build=True)

    session_ref: StorableText | None = None
    byte_offset: int | None = Field(default=None, ge=0)


class Bullet(BaseModel):
    """One rule or anti-pattern. Content never changes: a replacement is a new bullet."""

    model_config = ConfigDict(frozen=True, defer_build=True)

    id: str
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
    half_life_days: float | None = None
    provenance: Provenance = Field(default_factory=Provenance)
    created_at: datetime
    valid_from: datetime
    valid_to: datetime | None = None
    content_hash: str


class FeedbackEvent(BaseModel):
    """One immutable entry of the feedback log."""

    model_config = ConfigDict(frozen=True, defer_build=True)

    id: int
    bullet_id: str
    kind: FeedbackKindName
    at: datetime
    recorded_at: datetime
    weight: float = 1.0
    reason: HarmReasonName | None = None
    context: str | None = None
    provenance: Provenance = Field(default_factory=Provenance)
    actor: ActorName = "agent"
    receipt: str | None = None


class Score(BaseModel):
    """A bullet's confidence as derived from the log at one moment."""

    model_config = ConfigDict(frozen=True, defer_build=True)

    helpful: float
    harmful: float
    effective: float
    earned: MaturityName
    stale: bool
