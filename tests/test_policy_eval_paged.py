"""`policy eval` reads the log a page at a time and keeps columns (issue 31): its report is,
byte for byte, the one the whole-history computation gave.

The reference (`helpers/policy_eval_reference*.py`) is the code `policy eval` ran before:
the whole log read at once (`Past.read_history`), a query per context word
(`Rank.token_matches`), (marks x candidates) matrices for the statistics. Each playbook is
evaluated with pages of a few marks, so moments and sessions straddle pages, on both
backends, with the clock pinned.
"""

from __future__ import annotations

import importlib
import math
import random
from datetime import UTC, datetime, timedelta
from typing import Any

import numpy as np
import pytest

from playbook.core import scoring
from playbook.policy_eval import candidate, hit_parts, hits
from playbook.policy_eval import replay as replay_module
from playbook.policy_eval.log_columns import parse_times
from playbook.store import PlaybookStore, log_pages, parse_iso
from playbook.store.checks import is_time

from .helpers import Clock
from .helpers.policy_eval_histories import malformed_marks, varied_history
from .helpers.policy_eval_same import same_report, scoring_iso
from .helpers.policy_eval_worlds import flipping_world

# (the package's `evaluate` is the function; its module is reached by name)
evaluate_module = importlib.import_module("playbook.policy_eval.evaluate")


@pytest.mark.parametrize(("seed", "top"), [(3, hits.TOP), (11, 2)])
def test_a_history_with_lineage_maturity_and_future_marks_gives_the_same_report(
    store: PlaybookStore, clock: Clock, monkeypatch: pytest.MonkeyPatch, seed: int, top: int
) -> None:
    varied_history(store, clock, seed)
    for i in range(3):  # contexts no bullet matches, or only in part
        store.add_feedback(store.bullets()[i].id, "helpful", context=f"zork{i} quux")
        store.add_feedback(store.bullets()[i].id, "harmful", context=f"npm zork{i}")
    clock.advance(days=1)
    # top 2: contexts decided from a few of their bullets, then with those of several
    # parts, then whole; parts looked up by mask and by key
    monkeypatch.setattr(hits, "TOP", top)
    monkeypatch.setattr(hit_parts, "SMALL_PART", 3)
    got = same_report(store, monkeypatch, page=7, split=0.4, k=3)
    assert got["log"]["heldout_with_context"] > 100  # recall@k was compared, mark by mark
    assert (
        got["candidates"][1]["metrics"]["auc"]["interval"][0]
        == got["candidates"][1]["metrics"]["auc"]["interval"][0]
    )  # an interval, not nan


def test_a_world_with_a_verdict_gives_the_same_report(
    store: PlaybookStore, clock: Clock, monkeypatch: pytest.MonkeyPatch
) -> None:
    flipping_world(store, clock, period=60, rules=12, days=120, marks_per_day=10)
    clock.advance(days=1)
    got = same_report(store, monkeypatch, page=5, replicates=300)
    assert got["verdict"]["challenger"] is not None
    assert same_report(store, monkeypatch, page=100_000, replicates=300) == got


