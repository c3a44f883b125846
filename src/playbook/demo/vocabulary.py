"""The vocabulary of the demo's content: the closed lists its rules draw from (categories,
kinds, scopes, history profiles, harm reasons), the shape of a demo rule and of a demo
event, and the grammar of the rule table (`parse_rules`; the tables are `rules_code` and
`rules_systems`, gathered by `content`).

Pure data and its parser: no database, no Textual, no numpy.
"""

import re
from dataclasses import dataclass
from datetime import datetime
from typing import Final, Literal, TypeVar, get_args

Category = Literal[
    "git",
    "ci",
    "testing",
    "python",
    "typescript",
    "rust",
    "go",
    "frontend",
    "databases",
    "docker",
    "security",
    "review",
    "performance",
    "debugging",
    "docs",
    "workflow",
]
RuleType = Literal["rule", "anti-pattern"]
Scope = Literal["global", "language", "workspace"]
Kind = Literal["workflow_rule", "tooling", "convention", "pitfall", "technique"]
Profile = Literal["proven", "established", "candidate", "fading", "contested", "harmful", "stale"]
HarmReason = Literal[
    "caused_bug", "wasted_time", "contradicted_requirements", "wrong_context", "outdated", "other"
]
EventKind = Literal["helpful", "harmful"]
Actor = Literal["agent", "human"]

CATEGORIES: Final[tuple[Category, ...]] = get_args(Category)
RULE_TYPES: Final[tuple[RuleType, ...]] = get_args(RuleType)
SCOPES: Final[tuple[Scope, ...]] = get_args(Scope)
KINDS: Final[tuple[Kind, ...]] = get_args(Kind)
PROFILES: Final[tuple[Profile, ...]] = get_args(Profile)
HARM_REASONS: Final[tuple[HarmReason, ...]] = get_args(HarmReason)
#: ``scope_key`` values allowed for ``scope == "language"``.
LANGUAGES: Final[tuple[str, ...]] = ("python", "typescript", "rust")

_AVOID_PREFIX: Final = "AVOID: "
_TAG_RE: Final = re.compile(r"[a-z0-9][a-z0-9-]*")
_WORKSPACE_RE: Final = re.compile(r"[a-z0-9][a-z0-9-]*")


@dataclass(frozen=True, slots=True)
class DemoRule:
    """One bullet of the demo playbook and the history profile it should get."""

    content: str
    category: Category
    tags: tuple[str, ...]
    type: RuleType
    scope: Scope
    scope_key: str | None
    kind: Kind
    profile: Profile

    def add_delta(self) -> dict[str, object]:
        """The ``add`` delta (SPEC §5) that creates this bullet through ``curate``."""
        delta: dict[str, object] = {
            "type": "add",
            "content": self.content,
            "category": self.category,
            "tags": list(self.tags),
            "scope": self.scope,
            "bullet_type": self.type,
            "kind": self.kind,
        }
        if self.scope_key is not None:
            delta["scope_key"] = self.scope_key
        return delta


@dataclass(frozen=True, slots=True)
class DemoEvent:
    """One feedback event of the demo history, on ``RULES[rule_index]``."""

    rule_index: int
    kind: EventKind
    at: datetime
    reason: HarmReason | None  # set for harmful events only
    context: str
    actor: Actor


_T = TypeVar("_T", bound=str)


def _one_of(value: str, allowed: tuple[_T, ...], what: str, lineno: int) -> _T:
    for option in allowed:
        if value == option:
            return option
    raise ValueError(f"rule table line {lineno}: unknown {what} {value!r}")


def parse_rules(table: str) -> tuple[DemoRule, ...]:
    """The rules of a rule table: `[category]` lines, then one rule a line of five fields
    split by `|` (profile, kind, scope, tags, content); a clear `ValueError` for a bad line."""
    rules: list[DemoRule] = []
    category: Category | None = None
    for lineno, raw in enumerate(table.splitlines(), start=1):
        line = raw.strip()
        if not line:
            continue
        if line.startswith("[") and line.endswith("]"):
            category = _one_of(line[1:-1], CATEGORIES, "category", lineno)
            continue
        fields = [field.strip() for field in line.split("|", 4)]
        if category is None or len(fields) != 5:
            raise ValueError(f"rule table line {lineno}: expected 5 fields under a [category]")
        profile, kind, scope_spec, tags, content = fields
        scope_name, _, key = scope_spec.partition(":")
        scope = _one_of(scope_name, SCOPES, "scope", lineno)
        if scope == "language":
            key = _one_of(key, LANGUAGES, "language", lineno)
        elif scope == "workspace" and not _WORKSPACE_RE.fullmatch(key):
            raise ValueError(f"rule table line {lineno}: bad workspace name {key!r}")
        rules.append(
            DemoRule(
                content=content,
                category=category,
                tags=tuple(tags.split(",")),
                type="anti-pattern" if content.startswith(_AVOID_PREFIX) else "rule",
                scope=scope,
                scope_key=key or None,
                kind=_one_of(kind, KINDS, "kind", lineno),
                profile=_one_of(profile, PROFILES, "profile", lineno),
            )
        )
    return tuple(rules)
