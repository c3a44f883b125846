"""The store kit: migrations, append-only log, queries, human actions."""

from __future__ import annotations

import hashlib
import os
import subprocess
import sys
from datetime import timedelta
from pathlib import Path

import pytest

from playbook import memory_migration, open_database, run_migrations
from playbook.core.errors import ConstraintError
from playbook.core.policy import Policy
from playbook.curation import curate
from playbook.store import (
    MEMORY_LATEST,
    DatabaseOpenError,
    PlaybookStore,
    SchemaTooNewError,
    StoreError,
    connect,
    schema_version,
)
from playbook.store import testing as raw

from .helpers import Clock, dump


def test_open_database_configures_wal_timeout_and_foreign_keys(db_path: Path) -> None:
    db = open_database(db_path)
    conn = db.conn
    assert conn.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
    assert conn.execute("PRAGMA foreign_keys").fetchone()[0] == 1
    assert conn.execute("PRAGMA busy_timeout").fetchone()[0] >= 5000


def test_migrations_are_idempotent_and_versioned(db_path: Path) -> None:
    db = open_database(db_path)
    assert run_migrations(db, [memory_migration(1)]) == [("memory", 1)]
    assert run_migrations(db, [memory_migration(1)]) == []
    assert schema_version(db) == 1
    assert {
        "bullets",
        "feedback",
        "edges",
        "cache_blob",
        "watermarks",
        "blocked_patterns",
        "proposals",
        "conflicts",
        "decisions",
    } <= set(db.table_names())


def test_other_namespaces_are_left_alone(db_path: Path) -> None:
    db = open_database(db_path)
    db.conn.execute("CREATE TABLE sessions (id TEXT PRIMARY KEY)")
    db.conn.execute(
        "CREATE TABLE _migrations (namespace TEXT, version INTEGER, applied_at TEXT, "
        "PRIMARY KEY (namespace, version))"
    )
    db.conn.execute("INSERT INTO _migrations VALUES ('graph', 4, 'then')")
    db.conn.execute("INSERT INTO sessions VALUES ('s1')")
    run_migrations(db, [memory_migration(1)])
    assert schema_version(db, "graph") == 4
    assert db.conn.execute("SELECT id FROM sessions").fetchall() == [("s1",)]


def test_a_newer_database_is_refused_untouched(db_path: Path) -> None:
    db = open_database(db_path)
    run_migrations(db, [memory_migration(1)])
    future = MEMORY_LATEST + 1
    db.conn.execute("INSERT INTO _migrations VALUES ('memory', ?, 'the future')", (future,))
    db.conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    db.conn.close()
    digest = hashlib.sha256(db_path.read_bytes()).hexdigest()
    conn = connect(db_path)
    with pytest.raises(SchemaTooNewError, match=f"version {future}, newer"):
        PlaybookStore(conn)
    with pytest.raises(SchemaTooNewError):
        run_migrations(conn, [memory_migration(1)])
    conn.close()
    assert hashlib.sha256(db_path.read_bytes()).hexdigest() == digest


def test_a_file_that_is_not_sqlite_gives_one_clear_error(tmp_path: Path) -> None:
    path = tmp_path / "notes.sqlite3"
    path.write_bytes(b"this is a text file, not a database\n" * 100)
    with pytest.raises(DatabaseOpenError, match="not a usable SQLite database"):
        connect(path)


@pytest.mark.parametrize(
    "sql",
    [
        "UPDATE feedback SET weight = 5",
        "DELETE FROM feedback",
        "UPDATE feedback SET kind='harmful'",
    ],
)
def test_feedback_log_is_append_only_in_the_database(store: PlaybookStore, sql: str) -> None:
    b = store.insert_bullet("Run the linter")
    store.add_feedback(b.id, "helpful")
    with pytest.raises(ConstraintError, match="append-only"):
        raw.run(store, sql)
    assert [(e.kind, e.weight) for e in store.timeline(b.id)] == [("helpful", 1.0)]


def test_decisions_and_edges_are_append_only_too(store: PlaybookStore) -> None:
    r = curate(store, [{"type": "add", "content": "Run the linter"}])
    curate(store, [{"type": "replace", "bullet_id": r.added[0], "content": "Run ruff"}])
    for sql in ("DELETE FROM decisions", "UPDATE edges SET kind='inverts'", "DELETE FROM edges"):
        with pytest.raises(ConstraintError):
            raw.run(store, sql)


