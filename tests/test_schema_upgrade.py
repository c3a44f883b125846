"""Schema: older files upgrade, newer files are refused untouched, broken files say so.

- A file at an older migration (version 0: no playbook tables, maybe another namespace's
  tables and data) is upgraded in place; the other namespace is left exactly as it was.
- A step that fails leaves the file as it was (each step is one transaction).
- The migration machinery carries data across a later step (a simulated v1 -> v2), and the
  file that step produced is then "newer" for this Playbook: refused, byte for byte
  untouched, whatever its journal mode, through the API and the CLI.
- A file that is not SQLite, or is truncated or corrupt, gives one clear line (exit 3).
"""

from __future__ import annotations

import hashlib
import re
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest

from playbook.cli import main
from playbook.core.errors import DatabaseError
from playbook.curation import curate
from playbook.retrieval.query import recall
from playbook.store import (
    DatabaseOpenError,
    PlaybookStore,
    SchemaTooNewError,
    connect,
    memory_migration,
    run_migrations,
    schema_version,
)
from playbook.store.schema import MEMORY_STEPS, Migration
from playbook.store.testing import damage_table

from .helpers import Clock

# SQLite only, on purpose: upgrades and damage of files; the PostgreSQL steps run in every
# PostgreSQL test (each opens a fresh schema) and are frozen with the SQLite ones.
pytestmark = pytest.mark.sqlite_only

NOTE_STEP = ("ALTER TABLE bullets ADD COLUMN note TEXT",)
LATEST = len(MEMORY_STEPS)  # what this Playbook writes
NEXT = LATEST + 1  # a step a later Playbook adds


