"""The data model's vocabulary (SPEC §3) without pydantic: the enums and names of bullets,
feedback and actors, and the clock.

`playbook.model` (the pydantic models) re-exports every name here. Code on a command's hot
path (scoring, the store, curation, the CLI's option help) imports from this module, so a
one-shot `playbook mark` or `recall` never loads pydantic for a name.
"""

from __future__ import annotations

from datetime import UTC, datetime
from enum import StrEnum
from typing import Literal, get_args

from .errors import InvalidInput


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
