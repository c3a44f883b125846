"""The data model of SPEC §3: bullets, feedback events, provenance and their enums."""

from __future__ import annotations

from datetime import UTC, datetime
from enum import StrEnum
from typing import Annotated, Literal, get_args

from pydantic import AfterValidator, BaseModel, ConfigDict, Field
from pydantic_core import PydanticCustomError

from .errors import InvalidInput


def _storable(value: str) -> str:
    """`value`, if it is text SQLite can store (UTF-8). `json.loads` turns "\\ud800" into a
    lone surrogate, which no encoder accepts: refused here, as invalid input, so that it is
    reported instead of failing the write."""
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


class Actor(StrEnum):
    AGENT = "agent"
    HUMAN = "human"


BulletTypeName = Literal["rule", "anti-pattern"]
ScopeName = Literal["global", "workspace", "language", "framework", "task"]
SourceName = Literal["learned", "manual", "imported", "inverted", "merged"]
StateName = Literal["draft", "active", "retired"]
MaturityName = Literal["candidate", "established", "proven", "deprecated"]
FeedbackKindName = Literal["helpful", "harmful"]
# The one list of harm reasons (SPEC §3); everything else derives from it.
HarmReasonName = Literal[
    "caused_bug", "wasted_time", "contradicted_requirements", "wrong_context", "outdated", "other"
]
HARM_REASONS: tuple[str, ...] = get_args(HarmReasonName)
HarmReason = StrEnum("HarmReason", {r.upper(): r for r in HARM_REASONS})  # type: ignore[misc]
ActorName = Literal["agent", "human"]


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


def utcnow() -> datetime:
    return datetime.now(UTC)


class FutureTimestamp(InvalidInput):
    """An event dated later than the store's clock: its evidence would never decay."""


def refuse_future(at: datetime, now: datetime, what: str = "an event") -> None:
    """Raise FutureTimestamp, with the one message every surface shows, if `at` > `now`."""
    if at > now:
        stamp = lambda t: t.astimezone(UTC).isoformat().replace("+00:00", "Z")  # noqa: E731
        raise FutureTimestamp(
            f"{what} cannot be dated in the future: {stamp(at)} is later than the "
            f"playbook's clock ({stamp(now)})"
        )
