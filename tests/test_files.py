"""The files a user names (issue 29): written safely, read with a cap.

Writing: a device or a FIFO is written through and stays what it was (`export -o
/dev/null` as root replaced the machine's /dev/null with a regular file); a regular file is
replaced whole, keeping its permissions, a new one made 0600 (0640 in a set-group-ID
folder); a symbolic link is followed within its folder and refused out of it. Reading: a
device, a pipe or stdin stops at `--max-size` (import, curate, reflect), JSON naming a key
twice is refused, a FIFO or a device as `--db` is refused at once instead of hanging.
"""

from __future__ import annotations

import json
import os
import stat
import threading
from pathlib import Path
from typing import Any

import pytest

from playbook.core.files import TooLarge, UnsafePath, loads_json, read_capped, write_file

from .helpers import store_at
from .helpers.cli import assert_user_error, run_cli

ROOT = os.geteuid() == 0


def _reader(fifo: Path, into: list[bytes]) -> threading.Thread:
    def read() -> None:
        with open(fifo, "rb") as fh:
            into.append(fh.read())

    thread = threading.Thread(target=read, daemon=True)
    thread.start()
    return thread


def test_a_fifo_is_written_through_and_stays_a_fifo(tmp_path: Path) -> None:
    fifo = tmp_path / "out.fifo"
    os.mkfifo(fifo)
    got: list[bytes] = []
    thread = _reader(fifo, got)
    write_file(fifo, "hello\n")
    thread.join(10)
    assert got == [b"hello\n"] and stat.S_ISFIFO(fifo.lstat().st_mode)


@pytest.mark.skipif(not ROOT, reason="making a device node needs root")
def test_a_device_is_written_through_and_stays_a_device(tmp_path: Path) -> None:
    """A copy of /dev/null (mknod 1 3): as root, the write went through rename() before."""
    null = tmp_path / "null"
    os.mknod(null, 0o666 | stat.S_IFCHR, os.makedev(1, 3))
    link = tmp_path / "stdout-like"
    link.symlink_to(null)
    for path in (null, link):
        write_file(path, "x" * 10_000)
        assert stat.S_ISCHR(null.lstat().st_mode)
    assert not [p for p in tmp_path.iterdir() if p.name.startswith(".")]  # no temporary left


def test_a_regular_file_is_replaced_keeping_its_mode(tmp_path: Path) -> None:
    out = tmp_path / "export.json"
    write_file(out, "one")
    assert stat.S_IMODE(out.stat().st_mode) == 0o600
    out.chmod(0o644)
    write_file(out, "two")
    assert out.read_text() == "two" and stat.S_IMODE(out.stat().st_mode) == 0o644


def test_a_new_file_in_a_group_shared_folder_is_group_readable(tmp_path: Path) -> None:
    shared = tmp_path / "team"
    shared.mkdir()
    shared.chmod(0o2770)
    write_file(shared / "AGENTS.md", "# Playbook\n")
    assert stat.S_IMODE((shared / "AGENTS.md").stat().st_mode) == 0o640


def test_a_link_is_followed_in_its_folder_and_refused_out_of_it(tmp_path: Path) -> None:
    real = tmp_path / "real.json"
    real.write_text("old")
    near = tmp_path / "near.json"
    near.symlink_to(real.name)
    write_file(near, "new")
    assert near.is_symlink() and real.read_text() == "new"
    elsewhere = tmp_path / "home"
    elsewhere.mkdir()
    precious = elsewhere / ".bashrc"
    precious.write_text("mine")
    planted = tmp_path / "out" / "export.json"
    planted.parent.mkdir()
    planted.symlink_to(precious)
    with pytest.raises(UnsafePath, match="outside its folder"):
        write_file(planted, "gotcha")
    assert precious.read_text() == "mine" and planted.is_symlink()
    with pytest.raises(UnsafePath, match="folder"):
        write_file(tmp_path, "x")


