"""The data model's vocabulary (SPEC §3) without pydantic: the enums and names of bullets,
feedback, actors and delta types, and the clock.

`playbook.core.model` (the pydantic models) re-exports every name here. Code on a command's hot
path (scoring, the store, curation, the CLI's option help) imports from this module, so a
one-shot `playbook mark` or `recall` never loads pydantic for a name.
"""

from __future__ import annotations

import _thread
from datetime import UTC, datetime
from enum import StrEnum
from typing import TYPE_CHECKING, Any, Literal, get_args

from .errors import InvalidInput

# Each vocabulary is written once, as the Literal that pydantic validates; its enum (and,
# where code iterates over it, its tuple) derives from it.
BulletTypeName = Literal["rule", "anti-pattern"]
ScopeName = Literal["global", "workspace", "language", "framework", "task"]
SourceName = Literal["learned", "manual", "imported", "inverted", "merged"]
StateName = Literal["draft", "active", "retired"]
# The rungs, lowest first, then deprecated (the order of the rank table's maturity codes).
MaturityName = Literal["candidate", "established", "proven", "deprecated"]
FeedbackKindName = Literal["helpful", "harmful"]
# The one list of harm reasons (SPEC §3); everything else derives from it.
HarmReasonName = Literal[
    "caused_bug", "wasted_time", "contradicted_requirements", "wrong_context", "outdated", "other"
]
ActorName = Literal["agent", "human"]
# The delta types of SPEC §5, the one list: `core.deltas` keys its models by it, the
# reflector's parser, the queue's filters and the MCP schema read it from here.
DeltaTypeName = Literal["add", "helpful", "harmful", "replace", "deprecate", "merge"]
# What a task outcome reports (SPEC §8): `playbook outcome`, the MCP tool, the API.
OutcomeName = Literal["success", "failure", "partial"]

HUMAN = "human"  # the actor of every human decision (the workbench, `playbook approve`)
HOOK_ORIGIN = "hook"  # a proposal staged by an agent session's end (playbook.hooks)
CASS_DIARY_ORIGIN = "cass-diary"  # a lesson of a cass-memory diary (interop.diary_import)

MATURITIES: tuple[str, ...] = get_args(MaturityName)
OUTCOMES: tuple[str, ...] = get_args(OutcomeName)
HARM_REASONS: tuple[str, ...] = get_args(HarmReasonName)
DELTA_TYPES: tuple[str, ...] = get_args(DeltaTypeName)
# Evidence: a vote on one rule (the feedback kinds). What an agent applies itself: evidence
# and new candidates. Every other type (replace, deprecate, merge: they change or retire
# rules others rely on) is structural and waits for a person when an agent asks
# (`core.authority.may_apply`) -- a new type is structural unless it is added here.
EVIDENCE: tuple[str, ...] = get_args(FeedbackKindName)
AGENT_APPLIES: tuple[str, ...] = ("add", *EVIDENCE)
STRUCTURAL: tuple[str, ...] = tuple(t for t in DELTA_TYPES if t not in AGENT_APPLIES)


def _vocabulary(name: str, names: Any) -> Any:
    """The StrEnum of a Literal's values: `ANTI_PATTERN = "anti-pattern"`, ..."""
    members = {v.upper().replace("-", "_"): v for v in get_args(names)}
    return StrEnum(name, members, module=__name__, qualname=name)


# Each vocabulary's StrEnum is made on first use: making one costs about 0.7 million
# instructions, and a one-shot `playbook recall` uses two of the nine.
_VOCABULARIES: dict[str, Any] = {
    "BulletType": BulletTypeName,
    "Scope": ScopeName,
    "Source": SourceName,
    "State": StateName,
    "Maturity": MaturityName,
    "FeedbackKind": FeedbackKindName,
    "HarmReason": HarmReasonName,
    "Actor": ActorName,
    "DeltaType": DeltaTypeName,
}
_MAKING = _thread.allocate_lock()

if TYPE_CHECKING:
    BulletType: Any
    Scope: Any
    Source: Any
    State: Any
    Maturity: Any
    FeedbackKind: Any
    HarmReason: Any
    Actor: Any
    DeltaType: Any
else:

    def __getattr__(name: str) -> Any:
        """A vocabulary's StrEnum, made once and kept (under a lock: every thread of the
        workbench must get the one class, whose members are compared with `is`)."""
        names = _VOCABULARIES.get(name)
        if names is None:
            raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
        with _MAKING:
            made = globals().get(name)
            if made is None:
                made = globals()[name] = _vocabulary(name, names)
        return made


def utcnow() -> datetime:
    return datetime.now(UTC)


class FutureTimestamp(InvalidInput):
    """An event dated later than the store's clock: its evidence would never decay."""


def refuse_future(at: datetime, now: datetime, what: str = "an event") -> None:
    """Raise FutureTimestamp, with the one message every surface shows, if `at` > `now`."""
    if at > now:
        raise FutureTimestamp(
            f"{what} cannot be dated in the future: {_stamp(at)} is later than the "
            f"playbook's clock ({_stamp(now)})"
        )


def _stamp(t: datetime) -> str:
    return t.astimezone(UTC).isoformat().replace("+00:00", "Z")
