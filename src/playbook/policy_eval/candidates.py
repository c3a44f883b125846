"""The policies a replay compares: the current one, a default grid, or a TOML file.

A replay can only vary what changes the playbook's *view* of a logged moment: the decay,
the harm weight, the maturity multipliers and the recall constants. Maturity itself is
held at its logged values (see `replay`), so a candidate that changes a maturity threshold,
a curation constant or an outcome weight cannot be evaluated from the log; such a file is
refused with the reason rather than evaluated as if the change did nothing.
"""

from __future__ import annotations

import tomllib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..core.files import read_toml
from ..core.policy import Policy

GRID_HALF_LIVES = (30.0, 60.0, 90.0, 180.0, 365.0)
GRID_HARM_WEIGHTS = (2.0, 4.0, 8.0)

# What the replay varies; every other constant is held at the current policy's value.
VARIABLE = (
    "half_life_days",
    "harm_multiplier",
    "multiplier_candidate",
    "multiplier_established",
    "multiplier_proven",
    "multiplier_deprecated",
    "min_confidence",
    "min_relevance",
    "exact_points",
    "substring_points",
    "tag_points",
)


class CandidateError(ValueError):
    """A candidates file that cannot be evaluated (a user error)."""


@dataclass(frozen=True)
class Candidate:
    name: str
    policy: Policy
    changes: dict[str, Any] = field(default_factory=dict)  # vs the current policy

    @property
    def is_current(self) -> bool:
        return not self.changes


def _changes(policy: Policy, current: Policy) -> dict[str, Any]:
    return {n: getattr(policy, n) for n in VARIABLE if getattr(policy, n) != getattr(current, n)}


def candidate(name: str, current: Policy, **values: Any) -> Candidate:
    """`current` with `values` changed (validated: a half-life must be positive...)."""
    unknown = sorted(set(values) - set(VARIABLE))
    if unknown:
        fields = Policy.names()
        bad = [u for u in unknown if u not in fields]
        if bad:
            raise CandidateError(f"candidate {name!r}: unknown setting {bad[0]!r}")
        raise CandidateError(
            f"candidate {name!r}: {unknown[0]} cannot be evaluated by replaying the log "
            "(maturity is held at its logged values; only decay, harm weight, maturity "
            f"multipliers and recall constants vary: {', '.join(VARIABLE)})"
        )
    from pydantic import ValidationError  # lazy: pydantic, only for a candidate file

    try:
        policy = Policy(**{**current.values(), **values})
    except ValidationError as exc:
        err = exc.errors(include_url=False)[0]
        where = ".".join(str(p) for p in err["loc"])
        raise CandidateError(f"candidate {name!r}: {where}: {err['msg']}") from None
    return Candidate(name, policy, _changes(policy, current))


def grid_name(half_life: float, harm: float) -> str:
    return f"hl{half_life:g}-harm{harm:g}"


def default_grid(current: Policy) -> list[Candidate]:
    """Half-life 30/60/90/180/365 days x harm weight 2/4/8, other constants as `current`."""
    return [
        candidate(grid_name(h, w), current, half_life_days=h, harm_multiplier=w)
        for h in GRID_HALF_LIVES
        for w in GRID_HARM_WEIGHTS
    ]


def load_candidates(path: str | Path, current: Policy) -> list[Candidate]:
    """Named policies from a TOML file: `[candidates.NAME]` tables (or top-level tables),
    each a few settings changed from the current policy."""
    path = Path(path)
    try:
        data = read_toml(path)
    except tomllib.TOMLDecodeError as exc:
        raise CandidateError(f"{path}: not valid TOML ({exc})") from None
    tables = data.get("candidates", data)
    if not isinstance(tables, dict) or not tables:
        raise CandidateError(f"{path}: no candidates (expected [candidates.NAME] tables)")
    out = []
    for name, values in tables.items():
        if not isinstance(values, dict):
            raise CandidateError(f"{path}: {name!r} is not a table of settings")
        out.append(candidate(str(name), current, **values))
    return out


def with_current(current: Policy, candidates: list[Candidate]) -> list[Candidate]:
    """The current policy first (named "current"), then each distinct challenger once.

    A challenger equal to the current policy is the current policy: it is dropped, and the
    current row carries its name as well, so the table still shows it."""
    names = [c.name for c in candidates if c.is_current]
    label = "current" + (f" (= {', '.join(names)})" if names else "")
    out = [Candidate(label, current, {})]
    seen: set[tuple[tuple[str, Any], ...]] = set()
    for c in candidates:
        key = tuple(sorted(c.changes.items()))
        if c.is_current or key in seen:
            continue
        seen.add(key)
        out.append(c)
    return out
