"""Score over time (`review.score_trends`, `review.score_series` and its events) and a retired
bullet's score, frozen at its retirement on every surface. Expected numbers are worked out
here from SPEC §4 with a pinned clock, not read back from the code."""

from __future__ import annotations

from datetime import timedelta
from pathlib import Path

import pytest

from playbook import review
from playbook.curation import curate
from playbook.mcp.tools import PlaybookTools
from playbook.review.history import rows_as_of_ids
from playbook.store import PlaybookStore

from .helpers import T0, Clock, add, mark

HL = 90.0  # the default half-life


def decayed(age_days: float) -> float:
    return 0.5 ** (age_days / HL)


def _replaced(store: PlaybookStore, clock: Clock) -> tuple[str, str]:
    """A rule marked helpful 3 times at T0 (established), replaced 10 days later; then 100
    days pass."""
    old = add(store, "Run the linter before pushing")
    mark(store, old, n=3)
    clock.advance(days=10)
    r = curate(store, [{"type": "replace", "bullet_id": old, "content": "Run ruff before push"}])
    clock.advance(days=100)
    return old, r.outcomes[0].bullet_id


def test_a_retired_bullets_score_is_frozen_at_its_retirement_on_every_surface(
    store: PlaybookStore, clock: Clock, db_target: str | Path
) -> None:
    old, new = _replaced(store, clock)
    frozen = 3 * decayed(10)  # established: multiplier 1
    row = {r.id: r for r in store.views.bullet_rows()}[old]
    assert row.state == "retired" and row.maturity == "established"
    assert row.helpful == pytest.approx(frozen) and row.effective == pytest.approx(frozen)
    detail = review.bullet_detail(store, old)
    assert detail.score.effective == pytest.approx(frozen)
    assert detail.score_at == store.get_bullet(old).valid_to == T0 + timedelta(days=10)
    assert detail.to_dict()["score_at"].startswith("2026-03-11T12:00")
    # the successor carries the same evidence, decayed to now, at its own rung
    live = review.bullet_detail(store, new)
    assert live.score_at is None
    assert live.score.helpful == pytest.approx(3 * decayed(110))
    shown = PlaybookTools(db_target).show_bullet(old)
    assert shown["score"]["effective"] == pytest.approx(frozen, abs=5e-4)  # to 3 decimals
    assert shown["score_at"] == detail.to_dict()["score_at"]


def test_a_retired_bullet_in_a_conflict_shows_its_frozen_score(
    store: PlaybookStore, clock: Clock
) -> None:
    a = add(store, "Always squash commits before merging")
    mark(store, a, n=2)
    r = curate(store, [{"type": "add", "content": "Never squash commits before merging"}])
    assert r.outcomes[0].status == "conflict"
    clock.advance(days=30)
    curate(store, [{"type": "replace", "bullet_id": a, "content": "Always squash PR commits"}])
    clock.advance(days=60)
    (view,) = review.conflicts(store)
    assert view.a.bullet_id == a or view.b.bullet_id == a
    side = view.a if view.a.bullet_id == a else view.b
    assert side.score is not None
    assert side.score.effective == pytest.approx(2 * decayed(30) * 0.5)  # candidate: 0.5


# ------------------------------------------------------------------ trends


def test_score_trends_are_the_score_at_evenly_spaced_moments(
    store: PlaybookStore, clock: Clock
) -> None:
    bid = add(store, "Pin npm in release jobs")
    mark(store, bid, "helpful")
    clock.advance(days=40)
    mark(store, bid, "harmful")
    clock.advance(days=40)  # now = T0 + 80
    trends = review.score_trends(store, [bid, "b-unknown"], days=90, points=4)
    assert list(trends) == [bid]  # unknown ids are left out
    h20, h50, x10, h80, x40 = decayed(20), decayed(50), decayed(10), decayed(80), decayed(40)
    expected = [
        0.0,  # T0 - 10: before the rule existed
        h20 * 0.5,  # T0 + 20: one helpful event, candidate
        (h50 - 4 * x10) * 0.5,  # T0 + 50: and one harmful
        (h80 - 4 * x40) * 0.5,  # now
    ]
    assert trends[bid] == pytest.approx(expected)
    assert trends[bid][-1] == pytest.approx(store.score(bid).effective)


