"""`playbook copy SRC DST`: a whole playbook moved between a file and a database.

SQLite -> PostgreSQL -> SQLite gives exports of the same bytes and, table by table, the
same rows (the derived ones too: recall index, evidence and embedding caches, meta); a
destination that holds a playbook is refused untouched; a failed copy leaves no new file.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from playbook.core.errors import DatabaseNotEmptyError, InvalidInput, UsageError
from playbook.interop.snapshot import export_snapshot, to_json
from playbook.retrieval.query import recall
from playbook.retrieval.vectors import HashTrigramEmbedder, MemoryVectors
from playbook.store import PlaybookStore, copy_playbook, open_store
from playbook.store import testing as raw
from playbook.store.copying import TABLES

from .helpers import Clock
from .helpers.cli import run_cli
from .helpers.varied import build_with_outcomes as history


def tables(store: PlaybookStore) -> dict[str, list[tuple[object, ...]]]:
    """Every row of every table a copy carries, in key order."""
    return {
        t: raw.rows(store, f"SELECT {', '.join(cols)} FROM {t} ORDER BY {', '.join(key)}")
        for t, (cols, key) in TABLES.items()
    }


def export(target: str | Path) -> str:
    with open_store(target, mode="read") as store:
        return to_json(export_snapshot(store))


@pytest.fixture
def source(tmp_path: Path) -> Path:
    """A SQLite playbook with a bit of everything, embeddings included."""
    path = tmp_path / "source.sqlite3"
    clock = Clock()
    with open_store(path, clock=clock) as store:
        history(store, clock)
        recall(store, "npm release", vectors=MemoryVectors(store, HashTrigramEmbedder(dims=32)))
    return path


@pytest.mark.postgres
def test_sqlite_to_postgresql_and_back_exports_the_same_bytes(
    source: Path, pg_url: str, tmp_path: Path
) -> None:
    back = tmp_path / "back.sqlite3"
    there = copy_playbook(source, pg_url)
    again = copy_playbook(pg_url, back)
    assert there.counts == again.counts and there.counts["cache_blob"] > 0
    assert export(pg_url) == export(source)
    assert export(back) == export(source)
    when = Clock()  # the same moment for both
    with (
        open_store(source, clock=when, mode="read") as a,
        open_store(pg_url, clock=when, mode="read") as b,
    ):
        assert tables(b) == tables(a)
        ids = [x.id for x in a.bullets(state="all")]
        assert b.scores(ids) == a.scores(ids)
    with open_store(source, mode="read") as a, open_store(back, mode="read") as c:
        assert tables(c) == tables(a)


@pytest.mark.postgres
def test_the_copy_goes_on_as_the_source_would(source: Path, pg_url: str) -> None:
    """Keys continue after the copied ones (PostgreSQL's identities were moved past them)."""
    copy_playbook(source, pg_url)
    for target in (source, pg_url):
        with open_store(target, clock=Clock()) as store:
            bid = store.insert_bullet("One more rule").id
            event = store.add_feedback(bid, "helpful")
            seq = raw.value(store, "SELECT seq FROM bullets WHERE id = ?", (bid,))
            counts = raw.rows(store, "SELECT COUNT(*), MAX(id) FROM feedback")
            assert (event, seq) == (
                counts[0][0],  # ids 1..n, no gap and no collision
                raw.value(store, "SELECT COUNT(*) FROM bullets"),
            )
            assert counts[0][1] == event


def test_the_planner_knows_the_copied_tables_at_once(source: Path, pg_url: str) -> None:
    """The copy ANALYZEs what it wrote: a table never analyzed has reltuples -1, and the
    planner guesses its size (it scanned the whole log to fold one new event)."""
    report = copy_playbook(source, pg_url)
    with open_store(pg_url, mode="read") as store:
        known = dict(
            raw.rows(
                store,
                "SELECT c.relname, c.reltuples FROM pg_class c JOIN pg_namespace n "
                "ON n.oid = c.relnamespace WHERE n.nspname = current_schema() "
                "AND c.relkind = 'r'",
            )
        )
    assert report.counts["feedback"] > 0
    for table in ("bullets", "feedback", "evidence", "bullet_tokens"):
        assert known[table] == report.counts[table], table


def test_a_destination_that_holds_a_playbook_is_refused_untouched(
    source: Path, db_target: str | Path, clock: Clock
) -> None:
    with open_store(db_target, clock=clock) as store:
        store.insert_bullet("Already here")
        before = tables(store)
    with pytest.raises(DatabaseNotEmptyError, match="already holds a playbook"):
        copy_playbook(source, db_target)
    with open_store(db_target, mode="read") as store:
        assert tables(store) == before


def test_a_failed_copy_leaves_no_new_file(tmp_path: Path) -> None:
    missing = tmp_path / "no-such.sqlite3"
    new = tmp_path / "new.sqlite3"
    with pytest.raises(Exception, match="no playbook"):
        copy_playbook(missing, new)
    assert list(tmp_path.iterdir()) == []
    with pytest.raises(UsageError, match="same playbook"):
        copy_playbook(new, new)


def test_every_column_of_every_table_is_copied(store: PlaybookStore) -> None:
    """A later schema step that adds a column or a table must add it to the copy too."""
    if store.sql.dialect == "sqlite":
        names = raw.tables(store)
        columns = {t: [r[1] for r in raw.rows(store, f"PRAGMA table_info({t})")] for t in names}
    else:
        names = raw.tables(store)
        columns = {
            t: [
                r[0]
                for r in raw.rows(
                    store,
                    "SELECT column_name FROM information_schema.columns WHERE table_schema = "
                    "current_schema() AND table_name = ? ORDER BY ordinal_position",
                    (t,),
                )
            ]
            for t in names
        }
    internal = {"_migrations", "sqlite_sequence", "_playbook_changes"}
    assert set(names) - internal == set(TABLES)
    for table, (cols, _) in TABLES.items():
        assert sorted(cols) == sorted(columns[table]), table


def test_the_cli_copies_and_says_what_it_copied(source: Path, tmp_path: Path) -> None:
    dest = tmp_path / "copy.sqlite3"
    r = run_cli("copy", source, dest, "--json")
    assert r.rc == 0, r.err
    data = json.loads(r.out)["data"]
    assert data["destination"] == str(dest) and data["counts"]["bullets"] > 5
    assert export(dest) == export(source)
    again = run_cli("copy", source, dest, "--json")
    assert again.rc == 1
    error = json.loads(again.out)["error"]
    assert error["code"] == "database_not_empty" and str(dest) in error["message"]


@pytest.mark.postgres
def test_a_value_postgresql_refuses_fails_the_copy_and_writes_nothing(
    source: Path, pg_url: str
) -> None:
    """A NUL in a rule (SQLite stores it; PostgreSQL's text cannot): the copy stops with
    the store's plain refusal after the rows before it were streamed, and the destination
    stays empty."""
    with open_store(source) as store:
        raw.run(
            store,
            "UPDATE bullets SET content = content || char(0) || 'x' WHERE seq = "
            "(SELECT MAX(seq) FROM bullets)",
        )
    with pytest.raises(InvalidInput, match="NUL"):
        copy_playbook(source, pg_url)
    with open_store(pg_url, mode="read") as store:
        assert all(rows == [] for t, rows in tables(store).items() if t != "meta"), tables(store)
