"""The PlaybookDelta union of SPEC §5 and its validation into plain reasons."""

from __future__ import annotations

import textwrap
from typing import Annotated, Any, ClassVar, Literal

from pydantic import BaseModel, ConfigDict, Field, TypeAdapter, ValidationError, field_validator

from .errors import InvalidInput
from .model import BulletType, HarmReason, Scope, StorableText, invalid
from .terms import DELTA_TYPES, HARM_REASONS, DeltaType

PROVENANCE_KEYS = ("provenance", "session_ref", "byte_offset", "sessionRef", "byteOffset")


class _Delta(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True, defer_build=True)

    # The delta's shape as a model reflector is shown it (`reflectors.prompt`).
    shape: ClassVar[str]


def _wrap(head: str, names: tuple[str, ...]) -> str:
    """`head` then the names as JSON strings, alternatives, wrapped for the prompt."""

    line = head + " | ".join(f'"{n}"' for n in names)
    return textwrap.fill(line, 88, subsequent_indent=" ", break_on_hyphens=False)


def _text(value: str) -> str:
    if not value.strip():
        raise invalid("must not be blank")
    return value


# What each field means, for the JSON schema agents read (the MCP server's tools).
def _id() -> Any:
    return Field(description="The id of an existing rule, e.g. b-1a2b3c4d.")


def _context() -> Any:
    return Field(default=None, description="What happened, briefly.")


class AddDelta(_Delta):
    """A new rule or anti-pattern, added as a candidate."""

    shape = """\
{"type": "add", "content": "<one imperative sentence>", "bullet_type"?: "rule" | "anti-pattern",
 "tags"?: ["<word>"], "category"?: "<word>", "scope"?: "global" | "workspace" | "language" |
 "framework" | "task", "scope_key"?: "<e.g. python>", "kind"?: "<label>", "reason"?: "<why>"}"""

    type: Literal["add"]
    content: Annotated[StorableText, Field(description="The rule, one or two sentences.")]
    category: StorableText | None = Field(default=None, description="e.g. ci, testing.")
    tags: list[StorableText] = Field(default_factory=list, description="Short labels.")
    scope: Scope | None = Field(default=None, description="Where it applies (default global).")
    scope_key: StorableText | None = Field(
        default=None, description="e.g. the language or repository the scope names."
    )
    bullet_type: BulletType | None = Field(
        default=None, description="anti-pattern for a thing to avoid (default rule)."
    )
    kind: StorableText | None = Field(default=None, description="e.g. workflow_rule.")
    reason: StorableText | None = Field(default=None, description="Why it is worth keeping.")

    _content = field_validator("content")(_text)


class HelpfulDelta(_Delta):
    """Evidence: the rule helped."""

    shape = '{"type": "helpful", "bullet_id": "<id>", "context"?: "<how it helped>"}'

    type: Literal["helpful"]
    bullet_id: Annotated[StorableText, _id()]
    context: StorableText | None = _context()


class HarmfulDelta(_Delta):
    """Evidence: the rule misled (reason default other)."""

    shape = (
        _wrap('{"type": "harmful", "bullet_id": "<id>", "reason"?: ', HARM_REASONS)
        + ',\n "context"?: "<what went wrong>"}'
    )

    type: Literal["harmful"]
    bullet_id: Annotated[StorableText, _id()]
    reason: HarmReason | None = Field(default=None, description="Why it hurt.")
    context: StorableText | None = _context()


class ReplaceDelta(_Delta):
    """A better wording: a successor rule supersedes the original."""

    shape = """\
{"type": "replace", "bullet_id": "<id>", "content": "<better wording>", "reason"?: "<why>"}"""

    type: Literal["replace"]
    bullet_id: Annotated[StorableText, _id()]
    content: Annotated[StorableText, Field(description="The successor rule's text.")]
    reason: StorableText | None = Field(default=None, description="Why it is better.")

    _content = field_validator("content")(_text)


class DeprecateDelta(_Delta):
    """The rule should no longer be followed."""

    shape = '{"type": "deprecate", "bullet_id": "<id>", "reason": "<why it no longer applies>"}'

    type: Literal["deprecate"]
    bullet_id: Annotated[StorableText, _id()]
    reason: Annotated[StorableText, Field(description="Why it should not be followed.")]


class MergeDelta(_Delta):
    """Two or more rules become one successor."""

    shape = """\
{"type": "merge", "bullet_ids": ["<id>", "<id>", ...], "content": "<combined rule>",
 "reason"?: "<why>"}"""

    type: Literal["merge"]
    bullet_ids: list[StorableText] = Field(
        min_length=2, description="The ids of the rules merged (two or more, distinct)."
    )
    content: Annotated[StorableText, Field(description="The merged rule's text.")]
    reason: StorableText | None = Field(default=None, description="Why they are one rule.")

    _content = field_validator("content")(_text)

    @field_validator("bullet_ids")
    @classmethod
    def _distinct(cls, ids: list[str]) -> list[str]:
        if len(set(ids)) != len(ids):
            raise invalid("must name distinct bullets")
        return ids


AnyDelta = AddDelta | HelpfulDelta | HarmfulDelta | ReplaceDelta | DeprecateDelta | MergeDelta
PlaybookDelta = Annotated[AnyDelta, Field(discriminator="type")]
# Each type's model, keyed by the vocabulary (`core.terms.DeltaType`; a test checks that
# every type has its model and every model its type).
DELTA_CLASSES: dict[str, type[AnyDelta]] = {
    DeltaType.ADD: AddDelta,
    DeltaType.HELPFUL: HelpfulDelta,
    DeltaType.HARMFUL: HarmfulDelta,
    DeltaType.REPLACE: ReplaceDelta,
    DeltaType.DEPRECATE: DeprecateDelta,
    DeltaType.MERGE: MergeDelta,
}


def delta_adapter() -> TypeAdapter[Any]:
    """The whole union, e.g. for its JSON schema (built on demand: it is slow to build)."""
    return TypeAdapter(PlaybookDelta)


class InvalidDelta(InvalidInput):
    """Why an item is not a valid delta, in one plain sentence."""


def _name(part: object) -> str:
    """A field name as it may be echoed: an unknown key can be any size."""
    text = str(part)
    return text if len(text) <= 40 else f"{text[:40]}… ({len(text):,} characters)"


def _describe(err: ValidationError) -> str:
    parts = []
    for e in err.errors(include_url=False)[:3]:
        loc = ".".join(_name(p) for p in e["loc"] if p not in DELTA_TYPES)
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
    if isinstance(item, AnyDelta):
        return item
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
        return cls.model_validate(item)
    except ValidationError as exc:
        raise InvalidDelta(_describe(exc)) from None


def delta_dict(delta: PlaybookDelta) -> dict[str, Any]:
    return delta.model_dump(mode="json", exclude_none=True, exclude_defaults=False)