def test_score_trends_follow_lineage_and_stop_at_retirement(
    store: PlaybookStore, clock: Clock
) -> None:
    old, new = _replaced(store, clock)  # now = T0 + 110; replaced at T0 + 10
    trends = review.score_trends(store, [old, new], days=100, points=3)
    # moments: T0 + 10, T0 + 60, T0 + 110; the retired one keeps its value at retirement
    frozen = 3 * decayed(10)
    assert trends[old] == pytest.approx([frozen, frozen, frozen])
    # the successor inherits 3 helpful events but, decayed to 2.78 when it was added, they
    # earn no rung: a candidate (x0.5) throughout
    assert store.get_bullet(new).maturity == "candidate"
    expected = [3 * decayed(10) * 0.5, 3 * decayed(60) * 0.5, 3 * decayed(110) * 0.5]
    assert trends[new] == pytest.approx(expected)


def test_score_trends_use_the_rung_held_at_each_moment(store: PlaybookStore, clock: Clock) -> None:
    bid = add(store, "Read the first error of the log")
    clock.advance(days=10)
    mark(store, bid, n=3)  # established at T0 + 10
    clock.advance(days=10)
    trends = review.score_trends(store, [bid], days=15, points=2, now=clock.t)
    # T0 + 5: no events yet (0); now: 3 helpful, 10 days old, established (x1)
    assert trends[bid] == pytest.approx([0.0, 3 * decayed(10)])
    before = review.score_trends(store, [bid], days=0.5, points=2, now=T0 + timedelta(days=10))
    assert before[bid][-1] == pytest.approx(3.0)  # at the third mark: established


def test_score_series_returns_the_events_to_mark_on_the_plot(
    store: PlaybookStore, clock: Clock
) -> None:
    old = add(store, "Run pytest -x")
    mark(store, old)
    clock.advance(days=5)
    r = curate(store, [{"type": "replace", "bullet_id": old, "content": "Run pytest -x --lf"}])
    new = r.outcomes[0].bullet_id
    clock.advance(days=5)
    mark(store, new, "harmful")
    clock.advance(days=5)
    series = review.score_series(store, store.get_bullet(new), points=10)
    assert len(series) == 10 and series[0][0] == T0  # starts at the inherited event
    assert [(e[0], e[1]) for e in series.events] == [
        ("helpful", T0),
        ("harmful", T0 + timedelta(days=10)),
    ]
    assert [e.bullet_id for e in series.events] == [old, new]
    # the last point is the score now (candidate, 0.5: the replace kept the old rung)
    last = (decayed(15) - 4 * decayed(5)) * 0.5
    assert series[-1][1] == pytest.approx(last)
    assert store.score(new).effective == pytest.approx(last)


def test_score_trends_are_what_time_travel_shows_at_each_moment(
    store: PlaybookStore, clock: Clock
) -> None:
    """The trend column is about knowledge time: each point is the score the playbook gave
    the rule then (`rows_as_of_ids`), 0 before the rule existed; a merge's successor starts
    at its creation (the Detail plot, about observation time, shows what it inherited)."""
    import random

    from .helpers.histories import random_history

    random_history(store, clock, random.Random(7))
    ids = [b.id for b in store.bullets()][:15]
    trends = review.score_trends(store, ids, days=30, points=4)
    now = store.now()
    for k in range(4):
        when = now - timedelta(days=30 * (3 - k) / 3)
        then = {r.id: r.effective for r in rows_as_of_ids(store, ids, when)}
        for bid in ids:
            assert trends[bid][k] == then.get(bid, 0.0), (bid, k)