def test_bullet_filters(store: PlaybookStore) -> None:
    a = store.insert_bullet("Use uv", tags=["python", "Tooling"])
    b = store.insert_bullet("AVOID: pip install --user", type="anti-pattern", tags=["python"])
    c = store.insert_bullet("Retired rule", state="retired")
    store.set_maturity(b.id, "established")
    store.pin(a.id, "team standard")
    ids = lambda bs: [x.id for x in bs]  # noqa: E731
    assert ids(store.bullets()) == [a.id, b.id]
    assert ids(store.bullets(state="retired")) == [c.id]
    assert ids(store.bullets(state="all")) == [a.id, b.id, c.id]
    assert ids(store.bullets(maturity="established")) == [b.id]
    assert ids(store.bullets(tag="tooling")) == [a.id]
    assert ids(store.bullets(tag="python")) == [a.id, b.id]
    assert ids(store.bullets(pinned=True)) == [a.id]
    assert ids(store.bullets(pinned=False)) == [b.id]
    assert store.get_bullet("b-none") is None


def test_pin_and_unpin_are_logged(store: PlaybookStore) -> None:
    b = store.insert_bullet("Use uv")
    store.pin(b.id, "house style")
    got = store.get_bullet(b.id)
    assert got.pinned and got.pinned_reason == "house style"
    store.unpin(b.id)
    assert not store.get_bullet(b.id).pinned
    assert [(d.action, d.actor, d.reason) for d in store.decisions(bullet_id=b.id)] == [
        ("pin", "human", "house style"),
        ("unpin", "human", None),
    ]
    with pytest.raises(StoreError):
        store.pin("b-nothere", "x")


def test_block_listing_and_unblock(store: PlaybookStore, clock: Clock) -> None:
    pid = store.block("Use --no-verify to skip hooks", "hooks are the safety net")
    (p,) = store.blocked()
    assert (p.id, p.pattern, p.reason, p.created_at, p.active) == (
        pid,
        "Use --no-verify to skip hooks",
        "hooks are the safety net",
        clock.t,
        True,
    )
    store.unblock(pid)
    assert store.blocked() == []
    with pytest.raises(StoreError):
        store.unblock(pid)
    with pytest.raises(StoreError):
        store.block("!!!", "no words")


def test_timeline_is_oldest_first_by_observation_time(store: PlaybookStore, clock: Clock) -> None:
    b = store.insert_bullet("Use uv")
    later = clock.t
    store.add_feedback(b.id, "helpful", at=later)
    clock.advance(days=1)
    store.add_feedback(b.id, "harmful", at=later - timedelta(days=1), reason="outdated")
    events = store.timeline(b.id)
    assert [e.kind for e in events] == ["harmful", "helpful"]
    assert events[0].recorded_at == clock.t and events[0].reason == "outdated"


def test_the_store_refuses_a_feedback_event_dated_in_the_future(
    store: PlaybookStore, clock: Clock
) -> None:
    """Issue 12: no event may be later than the store's clock, whoever calls the store (the
    API refused it; the store's own `add_feedback` wrote it, and its evidence never decayed)."""
    from playbook.core.model import FutureTimestamp

    b = store.insert_bullet("Use uv")
    before = dump(store)
    ahead = clock.t + timedelta(seconds=1)
    with pytest.raises(FutureTimestamp) as refused:
        store.add_feedback(b.id, "helpful", at=ahead)
    assert str(refused.value) == (
        "a feedback event cannot be dated in the future: 2026-03-01T12:00:01Z is later than "
        "the playbook's clock (2026-03-01T12:00:00Z)"
    )
    assert dump(store) == before
    store.add_feedback(b.id, "helpful", at=clock.t)  # the clock's own instant is not future
    assert [e.at for e in store.timeline(b.id)] == [clock.t]


def test_evidence_cache_catches_up_with_events_written_elsewhere(
    db_path: Path, clock: Clock
) -> None:
    a = PlaybookStore(connect(db_path), clock=clock)
    b = a.insert_bullet("Use uv")
    a.add_feedback(b.id, "helpful")
    # another writer appends without folding (an older version, a raw import)
    raw.run(
        a,
        "INSERT INTO feedback (bullet_id, kind, at, recorded_at) VALUES (?, 'helpful', ?, ?)",
        (b.id, "2026-03-01T12:00:00.000000Z", "2026-03-01T12:00:00.000000Z"),
    )
    other = PlaybookStore(connect(db_path), clock=clock)
    assert other.score(b.id).helpful == 2.0
    assert other.evidence_watermark() == other.log_watermark()


def test_core_imports_no_textual() -> None:
    code = (
        "import sys, playbook, playbook.curation, playbook.store, playbook.core.scoring, "
        "playbook.core.policy, playbook.core.deltas, playbook.core.text\n"
        "from playbook import curate, PlaybookStore, open_database\n"
        "bad = sorted(m for m in sys.modules if m.split('.')[0] in ('textual',))\n"
        "print(','.join(bad))"
    )
    src = str(Path(__file__).resolve().parents[1] / "src")  # this tree, not an installed copy
    env = {**os.environ, "PYTHONPATH": src}
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, env=env
    )
    assert out.stdout.strip() == ""


