"""The statistics of `policy eval`, each against an independent computation, and the
candidates and provenance files."""

from __future__ import annotations

import random
import tomllib
from pathlib import Path

import numpy as np
import pytest

from playbook.core.policy import DEFAULT_POLICY
from playbook.core.policy_file import (
    describe_provenance,
    dump_toml,
    load_policy,
    load_provenance,
    write_policy,
)
from playbook.policy_eval import CandidateError, default_grid, load_candidates
from playbook.policy_eval.bootstrap import (
    Z95,
    auc_estimates,
    mean_estimates,
    resample,
    session_index,
)
from playbook.policy_eval.candidates import with_current
from playbook.policy_eval.metrics import RIDGE, auc, fit_logistic, log_losses, placements


def brute_auc(scores: list[float], y: list[int]) -> float:
    pos = [s for s, v in zip(scores, y, strict=True) if v]
    neg = [s for s, v in zip(scores, y, strict=True) if not v]
    total = sum(1.0 if p > n else 0.5 if p == n else 0.0 for p in pos for n in neg)
    return total / (len(pos) * len(neg))


def test_auc_counts_ties_as_half() -> None:
    rng = random.Random(4)
    scores = [float(rng.randint(-3, 3)) for _ in range(300)]  # many ties
    y = [int(rng.random() < 0.4 + 0.08 * s) for s in scores]
    assert auc(np.array(scores), np.array(y)) == pytest.approx(brute_auc(scores, y), abs=1e-12)
    place, _ = placements(np.array(scores), np.array(y))
    # a helpful mark's placement: the share of harmful marks below it (ties half)
    neg = [s for s, v in zip(scores, y, strict=True) if not v]
    i = y.index(1)
    below = sum(1.0 if n < scores[i] else 0.5 if n == scores[i] else 0.0 for n in neg)
    assert place[i] == pytest.approx(below / len(neg))
    assert np.isnan(auc(np.array([1.0, 2.0]), np.array([1, 1])))


def test_logistic_fit_is_the_penalised_optimum() -> None:
    rng = np.random.default_rng(5)
    x = rng.normal(size=4000)
    y = (rng.random(4000) < 1 / (1 + np.exp(-(0.3 + 2.0 * x)))).astype(float)
    a, b = fit_logistic(x, y)
    p = 1 / (1 + np.exp(-(a + b * x)))
    assert abs(np.sum(p - y)) < 1e-6  # the intercept's gradient (not penalised)
    assert abs(np.sum((p - y) * x) + RIDGE * b) < 1e-6  # the slope's, with its ridge
    assert a == pytest.approx(0.3, abs=0.15) and b == pytest.approx(2.0, abs=0.2)
    losses = log_losses(x, y, a, b)
    assert losses[0] == pytest.approx(-np.log(p[0] if y[0] else 1 - p[0]))


def test_logistic_fit_stays_finite_on_separated_data() -> None:
    x = np.array([-2.0, -1.0, 1.0, 2.0])
    a, b = fit_logistic(x, np.array([0.0, 0.0, 1.0, 1.0]))
    assert np.isfinite(a) and np.isfinite(b) and b > 0


def _naive_replicates(values, session, counts, lower):  # type: ignore[no-untyped-def]
    """Each replicate by hand: every drawn session's marks, as many times as drawn."""
    out = []
    for row in counts:
        picked = [i for s, n in enumerate(row) for _ in range(int(n))
                  for i in np.flatnonzero(session == s)]  # fmt: skip
        v = values[picked]
        d = v[:, 1].mean() - v[:, 0].mean()
        out.append(-d if lower else d)
    return np.array(out)


def test_session_bootstrap_matches_resampling_by_hand() -> None:
    rng = np.random.default_rng(6)
    keys = [f"s{rng.integers(0, 25)}" for _ in range(180)]
    session, n_s = session_index(keys)
    values = np.column_stack([rng.random(180), rng.random(180) * 0.9])
    counts = resample(n_s, replicates=60, seed=1)
    est = mean_estimates(values, np.ones(180, dtype=bool), session, counts, lower_is_better=True)
    reps = _naive_replicates(values, session, counts, lower=True)
    assert est[1].diff == pytest.approx(values[:, 0].mean() - values[:, 1].mean())
    assert est[1].lo == pytest.approx(np.quantile(reps, 0.025), rel=1e-5)
    assert est[1].hi == pytest.approx(np.quantile(reps, 0.975), rel=1e-5)
    assert est[1].mde == pytest.approx(Z95 * np.std(reps, ddof=1), rel=1e-5)
    assert est[1].events == 180 and est[1].sessions == n_s
    assert est[0].diff == 0 and est[0].lo == 0 == est[0].hi  # the current policy itself


def test_resampling_is_by_session_and_seeded() -> None:
    counts = resample(40, replicates=100, seed=3)
    assert counts.shape == (100, 40) and (counts.sum(axis=1) == 40).all()
    assert (resample(40, replicates=100, seed=3) == counts).all()
    assert not (resample(40, replicates=100, seed=4) == counts).all()