def test_the_cli_writes_through_and_refuses_as_write_file_does(tmp_path: Path) -> None:
    db = tmp_path / "pb.sqlite3"
    with store_at(db) as store:
        store.insert_bullet("Pin npm to 11")
    fifo = tmp_path / "export.fifo"
    os.mkfifo(fifo)
    got: list[bytes] = []
    thread = _reader(fifo, got)
    assert run_cli("export", "-o", fifo, db=db).rc == 0
    thread.join(10)
    assert b"Pin npm to 11" in got[0] and stat.S_ISFIFO(fifo.lstat().st_mode)
    outside = tmp_path / "elsewhere"
    outside.mkdir()
    (outside / "target.toml").write_text("[policy]\n")
    link_dir = tmp_path / "links"
    link_dir.mkdir()
    (link_dir / "playbook.toml").symlink_to(outside / "target.toml")
    r = run_cli("export", "-o", link_dir / "playbook.toml", "--json", db=db)
    assert_user_error(r, "file_error")
    assert (outside / "target.toml").read_text() == "[policy]\n"


@pytest.mark.parametrize("source", ["/dev/zero", "/dev/urandom"])
def test_a_device_read_stops_at_the_cap(source: str) -> None:
    with pytest.raises(TooLarge, match="over the 1,024-byte limit"):
        read_capped(source, 1024)


@pytest.mark.parametrize(
    "command",
    [
        ["import", "/dev/zero", "--max-size", "1M"],
        ["curate", "/dev/zero", "--max-size", "1M"],
        ["reflect", "/dev/urandom", "--session", "s", "--max-size", "1M"],
        ["import", "-", "--max-size", "1M"],
        ["curate", "-", "--max-size", "1M"],
        ["reflect", "-", "--session", "s", "--max-size", "1M"],
    ],
)
def test_every_input_stops_at_its_max_size(tmp_path: Path, command: list[str]) -> None:
    """A device, or 8 MB on stdin, against a 1M cap: refused, nothing written."""
    db = tmp_path / "pb.sqlite3"
    r = run_cli(*command, "--json", db=db, stdin=b"[" + b" " * (8 << 20))
    code = "invalid_import" if command[0] == "import" else "invalid_input"
    err = assert_user_error(r, code)
    assert "--max-size" in err["message"]
    assert not db.exists() or command[0] == "reflect"


def test_duplicate_json_keys_are_refused(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="twice"):
        loads_json('{"type": "add", "content": "a", "content": "b"}')
    deltas = tmp_path / "deltas.json"
    deltas.write_text('[{"type": "add", "content": "Use uv", "content": "Use pip"}]')
    r = run_cli("curate", deltas, "--json", db=tmp_path / "pb.sqlite3")
    assert "twice" in assert_user_error(r, "invalid_json")["message"]
    db = tmp_path / "source.sqlite3"
    with store_at(db) as store:
        store.insert_bullet("Pin npm to 11")
    doc = json.loads(run_cli("export", db=db).out)
    text = json.dumps(doc).replace('"format": ', '"format": "x", "format": ', 1)
    export = tmp_path / "export.json"
    export.write_text(text)
    r = run_cli("import", export, "--json", db=tmp_path / "new.sqlite3")
    assert "twice" in assert_user_error(r, "invalid_import")["message"]


def test_a_fifo_as_the_playbook_is_refused_at_once(tmp_path: Path) -> None:
    fifo = tmp_path / "pb.fifo"
    os.mkfifo(fifo)
    for command in (["stats"], ["add", "Use uv"]):
        r = run_cli(*command, "--json", db=fifo)
        assert_user_error(r, "cannot_open", 3)
    assert stat.S_ISFIFO(fifo.lstat().st_mode)


def test_a_new_playbook_file_is_its_owners_alone(tmp_path: Path) -> None:
    db = tmp_path / "pb.sqlite3"
    assert run_cli("add", "Use uv for installs", db=db).rc == 0
    assert stat.S_IMODE(db.stat().st_mode) == 0o600


