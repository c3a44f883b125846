"""The one API every surface calls (`playbook.review`): detail, series, stale, filter,
restore, pins, and conflict resolution."""

from __future__ import annotations

from datetime import timedelta

import pytest

from playbook import review
from playbook.core import scoring
from playbook.core.errors import Refused
from playbook.core.policy import DEFAULT_POLICY
from playbook.curation import curate
from playbook.retrieval.query import recall
from playbook.store import PlaybookStore, StoreError

from .helpers import Clock, add, dump, mark


def test_bullet_detail_is_one_shape_with_everything_behind_a_bullet(
    store: PlaybookStore, clock: Clock
) -> None:
    old = add(store, "Run pytest -x", tags=["testing"])
    mark(store, old, n=3)
    r = curate(store, [{"type": "replace", "bullet_id": old, "content": "Run pytest -x --lf"}])
    new = r.outcomes[0].bullet_id
    d = review.bullet_detail(store, new)
    assert d.bullet.id == new and d.score == store.score(new)
    assert [(k, b.id) for k, b in d.predecessors] == [("supersedes", old)]
    assert d.successors == [] and d.timeline == []
    assert [m for _, m in d.maturity_log] == ["candidate", "established"]
    doc = review.bullet_detail(store, old).to_dict()
    assert set(doc) == {
        "bullet", "score", "score_at", "lineage", "timeline", "deprecation", "maturity_log",
        "decisions", "conflicts",
    }  # fmt: skip
    assert doc["deprecation"] is None  # retired by a replace: no deprecate decision
    assert doc["lineage"]["successors"] == [
        {"kind": "supersedes", "id": new, "content": "Run pytest -x --lf", "state": "active",
         "maturity": "established"}
    ]  # fmt: skip
    assert [e["kind"] for e in doc["timeline"]] == ["helpful"] * 3
    assert {d["action"] for d in doc["decisions"]} >= {"helpful", "maturity"}
    with pytest.raises(review.NotFound, match="no bullet with id 'b-none'"):
        review.bullet_detail(store, "b-none")


def test_score_series_follows_feedback_and_decay(store: PlaybookStore, clock: Clock) -> None:
    bid = add(store, "Pin npm in release jobs")
    for _ in range(3):
        clock.advance(days=1)
        mark(store, bid)
    peak_time = clock.t
    clock.advance(days=180)
    series = review.score_series(store, store.get_bullet(bid), points=50)
    assert len(series) == 50
    values = [v for _, v in series]
    assert values[0] == 0
    peak = max(values)
    assert abs(peak - store.score(bid, at=peak_time).effective) < 0.2
    assert 0 < values[-1] < peak / 2  # two half-lives of decay later
    # at the end: 3 helpful, 180-182 days old; a candidate still (multiplier 0.5): at the
    # third vote H was 1 + 0.5**(1/90) + 0.5**(2/90) = 2.98, short of the 3 events needed
    expected = 0.5 * sum(0.5 ** (d / 90) for d in (180, 181, 182))
    assert values[-1] == pytest.approx(expected, rel=1e-9)


def test_stale_lists_the_longest_silent_first(store: PlaybookStore, clock: Clock) -> None:
    a = add(store, "Rebase feature branches daily")
    clock.advance(days=30)
    b = add(store, "Squash fixup commits before review")
    clock.advance(days=160)  # a: 190 days silent, b: 160
    found = review.stale(store)
    assert (found.total, [i.bullet.id for i in found.items]) == (1, [a])
    clock.advance(days=25)  # a: 215, b: 185
    found = review.stale(store, limit=1)
    assert found.total == 2 and [i.bullet.id for i in found.items] == [a]
    assert found.items[0].days_silent == pytest.approx(215)
    assert found.items[0].last_activity == clock.t - timedelta(days=215)
    assert review.stale(store).to_dict()["items"][1]["bullet"]["id"] == b


def test_filter_relevance_is_recalls_keyword_score(store: PlaybookStore) -> None:
    a = add(store, "Retry flaky tests in ci", tags=["ci"])
    b = add(store, "Use the ci cache")
    ranked = review.filter_relevance(store, "the new ci flaky")  # stop words dropped
    assert ranked == {a: 3 + 5 + 3, b: 3}  # exact ci + tag ci + exact flaky; exact ci
    r = recall(store, "the new ci flaky")
    assert {i.bullet.id: i.keyword_score for i in r.bullets} == ranked
    assert review.filter_relevance(store, "  ") is None
    assert review.filter_relevance(store, "the new") == {}
    assert scoring.final_score(2.0, -5.0, DEFAULT_POLICY) == 2.0 * 0.1


# ------------------------------------------------------------------------------ actions


def test_restore_returns_a_deprecated_bullet_to_its_earned_rung(store: PlaybookStore) -> None:
    bid = add(store, "Use the ci cache")
    mark(store, bid, n=4)
    review.deprecate(store, bid, "superseded by the new CI")
    assert store.get_bullet(bid).maturity == "deprecated"
    done = review.restore(store, bid, "the new CI was rolled back")
    assert (done.maturity, store.get_bullet(bid).maturity) == ("established", "established")
    (decision,) = [d for d in store.decisions(bullet_id=bid) if d.action == "restore"]
    assert (decision.actor, decision.reason) == ("human", "the new CI was rolled back")
    assert decision.detail == {"from": "deprecated", "to": "established"}
    before = dump(store)
    with pytest.raises(StoreError, match="is established, not deprecated"):
        review.restore(store, bid, "again")
    with pytest.raises(Refused, match="only a human") as refused:  # was invalid_input
        review.restore(store, bid, "x", actor="agent")
    assert refused.value.code == "refused"
    with pytest.raises(review.NotFound):
        review.restore(store, "b-none")
    assert dump(store) == before


