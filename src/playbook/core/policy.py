"""Every constant of SPEC §4–§6, with where each default came from.

`playbook policy show` prints these with their provenance. A policy can be loaded from a
`playbook.toml` file (a `[policy]` table, or the top level) with
`core.policy_file.load_policy`.

`Policy` is a frozen record (`core/record.py`: a dataclass's behaviour, without its cost at
import) whose constants carry pydantic's constraints (`gt`, `ge`, `le`): a policy built
with any value is validated by pydantic, against a model generated from these constants
(`Policy(half_life_days=0)` raises `pydantic.ValidationError`, an unknown name too). The
defaults need no validation, so the default policy, which every command holds, costs no
pydantic import: that keeps `playbook mark` and `recall` fast to start.
"""

from __future__ import annotations

import functools
import typing
from typing import TYPE_CHECKING, Any

from .record import FrozenRecord

if TYPE_CHECKING:
    from pydantic import BaseModel

# Where each default came from, in words a reader can look up: the file of cass-memory
# (github.com/Dicklesworthstone/cass_memory_system) that holds the same value, or the
# section of Playbook's README that explains a value of its own.
CASS_SCORING = "cass-memory src/scoring.ts"
CASS_CONFIG = "cass-memory src/config.ts (DEFAULT_CONFIG)"
CASS = "cass-memory"
OWN_SCORING = "Playbook's own (README: How scoring works)"
OWN_OUTCOMES = "Playbook's own (README: Reflection, the review queue and outcomes)"
SPEC = "Playbook's own (README: Limits)"  # the limits of every field a caller supplies
OWN_HOOKS = "Playbook's own (README: Use it with Claude Code)"
OWN_CONFIDENCE = "Playbook's own (playbook.curation.outcomes.project_outcome_confidence)"
CASS_STOP = "cass-memory src/utils.ts STOP_WORDS (commit b30ddbe)"

# cass-memory's query stop words, verbatim: English function words and the programming
# keywords that carry no meaning in a task description ("new", "async", "const"...).
CASS_STOP_WORDS = tuple(
    """
    the a an is are was were be been have has had do does did will would could should can to
    of in for on with at by from as into through during before after and or but if when where
    why how this that these those what which who there here i you he she it we they me him
    her us them const var let import export return null undefined true false async await new
    """.split()
)
# More English function words that Playbook also drops: as query words they only add
# substring points ("all" in "install", "up" in "setup").
EXTRA_STOP_WORDS = tuple(
    """
    about above again against all also any because being below between both doing done down
    each few further get got its just may might more most must my no not off once only onto
    other our out over own same shall so some such than their then too under until up very
    via while whom your
    """.split()
)


MAX_WEIGHT = 1000.0  # the largest weight a feedback event may carry (the database agrees)

# The range of every number (from, to; both included, except a 0 that `gt=0` refuses). A
# number of a field not named here is still refused when it is not finite or lies outside
# GENERIC_RANGE: every constant, old or new, is a finite number in a documented range.
RANGES: dict[str, tuple[float, float]] = {
    "half_life_days": (0, 36500), "harm_multiplier": (0, 100),
    "multiplier_candidate": (-100, 100), "multiplier_established": (-100, 100),
    "multiplier_proven": (-100, 100), "multiplier_deprecated": (-100, 100),
    "min_events_for_rung": (0, 1e6), "deprecate_harm_ratio": (0, 1),
    "proven_min_helpful": (0, 1e6), "proven_max_harm_ratio": (0, 1),
    "deprecate_score_below": (-1e6, 0), "epsilon": (0, 1), "stale_after_days": (0, 36500),
    "duplicate_jaccard": (0, 1), "blocked_jaccard": (0, 1), "blocked_fuzz_ratio": (0, 100),
    "invert_min_harm": (0, 1e6), "invert_harm_over_help": (0, 1e6),
    "exact_points": (0, 1000), "substring_points": (0, 1000), "tag_points": (0, 1000),
    "semantic_weight": (0, 1), "similarity_scale": (0, 1000), "min_relevance": (0, 1000),
    "min_confidence": (0, 1000), "outcome_success_weight": (0, MAX_WEIGHT),
    "outcome_failure_weight": (0, MAX_WEIGHT), "outcome_partial_weight": (0, MAX_WEIGHT),
    "confidence_start": (0, 1), "confidence_success": (-1, 1), "confidence_failure": (-1, 1),
    "confidence_partial": (-1, 1), "confidence_min": (0, 1), "confidence_max": (0, 1),
    "reflect_max_iterations": (1, 100), "reflect_max_deltas": (1, 10_000),
    "max_content_length": (1, 100_000_000), "max_text_length": (1, 100_000_000),
    "max_id_length": (1, 100_000), "max_ref_length": (1, 1_000_000),
    "max_label_length": (1, 100_000), "max_tags": (0, 100_000), "max_batch": (1, 1_000_000),
    "max_query_length": (1, 1_000_000), "hook_context_chars": (0, 10_000_000),
}  # fmt: skip
GENERIC_RANGE = (-1e9, 1e9)


