"""Scoring of SPEC §4 as pure functions of (events, policy, now). No SQL here.

The one definition of a bullet's score at a moment: every reader (the evidence cache, the
rank table, recall's first cut and its numpy path, as-of recall, the workbench rows, time
travel, score trends, policy replay) calls the functions below, and none writes the decay
out again (tests/test_scoring_forms.py fails on `0.5 **`, `2 **` or `exp2` anywhere else in
`src/`). Each arithmetic function takes floats or numpy arrays alike, and both forms give
the same bits (the same test, on generated inputs):

- `carry(now, ref, half_life)`: the factor 0.5 ** ((now − ref) / half-life) that takes sums
  referenced to `ref` to `now` (`half_factor` of the halvings);
- `decayed(weight, age, half_life)`: one event's weight after `age` days (future events:
  age 0);
- `sums_at(ref, helpful, harmful, half_life, now)`: an evidence cache row read at `now`;
- `effective_with(h, x, multiplier, policy)`: (H − 4X) · multiplier;
- `final_score(relevance, effective, policy)`: relevance · max(min_confidence, effective).

Two details keep the forms equal. The power is libm's `pow` in both: Python's `0.5 ** x`,
and `numpy.float_power(0.5, x)` for arrays (numpy's own `**` and `exp2` use vector code that
differs from libm in the last place for about one value in twenty on a machine with
AVX-512). Below `TINY` a value is flushed to 0.0 in both forms (`half_factor`, `scaled`).

The second form, and the place to change too: the database's own fold, evidence and
maturity pass for the agent role are these functions written in PL/pgSQL
(`store/postgres/scoring_sql.py`), checked bit for bit by tests/test_pg_scoring.py.

`DecayAccumulator` is the exponential-decay identity that lets the store keep O(1) per-bullet
aggregates: Σ w·0.5^((now−tᵢ)/h) = 0.5^((now−ref)/h) · Σ w·0.5^((ref−tᵢ)/h) for now ≥ ref.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from datetime import datetime
from typing import TYPE_CHECKING, Any, overload

from .record import FrozenRecord, Record
from .terms import Maturity

if TYPE_CHECKING:
    import numpy as np

    from .model import Score
    from .policy import Policy

DAY = 86400.0
LADDER = (Maturity.DEPRECATED, Maturity.CANDIDATE, Maturity.ESTABLISHED, Maturity.PROVEN)
RANK = {m: i for i, m in enumerate(LADDER)}
# Names the maturity pass's rules: a playbook last passed under other rules gets one full
# pass. "2": cass-memory's demotion (negative score), not decay.
PASS_RULES = ":2"


# Evidence below TINY counts as none: a decayed value that small (2^-900, about 1e-271:
# 810 half-lives of silence) is flushed to 0.0 instead of going on into subnormal numbers.
# PostgreSQL raises on a float underflow where Python gives 0.0, so the database's own
# maturity pass (store/postgres/scoring_sql.py) flushes at the same place, and both give the
# same bits for the same log. No score a person or a rung can tell apart is touched by it.
TINY = 2.0**-900
MAX_HALVINGS = 896.0  # 0.5 ** 896 = 2^-896: the most halvings that stay above TINY


def days(t: datetime) -> float:
    """A timestamp as (fractional) days since the Unix epoch."""
    return t.timestamp() / DAY


_NUMBER = (float, int)  # the float form (numpy's float64 is a float); anything else: arrays
# A product below this may be flushed (twice TINY: the test's rounding cannot reach it).
_NEAR_TINY = 2 * TINY


def half_factor(halvings: Any) -> Any:
    """0.5 ** halvings, or 0.0 past MAX_HALVINGS (floats or arrays)."""
    if isinstance(halvings, _NUMBER):
        return 0.0 if halvings > MAX_HALVINGS else 0.5**halvings
    import numpy as np  # lazy: numpy: mark, recall, hook prompt, every typer command

    return np.where(halvings > MAX_HALVINGS, 0.0, np.float_power(0.5, halvings))


def scaled(value: Any, factor: Any) -> Any:
    """value * factor, or 0.0 where that would be below TINY (floats or arrays)."""
    if isinstance(value, _NUMBER) and isinstance(factor, _NUMBER):
        return _scaled(value, factor)
    import numpy as np  # lazy: numpy: mark, recall, hook prompt, every typer command

    product = value * factor
    size = np.abs(product)
    if not ((size < _NEAR_TINY) & (size > 0.0)).any():
        # The common case, and the same numbers: a product of at least twice TINY passes
        # the test below as it is, and one of 0 is 0.0 (for finite values: the only ones
        # a score has)
        return product + 0.0
    with np.errstate(divide="ignore"):  # TINY / 0: inf, and the value is flushed, as above
        tiny = (value == 0.0) | (factor == 0.0) | (np.abs(value) < TINY / np.abs(factor))
    return np.where(tiny, 0.0, product)


def _scaled(value: float, factor: float) -> float:
    """`scaled` of two numbers."""
    if value == 0.0 or factor == 0.0 or abs(value) < TINY / abs(factor):
        return 0.0
    return value * factor


def nonneg(x: Any) -> Any:
    """max(0, x) as numpy's `maximum(x, 0.0)` has it (floats or arrays)."""
    if isinstance(x, _NUMBER):
        return 0.0 if x < 0.0 else x
    import numpy as np  # lazy: numpy: mark, recall, hook prompt, every typer command

    return np.maximum(x, 0.0)


