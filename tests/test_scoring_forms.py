"""One scoring definition, two forms: `core/scoring.py`'s functions on floats and on numpy
arrays give the same bits, and no module of `src/` but that one writes the decay by hand.

Every reader calls these functions, some with floats (recall's first cut, the evidence
cache), some with arrays (recall's numpy path, the workbench rows, time travel, trends,
policy replay): recall's first cut must equal a full read to the last bit, so equal is
compared bit for bit here (struct-packed), never with a tolerance. The expected numbers
of the first tests are worked out by hand from SPEC §4.
"""

from __future__ import annotations

import random
import struct

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from playbook.core import scoring
from playbook.core.policy import DEFAULT_POLICY, Policy

P = DEFAULT_POLICY


def bits(x: float) -> bytes:
    return struct.pack("<d", float(x))


def same_bits(floats: list[float], array: np.ndarray) -> list[int]:
    """The positions where the float form and the array form differ in any bit."""
    assert array.dtype == np.float64
    return [
        i for i, (a, b) in enumerate(zip(floats, array.tolist(), strict=True)) if bits(a) != bits(b)
    ]


# ------------------------------------------------------------------ by hand (SPEC §4)


def test_carry_and_decay_by_hand() -> None:
    assert scoring.carry(190.0, 10.0, 90.0) == 0.25  # two half-lives
    assert scoring.carry(10.0, 10.0, 90.0) == 1.0
    assert scoring.carry(10.0, 100.0, 90.0) == 2.0  # now before ref: carried back
    assert scoring.decayed(3.0, 45.0, 45.0) == 1.5
    assert scoring.decayed(3.0, -30.0, 45.0) == 3.0  # an event ahead counts at age 0
    assert scoring.sums_at(100.0, 4.0, 2.0, 30.0, 160.0) == (1.0, 0.5)


def test_effective_and_final_by_hand() -> None:
    # (H - 4X) * multiplier: (3 - 4 * 1) * 1.5 for a proven rule
    assert scoring.effective_with(3.0, 1.0, 1.5, P) == -1.5
    assert scoring.effective_score(3.0, 1.0, "proven", P) == -1.5
    eff = scoring.effective_with(0.0, 1.0, 0.0, P)  # a deprecated rule with net harm
    assert eff == 0.0 and bits(eff) == bits(0.0)  # not -0.0
    assert scoring.final_score(2.0, -5.0, P) == 2.0 * 0.1  # min_confidence 0.1
    assert scoring.final_score(2.0, 3.0, P) == 6.0


def test_the_flush_below_tiny_by_hand() -> None:
    hl = 10.0
    assert scoring.carry(896.0 * hl, 0.0, hl) == 2.0**-896
    assert scoring.carry(897.0 * hl, 0.0, hl) == 0.0  # 2^-897 > 0, but past MAX_HALVINGS
    assert scoring.decayed(2.0**-10, 895.0 * hl, hl) == 0.0  # 2^-905 < TINY = 2^-900
    assert scoring.decayed(2.0**5, 895.0 * hl, hl) == 2.0**-890
    assert scoring.sums_at(0.0, 1.0, 2.0**-20, hl, 890.0 * hl) == (2.0**-890, 0.0)


# ------------------------------------------------------------------ float form == array form

EDGES = [0.0, -0.0, 5e-324, 2.0**-1000, scoring.TINY, 2.0**-899, 1e-300, 1.0, 3.0, 1e6, 1e12]
amounts = st.one_of(
    st.sampled_from(EDGES),
    st.floats(min_value=0.0, max_value=1e9, allow_nan=False, allow_subnormal=True),
)
# halvings from two half-lives ahead (sums carried back) to past MAX_HALVINGS
halvings = st.one_of(
    st.sampled_from([-2.0, -0.0, 0.0, 1e-9, 0.5, 1.0, 895.999, 896.0, 896.0001, 1100.0]),
    st.floats(min_value=-2.0, max_value=1100.0, allow_nan=False),
)
half_lives = st.one_of(
    st.sampled_from([90.0, 30.0, 1.0, 0.25, 3650.0]),
    st.floats(min_value=1e-3, max_value=1e4, allow_nan=False),
)
nows = st.floats(min_value=0.0, max_value=60_000.0, allow_nan=False)  # epoch days
multipliers = st.one_of(
    st.sampled_from([0.0, 0.5, 1.0, 1.5, 2.5]),
    st.floats(min_value=0.0, max_value=10.0, allow_nan=False, allow_subnormal=True),
)
policies = st.sampled_from(
    [P, Policy(harm_multiplier=2.0, min_confidence=0.25), Policy(harm_multiplier=0.0)]
)
row = st.tuples(nows, halvings, half_lives, amounts, amounts, multipliers, amounts)


