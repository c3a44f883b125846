"""Opening a playbook: targets, modes, and the ways a file can be unusable (issue 12).

Read commands never write; a read-only playbook can be read; what failed is said plainly
(a missing folder, a full disk, a URL, an empty --db), each with its own code and exit.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import socket
import sqlite3
import stat
import subprocess
import sys
from pathlib import Path

import pytest

from playbook import open_database
from playbook.cli import main
from playbook.core import errors
from playbook.curation import curate
from playbook.interop.importing import import_snapshot, load
from playbook.interop.snapshot import export_snapshot, to_json
from playbook.store import open_store
from playbook.store import testing as raw

from .helpers.cli import ENTRY, assert_user_error, clean_env, run_cli

READ_COMMANDS = [
    ["recall", "linter"],
    ["show", "b-00000000"],
    ["stats"],
    ["stale"],
    ["blocked"],
    ["export"],
]


def sha(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def make_playbook(path: Path) -> str:
    with open_store(path) as store:
        r = curate(store, [{"type": "add", "content": "Run the linter before every commit"}])
        store.add_feedback(r.added[0], "helpful")
    return r.added[0]


def foreign_database(path: Path) -> None:
    """Another program's SQLite file: its own table, the default (rollback) journal."""
    conn = sqlite3.connect(path)
    conn.execute("CREATE TABLE invoices (id INTEGER PRIMARY KEY, total REAL)")
    conn.execute("INSERT INTO invoices (total) VALUES (12.5)")
    conn.commit()
    conn.close()


