"""Every constant of SPEC §4–§6, with where each default came from.

`playbook policy show` prints these with their provenance. A policy can be loaded from a
`playbook.toml` file (a `[policy]` table, or the top level) with `load_policy`.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

SEED = "seed 000 (the playbook design)"
CASS = "cass-memory (the TypeScript peer)"
SEED_OUTCOMES = "seed 001 (outcome confidence)"
SPEC = "SPEC (this project's contract)"


def _f(default: Any, source: str, doc: str, **kw: Any) -> Any:
    return Field(default=default, description=doc, json_schema_extra={"source": source}, **kw)


class Policy(BaseModel):
    """The tunable constants. Changing one re-scores all history: scores are derived."""

    model_config = ConfigDict(extra="forbid", frozen=True, defer_build=True)

    # Scoring (SPEC §4)
    half_life_days: float = _f(90.0, SEED, "Default half-life of a feedback event, in days.", gt=0)
    harm_multiplier: float = _f(4.0, SEED, "Weight of decayed harm against help.", ge=0)
    multiplier_candidate: float = _f(0.5, SEED, "Score multiplier for candidate bullets.")
    multiplier_established: float = _f(1.0, SEED, "Score multiplier for established bullets.")
    multiplier_proven: float = _f(1.5, SEED, "Score multiplier for proven bullets.")
    multiplier_deprecated: float = _f(0.0, SEED, "Score multiplier for deprecated bullets.")
    min_events_for_rung: float = _f(3.0, SEED, "Total decayed events before leaving candidate.")
    deprecate_harm_ratio: float = _f(0.3, SEED, "Harm ratio above which a bullet is deprecated.")
    proven_min_helpful: float = _f(10.0, SEED, "Decayed help needed to be proven.")
    proven_max_harm_ratio: float = _f(0.1, SEED, "Harm ratio below which a bullet may be proven.")
    deprecate_score_below: float = _f(
        -3.0, SEED, "Effective score below which deprecation is outright."
    )
    epsilon: float = _f(0.01, CASS, "Tolerance for float comparisons of rungs.", ge=0)
    stale_after_days: float = _f(
        180.0, SEED, "Silence after which a bullet needs re-validation.", gt=0
    )

    # Curation (SPEC §5)
    duplicate_jaccard: float = _f(0.85, SEED, "Token Jaccard at which an add folds into a helpful.")
    blocked_jaccard: float = _f(0.85, SPEC, "Token Jaccard at which an add matches a block.")
    blocked_fuzz_ratio: float = _f(90.0, SPEC, "rapidfuzz ratio at which an add matches a block.")
    invert_min_harm: float = _f(3.0, SEED, "Decayed harm at which a rule may be inverted.")
    invert_harm_over_help: float = _f(2.0, SEED, "Harm must exceed help by this factor to invert.")

    # Recall (SPEC §6)
    exact_points: float = _f(3.0, CASS, "Keyword points for an exact token match.")
    substring_points: float = _f(1.0, CASS, "Keyword points for a substring match.")
    tag_points: float = _f(5.0, CASS, "Extra keyword points when a query token equals a tag.")
    semantic_weight: float = _f(0.6, SEED, "Weight of similarity in relevance.", ge=0, le=1)
    similarity_scale: float = _f(10.0, SPEC, "cosine → keyword-point scale.")
    min_relevance: float = _f(0.1, SEED, "Relevance below which a bullet is not recalled.")
    min_confidence: float = _f(0.1, SEED, "Floor on effective score in the final score.")

    # Outcomes (SPEC §8)
    outcome_success_weight: float = _f(1.0, SPEC, "Helpful weight of a successful outcome.")
    outcome_failure_weight: float = _f(1.0, SPEC, "Harmful weight of a failed outcome.")
    outcome_partial_weight: float = _f(1 / 3, SPEC, "Helpful weight of a partial outcome.")
    confidence_start: float = _f(0.5, SEED_OUTCOMES, "Starting confidence when absent.")
    confidence_success: float = _f(0.15, SEED_OUTCOMES, "Confidence added by a success.")
    confidence_failure: float = _f(-0.25, SEED_OUTCOMES, "Confidence added by a failure.")
    confidence_partial: float = _f(0.05, SEED_OUTCOMES, "Confidence added by a partial success.")
    confidence_min: float = _f(0.1, SEED_OUTCOMES, "Lower clamp of confidence.")
    confidence_max: float = _f(1.0, SEED_OUTCOMES, "Upper clamp of confidence.")

    # Reflection (SPEC §7)
    reflect_max_iterations: int = _f(3, SEED, "Reflection iterations per session.", ge=1)
    reflect_max_deltas: int = _f(50, SEED, "Deltas at which reflection stops.", ge=1)

    # Content
    max_content_length: int = _f(8000, SPEC, "Longest bullet content accepted, in characters.")

    # Agent hooks (SPEC §10)
    hook_context_chars: int = _f(
        4000, SPEC, "Characters of context a hook may add to an agent's prompt.", ge=0
    )

    def multiplier(self, maturity: str) -> float:
        return {
            "candidate": self.multiplier_candidate,
            "established": self.multiplier_established,
            "proven": self.multiplier_proven,
            "deprecated": self.multiplier_deprecated,
        }[str(maturity)]

    @classmethod
    def explain(cls) -> list[tuple[str, Any, str, str]]:
        """(name, default, source, description) for every constant."""
        rows = []
        for name, field in cls.model_fields.items():
            extra = field.json_schema_extra or {}
            source = extra.get("source", "") if isinstance(extra, dict) else ""
            rows.append((name, field.default, str(source), field.description or ""))
        return rows


# The defaults satisfy their own constraints; constructing without validation keeps the
# schema build (tens of ms) off the start-up path of every command.
DEFAULT_POLICY = Policy.model_construct()


def load_policy(path: str | Path) -> Policy:
    """Read a policy from a TOML file; unknown keys are an error (no silent typos)."""
    import tomllib  # only here: every command imports this module

    with open(path, "rb") as fh:
        data = tomllib.load(fh)
    # [reflect] (the hooks' reflector) shares the file; it is not a policy constant.
    table = data.get("policy", {k: v for k, v in data.items() if k != "reflect"})
    return Policy(**table)
