"""The PlaybookDelta union of SPEC §5 and its validation into plain reasons."""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, TypeAdapter, ValidationError, field_validator

from .errors import InvalidInput
from .model import BulletType, HarmReason, Scope, StorableText

PROVENANCE_KEYS = ("provenance", "session_ref", "byte_offset", "sessionRef", "byteOffset")


class _Delta(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True, defer_build=True)


def _text(value: str) -> str:
    if not value.strip():
        raise ValueError("must not be blank")
    return value


class AddDelta(_Delta):
    type: Literal["add"]
    content: StorableText
    category: StorableText | None = None
    tags: list[StorableText] = Field(default_factory=list)
    scope: Scope | None = None
    scope_key: StorableText | None = None
    bullet_type: BulletType | None = None
    kind: StorableText | None = None
    reason: StorableText | None = None

    _content = field_validator("content")(_text)


class HelpfulDelta(_Delta):
    type: Literal["helpful"]
    bullet_id: StorableText
    context: StorableText | None = None


class HarmfulDelta(_Delta):
    type: Literal["harmful"]
    bullet_id: StorableText
    reason: HarmReason | None = None
    context: StorableText | None = None


class ReplaceDelta(_Delta):
    type: Literal["replace"]
    bullet_id: StorableText
    content: StorableText
    reason: StorableText | None = None

    _content = field_validator("content")(_text)


class DeprecateDelta(_Delta):
    type: Literal["deprecate"]
    bullet_id: StorableText
    reason: StorableText


class MergeDelta(_Delta):
    type: Literal["merge"]
    bullet_ids: list[StorableText] = Field(min_length=2)
    content: StorableText
    reason: StorableText | None = None

    _content = field_validator("content")(_text)

    @field_validator("bullet_ids")
    @classmethod
    def _distinct(cls, ids: list[str]) -> list[str]:
        if len(set(ids)) != len(ids):
            raise ValueError("must name distinct bullets")
        return ids


PlaybookDelta = Annotated[
    AddDelta | HelpfulDelta | HarmfulDelta | ReplaceDelta | DeprecateDelta | MergeDelta,
    Field(discriminator="type"),
]
DELTA_TYPES = ("add", "helpful", "harmful", "replace", "deprecate", "merge")
DELTA_CLASSES: dict[str, type[_Delta]] = {
    "add": AddDelta,
    "helpful": HelpfulDelta,
    "harmful": HarmfulDelta,
    "replace": ReplaceDelta,
    "deprecate": DeprecateDelta,
    "merge": MergeDelta,
}


def delta_adapter() -> TypeAdapter[Any]:
    """The whole union, e.g. for its JSON schema (built on demand: it is slow to build)."""
    return TypeAdapter(PlaybookDelta)


class InvalidDelta(InvalidInput):
    """Why an item is not a valid delta, in one plain sentence."""


def _describe(err: ValidationError) -> str:
    parts = []
    for e in err.errors(include_url=False)[:3]:
        loc = ".".join(str(p) for p in e["loc"] if p not in DELTA_TYPES)
        msg = e["msg"]
        if e["type"] == "extra_forbidden":
            msg = "unknown field"
        elif e["type"] == "union_tag_invalid":
            msg = f"unknown delta type; expected one of {', '.join(DELTA_TYPES)}"
            loc = "type"
        elif e["type"] == "union_tag_not_found":
            msg = "missing delta type"
            loc = "type"
        parts.append(f"{loc}: {msg}" if loc else msg)
    return "; ".join(parts)


def parse_delta(item: object) -> PlaybookDelta:
    """Validate one raw item, raising InvalidDelta with a plain reason."""
    if isinstance(item, BaseModel) and not isinstance(item, _Delta):
        item = item.model_dump()
    if isinstance(item, _Delta):
        return item  # type: ignore[return-value]
    if not isinstance(item, dict):
        raise InvalidDelta(f"a delta must be an object, not {type(item).__name__}")
    carried = [k for k in PROVENANCE_KEYS if k in item]
    if carried:
        raise InvalidDelta(
            f"a delta cannot carry provenance ({carried[0]}): provenance is an argument "
            "of curate, recorded from the session, never from the delta"
        )
    # Dispatch on the discriminator ourselves: validating against one member builds only
    # that member's schema, which keeps small commands (a single mark) fast to start.
    kind = item.get("type")
    if kind is None:
        raise InvalidDelta("type: missing delta type")
    cls = DELTA_CLASSES.get(kind) if isinstance(kind, str) else None
    if cls is None:
        raise InvalidDelta(f"type: unknown delta type; expected one of {', '.join(DELTA_TYPES)}")
    try:
        return cls.model_validate(item)  # type: ignore[return-value]
    except ValidationError as exc:
        raise InvalidDelta(_describe(exc)) from None


def delta_dict(delta: PlaybookDelta) -> dict[str, Any]:
    return delta.model_dump(mode="json", exclude_none=True, exclude_defaults=False)