def carry(now: Any, ref: Any, half_life: Any) -> Any:
    """0.5 ** ((now − ref) / half_life): the factor that takes decayed sums referenced to
    `ref` to `now` (0.0 past MAX_HALVINGS; above 1 for `now` before `ref`)."""
    return half_factor((now - ref) / half_life)


def decayed(weight: Any, age: Any, half_life: Any) -> Any:
    """weight * 0.5 ** (max(0, age) / half_life): an event's weight `age` days after it was
    observed (SPEC §4: an event in the future counts as age 0)."""
    return scaled(weight, half_factor(nonneg(age) / half_life))


def sums_at(ref: Any, helpful: Any, harmful: Any, half_life: Any, now: Any) -> tuple[Any, Any]:
    """(H, X) at `now` of decayed sums referenced to `ref` (an evidence cache row); exact
    for now >= ref (`DecayAccumulator`)."""
    factor = carry(now, ref, half_life)
    return scaled(helpful, factor), scaled(harmful, factor)


class RawEvent(FrozenRecord):
    """What scoring needs of an event: kind, observation time in epoch days, weight."""

    kind: str
    at: float
    weight: float

    def __init__(self, kind: str, at: float, weight: float) -> None:
        object.__setattr__(self, "kind", kind)
        object.__setattr__(self, "at", at)
        object.__setattr__(self, "weight", weight)


def decayed_totals(events: Iterable[RawEvent], now: float, half_life: float) -> tuple[float, float]:
    """(H, X): the decayed sums of helpful and harmful events at `now` (epoch days)."""
    h = x = 0.0
    for e in events:
        v = decayed(e.weight, now - e.at, half_life)
        if e.kind == "helpful":
            h += v
        else:
            x += v
    return h, x


class DecayAccumulator(Record):
    """Decayed helpful/harmful sums referenced to `ref` (the latest event time folded in).

    Folding an event is O(1); the value at any `now >= ref` is exact. For `now < ref` (an
    as-of read before the latest event) the caller must fall back to the raw events.
    """

    half_life: float
    ref: float
    helpful: float
    harmful: float
    count: int

    def __init__(
        self,
        half_life: float,
        ref: float = float("-inf"),
        helpful: float = 0.0,
        harmful: float = 0.0,
        count: int = 0,
    ) -> None:
        self.half_life = half_life
        self.ref = ref
        self.helpful = helpful
        self.harmful = harmful
        self.count = count

    def fold(self, kind: str, at: float, weight: float) -> None:
        """Fold one event (numbers, not arrays): `sums_at` then `decayed`, written out
        (the engine folds every event of the log through here: ten million in a team's
        year), the same operations in the same order (tests/test_scoring.py holds the two
        forms to the same bits)."""
        ref, half_life = self.ref, self.half_life
        if at > ref:
            if self.count:  # sums_at(ref, helpful, harmful, half_life, at)
                halvings = (at - ref) / half_life
                factor = 0.0 if halvings > MAX_HALVINGS else 0.5**halvings
                self.helpful = _scaled(self.helpful, factor)
                self.harmful = _scaled(self.harmful, factor)
            self.ref = ref = at
        # decayed(weight, ref - at, half_life)
        age = ref - at
        halvings = (0.0 if age < 0.0 else age) / half_life
        v = _scaled(weight, 0.0 if halvings > MAX_HALVINGS else 0.5**halvings)
        if kind == "helpful":
            self.helpful += v
        else:
            self.harmful += v
        self.count += 1

    def at(self, now: float) -> tuple[float, float]:
        if not self.count:
            return 0.0, 0.0
        if now < self.ref:
            raise ValueError("accumulator cannot answer before its reference time")
        return sums_at(self.ref, self.helpful, self.harmful, self.half_life, now)


def effective_score(helpful: float, harmful: float, maturity: str, policy: Policy) -> float:
    """(H - 4X) * multiplier for one bullet of this maturity (`effective_with`), as the
    maturity pass reads it on both backends."""
    return effective_with(helpful, harmful, policy.multiplier(maturity), policy)


@overload
def effective_with(helpful: float, harmful: float, multiplier: float, policy: Policy) -> float: ...
@overload
def effective_with(
    helpful: np.ndarray, harmful: np.ndarray, multiplier: np.ndarray, policy: Policy
) -> np.ndarray: ...
def effective_with(helpful: Any, harmful: Any, multiplier: Any, policy: Policy) -> Any:
    """(H - 4X) * multiplier: the effective score, for floats or numpy arrays alike (flushed
    to 0.0 below TINY, see `scaled`)."""
    # + 0.0 turns the -0.0 of a deprecated bullet with net harm into 0.0
    return scaled(helpful - scaled(harmful, policy.harm_multiplier), multiplier) + 0.0