@pytest.mark.parametrize("value", ["nan", "inf", "-1", "0"])
def test_a_reflector_timeout_is_a_finite_number_of_seconds(tmp_path: Path, value: str) -> None:
    diary = tmp_path / "diary.md"
    diary.write_text("RULE: Pin Python in CI\n")
    r = run_cli(
        "reflect", diary, "--session", "s", "--reflector", "cat", "--timeout", value, "--json",
        db=tmp_path / "pb.sqlite3",
    )  # fmt: skip
    assert "--timeout" in assert_user_error(r, "usage", 2)["message"]


def _as_nobody(args: list[str]) -> int:
    """The CLI in a child of this process that is no longer root (file permissions then
    apply, as to any user); the modules it needs are already imported here."""
    from playbook.cli import main

    pid = os.fork()
    if pid == 0:  # pragma: no cover - the child
        try:
            os.setgid(65534)
            os.setuid(65534)
            code = main(args)
        except BaseException:
            code = 99
        os._exit(code)
    _, status = os.waitpid(pid, 0)
    return os.waitstatus_to_exitcode(status)


@pytest.mark.parametrize("command", [["stats"], ["recall", "npm release"], ["export"]])
def test_a_read_of_a_read_only_file_leaves_nothing_beside_it(
    tmp_path: Path, command: list[str]
) -> None:
    """Issue 29: a read left -wal and -shm files (mode 0444) that blocked every write after
    the file was made writable again."""
    import shutil
    import tempfile

    folder = Path(tempfile.mkdtemp(prefix="playbook-ro-"))  # one another user can reach
    folder.chmod(0o777)
    request_cleanup = lambda: shutil.rmtree(folder, ignore_errors=True)  # noqa: E731
    db = folder / "pb.sqlite3"
    assert run_cli("add", "Pin npm to 11 in release jobs", db=db).rc == 0
    args = ["--db", str(db), *command]
    if ROOT:  # what the command imports, imported here first (the child may not read it)
        from playbook.cli import main

        warm = tmp_path / "warm.sqlite3"
        assert run_cli("add", "Pin npm to 11 in release jobs", db=warm).rc == 0
        assert main(["--db", str(warm), *command]) == 0
    db.chmod(0o444)
    try:
        code = _as_nobody(args) if ROOT else run_cli(*args).rc
        assert code == 0
        assert sorted(p.name for p in folder.iterdir()) == ["pb.sqlite3"]
        db.chmod(0o644)
        assert run_cli("add", "Run pytest with -x", db=db).rc == 0
    finally:
        request_cleanup()


@pytest.fixture
def small_disk() -> Any:
    """A 600 KiB file system of its own (root, and the right to mount, needed)."""
    import shutil
    import subprocess
    import tempfile

    if not ROOT:
        pytest.skip("mounting a small file system needs root")
    folder = Path(tempfile.mkdtemp(prefix="playbook-full-"))
    mounted = subprocess.run(
        ["mount", "-t", "tmpfs", "-o", "size=600k", "tmpfs", str(folder)], capture_output=True
    )
    if mounted.returncode != 0:
        shutil.rmtree(folder, ignore_errors=True)
        pytest.skip(f"cannot mount a tmpfs here: {mounted.stderr.decode().strip()}")
    try:
        yield folder
    finally:
        subprocess.run(["umount", str(folder)], capture_output=True)
        shutil.rmtree(folder, ignore_errors=True)


def test_a_full_disk_is_said_and_reads_still_work(small_disk: Path) -> None:
    """Issue 29: every command, reads included, said "not a usable SQLite database"."""
    db = small_disk / "pb.sqlite3"
    assert run_cli("add", "Pin npm to 11 in release jobs", db=db).rc == 0
    with open(small_disk / "fill", "wb", buffering=0) as fh, pytest.raises(OSError):
        while True:
            fh.write(b"\0" * 4096)
    for command in (["stats"], ["recall", "npm release"], ["export"]):
        r = run_cli(*command, "--json", db=db)
        assert r.rc == 0, (command, r.err)
    r = run_cli("add", "Run pytest with -x", "--json", db=db)
    assert_user_error(r, "disk_full", 3)
    assert sorted(p.name for p in small_disk.iterdir()) == ["fill", "pb.sqlite3"]