def test_candidates_with_fractional_points_give_the_same_report(
    store: PlaybookStore, clock: Clock, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Relevances that are not whole numbers are taken as recall takes them (ranked whole)."""
    varied_history(store, clock, 7, steps=300)
    current = store.policy
    chosen = [
        candidate("fractional", current, exact_points=2.5, substring_points=0.7),
        candidate("floor", current, min_relevance=3.5, min_confidence=0.0),
        candidate("short", current, half_life_days=30, harm_multiplier=8),
    ]
    got = same_report(store, monkeypatch, page=9, candidates=chosen, split=0.5, k=2)
    assert [c["name"] for c in got["candidates"]][1:] == ["fractional", "floor", "short"]


def test_malformed_marks_are_skipped_as_before(
    store: PlaybookStore, clock: Clock, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Rows written before the checks existed, first, last and among the others: left out,
    as the whole-history read left them out (the bounds of the log are well-formed marks)."""
    monkeypatch.setattr(evaluate_module, "LAST", 2)  # the bounds are read 2 rows at a time
    monkeypatch.setattr(log_pages, "LAST", 2)
    varied_history(store, clock, 5, steps=200)
    bid = store.bullets()[0].id
    good = {"bullet_id": bid, "kind": "helpful", "weight": 1.0}
    poison = [("weight", math.inf), ("weight", "NaN"), ("weight", 1e6), ("at", "yesterday"),
              ("at", "2026-02-30T12:00:00.000000Z"), ("at", "2026-03-01T12:00:00Z"),
              ("recorded_at", "2026-03-01T24:00:00.000000Z")]  # fmt: skip
    rows = []
    for i, (column, value) in enumerate(poison):
        when = scoring_iso(datetime(2020 + 10 * (i % 2), 1, 1, tzinfo=UTC) if i % 3 else clock.t)
        rows.append(good | {"at": when, "recorded_at": when, column: value})
    malformed_marks(store, rows)
    got = same_report(store, monkeypatch, page=4, split=0.5, k=3)
    assert got["log"]["events"] == len(store.past.read_history().events)


def test_the_page_timestamps_are_read_as_the_store_reads_them() -> None:
    """`parse_times` certifies only stored times (`is_time`), and gives their microseconds;
    epoch days computed from them are `scoring.days(parse_iso(text))` to the last bit."""
    rng = random.Random(4)
    epoch = datetime(1970, 1, 1, tzinfo=UTC)
    good = [
        scoring_iso(epoch + timedelta(microseconds=rng.randrange(2**53 - 2))) for _ in range(3000)
    ]
    good += ["2024-02-29T23:59:59.999999Z", "1970-01-01T00:00:00.000000Z"]
    bad = [
        "2023-02-29T00:00:00.000000Z", "2026-03-01T24:00:00.000000Z",
        "2026-13-01T00:00:00.000000Z", "2026-03-01T12:00:00Z", "2026-03-01 12:00:00.000000Z",
        "1969-12-31T23:59:59.999999Z", "3000-01-01T00:00:00.000000Z",
        "2026-03-01T12:00:60.000000Z", "2026-03-01T12:00:00.000000+",
        "2026-03-01T12:00:00.00000aZ", "２026-03-01T12:00:00.000000Z",
        "2026-00-10T00:00:00.000000Z", "2026-04-31T00:00:00.000000Z",
        "2100-02-29T00:00:00.000000Z",
    ]  # fmt: skip
    texts = good + bad
    rng.shuffle(texts)
    us, ok = parse_times(texts)
    for text, u, certified in zip(texts, us.tolist(), ok.tolist(), strict=True):
        assert certified == is_time(text), text
        if certified:
            t = parse_iso(text)
            assert u == (t - epoch) // timedelta(microseconds=1)
            assert u / 1e6 / scoring.DAY == scoring.days(t)
    assert not parse_times([*good[:3], None])[1].any()  # not all text: none certified here
    assert parse_times(good[:5])[1].all() and not parse_times([])[1].any()
    assert np.array_equal(parse_times(good)[0], parse_times(good)[0])


def test_contexts_that_name_no_part_of_any_rule_give_the_same_report(
    store: PlaybookStore, clock: Clock, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Held-out marks whose contexts match no word, substring or tag of any rule: the
    batch has no part at all (the CLI's fuzz test found the replay indexing an empty table)."""
    rules = [store.insert_bullet(t).id for t in ("Pin npm to 11", "Cache pip downloads")]
    for i, context in enumerate(["inf", "1e309", "task success", "zork", "quux"] * 2):
        clock.advance(hours=5)
        store.add_feedback(rules[i % 2], "helpful", context=context)
    clock.advance(days=1)
    got = same_report(store, monkeypatch, page=3, split=0.4, k=3)
    assert got["log"]["heldout_with_context"] > 0


def test_ordinary_moments_are_taken_a_run_at_a_time_with_the_same_report(
    store: PlaybookStore, clock: Clock, monkeypatch: pytest.MonkeyPatch
) -> None:
    # runs end at applies (rules added, retired, matured, superseded), marks dated after
    # their recording, the split and the batches' ends: all of them in this history
    varied_history(store, clock, 5)
    clock.advance(days=1)
    real, taken = replay_module._Walk.run, []

    def run(walk: Any, p: Any, base: int, starts: Any, ends: Any, i: int) -> int:
        got: int = real(walk, p, base, starts, ends, i)
        taken.append(got - i - 1)
        return got

    monkeypatch.setattr(replay_module._Walk, "run", run)
    got = same_report(store, monkeypatch, page=40, split=0.5, k=3)
    assert sum(taken) > 100  # moments taken in runs, not one at a time
    monkeypatch.setattr(replay_module._Walk, "run", lambda walk, p, base, s, e, i: i + 1)
    assert same_report(store, monkeypatch, page=40, split=0.5, k=3) == got