class Constant:
    """A constant of `Policy` as declared: its default, and `metadata` (where the default
    came from, what it does, its constraints in pydantic's terms: gt, ge, le)."""

    def __init__(self, default: Any, metadata: dict[str, Any]) -> None:
        self.default = default
        self.metadata = metadata


def _f(default: Any, source: str, doc: str, **constraints: Any) -> Any:
    """A constant: its default, where the default came from, what it does, and its
    constraints in pydantic's terms (gt, ge, le)."""
    return Constant(default, {"source": source, "doc": doc, "constraints": constraints})


class Policy(FrozenRecord):
    """The tunable constants. Changing one re-scores all history: scores are derived.

    `Policy(**values)` validates the values given (pydantic; unknown names are refused)
    and takes the defaults for the rest; `Policy()` is the defaults.
    """

    # Scoring (SPEC §4)
    half_life_days: float = _f(
        90.0, CASS_SCORING, "Default half-life of a feedback event, in days.", gt=0
    )
    harm_multiplier: float = _f(4.0, CASS_SCORING, "Weight of decayed harm against help.", ge=0)
    multiplier_candidate: float = _f(0.5, CASS_SCORING, "Score multiplier for candidate bullets.")
    multiplier_established: float = _f(
        1.0, CASS_SCORING, "Score multiplier for established bullets."
    )
    multiplier_proven: float = _f(1.5, CASS_SCORING, "Score multiplier for proven bullets.")
    multiplier_deprecated: float = _f(0.0, CASS_SCORING, "Score multiplier for deprecated bullets.")
    min_events_for_rung: float = _f(
        3.0, CASS_SCORING, "Total decayed events before leaving candidate."
    )
    deprecate_harm_ratio: float = _f(
        0.3, CASS_SCORING, "Harm ratio above which a bullet is deprecated."
    )
    proven_min_helpful: float = _f(10.0, CASS_SCORING, "Decayed help needed to be proven.")
    proven_max_harm_ratio: float = _f(
        0.1, CASS_SCORING, "Harm ratio below which a bullet may be proven."
    )
    deprecate_score_below: float = _f(
        -3.0, OWN_SCORING, "Effective score below which deprecation is outright."
    )
    epsilon: float = _f(0.01, CASS, "Tolerance for float comparisons of rungs.", ge=0)
    stale_after_days: float = _f(
        180.0, OWN_SCORING, "Silence after which a bullet needs re-validation.", gt=0
    )

    # Curation (SPEC §5)
    duplicate_jaccard: float = _f(
        0.85, OWN_SCORING, "Token Jaccard at which an add folds into a helpful."
    )
    blocked_jaccard: float = _f(0.85, OWN_SCORING, "Token Jaccard at which an add matches a block.")
    blocked_fuzz_ratio: float = _f(
        90.0, OWN_SCORING, "rapidfuzz ratio at which an add matches a block."
    )
    invert_min_harm: float = _f(3.0, OWN_SCORING, "Decayed harm at which a rule may be inverted.")
    invert_harm_over_help: float = _f(
        2.0, OWN_SCORING, "Harm must exceed help by this factor to invert."
    )

    # Recall (SPEC §6)
    exact_points: float = _f(3.0, CASS, "Keyword points for an exact token match.")
    substring_points: float = _f(1.0, CASS, "Keyword points for a substring match.")
    tag_points: float = _f(5.0, CASS, "Extra keyword points when a query token equals a tag.")
    semantic_weight: float = _f(0.6, OWN_SCORING, "Weight of similarity in relevance.", ge=0, le=1)
    similarity_scale: float = _f(10.0, OWN_SCORING, "cosine → keyword-point scale.")
    min_relevance: float = _f(0.1, CASS_CONFIG, "Relevance below which a bullet is not recalled.")
    min_confidence: float = _f(0.1, OWN_SCORING, "Floor on effective score in the final score.")
    query_stop_words: tuple[str, ...] = _f(
        CASS_STOP_WORDS, CASS_STOP, "Words dropped from a recall query (never from content)."
    )
    query_stop_words_extra: tuple[str, ...] = _f(
        EXTRA_STOP_WORDS,
        OWN_SCORING,
        "More query words dropped; set [] to match cass-memory exactly.",
    )

    # Outcomes (SPEC §8)
    outcome_success_weight: float = _f(1.0, OWN_OUTCOMES, "Helpful weight of a successful outcome.")
    outcome_failure_weight: float = _f(1.0, OWN_OUTCOMES, "Harmful weight of a failed outcome.")
    outcome_partial_weight: float = _f(1 / 3, OWN_OUTCOMES, "Helpful weight of a partial outcome.")
    confidence_start: float = _f(0.5, OWN_CONFIDENCE, "Starting confidence when absent.")
    confidence_success: float = _f(0.15, OWN_CONFIDENCE, "Confidence added by a success.")
    confidence_failure: float = _f(-0.25, OWN_CONFIDENCE, "Confidence added by a failure.")
    confidence_partial: float = _f(0.05, OWN_CONFIDENCE, "Confidence added by a partial success.")
    confidence_min: float = _f(0.1, OWN_CONFIDENCE, "Lower clamp of confidence.")
    confidence_max: float = _f(1.0, OWN_CONFIDENCE, "Upper clamp of confidence.")

    # Reflection (SPEC §7)
    reflect_max_iterations: int = _f(3, CASS_CONFIG, "Reflection iterations per session.", ge=1)
    reflect_max_deltas: int = _f(50, OWN_OUTCOMES, "Deltas at which reflection stops.", ge=1)
    reflect_prompt_chars: int = _f(
        32000,
        OWN_HOOKS,  # a model reflector run by the session-end hook
        "Longest prompt sent to a model reflector per call, in characters: the session goes "
        "in as a digest (asks, errors and fixes, the final state; tool output trimmed).",
        ge=8000,
        le=2_000_000,
    )

    # Content and every other field an agent or a caller supplies (checked, never cut)
    max_content_length: int = _f(8000, SPEC, "Longest bullet content accepted, in characters.")
    max_text_length: int = _f(
        2000, SPEC, "Longest free text: a feedback context, a reason, an outcome context.", ge=1
    )
    max_id_length: int = _f(
        128, SPEC, "Longest id: of a bullet, proposal, block or receipt, in characters.", ge=1
    )
    max_ref_length: int = _f(4096, SPEC, "Longest session ref (a path or URL).", ge=1)
    max_label_length: int = _f(
        200, SPEC, "Longest tag, category, kind or scope key, in characters.", ge=1
    )
    max_tags: int = _f(32, SPEC, "Most tags on one bullet.", ge=0)
    max_batch: int = _f(
        1000, SPEC, "Most deltas in one batch or proposal, most ids in one outcome.", ge=1
    )
    max_query_length: int = _f(2000, SPEC, "Longest recall query, in characters.", ge=1)

    def stop_words(self) -> frozenset[str]:
        """Every query stop word of this policy."""
        return frozenset(self.query_stop_words) | frozenset(self.query_stop_words_extra)

    # Agent hooks (SPEC §10)
    hook_context_chars: int = _f(
        4000, OWN_HOOKS, "Characters of context a hook may add to an agent's prompt.", ge=0
    )

    def __init__(self, **values: Any) -> None:
        if values:
            values = _validated(values)
        for name, default in _defaults().items():
            object.__setattr__(self, name, values.get(name, default))
        object.__setattr__(self, "_fields_set", frozenset(values))

    @property
    def fields_set(self) -> frozenset[str]:
        """The names given when this policy was built (a policy file's own settings)."""
        given: frozenset[str] = self.__dict__["_fields_set"]  # set by __init__, not a field
        return given

    def values(self) -> dict[str, Any]:
        """Every constant by name, in declaration order."""
        return {name: getattr(self, name) for name in _defaults()}

    def multiplier(self, maturity: str) -> float:
        return {
            "candidate": self.multiplier_candidate,
            "established": self.multiplier_established,
            "proven": self.multiplier_proven,
            "deprecated": self.multiplier_deprecated,
        }[str(maturity)]

    @classmethod
    def names(cls) -> list[str]:
        """Every constant's name, in declaration order."""
        return list(_defaults())

    @classmethod
    def range_of(cls, name: str) -> tuple[float, float, bool] | None:
        """(from, to, whether `from` itself is refused) of a numeric constant; None for one
        that is not a number (a list of words)."""
        field = next(c for n, c in _CONSTANTS.items() if n == name)
        if type(field.default) not in (int, float):
            return None
        low, high = RANGES.get(name, GENERIC_RANGE)
        given = field.metadata["constraints"]
        low = given.get("gt", given.get("ge", low))
        return low, given.get("le", high), "gt" in given

    @classmethod
    def explain(cls) -> list[tuple[str, Any, str, str]]:
        """(name, default, source, description) for every constant."""
        return [
            (name, c.default, c.metadata["source"], c.metadata["doc"])
            for name, c in _CONSTANTS.items()
        ]


