"""Task outcomes as feedback: once per cited id, receipts, skips, weights, inversion."""

from __future__ import annotations

from datetime import timedelta

import pytest

from playbook.curation import curate
from playbook.curation.outcomes import InvalidOutcome, apply_outcome, project_outcome_confidence
from playbook.store import PlaybookStore

from .helpers import Clock, dump


def test_success_is_one_helpful_event_per_cited_bullet(store: PlaybookStore) -> None:
    a = store.insert_bullet("Pin npm to 11")
    b = store.insert_bullet("Run the linter")
    result = apply_outcome(
        store,
        {"outcome": "success", "bullet_ids": [a.id, b.id], "context": "release"},
        provenance={"session_ref": "s1"},
    )
    assert result.applied == [a.id, b.id] and result.skipped == []
    for bullet in (a, b):
        (event,) = store.timeline(bullet.id)
        assert (event.kind, event.weight, event.context, event.actor) == (
            "helpful",
            1.0,
            "release",
            "agent",
        )
        assert event.provenance.session_ref == "s1"


def test_duplicate_citations_count_once(store: PlaybookStore) -> None:
    a = store.insert_bullet("Pin npm to 11")
    result = apply_outcome(store, {"outcome": "failure", "bullet_ids": [a.id, a.id, a.id]})
    assert result.applied == [a.id]
    assert result.duplicate_citations == 2
    (event,) = store.timeline(a.id)
    assert (event.kind, event.weight, event.reason) == ("harmful", 1.0, "other")
    assert store.score(a.id).harmful == pytest.approx(1.0)


def test_the_same_receipt_twice_applies_once(store: PlaybookStore, clock: Clock) -> None:
    a = store.insert_bullet("Pin npm to 11")
    report = {"outcome": "success", "bullet_ids": [a.id], "receipt": "task-42"}
    first = apply_outcome(store, report)
    assert first.applied == [a.id] and not first.replayed
    clock.advance(hours=1)
    before = dump(store)
    second = apply_outcome(store, report)
    assert second.replayed and second.applied == [] and second.batch_id is None
    assert dump(store) == before
    (event,) = store.timeline(a.id)
    assert event.receipt == "task-42"
    # the receipt is spent whatever the report says next time
    third = apply_outcome(store, {"outcome": "failure", "bullet_ids": [a.id], "receipt": "task-42"})
    assert third.replayed and len(store.timeline(a.id)) == 1


def test_a_missing_id_is_a_counted_skip(store: PlaybookStore) -> None:
    a = store.insert_bullet("Pin npm to 11")
    gone = store.insert_bullet("Old rule")
    store.retire(gone.id)
    result = apply_outcome(
        store, {"outcome": "success", "bullet_ids": ["b-missing", a.id, gone.id]}
    )
    assert result.applied == [a.id]
    assert result.skipped == ["b-missing", gone.id]
    data = result.to_dict()
    assert data["skipped_count"] == 2
    assert store.timeline(gone.id) == []
    assert store.event_count() == 1


def test_partial_weighs_a_third_and_decays(store: PlaybookStore, clock: Clock) -> None:
    a = store.insert_bullet("Pin npm to 11")
    apply_outcome(store, {"outcome": "partial", "bullet_ids": [a.id]})
    (event,) = store.timeline(a.id)
    assert (event.kind, event.weight) == ("helpful", pytest.approx(1 / 3))
    clock.advance(days=30)
    score = store.score(a.id)
    # weight 1/3, 30 days old, half-life 90 days: 1/3 * 0.5 ** (30 / 90)
    expected = (1 / 3) * 2 ** (-1 / 3)
    assert expected == pytest.approx(0.264567, abs=1e-6)
    assert score.helpful == pytest.approx(expected)
    assert score.harmful == 0
    assert score.effective == pytest.approx(expected * 0.5)  # a candidate counts half


def test_observation_time_is_kept_apart_from_recording_time(
    store: PlaybookStore, clock: Clock
) -> None:
    a = store.insert_bullet("Pin npm to 11")
    happened = clock.t - timedelta(days=90)
    apply_outcome(store, {"outcome": "success", "bullet_ids": [a.id], "at": happened})
    (event,) = store.timeline(a.id)
    assert (event.at, event.recorded_at) == (happened, clock.t)
    assert store.score(a.id).helpful == pytest.approx(0.5)  # one half-life old already


