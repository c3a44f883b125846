"""`policy eval`'s ways of deciding a held-out mark's top k (`hits.TIERS`, `hit_parts`) and
of finding the log's ends (`log.event_range`, `events_at`): each one alone gives the report
the whole-history reference gives, byte for byte, on both backends.

The tiers are tried in order and each decides only what it can prove, so a wrong bound in
one is hidden when an earlier one decided the mark: each tier is run here as the first (or
only) one, with parts of a few bullets, and with the caches kept between batches evicting
at every entry.
"""

from __future__ import annotations

import importlib
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest

from playbook.policy_eval import candidate, hit_parts, hits
from playbook.store import PlaybookStore, log_pages

from .helpers import Clock
from .helpers.policy_eval_histories import malformed_marks, varied_history
from .helpers.policy_eval_same import same_report, scoring_iso

# (the package's `evaluate` is the function; its module is reached by name)
evaluate_module = importlib.import_module("playbook.policy_eval.evaluate")


@pytest.mark.parametrize(
    "tiers",
    [
        ((1, False),),  # the first bullets of each part, then ranked whole
        ((1, True),),  # with the bullets of several parts from the start
        ((4, True), (1, False)),  # a larger tier before a smaller one
        (),  # every mark ranked whole
    ],
)
def test_each_tier_alone_gives_the_same_report(
    store: PlaybookStore, clock: Clock, monkeypatch: pytest.MonkeyPatch, tiers: tuple
) -> None:
    varied_history(store, clock, 13, steps=300)
    clock.advance(days=1)
    monkeypatch.setattr(hits, "TOP", 2)
    monkeypatch.setattr(hits, "TIERS", tiers)
    monkeypatch.setattr(hit_parts, "SMALL_PART", 3)  # parts looked up by mask and by key
    monkeypatch.setattr(hit_parts, "SEVERAL_BYTES", 1)  # the caches evict at every entry
    monkeypatch.setattr(hit_parts, "MASK_BYTES", 1)
    current = store.policy
    chosen = [
        candidate("floor", current, min_relevance=2.0),  # whole points: decided in batches
        candidate("short", current, half_life_days=20, harm_multiplier=6),
        candidate("sure", current, min_confidence=0.5, exact_points=3),
    ]
    got = same_report(store, monkeypatch, page=6, candidates=chosen, split=0.4, k=2)
    assert got["log"]["heldout_with_context"] > 50


@pytest.mark.parametrize("alone", [2020, 2030])
def test_the_first_and_last_recordings_shared_with_malformed_rows(
    store: PlaybookStore, clock: Clock, monkeypatch: pytest.MonkeyPatch, alone: int
) -> None:
    """One end of the log's recording times holds a malformed row beside a well-formed
    mark (the bound is the mark's, read by `events_at`); the other a malformed row alone,
    walked past from that end."""
    monkeypatch.setattr(log_pages, "LAST", 2)
    monkeypatch.setattr(evaluate_module, "LAST", 2)
    varied_history(store, clock, 5, steps=120)
    marks = store.past.read_history().events
    first, last = marks[0].recorded_at, marks[-1].recorded_at
    shared = last if alone == 2020 else first
    good = {"bullet_id": store.bullets()[0].id, "kind": "helpful", "weight": 1.0}
    far = scoring_iso(datetime(alone, 1, 1, tzinfo=UTC))
    malformed_marks(store, [
        good | {"at": shared, "recorded_at": shared, "weight": float("inf")},
        good | {"at": far, "recorded_at": far, "weight": 1e6},
    ])  # fmt: skip
    assert far in {str(t) for t in store.log.event_range()}
    with store.log.snapshot():
        assert evaluate_module._ends(store.log) == (first, last)
    clock.advance(days=1)
    got = same_report(store, monkeypatch, page=5, split=0.5, k=3)
    assert got["log"]["events"] == len(marks)


def test_a_log_of_only_malformed_rows_has_no_ends(store: PlaybookStore) -> None:
    bid = store.insert_bullet("Pin npm to 11").id
    when = scoring_iso(datetime(2026, 1, 1, tzinfo=UTC))
    later = scoring_iso(datetime(2026, 1, 1, tzinfo=UTC) + timedelta(days=1))
    mark = {"bullet_id": bid, "kind": "helpful"}
    malformed_marks(store, [mark | {"weight": w, "at": t, "recorded_at": t}
                            for w, t in ((float("inf"), when), (1e6, later))])  # fmt: skip
    with store.log.snapshot():
        assert evaluate_module._ends(store.log) == (None, None)


def test_pairs_that_cannot_rank_before_are_left_out_with_the_same_report(
    store: PlaybookStore, clock: Clock, monkeypatch: pytest.MonkeyPatch
) -> None:
    """`hits._may_reach` / `_can_reach` leave out (mark, bullet) pairs before scoring them,
    and the bound of the rest is asked only for marks the scored bullets left open: some
    pairs are left out here, and every decision stays the reference's."""
    varied_history(store, clock, 5, steps=120)
    clock.advance(days=1)
    seen = {"in": 0, "out": 0, "rest": 0, "beaten": 0}

    def counted(f: Any, name: str) -> Any:
        def wrapped(*a: Any) -> Any:
            got = f(*a)
            if name == "filter":
                seen["in"], seen["out"] = seen["in"] + len(a[-1]), seen["out"] + len(got[1])
            else:
                seen[name] += len(a[4] if name == "beaten" else a[2])
            return got

        return wrapped

    monkeypatch.setattr(hits, "_may_reach", counted(hits._may_reach, "filter"))
    monkeypatch.setattr(hits, "_beaten", counted(hits._beaten, "beaten"))
    monkeypatch.setattr(hits, "_rest", counted(hits._rest, "rest"))
    same_report(store, monkeypatch, page=5, split=0.5, k=3)  # the default grid
    assert seen["out"] < seen["in"]  # some pairs were left out
    assert 0 < seen["rest"] < seen["beaten"]  # some marks needed no bound of the rest