@functools.cache
def _defaults() -> dict[str, Any]:
    return {name: c.default for name, c in _CONSTANTS.items()}


@functools.cache
def validator() -> type[BaseModel]:
    """The pydantic model that validates a policy: one field per constant, with its
    default, description, source and constraints (built on first use: it is slow)."""
    from pydantic import (  # lazy: mark, recall, hook prompt, every typer command
        ConfigDict,
        Field,
        create_model,
    )

    hints = typing.get_type_hints(Policy)
    fields: dict[str, Any] = {}
    for name, c in _CONSTANTS.items():
        bounds = Policy.range_of(name)
        constraints = dict(c.metadata["constraints"])
        if bounds is not None:
            low, high, above = bounds
            constraints.pop("ge", None)
            constraints.update({"gt" if above else "ge": low, "le": high})
        fields[name] = (
            hints[name],
            Field(
                default=c.default,
                description=c.metadata["doc"],
                json_schema_extra={"source": c.metadata["source"]},
                **constraints,
            ),
        )
    # allow_inf_nan=False: NaN and the infinities are refused for every number, by name.
    config = ConfigDict(extra="forbid", frozen=True, allow_inf_nan=False)
    return create_model("Policy", __config__=config, **fields)


def _validated(values: dict[str, Any]) -> dict[str, Any]:
    """`values` checked and coerced by pydantic (raises `pydantic.ValidationError`)."""
    checked = validator().model_validate(values)
    return {name: getattr(checked, name) for name in values}


# Every constant as declared, by name, in declaration order; the class keeps each one's
# default (as a dataclass's would).
_CONSTANTS: dict[str, Constant] = {n: c for n, c in vars(Policy).items() if isinstance(c, Constant)}
for _name, _constant in _CONSTANTS.items():
    setattr(Policy, _name, _constant.default)
del _name, _constant

DEFAULT_POLICY = Policy()
