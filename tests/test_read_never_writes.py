"""A read command never writes (issue 12): run on a real playbook, the file's bytes (and
its -wal, when there is one) are unchanged and no file appears beside it.

The playbook is the demo's (rules, feedback, proposals, conflicts, blocks, decisions), so
each command has something to read. Each command runs through the real entry point, in a
subprocess, on its own copy of the file.
"""

from __future__ import annotations

import hashlib
import json
import shutil
from pathlib import Path

import pytest

from playbook.curation import curate
from playbook.demo.build import DemoPlaybook
from playbook.demo.cache import make_demo
from playbook.store import open_store

from .helpers.cli import run_cli

READ_COMMANDS: list[list[str]] = [
    ["recall", "release npm"],
    ["recall", "release npm", "--explain-hidden", "--json"],
    ["recall", "release npm", "--as-of", "{then}", "--json"],
    ["recall", "release npm", "--scope", "language:python", "--json"],
    ["show", "{rule}"],
    ["show", "{rule}", "--json"],
    ["stats"],
    ["stats", "--json"],
    ["stale", "--json"],
    ["blocked", "--json"],
    ["conflicts", "--json"],
    ["proposals", "--json"],
    ["topics", "--json"],
    ["diff", "--since", "30d", "--json"],
    ["export"],
    ["export", "--format", "yaml"],
    ["export", "--format", "agents-md"],
    ["policy", "show", "--json"],
    ["policy", "eval", "--json"],
    ["doctor", "--json"],
]


@pytest.fixture(scope="module")
def demo(tmp_path_factory: pytest.TempPathFactory) -> DemoPlaybook:
    return make_demo(tmp_path_factory.mktemp("demo") / "demo.sqlite3")


def snapshot(folder: Path) -> dict[str, str]:
    """Every file in the folder, by name, with the hash of its bytes."""
    return {p.name: hashlib.sha256(p.read_bytes()).hexdigest() for p in folder.iterdir()}


@pytest.mark.parametrize("args", READ_COMMANDS, ids=" ".join)
def test_a_read_command_leaves_a_real_playbook_byte_for_byte(
    demo: DemoPlaybook, tmp_path: Path, args: list[str]
) -> None:
    path = tmp_path / "pb.sqlite3"
    for suffix in ("", "-wal"):  # the demo's file as it is on disk, its log included
        source = demo.path.with_name(demo.path.name + suffix)
        if source.exists():
            shutil.copyfile(source, path.with_name(path.name + suffix))
    before = snapshot(tmp_path)
    then = "2026-01-01"
    argv = [a.format(rule=demo.rule_ids[0], then=then) for a in args]
    r = run_cli(*argv, db=path)
    assert r.rc == 0, (r.rc, r.out, r.err)
    if "--json" in argv:
        assert json.loads(r.out)["ok"] is True
    else:
        assert r.out.strip()  # it did read something to print
    assert snapshot(tmp_path) == before  # same bytes, and no -wal, -shm or journal appeared


@pytest.mark.parametrize("args", [["recall", "release npm"], ["stats"], ["export"]], ids=" ".join)
def test_a_read_command_leaves_a_writers_log_as_it_found_it(
    demo: DemoPlaybook, tmp_path: Path, args: list[str]
) -> None:
    """A playbook whose writer died with changes still in its -wal: reading it neither
    checkpoints the log into the file nor removes or adds a file."""
    live = tmp_path / "live"
    live.mkdir()
    shutil.copyfile(demo.path, live / "pb.sqlite3")
    crashed = tmp_path / "crashed"
    crashed.mkdir()
    with open_store(live / "pb.sqlite3") as store:
        curate(store, [{"type": "add", "content": "Pin the release runner's npm version"}])
        for f in live.iterdir():  # the files as a writer killed now leaves them
            shutil.copyfile(f, crashed / f.name)
    assert (crashed / "pb.sqlite3-wal").stat().st_size > 0
    before = snapshot(crashed)
    r = run_cli(*args, db=crashed / "pb.sqlite3")
    assert r.rc == 0, (r.rc, r.out, r.err)
    after = snapshot(crashed)
    assert sorted(after) == sorted(before)  # nothing removed, nothing added
    # The file and its log are byte for byte the same. The -shm is SQLite's shared-memory
    # index of the log, which every reader rebuilds and marks, and holds no data.
    assert {n: h for n, h in after.items() if not n.endswith("-shm")} == {
        n: h for n, h in before.items() if not n.endswith("-shm")
    }