def test_a_failure_that_pushes_harm_over_the_threshold_inverts_the_rule(
    store: PlaybookStore,
) -> None:
    a = store.insert_bullet("Run npm ci as root")
    curate(store, [{"type": "harmful", "bullet_id": a.id}])
    curate(store, [{"type": "harmful", "bullet_id": a.id}])
    assert store.get_bullet(a.id).state == "active"  # type: ignore[union-attr]  # harm 2 < 3
    result = apply_outcome(store, {"outcome": "failure", "bullet_ids": [a.id]})
    ((old, new),) = result.inversions
    assert old == a.id
    inverted = store.get_bullet(new)
    assert inverted is not None
    assert (inverted.content, inverted.type, inverted.source) == (
        "AVOID: Run npm ci as root",
        "anti-pattern",
        "inverted",
    )
    assert store.get_bullet(a.id).state == "retired"  # type: ignore[union-attr]
    assert store.lineage(new).predecessors == [("inverts", a.id)]


def test_receipt_and_events_are_written_atomically(
    store: PlaybookStore, monkeypatch: pytest.MonkeyPatch
) -> None:
    a = store.insert_bullet("Pin npm to 11")
    before = dump(store)

    def broken(*args: object, **kw: object) -> None:
        raise OSError("disk full")

    monkeypatch.setattr(store, "add_receipt", broken)
    with pytest.raises(OSError, match="disk full"):
        apply_outcome(store, {"outcome": "success", "bullet_ids": [a.id], "receipt": "r1"})
    assert dump(store) == before  # the event written before the failure was rolled back
    monkeypatch.undo()
    assert apply_outcome(
        store, {"outcome": "success", "bullet_ids": [a.id], "receipt": "r1"}
    ).applied


@pytest.mark.parametrize(
    ("report", "message"),
    [
        ({"outcome": "meh", "bullet_ids": []}, "invalid outcome report: outcome"),
        ({"outcome": "success", "bullet_ids": "b-1"}, "invalid outcome report: bullet_ids"),
        ({"outcome": "success", "extra": 1}, "invalid outcome report: extra"),
        ({"outcome": "success", "at": "2026-01-01T00:00:00"}, "^invalid outcome report: at: must"),
        (
            {"outcome": "success", "bullet_ids": ["b-1"], "at": "2099-01-01T00:00:00Z"},
            r"^an outcome cannot be dated in the future: 2099-01-01T00:00:00Z is later than "
            r"the playbook's clock \(2026-03-01T12:00:00Z\)$",
        ),
        (
            {"outcome": "success", "at": "2026-03-01T12:00:01Z"},  # one second ahead
            "cannot be dated in the future",
        ),
    ],
)
def test_invalid_reports_are_refused_before_anything_is_written(
    store: PlaybookStore, report: dict[str, object], message: str
) -> None:
    before = dump(store)
    with pytest.raises(InvalidOutcome, match=message):
        apply_outcome(store, report)
    assert dump(store) == before


@pytest.mark.parametrize(
    ("confidence", "outcome", "expected"),
    [
        (None, "success", 0.65),
        (None, "failure", 0.25),
        (None, "partial", 0.55),
        (0.95, "success", 1.0),
        (0.2, "failure", 0.1),
        (0.1, "partial", 0.15),
    ],
)
def test_project_outcome_confidence_reproduces_seed_001(
    confidence: float | None, outcome: str, expected: float
) -> None:
    assert project_outcome_confidence(confidence, outcome) == pytest.approx(expected)  # type: ignore[arg-type]


def test_an_outcome_dated_now_is_accepted(store: PlaybookStore, clock: Clock) -> None:
    a = store.insert_bullet("Pin npm to 11")
    apply_outcome(store, {"outcome": "success", "bullet_ids": [a.id], "at": clock.t})
    assert store.score(a.id).helpful == pytest.approx(1.0)