def final_score(relevance: Any, effective: Any, policy: Policy) -> Any:
    """Recall's rank (SPEC §6): relevance * max(min_confidence, effective), for floats or
    numpy arrays alike (the float form takes the max as numpy's `maximum` does)."""
    floor = policy.min_confidence
    if isinstance(effective, _NUMBER):
        return relevance * (floor if floor >= effective else effective)
    import numpy as np  # lazy: numpy: mark, recall, hook prompt, every typer command

    return relevance * np.maximum(floor, effective)


def effective_scores(
    helpful: np.ndarray, harmful: np.ndarray, maturities: Sequence[str], policy: Policy
) -> np.ndarray:
    """`effective_score` over whole columns (numpy arrays of H and X, one maturity each)."""
    import numpy as np  # lazy: numpy: mark, recall, hook prompt, every typer command

    mult = {m: policy.multiplier(m) for m in set(maturities)}
    factor = np.fromiter((mult[m] for m in maturities), dtype=np.float64, count=len(maturities))
    return effective_with(helpful, harmful, factor, policy)


def score_of(
    helpful: float,
    harmful: float,
    last_activity: float,
    maturity: str,
    now: float,
    policy: Policy,
) -> Score:
    """A bullet's Score from its decayed evidence (H, X, latest activity) at `now`."""
    from .model import Score  # lazy: pydantic: mark, recall, hook prompt, every typer command

    return Score(
        helpful=helpful,
        harmful=harmful,
        effective=effective_score(helpful, harmful, maturity, policy),
        earned=earned_rung(helpful, harmful, policy),
        stale=is_stale(last_activity, now, policy),
    )


def earned_rung(helpful: float, harmful: float, policy: Policy) -> Maturity:
    """The rung the evidence alone earns (SPEC §4).

    Event totals are compared with an epsilon (a decayed 2.9999999 counts as 3); ratios are
    scale-free and compared as they are.
    """
    eps = policy.epsilon
    total = helpful + harmful
    ratio = harmful / total if total > 0 else 0.0
    if ratio > policy.deprecate_harm_ratio and total >= policy.min_events_for_rung - eps:
        return Maturity.DEPRECATED
    if total < policy.min_events_for_rung - eps:
        return Maturity.CANDIDATE
    if helpful >= policy.proven_min_helpful - eps and ratio < policy.proven_max_harm_ratio:
        return Maturity.PROVEN
    return Maturity.ESTABLISHED


def next_maturity(
    current: Maturity | str,
    helpful: float,
    harmful: float,
    pinned: bool,
    policy: Policy,
) -> Maturity:
    """One maturity pass for one bullet (SPEC §4, cass-memory's checkForPromotion then
    checkForDemotion).

    Pinned and deprecated bullets never move. Promotion jumps to the earned rung; then, at
    the rung reached, an effective score below `deprecate_score_below` (−3) deprecates
    outright and a negative one drops one rung (a candidate stays a candidate). A rung
    earned lower than the current one demotes nothing by itself: decay alone never demotes.
    """
    current = Maturity(current)
    if pinned or current is Maturity.DEPRECATED:
        return current
    new = current
    earned = earned_rung(helpful, harmful, policy)
    if RANK[earned] > RANK[current]:
        new = earned
    score = effective_score(helpful, harmful, new, policy)
    if score < policy.deprecate_score_below:
        return Maturity.DEPRECATED
    if score < 0 and new is not Maturity.CANDIDATE:
        return LADDER[RANK[new] - 1]
    return new


def still_demoting(
    helpful: float, harmful: float, maturity: Maturity | str, pinned: bool, policy: Policy
) -> bool:
    """Whether the next pass would move this bullet without new evidence: a negative score
    above candidate (it drops one rung per pass).

    Nothing else can move without new evidence. Decay scales H and X by the same factor, so
    it keeps the score's sign, never lifts the earned rung, and never pushes a score past −3
    (it only shrinks it towards 0).
    """
    maturity = Maturity(maturity)
    if pinned or maturity in (Maturity.DEPRECATED, Maturity.CANDIDATE):
        return False
    return effective_score(helpful, harmful, maturity, policy) < 0


def is_stale(last_activity: float, now: float, policy: Policy) -> bool:
    """No feedback (or creation) for `stale_after_days`: re-validate. Changes no score."""
    return now - last_activity >= policy.stale_after_days


def should_invert(helpful: float, harmful: float, policy: Policy) -> bool:
    """Step 5 of curation: harm at least 3 and more than twice the help."""
    return harmful >= policy.invert_min_harm - policy.epsilon and harmful > scaled(
        helpful, policy.invert_harm_over_help
    )