# ------------------------------------------------------------------ another program's file
@pytest.mark.parametrize("args", READ_COMMANDS, ids=lambda a: a[0])
def test_a_read_command_never_writes_to_another_programs_database(
    tmp_path: Path, args: list[str], capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "invoices.db"
    foreign_database(path)
    digest = sha(path)
    assert main(["--db", str(path), *args, "--json"]) == 1
    out, err = capsys.readouterr()
    doc = json.loads(out)
    assert doc["error"]["code"] == "not_a_playbook"
    assert "not a playbook database" in doc["error"]["message"]
    assert "playbook init" in doc["error"]["hint"]
    assert err.count("\n") == 1
    assert sha(path) == digest  # no tables added
    assert sorted(p.name for p in tmp_path.iterdir()) == ["invoices.db"]  # no -wal, no -shm
    conn = sqlite3.connect(path)
    assert conn.execute("PRAGMA journal_mode").fetchone()[0] == "delete"  # not switched
    assert conn.execute("SELECT name FROM sqlite_master").fetchall() == [("invoices",)]
    conn.close()


def test_the_api_refuses_to_read_or_write_a_file_without_a_playbook(tmp_path: Path) -> None:
    path = tmp_path / "invoices.db"
    foreign_database(path)
    digest = sha(path)
    for mode in ("read", "write"):
        with pytest.raises(errors.NotAPlaybook, match="not a playbook database"):
            open_store(path, mode=mode)
    assert sha(path) == digest
    with open_store(path) as store:  # "create" adds a playbook beside the other tables
        assert store.count_bullets() == 0
    assert raw_tables(path) >= {"invoices", "bullets", "feedback"}


def raw_tables(path: Path) -> set[str]:
    conn = sqlite3.connect(path)
    names = {r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type='table'")}
    conn.close()
    return names


def test_a_read_only_open_never_creates_migrates_or_writes(tmp_path: Path) -> None:
    missing = tmp_path / "absent.sqlite3"
    with pytest.raises(errors.NoDatabase, match="no playbook at"):
        open_store(missing, mode="read")
    assert not missing.exists()
    path = tmp_path / "pb.sqlite3"
    bid = make_playbook(path)
    digest = sha(path)
    with open_store(path, mode="read") as store:
        assert store.read_only and store.score(bid).helpful == pytest.approx(1.0)
        with pytest.raises(errors.ReadOnlyPlaybook, match="opened read-only"):
            store.pin(bid, "no")
    assert sha(path) == digest


# ------------------------------------------------------------------ targets
@pytest.mark.parametrize("how", ["option", "environment"])
def test_an_empty_database_location_is_a_usage_error(tmp_path: Path, how: str) -> None:
    env = clean_env(XDG_DATA_HOME=str(tmp_path / "xdg"))
    if how == "option":
        r = run_cli("--db", "", "stats", "--json", env=env)
    else:
        r = run_cli("stats", "--json", env={**env, "PLAYBOOK_DB": ""})
    err = assert_user_error(r, "usage", exit_code=2)
    assert "empty" in err["message"]
    assert not (tmp_path / "xdg").exists()  # no fallback to the default path


@pytest.mark.parametrize("argv", [["stats"], ["add", "A rule"], ["init"]])
def test_a_directory_named_as_the_database_is_a_user_error(tmp_path: Path, argv: list) -> None:
    folder = tmp_path / "playbooks"
    folder.mkdir()
    r = run_cli("--db", str(folder), *argv, "--json", env=clean_env())
    err = assert_user_error(r, "not_a_playbook", exit_code=1)
    assert "is a directory" in err["message"]
    assert str(folder / "state.sqlite3") in (err["hint"] or "")
    assert list(folder.iterdir()) == []


def _nobody_listens() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def test_a_postgresql_url_is_never_taken_for_a_path(tmp_path: Path) -> None:
    port = _nobody_listens()
    for url in (
        f"postgresql://me@127.0.0.1:{port}/playbook",
        f"postgres://me:secret@127.0.0.1:{port}/pb",
    ):
        proc = subprocess.run(
            [sys.executable, "-c", ENTRY, "--db", url, "add", "A rule", "--json"],
            capture_output=True,
            text=True,
            cwd=tmp_path,
            env=clean_env(),
            timeout=60,
        )
        assert proc.returncode == 3, proc.stderr
        error = json.loads(proc.stdout)["error"]
        assert error["code"] == "cannot_open"
        assert f"127.0.0.1:{port}" in error["message"] and "secret" not in error["message"]
        assert list(tmp_path.iterdir()) == []  # no folder named "postgresql:"
    with pytest.raises(errors.CannotOpen, match="cannot connect"):
        open_store(f"postgresql://me@127.0.0.1:{port}/playbook")


def test_without_psycopg_a_postgresql_url_says_what_to_install(tmp_path: Path) -> None:
    prelude = "import sys; sys.modules['psycopg'] = None; "  # as if it were not installed
    proc = subprocess.run(
        [sys.executable, "-c", prelude + ENTRY, "--db", "postgresql://me@db/pb", "stats", "--json"],
        capture_output=True,
        text=True,
        cwd=tmp_path,
        env=clean_env(),
        timeout=60,
    )
    assert proc.returncode == 1, proc.stderr
    error = json.loads(proc.stdout)["error"]
    assert error["code"] == "backend_unavailable"
    assert "pip install -e '.[postgres]'" in error["message"]
    assert list(tmp_path.iterdir()) == []


def test_an_unknown_url_scheme_is_a_usage_error(tmp_path: Path) -> None:
    r = run_cli("--db", "mysql://me@localhost/pb", "stats", "--json")
    assert "mysql://" in assert_user_error(r, "usage", exit_code=2)["message"]
    for bad in ("", "   ", "sqlite://pb.sqlite3"):
        with pytest.raises(errors.UsageError):
            open_store(bad)


# ------------------------------------------------------------------ what actually failed
def test_a_missing_folder_is_named_not_called_an_unusable_database(tmp_path: Path) -> None:
    path = tmp_path / "no" / "such" / "folder" / "pb.sqlite3"
    with pytest.raises(errors.CannotOpen) as info:
        open_database(path)
    assert f"the folder {path.parent} does not exist" in str(info.value)
    assert "not a usable SQLite database" not in str(info.value)
    with pytest.raises(errors.NoDatabase):
        open_store(path, mode="write")
    with open_store(path) as store:  # the create mode makes the folder
        assert store.count_bullets() == 0


@pytest.mark.skipif(not Path("/dev/full").exists(), reason="needs /dev/full")
def test_a_device_as_the_playbook_is_refused_at_once(tmp_path: Path) -> None:
    """A device (here /dev/full, through a link) is no playbook file: SQLite would write
    into it and make its journal files beside it, in /dev. A full disk itself is said as
    such (tests/test_files.py, on a small file system of its own)."""
    path = tmp_path / "pb.sqlite3"
    path.symlink_to("/dev/full")
    r = run_cli("init", "--json", db=path)
    err = assert_user_error(r, "cannot_open", exit_code=3)
    assert "not a regular file" in err["message"]
    assert path.is_symlink() and stat.S_ISCHR(Path("/dev/full").stat().st_mode)


def test_a_full_disk_during_import_says_so_and_changes_nothing(tmp_path: Path) -> None:
    source = tmp_path / "source.sqlite3"
    with open_store(source) as store:
        curate(store, [{"type": "add", "content": f"Rule {i} " + "x" * 400} for i in range(300)])
        _, snapshot = load(to_json(export_snapshot(store)).encode(), "json")
    target = tmp_path / "target.sqlite3"
    with open_store(target) as store:
        before = raw.dump(store)
        pages = raw.value(store, "PRAGMA page_count")
        raw.run(store, f"PRAGMA max_page_count = {pages + 2}")  # the disk fills up
        with pytest.raises(errors.DiskFull, match="disk is full"):
            import_snapshot(store, snapshot)
        assert raw.dump(store) == before


# ------------------------------------------------------------------ read-only playbooks
# Root ignores file modes; without these capabilities it obeys them like any user.
DROP_ROOT_POWERS = ["setpriv", "--bounding-set=-dac_override,-dac_read_search,-fowner", "--"]


def run_as_reader(path: Path, *args: str) -> subprocess.CompletedProcess[str]:
    """The CLI as a user without write permission on `path` (or its folder)."""
    prefix = DROP_ROOT_POWERS if os.geteuid() == 0 else []
    return subprocess.run(
        [*prefix, sys.executable, "-c", ENTRY, "--db", str(path), *args],
        capture_output=True,
        text=True,
        env=clean_env(),
        timeout=60,
    )


@pytest.mark.skipif(
    sys.platform == "win32" or (os.geteuid() == 0 and shutil.which("setpriv") is None),
    reason="needs POSIX permissions (as root: setpriv, to give up overriding them)",
)
@pytest.mark.parametrize("what", ["folder", "file"])
def test_a_read_only_playbook_is_readable_and_says_it_is_read_only(
    tmp_path: Path, what: str
) -> None:
    folder = tmp_path / "pb"
    folder.mkdir()
    path = folder / "pb.sqlite3"
    bid = make_playbook(path)
    path.chmod(0o444)
    if what == "folder":
        folder.chmod(0o555)
    digest = sha(path)
    try:
        r = run_as_reader(path, "recall", "linter", "--json")
        assert r.returncode == 0, r.stderr
        assert "Run the linter before every commit" in r.stdout
        for args in (["stats"], ["export"]):
            assert run_as_reader(path, *args).returncode == 0
        for args in (["add", "Another rule"], ["mark", bid, "helpful"], ["pin", bid, "-r", "x"]):
            r = run_as_reader(path, *args, "--json")
            assert r.returncode == 3, r.stderr
            error = json.loads(r.stdout)["error"]
            assert error["code"] == "read_only" and "read-only" in error["message"]
            assert r.stderr.count("\n") == 1 and "Traceback" not in r.stderr
        assert sha(path) == digest
    finally:
        folder.chmod(0o755)