def test_auc_interval_tracks_the_full_rerank_bootstrap() -> None:
    """The linearised AUC replicates have the spread of re-ranking every replicate."""
    rng = np.random.default_rng(7)
    n = 1500
    keys = [f"s{i // 4}" for i in range(n)]
    session, n_s = session_index(keys)
    truth = rng.normal(size=n)
    y = (rng.random(n) < 1 / (1 + np.exp(-truth))).astype(np.int8)
    scores = np.column_stack([truth + rng.normal(size=n), truth + 0.5 * rng.normal(size=n)])
    counts = resample(n_s, replicates=400, seed=2)
    est = auc_estimates(scores, y, np.ones(n, dtype=bool), session, counts)
    full = []
    for row in counts:
        w = row[session].astype(int)
        idx = np.repeat(np.arange(n), w)
        full.append(auc(scores[idx, 1], y[idx]) - auc(scores[idx, 0], y[idx]))
    assert est[1].diff == pytest.approx(auc(scores[:, 1], y) - auc(scores[:, 0], y))
    assert est[1].mde == pytest.approx(Z95 * np.std(full, ddof=1), rel=0.15)
    assert est[1].lo == pytest.approx(np.quantile(full, 0.025), abs=0.01)


# ----------------------------------------------------------------------------- candidates


def test_default_grid_and_the_current_policy() -> None:
    grid = default_grid(DEFAULT_POLICY)
    assert len(grid) == 15
    assert {(c.policy.half_life_days, c.policy.harm_multiplier) for c in grid} == {
        (h, w) for h in (30, 60, 90, 180, 365) for w in (2, 4, 8)
    }
    rows = with_current(DEFAULT_POLICY, grid)
    assert rows[0].name == "current (= hl90-harm4)" and rows[0].is_current
    assert len(rows) == 15  # the 90/4 cell is the current policy, listed once


def test_candidates_file(tmp_path: Path) -> None:
    f = tmp_path / "c.toml"
    f.write_text(
        "[candidates.fast]\nhalf_life_days = 21\n\n[candidates.harsh]\nharm_multiplier = 6\n"
    )
    cands = load_candidates(f, DEFAULT_POLICY)
    assert [(c.name, c.changes) for c in cands] == [
        ("fast", {"half_life_days": 21}),
        ("harsh", {"harm_multiplier": 6}),
    ]
    assert cands[0].policy.harm_multiplier == 4  # the rest is the current policy


@pytest.mark.parametrize(
    ("text", "needle"),
    [
        ("[candidates.x]\nmin_events_for_rung = 5\n", "held at its logged values"),
        ("[candidates.x]\nhalf_lif_days = 5\n", "unknown setting 'half_lif_days'"),
        ("[candidates.x]\nhalf_life_days = -5\n", "half_life_days"),
        ("[candidates]\n", "no candidates"),
        ("[candidates.x\n", "not valid TOML"),
    ],
)
def test_candidates_file_errors(tmp_path: Path, text: str, needle: str) -> None:
    f = tmp_path / "c.toml"
    f.write_text(text)
    with pytest.raises(CandidateError, match=needle):
        load_candidates(f, DEFAULT_POLICY)


# ----------------------------------------------------------------------------- provenance


def test_toml_writer_round_trips_hostile_strings() -> None:
    data = {"policy": {"half_life_days": 30.0, "reflect_max_deltas": 7},
            "provenance": {"x y": {"note": 'a "quoted"\\ line\n\x7f\x1b[31m', "ok": True,
                                   "interval": [0.001, -2.5e-07]}}}  # fmt: skip
    assert tomllib.loads(dump_toml(data)) == data


def test_write_policy_keeps_other_settings_and_validates(tmp_path: Path) -> None:
    f = tmp_path / "playbook.toml"
    f.write_text("stale_after_days = 120\n")  # the top-level form
    prov = {"value": 30.0, "date": "2026-01-02", "interval": [0.01, 0.03], "difference": 0.02}
    write_policy(f, {"half_life_days": 30.0}, {"half_life_days": prov})
    policy = load_policy(f)
    assert policy.half_life_days == 30 and policy.stale_after_days == 120
    assert load_provenance(f) == {"half_life_days": prov}
    assert "2026-01-02" in describe_provenance(prov) and "+0.0100" in describe_provenance(prov)
    before = f.read_bytes()
    with pytest.raises(ValueError):
        write_policy(f, {"half_life_days": -1.0}, {})
    assert f.read_bytes() == before  # a refused value writes nothing


def test_a_difference_that_rounds_to_zero_prints_without_a_minus_sign() -> None:
    from playbook.policy_eval.bootstrap import Estimate
    from playbook.policy_eval.report import _cell

    tiny = Estimate(value=0.2357, diff=-0.00001, lo=-0.003, hi=0.00004, mde=0.003, events=9,
                    sessions=3)  # fmt: skip
    assert _cell(tiny) == ("0.2357", "+0.0000 [-0.0030, +0.0000]")
    assert _cell(tiny, 3)[1] == "+0.000 [-0.003, +0.000]"