@settings(max_examples=300, deadline=None)
@given(rows=st.lists(row, min_size=1, max_size=40), policy=policies)
def test_float_and_array_forms_give_the_same_bits(
    rows: list[tuple[float, ...]], policy: Policy
) -> None:
    now = np.array([r[0] for r in rows])
    ref = np.array([r[0] - r[1] * r[2] for r in rows])
    hl = np.array([r[2] for r in rows])
    helpful = np.array([r[3] for r in rows])
    harmful = np.array([r[4] for r in rows])
    mult = np.array([r[5] for r in rows])
    rel = np.array([r[6] for r in rows])
    age = now - ref
    n = len(rows)
    one = [(now[i].item(), ref[i].item(), hl[i].item(), age[i].item()) for i in range(n)]

    carry = scoring.carry(now, ref, hl)
    assert not same_bits([scoring.carry(t, r, h) for t, r, h, _ in one], carry)
    dec = scoring.decayed(helpful, age, hl)
    assert not same_bits(
        [scoring.decayed(helpful[i].item(), a, h) for i, (_, _, h, a) in enumerate(one)], dec
    )
    h_arr, x_arr = scoring.sums_at(ref, helpful, harmful, hl, now)
    pairs = [
        scoring.sums_at(r, helpful[i].item(), harmful[i].item(), h, t)
        for i, (t, r, h, _) in enumerate(one)
    ]
    assert not same_bits([p[0] for p in pairs], h_arr)
    assert not same_bits([p[1] for p in pairs], x_arr)
    eff = scoring.effective_with(h_arr, x_arr, mult, policy)
    effs = [scoring.effective_with(h, x, mult[i].item(), policy) for i, (h, x) in enumerate(pairs)]
    assert not same_bits(effs, eff)
    final = scoring.final_score(rel, eff, policy)
    assert not same_bits(
        [scoring.final_score(rel[i].item(), e, policy) for i, e in enumerate(effs)], final
    )


def test_the_forms_agree_on_a_sweep_of_thousands_of_ages() -> None:
    """The power above all: numpy's own `**` differs from libm's `pow` in the last place
    for about one value in twenty on a machine with AVX-512; the forms must not."""
    rng = random.Random(28)
    ages = [rng.uniform(-5.0, 400.0) for _ in range(20_000)] + [
        rng.uniform(0, 1e-6) for _ in range(2000)
    ]
    hls = [rng.choice([90.0, 30.0, 7.0, rng.uniform(0.5, 500.0)]) for _ in ages]
    arr = scoring.decayed(np.ones(len(ages)), np.array(ages), np.array(hls))
    assert not same_bits([scoring.decayed(1.0, a, h) for a, h in zip(ages, hls, strict=True)], arr)
    halv = np.array(ages) / np.array(hls)
    assert not same_bits([scoring.half_factor(x) for x in halv.tolist()], scoring.half_factor(halv))


def test_an_accumulator_reads_what_sums_at_gives() -> None:
    acc = scoring.DecayAccumulator(30.0)
    acc.fold("helpful", 10.0, 1.0)
    acc.fold("harmful", 40.0, 1.0)
    acc.fold("helpful", 25.0, 2.0)
    # at ref 40: 1 * 2^-1 + 2 * 2^-0.5 helpful, 1 harmful; read 60 days later: a quarter
    h, x = acc.at(100.0)
    assert h == pytest.approx((0.5 + 2 * 2**-0.5) / 4, rel=1e-15)
    assert x == 0.25