# Digests of the released schema steps. A file that says "memory v1" must have exactly this
# schema, so a shipped step is never edited: change the schema by adding a step.
RELEASED_MEMORY_STEPS = [
    "f4c334fbf0c326c59113b97acb862aec0c47a4437ead0459302fde943e07f5e3",
    "e34efccd59d5242e0f1912324172c8ed1356b512454faa6d18aa46c498c94dc1",
    "9305877e05c9155859d8bad129933b14f85818bab4a086fa1af163029b75b755",  # store/checks.py
    "107759d7372e77723a99b2e3b916b04f3a2c4f28244e889e3129064c8213f41c",  # evidence_days
    "0537bf1ac0172663072e01a73556bb334f590d6f9766281cb78679dbca122a39",  # store/vouch.py
]


def test_released_migration_steps_are_frozen() -> None:
    from playbook.store.schema import MEMORY_STEPS

    digests = [hashlib.sha256("\n".join(step).encode()).hexdigest() for step in MEMORY_STEPS]
    assert digests[: len(RELEASED_MEMORY_STEPS)] == RELEASED_MEMORY_STEPS


def test_a_retired_bullet_cannot_be_pinned(store: PlaybookStore) -> None:
    b = store.insert_bullet("Use uv")
    store.retire(b.id)
    with pytest.raises(StoreError, match="retired"):
        store.pin(b.id, "house style")
    assert not store.get_bullet(b.id).pinned
    assert store.decisions(bullet_id=b.id) == []


def test_pin_checks_the_state_inside_its_write_transaction(db_path: Path, clock: Clock) -> None:
    """A bullet retired by another process while the pin waits for the write lock is
    refused: the state is read under the lock, not before it."""
    import threading

    first = PlaybookStore(connect(db_path), clock=clock)
    bid = first.insert_bullet("Use uv").id
    second = PlaybookStore(connect(db_path), clock=clock)
    outcome: list[BaseException | None] = []

    def pin() -> None:
        try:
            second.pin(bid, "house style")
            outcome.append(None)
        except StoreError as exc:
            outcome.append(exc)

    with first.transaction():
        first.retire(bid)
        worker = threading.Thread(target=pin)
        worker.start()
        worker.join(0.3)  # the pin waits for our write lock
        assert worker.is_alive()
    worker.join(10)
    assert isinstance(outcome[0], StoreError) and "retired" in str(outcome[0])
    assert not first.get_bullet(bid).pinned


def test_the_store_is_composed_of_parts_that_never_hold_it(store: PlaybookStore) -> None:
    """Each part (repository or read model) is built with the executor and the parts it
    reads, never the façade: the façade may be replaced, a part tested on its own."""
    for lazy in ("past", "views", "reports", "bulk", "tables"):  # built on first use
        getattr(store, lazy)
    parts = {
        name: part
        for name, part in vars(store).items()
        if type(part).__module__.startswith("playbook.store.")
    }
    assert {"bullets", "evidence", "feedback", "edges", "decisions", "past", "rank"} <= set(parts)
    for name, part in parts.items():
        held = [attr for attr, value in vars(part).items() if value is store]
        assert held == [], f"store.{name} holds the store in {held}"
        assert getattr(part, "sql", store.sql) is store.sql
    # An old name is the part's method, bound once: a write through either is the same.
    bid = store.insert_bullet("Pin npm to 11 in release jobs").id
    assert store.bullets.get(bid) == store.get_bullet(bid)
    assert store.insert_bullet.__self__ is store.bullets


def test_a_policy_set_on_the_store_reaches_every_part(store: PlaybookStore, clock: Clock) -> None:
    """`store.policy = …` after opening (the workbench's custom policy, a test's) scores
    with the new policy in every part, built before or after (a part once kept the policy
    it was built with)."""
    bid = store.insert_bullet("Pin npm to 11 in release jobs").id
    store.add_feedback(bid, "helpful")
    clock.advance(days=30)
    store.policy = Policy(half_life_days=30.0)
    assert store.half_life() == 30.0
    assert store.evidence.half_life() == 30.0
    # one helpful event, 30 days old, at a 30-day half-life: half its weight is left
    assert store.evidence_many([bid])[bid].helpful == pytest.approx(0.5, abs=1e-12)
    for name in ("decisions", "evidence", "scoring", "rank", "past", "views"):
        assert getattr(store, name).policy.half_life_days == 30.0, name
