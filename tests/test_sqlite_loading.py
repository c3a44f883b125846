"""Loading rows into a SQLite playbook with the rules' triggers set aside and every row
checked once they are in (`store/sqlite/loading.py`, the generated year's SQLite path):
the file keeps its triggers, statement for statement, and what the database vouches for;
a row that breaks a rule fails the load, which leaves the file as it was."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from playbook.core.errors import InvalidInput, PlaybookError
from playbook.store import PlaybookStore, open_store
from playbook.store import testing as raw
from playbook.store.checks import RULES, sqlite_triggers
from playbook.store.sqlite import loading
from playbook.store.vouch import vouched_tables

from .helpers import Clock
from .helpers.varied import build_with_outcomes as history

GOOD_TIME = "2026-03-01T12:00:00.000000Z"
FEEDBACK = (
    "INSERT INTO feedback (bullet_id, kind, at, recorded_at, weight, actor) "
    "VALUES (?, 'helpful', ?, ?, ?, 'agent')"
)


@pytest.fixture
def store(tmp_path: Path) -> Iterator[PlaybookStore]:
    clock = Clock()
    with open_store(tmp_path / "year.sqlite3", clock=clock) as opened:
        history(opened, clock)
        yield opened


def triggers(store: PlaybookStore) -> set[tuple[str, str]]:
    return set(raw.rows(store, "SELECT name, sql FROM sqlite_master WHERE type = 'trigger'"))


def a_bullet(store: PlaybookStore) -> str:
    return str(raw.rows(store, "SELECT id FROM bullets ORDER BY seq LIMIT 1")[0][0])


def test_the_triggers_come_back_as_they_were_and_the_file_is_vouched_for(
    store: PlaybookStore,
) -> None:
    before = triggers(store)
    assert vouched_tables(store.sql) == set(RULES)
    bid = a_bullet(store)
    events = store.event_count()
    with store.transaction():
        remake = loading.set_aside(store.sql)
        rules = {s.split()[2] for s in sqlite_triggers()}
        assert not rules & {name for name, _ in triggers(store)}  # no rule's trigger left
        assert {name for name, _ in before} - rules == {name for name, _ in triggers(store)}
        store.sql.execute(FEEDBACK, (bid, GOOD_TIME, GOOD_TIME, 1.0))
        loading.make_again(store.sql, remake)
    assert triggers(store) == before
    assert vouched_tables(store.sql) == set(RULES)
    assert store.event_count() == events + 1
    with pytest.raises(PlaybookError, match=r"feedback\.weight"):  # guarded again
        store.sql.execute(FEEDBACK, (bid, GOOD_TIME, GOOD_TIME, -1.0))


@pytest.mark.parametrize(
    ("at", "weight", "rule"),
    [("yesterday", 1.0, "feedback.at"), (GOOD_TIME, 1e9, "feedback.weight")],
)
def test_a_row_that_breaks_a_rule_fails_the_load_and_nothing_is_kept(
    store: PlaybookStore, at: str, weight: float, rule: str
) -> None:
    before = triggers(store)
    bid = a_bullet(store)
    events = store.event_count()
    refused = pytest.raises(InvalidInput, match=rf"malformed row: {rule} must be .* of feedback\)")
    with refused, store.transaction():
        remake = loading.set_aside(store.sql)
        store.sql.execute(FEEDBACK, (bid, GOOD_TIME, GOOD_TIME, 1.0))
        store.sql.execute(FEEDBACK, (bid, at, GOOD_TIME, weight))  # not refused now
        loading.make_again(store.sql, remake)
    assert triggers(store) == before
    assert store.event_count() == events
    assert vouched_tables(store.sql) == set(RULES)