def test_restore_target_is_the_earned_rung_at_least_candidate() -> None:
    assert review.restore_target(12, 0, DEFAULT_POLICY) == "proven"
    assert review.restore_target(4, 0, DEFAULT_POLICY) == "established"
    assert review.restore_target(1, 5, DEFAULT_POLICY) == "candidate"


def test_pin_refuses_a_retired_bullet_and_reports_a_repin(store: PlaybookStore) -> None:
    bid = add(store, "Use the ci cache")
    assert review.pin(store, bid, "team rule") is False
    assert review.pin(store, bid, "still the team rule") is True
    assert store.get_bullet(bid).pinned_reason == "still the team rule"
    assert review.unpin(store, bid) is True and review.unpin(store, bid) is False
    curate(store, [{"type": "replace", "bullet_id": bid, "content": "Use the CI cache v2"}])
    with pytest.raises(StoreError, match="is retired; pin its successor"):
        review.pin(store, bid, "x")


def test_mark_reports_what_it_did_not_apply(store: PlaybookStore) -> None:
    bid = add(store, "Use the ci cache")
    assert review.mark(store, bid, "harmful", reason="wasted_time").applied_count == 1
    with pytest.raises(review.NotFound):
        review.mark(store, "b-none", "helpful")
    with pytest.raises(StoreError, match="expected helpful or harmful"):
        review.mark(store, bid, "sideways")
    curate(store, [{"type": "replace", "bullet_id": bid, "content": "Use the CI cache v2"}])
    with pytest.raises(review.NotApplied, match=f"rejected-invalid: bullet {bid} is retired"):
        review.mark(store, bid, "helpful")


# ------------------------------------------------------------------------------ conflicts


@pytest.fixture
def conflict(store: PlaybookStore) -> tuple[int, str, str]:
    always = add(store, "Always run database migrations in CI jobs")
    never = add(store, "Never run database migrations in CI jobs", conflict_ok=True)
    for _ in range(3):
        store.add_feedback(always, "harmful", reason="caused_bug")
    store.add_feedback(never, "helpful")
    (c,) = store.conflicts()
    assert (c.a, c.b) == (never, always)
    return c.id, never, always


def test_conflicts_show_both_sides(store: PlaybookStore, conflict) -> None:
    cid, never, always = conflict
    (view,) = review.conflicts(store)
    assert view.conflict.id == cid
    assert (view.a.bullet.id, view.b.bullet.id) == (never, always)
    assert view.b.score == store.score(always) and len(view.b.events) == 3
    doc = view.to_dict()
    assert doc["a"]["id"] == never and doc["b"]["score"]["harmful"] == 3.0


def test_keep_both_closes_the_flag_once(store: PlaybookStore, conflict) -> None:
    cid, _, _ = conflict
    assert review.keep_both(store, cid).resolution == "kept both"
    assert review.conflicts(store) == []
    with pytest.raises(StoreError, match=f"conflict {cid} is already resolved"):
        review.keep_both(store, cid)
    with pytest.raises(StoreError, match="no conflict with id 999"):
        review.keep_both(store, 999)


def test_deprecate_one_side(store: PlaybookStore, conflict) -> None:
    cid, never, always = conflict
    other = add(store, "Use the ci cache")
    before = dump(store)
    with pytest.raises(StoreError, match=f"{other} is not in conflict {cid}"):
        review.deprecate_one(store, cid, other, "x")
    assert dump(store) == before
    done = review.deprecate_one(store, cid, always, "we migrate at deploy")
    assert done.resolution == f"deprecated {always}"
    assert store.get_bullet(always).maturity == "deprecated"
    assert store.get_bullet(never).maturity != "deprecated"
    assert store.conflicts(include_resolved=True)[0].resolution == f"deprecated {always}"


def test_merge_keeps_evidence_that_holds_and_a_pin_only_when_asked(
    store: PlaybookStore, conflict
) -> None:
    cid, never, always = conflict
    store.pin(never, "agreed at the retro")
    done = review.merge(store, cid, "Never run migrations from CI; run them at deploy")
    new = done.bullet_id
    assert done.resolution == f"merged into {new}"
    assert sorted(store.lineage(new).predecessors) == [("inverts", always), ("supersedes", never)]
    s = store.score(new)
    assert (s.helpful, s.harmful) == (1.0, 0.0)  # not the harm "Always" earned
    assert store.get_bullet(new).pinned is False  # not asked
    assert store.conflicts() == []


def test_merge_with_keep_pin(store: PlaybookStore, conflict) -> None:
    cid, never, _ = conflict
    store.pin(never, "agreed at the retro")
    new = review.merge(store, cid, "Never run migrations from CI", keep_pin=True).bullet_id
    b = store.get_bullet(new)
    assert b.pinned and b.pinned_reason == "agreed at the retro"
    assert ("pin", "human") in [(d.action, d.actor) for d in store.decisions(bullet_id=new)]


def test_a_failed_resolution_leaves_the_conflict_open(store: PlaybookStore, conflict) -> None:
    cid, never, _ = conflict
    curate(store, [{"type": "replace", "bullet_id": never, "content": "Never migrate in CI"}])
    before = dump(store)
    with pytest.raises(review.NotApplied, match="rejected-invalid"):
        review.merge(store, cid, "One rule")
    assert dump(store) == before
    assert [c.id for c in store.conflicts()] == [cid]
