"""The maturity pass writes its moves and due times together (`set_maturities`,
`set_maturity_dues`: one statement each on PostgreSQL): the same rows as one write a
bullet (`set_maturity`, `set_maturity_due`), on both backends and both PostgreSQL
drivers."""

from __future__ import annotations

from pathlib import Path

import pytest

from playbook.store import PlaybookStore, open_store
from playbook.store import testing as raw
from playbook.store.postgres.light import LightConnection

from .helpers import Clock, add


def state(store: PlaybookStore, ids: list[str]) -> list[tuple[object, ...]]:
    """Each bullet's (id, maturity, rev, maturity_due, rows of its maturity log), in the
    order of `ids`."""
    found = {
        r[0]: tuple(r)
        for r in raw.rows(
            store,
            "SELECT b.id, b.maturity, b.rev, b.maturity_due, "
            "(SELECT COUNT(*) FROM maturity_log m WHERE m.bullet_id = b.id) FROM bullets b "
            f"WHERE b.id IN ({', '.join('?' * len(ids))})",
            ids,
        )
    }
    return [found[bid] for bid in ids]


def log(store: PlaybookStore) -> list[tuple[object, ...]]:
    return [
        tuple(r)
        for r in raw.rows(
            store, "SELECT bullet_id, at, maturity, batch_id FROM maturity_log ORDER BY id"
        )
    ]


@pytest.mark.parametrize("driver", ["psycopg", "light"])
def test_together_they_write_what_one_at_a_time_writes(
    db_target: str | Path, clock: Clock, driver: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    if driver == "light" and isinstance(db_target, Path):
        pytest.skip("a PostgreSQL driver")
    monkeypatch.setenv("PLAYBOOK_PG_DRIVER", driver)
    with open_store(db_target, clock=clock) as made:  # (a new playbook is made on psycopg)
        made.count_bullets()
    with open_store(db_target, clock=clock, mode="write") as store:
        writes_alike(store)
        if isinstance(db_target, str):
            assert isinstance(store.sql._conn, LightConnection) == (driver == "light")


def writes_alike(store: PlaybookStore) -> None:
    topics = ["pytest fixtures", "docker layers", "npm lockfiles", "cargo features",
              "alembic heads", "ruff configuration"]  # fmt: skip
    ids = [add(store, f"Check the {topic} before changing anything") for topic in topics]
    one, together = ids[:3], ids[3:]
    moves = ["established", "proven", "deprecated"]
    dues = [12345.5, None, 20000.25]
    with store.transaction():
        for bid, to, due in zip(one, moves, dues, strict=True):
            store.set_maturity(bid, to, batch_id="c-one")
            store.set_maturity_due(bid, due)
    with store.transaction():
        store.set_maturities(list(zip(together, moves, strict=True)), batch_id="c-one")
        store.set_maturity_dues(list(zip(together, dues, strict=True)))
    a, b = state(store, one), state(store, together)
    assert [r[1:] for r in a] == [r[1:] for r in b]
    assert [r[1] for r in b] == moves and [r[3] for r in b] == dues
    assert all(r[2] == 1 and r[4] == 2 for r in b)  # one rev more, one log row more
    rows = log(store)
    assert [r[2:] for r in rows[-3:]] == [r[2:] for r in rows[-6:-3]]
    with store.transaction():  # every due cleared at once (an array of NULLs only)
        store.set_maturity_dues([(bid, None) for bid in together])
    assert [r[3] for r in state(store, together)] == [None, None, None]


def test_the_due_come_in_the_order_they_were_added(store: PlaybookStore) -> None:
    """The pass visits the bullets still due in the order they were added, whatever their
    due times and wherever the database keeps their rows, as the database's own pass does:
    its moves are then written in the same order on every backend."""
    topics = ["pytest fixtures", "docker layers", "npm lockfiles", "cargo features"]
    ids = [add(store, f"Check the {topic} before changing anything") for topic in topics]
    with store.transaction():  # the latest added is due first; the first, last
        store.set_maturity_dues([(bid, 100.0 - n) for n, bid in enumerate(ids)])
    with store.transaction():  # and its row is written again (PostgreSQL moves it)
        store.set_maturity_due(ids[0], 101.0)
    assert store.due_for_maturity(200.0) == ids
    assert store.due_for_maturity(98.5) == ids[2:]
