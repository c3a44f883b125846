"""What `playbook mcp`'s tools answer, as pydantic models: their JSON schemas are the tools'
output schemas, and the SDK checks every answer against its model before it goes out, so a
schema cannot drift from what a tool returns. Also the schema of a delta list for
`propose_deltas`, derived from `deltas.PlaybookDelta` with the policy's bounds.

Answers are compact (an agent pays for every token): an optional field is left out when it
has nothing to say (a rule's tags when it has none, its scope when global, `pinned` unless
pinned), and text is never repeated.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from ..core.deltas import PlaybookDelta, delta_adapter
from ..core.limits import DELTA_FIELDS, SETTINGS
from ..core.terms import ActorName, BulletTypeName, HarmReasonName, MaturityName, StateName

if TYPE_CHECKING:
    from ..core.policy import Policy


class _Out(BaseModel):
    model_config = ConfigDict(extra="forbid")


# --------------------------------------------------------------------------- rules


class Rule(_Out):
    """A rule as an agent reads it."""

    id: str
    content: str
    maturity: MaturityName = Field(description="candidate < established < proven; deprecated")
    score: float = Field(
        description="recall: the final score it ranks by (relevance x effective score); "
        "list_rules: its effective score (help minus weighted harm, decayed)"
    )
    type: BulletTypeName | None = Field(default=None, description="absent: a rule")
    category: str | None = Field(default=None, description="absent: general")
    tags: list[str] | None = Field(default=None, description="absent: none")
    scope: str | None = Field(
        default=None, description="e.g. workspace:github.com/org/repo; absent: global"
    )
    pinned: bool | None = Field(default=None, description="true when a person pinned it")


class Remedy(_Out):
    action: str = Field(description="feedback, restore, pin, successor or scope (or a mix)")
    note: str
    marks: int | None = Field(default=None, description="fresh helpful marks it takes")


class HiddenRule(_Out):
    id: str
    content: str
    reason: Literal["outranked", "deprecated", "out_of_scope", "retired"]
    why: str = Field(description="one sentence with the numbers behind its rank")
    remedies: list[Remedy] = Field(description="what would bring it back")


class Hidden(_Out):
    total: int = Field(description="rules the query matched that are not shown")
    rules: list[HiddenRule] = Field(description="the closest to being shown, at most 10")


class RecallOut(_Out):
    bullets: list[Rule] = Field(description="rules to follow, best first")
    anti_patterns: list[Rule] = Field(description="things to avoid, best first")
    deprecated_warnings: list[Rule] = Field(description="rules no longer to follow")
    degraded: list[str] | None = Field(
        default=None, description="what recall could not use this time (absent: nothing)"
    )
    hidden: Hidden | None = Field(default=None, description="with explain_hidden only")


class Page(_Out):
    total: int = Field(description="how many there are in all")
    offset: int
    next_offset: int | None = Field(description="the offset of the next page; null: no more")


class RulesOut(Page):
    rules: list[Rule]


# --------------------------------------------------------------------------- stats


class BulletCounts(_Out):
    total: int
    by_state: dict[str, int]
    by_maturity: dict[str, int] = Field(description="rules not retired")
    by_type: dict[str, int] = Field(description="rules not retired")
    pinned: int


class ScoreBucket(_Out):
    label: str
    min: float | None
    max: float | None
    count: int


class FeedbackCounts(_Out):
    events: int
    helpful: int
    harmful: int


class StatsOut(_Out):
    bullets: BulletCounts
    score_buckets: list[ScoreBucket] = Field(description="effective scores, rules not retired")
    stale: int = Field(description="rules with no feedback for stale_after_days")
    stale_after_days: float
    feedback: FeedbackCounts
    blocked_patterns: int
    open_conflicts: int
    pending_proposals: int


# --------------------------------------------------------------------------- the queue


class Proposed(_Out):
    id: str
    delta: PlaybookDelta
    origin: str = Field(description="mcp, hook, reflection, cli...")
    session_ref: str | None = None
    byte_offset: int | None = None
    created_at: str
    stale: str | None = Field(
        default=None, description="why it can no longer apply (a target retired meanwhile)"
    )


class PendingOut(Page):
    proposals: list[Proposed] = Field(description="oldest first")


class ProposeOutcome(_Out):
    index: int = Field(description="the delta's place in the request, from 0")
    status: Literal["staged", "already-proposed", "rejected"]
    proposal_id: str | None = Field(default=None, description="with staged")
    reason: str | None = Field(default=None, description="with rejected: why")


class ProposeOut(_Out):
    outcomes: list[ProposeOutcome] = Field(description="one per delta, in request order")
    staged: int
    already_proposed: int
    rejected: int
    note: str


class ReflectOut(_Out):
    session_ref: str = Field(description="the transcript, resolved: the session's identity")
    staged: list[str] = Field(description="ids of the proposals staged for review")
    already_proposed: int
    rejected: list[str] = Field(description="what the reflector proposed that was refused")
    watermark_before: int = Field(description="bytes of the transcript read before this call")
    watermark_after: int
    more: bool = Field(description="true: part of the transcript is left; call again")


# --------------------------------------------------------------------------- feedback


class MaturityChange(_Out):
    bullet_id: str
    before: MaturityName
    after: MaturityName


class Inversion(_Out):
    bullet_id: str = Field(description="the rule harm turned around (now retired)")
    anti_pattern_id: str = Field(description="the AVOID: rule that replaced it")


class MarkOut(_Out):
    status: Literal["applied", "replayed"] = Field(
        description="replayed: this receipt was recorded before, nothing was counted again"
    )
    bullet_id: str
    kind: Literal["helpful", "harmful"]
    harm_reason: HarmReasonName | None = Field(
        default=None, description="the reason stored with a harmful mark"
    )
    receipt: str | None = None
    maturity_changes: list[MaturityChange]
    inversions: list[Inversion]


class OutcomeOut(_Out):
    outcome: Literal["success", "failure", "partial"]
    applied: list[str] = Field(description="rules that got the feedback")
    skipped: list[str] = Field(description="unknown or retired ids")
    duplicate_citations: int
    replayed: bool = Field(description="the receipt was seen before: nothing applied")
    maturity_changes: list[MaturityChange]
    inversions: list[Inversion]


# --------------------------------------------------------------------------- one rule


class Event(_Out):
    id: int
    kind: Literal["helpful", "harmful"]
    at: str
    weight: float
    actor: ActorName
    reason: HarmReasonName | None = None
    context: str | None = None
    session_ref: str | None = None
    receipt: str | None = None


class Events(Page):
    items: list[Event] = Field(description="newest first")


class Related(_Out):
    kind: str = Field(description="supersedes, inverts...")
    id: str
    content: str
    state: StateName
    maturity: MaturityName


class Decision(_Out):
    at: str
    actor: ActorName
    action: str
    status: str
    reason: str | None = None


class BulletFull(_Out):
    id: str
    content: str
    type: BulletTypeName
    category: str
    tags: list[str]
    scope: str
    kind: str
    source: str
    state: StateName
    maturity: MaturityName
    pinned: bool
    pinned_reason: str | None = None
    created_at: str
    session_ref: str | None = Field(default=None, description="where it was learned")


class Score(_Out):
    helpful: float = Field(description="decayed helpful evidence")
    harmful: float = Field(description="decayed harmful evidence")
    effective: float
    earned: MaturityName = Field(description="the rung its evidence earns")
    stale: bool


class ShowOut(_Out):
    bullet: BulletFull
    score: Score
    score_at: str | None = Field(
        default=None, description="a retired rule's: when its score was frozen (retirement)"
    )
    predecessors: list[Related]
    successors: list[Related]
    deprecation: str | None = Field(default=None, description="why it was deprecated")
    maturity_log: list[str] = Field(description="'<when> <rung>', oldest first")
    conflicts: list[str] = Field(description="'<id> <status> with <other rule>: <reason>'")
    decisions: list[Decision] = Field(description="the latest, newest first")
    events: Events = Field(description="its feedback, a page at a time")


# --------------------------------------------------------------------------- inputs


def _inline(node: Any, defs: dict[str, Any]) -> Any:
    """`node` with every `#/$defs/...` reference replaced by its definition, and titles
    (pydantic's names, noise to an agent) dropped. The delta models do not recurse."""
    if isinstance(node, list):
        return [_inline(n, defs) for n in node]
    if not isinstance(node, dict):
        return node
    ref = node.get("$ref")
    if isinstance(ref, str) and ref.startswith("#/$defs/"):
        target = _inline(defs[ref.rsplit("/", 1)[1]], defs)
        return {**target, **{k: _inline(v, defs) for k, v in node.items() if k != "$ref"}}
    out = {k: _inline(v, defs) for k, v in node.items() if k not in ("title", "$defs")}
    if "discriminator" in out:  # an OpenAPI keyword; its mapping points into $defs
        out["discriminator"] = {"propertyName": out["discriminator"]["propertyName"]}
    return out


def _optional(prop: dict[str, Any]) -> dict[str, Any]:
    """An optional field said as its value's schema: "leave it out" rather than "may be
    null" (null is accepted too), a third of the words."""
    branches = prop.get("anyOf", [])
    values = [b for b in branches if b != {"type": "null"}]
    if len(branches) != 2 or len(values) != 1 or prop.get("default", ...) is not None:
        return prop
    rest = {k: v for k, v in prop.items() if k not in ("anyOf", "default")}
    return {**values[0], **rest}


def _bound(prop: dict[str, Any], limit: int) -> None:
    """Set maxLength on the string branch of a field's schema (or of its items)."""
    for branch in [prop, *prop.get("anyOf", [])]:
        target = branch.get("items", branch)
        if target.get("type") == "string" and "enum" not in target:
            target["maxLength"] = limit


def delta_list_schema(policy: Policy, description: str) -> dict[str, Any]:
    """The JSON schema of a list of deltas: `PlaybookDelta`'s own (one object shape per
    `type`), each text field bounded as `limits` bounds it under `policy`."""
    union = delta_adapter().json_schema()
    items = _inline({k: v for k, v in union.items() if k != "$defs"}, union.get("$defs", {}))
    for shape in items["oneOf"]:
        props = shape["properties"] = {k: _optional(v) for k, v in shape["properties"].items()}
        for name, kind in DELTA_FIELDS.items():
            if name in props:
                _bound(props[name], int(getattr(policy, SETTINGS[kind])))
        if "tags" in props:
            props["tags"]["maxItems"] = policy.max_tags
    return {
        "type": "array",
        "items": items,
        "minItems": 1,
        "maxItems": policy.max_batch,
        "description": description,
    }
