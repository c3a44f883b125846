"""How a write transaction sends its statements: writes whose result nobody reads wait and
go with the next statement or the commit (`Executor.later`; one round trip on PostgreSQL),
feedback events are folded into the evidence cache once, as the transaction commits, and a
new bullet's row comes back from its INSERT. Each on both backends: what a transaction
reads and what it leaves must be what statement-by-statement writing gave."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from playbook.core.errors import ConstraintError
from playbook.curation import curate
from playbook.store import PlaybookStore
from playbook.store import testing as raw

from .helpers import dump


class Boom(Exception):
    pass


def test_a_later_write_is_seen_by_the_next_read_of_its_transaction(
    store: PlaybookStore,
) -> None:
    with store.transaction():
        store.log_decision(None, "human", "note", None, "applied", "first")
        store.sql.later("INSERT INTO meta (key, value) VALUES (?, ?)", [("between", "1")])
        store.log_decision(None, "human", "note", None, "applied", "second")
        # Read inside the same transaction: the waiting writes go first, in order.
        assert [d.reason for d in store.decisions()] == ["first", "second"]
        store.log_decision(None, "human", "note", None, "applied", "third")
    assert [d.reason for d in store.decisions()] == ["first", "second", "third"]
    assert [d.id for d in store.decisions()] == sorted(d.id for d in store.decisions())
    assert raw.rows(store, "SELECT value FROM meta WHERE key = 'between'") == [("1",)]


@pytest.mark.parametrize("then_read", [True, False], ids=["read-after", "commit-after"])
def test_a_later_write_that_fails_rolls_its_whole_transaction_back(
    store: PlaybookStore, then_read: bool
) -> None:
    store.insert_bullet("Pin the lockfile in the release job")
    before = dump(store)
    with pytest.raises(ConstraintError), store.transaction():
        store.insert_bullet("Run the migrations before the deploy")
        # Two rows with one key: the second breaks meta's primary key.
        store.sql.later(
            "INSERT INTO meta (key, value) VALUES (?, ?)", [("twice", "1"), ("twice", "2")]
        )
        if then_read:  # the error is met by the next statement, or else by the commit
            store.bullets()
    assert dump(store) == before
    store.insert_bullet("Run the migrations before the deploy")  # the store goes on
    assert len(store.bullets()) == 2


def test_events_of_a_transaction_are_folded_once_when_it_commits(
    store: PlaybookStore,
) -> None:
    b = store.insert_bullet("Cache the docker layers in CI").id
    c = store.insert_bullet("Retry flaky network tests once").id
    with store.transaction():
        store.add_feedback(b, "helpful")
        store.add_feedback(c, "harmful", reason="wasted_time")
        # Not folded yet: the cache's watermark is where it was before the transaction.
        assert store.evidence_watermark() == 0
        # A read of the evidence folds first, so it never sees a lagging cache.
        assert store.evidence(b).helpful == pytest.approx(1.0)
        assert store.evidence_watermark() == store.log_watermark()
        store.add_feedback(b, "helpful")
    assert store.evidence_watermark() == store.log_watermark() == 3
    rows = {
        r[0]: (r[1], r[2], r[3])
        for r in raw.rows(store, "SELECT bullet_id, helpful, harmful, count FROM evidence")
    }
    # Every event has weight 1 and was observed now (the clock is pinned): no decay.
    assert rows == {
        b: (pytest.approx(2.0), pytest.approx(0.0), 2),
        c: (pytest.approx(0.0), pytest.approx(1.0), 1),
    }


def test_events_of_a_failed_transaction_leave_log_and_cache_as_they_were(
    store: PlaybookStore,
) -> None:
    b = store.insert_bullet("Cache the docker layers in CI").id
    store.add_feedback(b, "helpful")
    before = dump(store)
    with pytest.raises(Boom), store.transaction():
        store.add_feedback(b, "helpful")
        store.add_feedback(b, "helpful")
        raise Boom
    assert dump(store) == before
    store.add_feedback(b, "helpful")  # folded as usual afterwards
    assert store.evidence(b).helpful == pytest.approx(2.0)
    assert store.evidence_watermark() == store.log_watermark()


def test_a_drawn_id_some_bullet_has_is_drawn_again(
    store: PlaybookStore, monkeypatch: pytest.MonkeyPatch
) -> None:
    taken = store.insert_bullet("Pin the lockfile in the release job")
    drawn: Iterator[str] = iter([taken.id, taken.id, "b-0000beef"])
    monkeypatch.setattr("playbook.store.ids.new_id", lambda prefix: next(drawn))
    before = dump(store)["bullets"]
    made = store.insert_bullet("Run the migrations before the deploy", tags=["deploy"])
    assert made.id == "b-0000beef"
    assert made.content == "Run the migrations before the deploy"
    assert made.tags == ["deploy"]
    assert store.get_bullet(made.id) == made  # what the INSERT returned is the row
    assert store.get_bullet(taken.id) == taken
    after = dump(store)["bullets"]
    assert after[: len(before)] == before and len(after) == len(before) + 1
    # Its postings carry its own seq: duplicate search and recall find it.
    assert [b.id for _, b in store_similar(store, "Run the migrations before the deploy")] == [
        made.id
    ]


def store_similar(store: PlaybookStore, content: str) -> list[tuple[float, object]]:
    from playbook.curation.matching import similar_bullets

    return similar_bullets(store, content, 0.9)  # type: ignore[return-value]


def test_an_add_is_found_by_the_duplicate_search_of_the_next_add_in_its_batch(
    store: PlaybookStore,
) -> None:
    """The first add's postings are still waiting to be sent when the second add's
    duplicate search reads: they must reach the database first."""
    result = curate(
        store,
        [
            {"type": "add", "content": "Pin the lockfile version in the release job"},
            {"type": "add", "content": "Pin the lockfile version in the nightly release job"},
            {"type": "add", "content": "Never pin the lockfile version in the release job"},
        ],
    )
    first = result.added[0]
    assert [(o.status, o.bullet_id) for o in result.outcomes] == [
        ("added", first),
        ("folded", first),
        ("conflict", result.added[1]),
    ]
    assert result.conflicts == [(result.added[1], first)]
    assert store.evidence(first).helpful == pytest.approx(1.0)


def test_postings_written_many_rows_at_a_time_count_each_bullet_once(
    store: PlaybookStore,
) -> None:
    """Each add's postings go as one multi-row INSERT (an upsert of the document
    frequencies among them): the frequencies must be the counts of the postings, for
    tokens that several adds of one batch share and for those that appear once."""
    curate(
        store,
        [
            {"type": "add", "content": "Pin the lockfile in the release job", "tags": ["ci", "CI"]},
            {"type": "add", "content": "Cache the docker layers in the release job"},
            {"type": "add", "content": "Retry flaky network tests once, then quarantine them"},
        ],
    )
    df = dict(raw.rows(store, "SELECT token, df FROM vocab"))
    counted = dict(raw.rows(store, "SELECT token, COUNT(*) FROM bullet_tokens GROUP BY token"))
    assert df == counted
    assert df["release"] == df["job"] == 2 and df["lockfile"] == 1
    assert raw.rows(store, "SELECT tag FROM bullet_tags") == [("ci",)]


def test_a_misspelt_feedback_field_is_refused_before_anything_is_written(
    store: PlaybookStore,
) -> None:
    b = store.insert_bullet("Cache the docker layers in CI").id
    before = dump(store)
    with pytest.raises(TypeError, match="wieght"):
        store.add_feedback(b, "helpful", wieght=2.0)  # type: ignore[call-arg]
    with pytest.raises(TypeError, match="wieght"):
        store.record_feedback(b, "helpful", wieght=2.0)  # type: ignore[call-arg]
    assert dump(store) == before


def test_a_later_write_outside_a_transaction_writes_all_its_rows_or_none(
    store: PlaybookStore,
) -> None:
    before = dump(store)
    with pytest.raises(ConstraintError):  # the second row breaks meta's primary key
        store.sql.later(
            "INSERT INTO meta (key, value) VALUES (?, ?)", [("once", "1"), ("once", "2")]
        )
    assert dump(store) == before
    store.sql.later("INSERT INTO meta (key, value) VALUES (?, ?)", [("a", "1"), ("b", "2")])
    assert raw.rows(store, "SELECT key, value FROM meta WHERE key IN ('a', 'b') ORDER BY key") == [
        ("a", "1"),
        ("b", "2"),
    ]