def sha(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def graph_file(path: Path, *, journal: str = "delete") -> None:
    """A file another tool made: its own namespace (graph v3) and data, no playbook."""
    conn = sqlite3.connect(str(path), isolation_level=None)
    conn.execute(f"PRAGMA journal_mode={journal}")
    conn.execute(
        "CREATE TABLE _migrations (namespace TEXT NOT NULL, version INTEGER NOT NULL, "
        "applied_at TEXT NOT NULL, PRIMARY KEY (namespace, version))"
    )
    conn.executemany(
        "INSERT INTO _migrations VALUES ('graph', ?, 'then')", [(v,) for v in (1, 2, 3)]
    )
    conn.execute("CREATE TABLE sessions (id TEXT PRIMARY KEY, body BLOB)")
    conn.executemany(
        "INSERT INTO sessions VALUES (?, ?)", [(f"s{i}", bytes([i]) * 100) for i in range(50)]
    )
    conn.close()


def graph_rows(conn: sqlite3.Connection) -> list[tuple[object, ...]]:
    return conn.execute("SELECT * FROM sessions ORDER BY id").fetchall()


def playbook_file(path: Path, migration: Migration | None = None) -> None:
    """A playbook with a few bullets and events, checkpointed into the main file."""
    conn = connect(path)
    store = PlaybookStore(conn, clock=Clock(), migrate=migration is None)
    if migration is not None:
        run_migrations(conn, [migration])
    r = curate(store, [{"type": "add", "content": f"Rule {w} for pytest"} for w in "abc"])
    curate(store, [{"type": "helpful", "bullet_id": r.added[0]}])
    conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    conn.close()


# ------------------------------------------------------------------ older files upgrade
def test_a_file_at_version_0_is_upgraded_and_other_namespaces_survive(tmp_path: Path) -> None:
    path = tmp_path / "shared.sqlite3"
    graph_file(path)
    raw = sqlite3.connect(str(path))
    before = graph_rows(raw)
    raw.close()

    conn = connect(path)
    assert schema_version(conn) == 0
    store = PlaybookStore(conn, clock=Clock())
    assert schema_version(conn) == memory_migration().latest
    assert schema_version(conn, "graph") == 3
    assert graph_rows(conn) == before
    assert conn.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
    r = curate(store, [{"type": "add", "content": "Run pytest with -x"}])
    assert recall(store, "pytest").bullets[0].bullet.id == r.added[0]
    conn.close()


def test_a_plain_sqlite_file_without_migrations_is_upgraded(tmp_path: Path) -> None:
    path = tmp_path / "notes.sqlite3"
    raw = sqlite3.connect(str(path))
    raw.execute("CREATE TABLE notes (body TEXT)")
    raw.execute("INSERT INTO notes VALUES ('keep me')")
    raw.commit()
    raw.close()
    conn = connect(path)
    PlaybookStore(conn)
    assert schema_version(conn) == LATEST
    assert conn.execute("SELECT body FROM notes").fetchall() == [("keep me",)]
    conn.close()


def test_a_later_step_upgrades_a_file_with_data(tmp_path: Path) -> None:
    """The machinery a v2 will use: steps past the file's version are applied, once, in
    order, and the data is carried across."""
    path = tmp_path / "v1.sqlite3"
    playbook_file(path)
    conn = connect(path)
    before = conn.execute("SELECT id, content FROM bullets ORDER BY id").fetchall()
    events = conn.execute("SELECT * FROM feedback").fetchall()
    v2 = Migration("memory", NEXT, (*MEMORY_STEPS, NOTE_STEP))
    assert run_migrations(conn, [v2]) == [("memory", NEXT)]
    assert run_migrations(conn, [v2]) == []
    assert schema_version(conn) == NEXT
    assert conn.execute("SELECT id, content FROM bullets ORDER BY id").fetchall() == before
    assert conn.execute("SELECT * FROM feedback").fetchall() == events
    assert conn.execute("SELECT COUNT(note) FROM bullets").fetchone() == (0,)
    conn.close()


def test_a_failing_step_leaves_the_file_as_it_was(tmp_path: Path) -> None:
    path = tmp_path / "v1.sqlite3"
    playbook_file(path)
    conn = connect(path)
    before = list(conn.iterdump())
    broken = Migration("memory", NEXT, (*MEMORY_STEPS, (*NOTE_STEP, "CREATE TABLE broken (")))
    with pytest.raises(DatabaseError, match="incomplete input"):
        run_migrations(conn, [broken])
    assert list(conn.iterdump()) == before
    assert schema_version(conn) == LATEST
    conn.close()


# ------------------------------------------------------------------ newer files: refused
@pytest.mark.parametrize("journal", ["wal", "delete"])
def test_a_newer_file_is_refused_byte_for_byte_untouched(tmp_path: Path, journal: str) -> None:
    path = tmp_path / "newer.sqlite3"
    playbook_file(path, Migration("memory", NEXT, (*MEMORY_STEPS, NOTE_STEP)))
    raw = sqlite3.connect(str(path), isolation_level=None)
    raw.execute(f"PRAGMA journal_mode={journal}")
    raw.close()
    digest = sha(path)

    conn = connect(path)
    with pytest.raises(SchemaTooNewError, match=f"version {NEXT}, newer than this Playbook"):
        PlaybookStore(conn)
    with pytest.raises(SchemaTooNewError):  # nor any other namespace first
        run_migrations(
            conn, [Migration("graph", 1, (("CREATE TABLE g (x)",),)), memory_migration()]
        )
    conn.close()
    assert sha(path) == digest
    assert not (tmp_path / "newer.sqlite3-wal").exists() or journal == "wal"


def test_the_cli_refuses_a_newer_file_in_one_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "newer.sqlite3"
    playbook_file(path, Migration("memory", NEXT, (*MEMORY_STEPS, NOTE_STEP)))
    digest = sha(path)
    for args in (["recall", "pytest"], ["add", "Run the linter"], ["init"]):
        assert main(["--db", str(path), *args]) == 3
        out, err = capsys.readouterr()
        assert out == ""
        assert err.count("\n") == 1 and "newer than this Playbook" in err
    assert sha(path) == digest


# ------------------------------------------------------------------ broken files
# kind -> (how the file is broken, what the error says)
NOT_SQLITE = "not a usable SQLite database"
DAMAGED = "is damaged (database disk image is malformed)"
BROKEN = {
    "text": (lambda data: b"# my notes\nnot a database at all\n" * 50, NOT_SQLITE),
    "empty-header": (lambda data: data[:100], DAMAGED),
    "truncated": (lambda data: data[: len(data) // 2], DAMAGED),
    "zeroed-schema": (lambda data: data[:100] + bytes(4096 - 100) + data[4096:], DAMAGED),
    "garbage-after-header": (lambda data: data[:16] + bytes(range(256)) * 20, NOT_SQLITE),
}


@pytest.mark.parametrize("kind", sorted(BROKEN))
def test_a_broken_file_is_one_clear_error(
    tmp_path: Path, kind: str, capsys: pytest.CaptureFixture[str]
) -> None:
    """A file that is not SQLite says so; a playbook whose pages are damaged says that, and
    points to `playbook doctor`. Either way: one line, exit 3, the file untouched."""
    good = tmp_path / "good.sqlite3"
    playbook_file(good)
    path = tmp_path / f"{kind}.sqlite3"
    breaks, says = BROKEN[kind]
    path.write_bytes(breaks(good.read_bytes()))
    digest = sha(path)
    with pytest.raises(DatabaseOpenError, match=re.escape(says)) as info:
        PlaybookStore(connect(path))
    assert "\n" not in str(info.value)
    assert main(["--db", str(path), "recall", "pytest"]) == 3
    out, err = capsys.readouterr()
    assert out == "" and err.count("\n") == 1
    assert err.startswith("playbook: error: ") and says in err
    if says == DAMAGED:
        assert "playbook doctor" in err
    assert sha(path) == digest


def test_a_corrupt_table_found_later_is_one_clear_error(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Corruption the open does not see (a data page) surfaces on first use, still as one
    line and exit code 3, with --json as a JSON error."""
    path = tmp_path / "corrupt.sqlite3"
    playbook_file(path)
    damage_table(path, "bullets")
    assert main(["--db", str(path), "recall", "rule pytest"]) == 3
    out, err = capsys.readouterr()
    assert out == "" and err.count("\n") == 1 and "malformed" in err
    assert main(["--db", str(path), "recall", "rule pytest", "--json"]) == 3
    out, err = capsys.readouterr()
    assert '"ok": false' in out and err.count("\n") == 1


def test_the_installed_command_exits_3_without_a_traceback(tmp_path: Path) -> None:
    path = tmp_path / "notes.sqlite3"
    path.write_bytes(b"\x00\x01binary junk" * 400)
    proc = subprocess.run(
        [
            sys.executable,
            "-c",
            "from playbook.cli import run; run()",
            "--db",
            str(path),
            "recall",
            "x",
        ],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert proc.returncode == 3
    assert proc.stdout == ""
    assert proc.stderr.count("\n") == 1 and "Traceback" not in proc.stderr


# ------------------------------------------------------------------ step 2: order columns
ORDERED = ("receipts", "watermarks", "proposals", "blocked_patterns")


def test_step_2_keeps_the_insertion_order_of_rows_keyed_by_text(tmp_path: Path) -> None:
    """Version 1 ordered these tables by SQLite's hidden rowid; step 2 writes that order
    into `seq`, and the append-only rule on receipts survives the step."""
    conn = connect(tmp_path / "v1.sqlite3")
    run_migrations(conn, [memory_migration(1)])
    for i, key in enumerate(["zz", "aa", "mm"]):  # keys that sort against insertion order
        conn.execute("INSERT INTO receipts VALUES (?, 't', 'success', NULL)", (f"r-{key}",))
        conn.execute("INSERT INTO watermarks VALUES (?, ?, 't')", (f"s-{key}", i))
        conn.execute(
            "INSERT INTO blocked_patterns (id, pattern, normalized, reason, actor, created_at) "
            "VALUES (?, 'p', 'p', 'r', 'human', 't')",
            (f"p-{key}",),
        )
        conn.execute("INSERT INTO proposals (id, delta, created_at) VALUES (?, '{}', 't')", (key,))
    before = {t: conn.execute(f"SELECT * FROM {t} ORDER BY rowid").fetchall() for t in ORDERED}

    assert run_migrations(conn, [memory_migration(2)]) == [("memory", 2)]
    for table in ORDERED:
        rows = conn.execute(f"SELECT *, seq FROM {table} ORDER BY seq").fetchall()
        assert [r[:-2] for r in rows] == before[table]  # (`*` now ends with seq too)
        assert [r[-1] for r in rows] == [1, 2, 3]
    store = PlaybookStore(conn, clock=Clock())
    store.add_receipt("r-new", "success", None)
    assert conn.execute("SELECT seq FROM receipts WHERE receipt = 'r-new'").fetchone() == (4,)
    with pytest.raises(sqlite3.IntegrityError, match="append-only"):
        conn.execute("UPDATE receipts SET outcome = 'failure'")
    conn.close()
