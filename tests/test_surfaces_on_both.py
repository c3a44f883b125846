"""The core path of every surface, on both backends: the CLI (a session of commands, as a
person or an agent runs them), an agent's prompt hook, the MCP tools, the workbench (its
snapshot, a write, and the live refresh of its watcher) and `playbook pg roles`.

Every test takes `db_target`, so it runs once on a SQLite file and once on a PostgreSQL
schema, and asserts the same outcome on both.
"""

from __future__ import annotations

import json
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from playbook.cli import main
from playbook.mcp.server import PlaybookTools
from playbook.store import open_store
from playbook.tui import data, reading

from .helpers.cli import ENTRY, clean_env
from .helpers.hooks import context_of
from .helpers.tui import async_test, loaded, make_app, screen_text, wait_for


def cli(target: str | Path, *args: str, capsys: pytest.CaptureFixture[str]) -> Any:
    """Run one command in-process with --json; return its data (it must succeed)."""
    rc = main(["--db", str(target), *args, "--json"])
    out, err = capsys.readouterr()
    assert rc == 0, err
    return json.loads(out)["data"]


def test_a_cli_session(db_target: str | Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert cli(db_target, "init", capsys=capsys)["bullets"] == 0
    rule = cli(db_target, "add", "Run pytest with -x in CI", "--tag", "ci", capsys=capsys)
    bid = rule["added"][0]
    cli(db_target, "add", "Pin npm to 11 in release jobs", capsys=capsys)
    cli(db_target, "mark", bid, "helpful", capsys=capsys)
    done = cli(db_target, "outcome", "success", bid, "--receipt", "job-7", capsys=capsys)
    assert done["applied"] == [bid]
    again = cli(db_target, "outcome", "success", bid, "--receipt", "job-7", capsys=capsys)
    assert again["replayed"] and again["applied"] == []
    found = cli(db_target, "recall", "pytest ci", capsys=capsys)
    assert [b["bullet"]["id"] for b in found["bullets"]] == [bid]
    shown = cli(db_target, "show", bid, capsys=capsys)
    assert len(shown["timeline"]) == 2
    cli(db_target, "pin", bid, "--reason", "team rule", capsys=capsys)
    stats = cli(db_target, "stats", capsys=capsys)
    assert stats["bullets"]["total"] == 2 and stats["bullets"]["pinned"] == 1
    assert "secret" not in stats["path"]


def test_a_review_session_curate_reflect_approve_topics(
    db_target: str | Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The CLI's batch, the review queue from a diary, and the merge proposals of topics."""
    batch = tmp_path / "batch.json"
    batch.write_text(
        json.dumps(
            [
                {"type": "add", "content": "Pin npm to 11 in release jobs"},
                {"type": "add", "content": "Pin npm version to 11 in the release jobs"},
            ]
        )
    )
    a, b = cli(db_target, "curate", str(batch), capsys=capsys)["added"]
    notes = tmp_path / "notes.md"
    notes.write_text("RULE: Cache docker layers in CI\nAVOID: sudo npm ci\n")
    rule, avoid = cli(db_target, "reflect", str(notes), "--session", "s1", "--heuristic",
                      capsys=capsys)["staged"]  # fmt: skip
    assert cli(db_target, "proposals", capsys=capsys)["pending"] == 2
    approved = cli(db_target, "approve", rule, capsys=capsys)
    new_id = approved["result"]["added"][0]
    rejected = cli(db_target, "reject", avoid, "--reason", "too vague", "--block", capsys=capsys)
    assert rejected["block_id"].startswith("p-")
    topics = cli(db_target, "topics", "--stage", capsys=capsys)
    assert [t["bullet_ids"] for t in topics["topics"]] == [[a, b]]
    with open_store(db_target) as store:
        assert store.get_bullet(new_id).content == "Cache docker layers in CI"  # type: ignore[union-attr]
        assert [p.pattern for p in store.blocked()] == ["AVOID: sudo npm ci"]
        assert store.watermark("s1") == len(notes.read_bytes())


def test_export_and_import_go_through_either_backend(
    db_target: str | Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    cli(db_target, "add", "Run pytest with -x in CI", capsys=capsys)
    first = tmp_path / "one.json"
    cli(db_target, "export", "--output", str(first), capsys=capsys)
    restored = tmp_path / "restored.sqlite3"
    cli(restored, "import", str(first), capsys=capsys)
    second = tmp_path / "two.json"
    cli(restored, "export", "--output", str(second), capsys=capsys)
    assert second.read_bytes() == first.read_bytes()


def test_the_prompt_hook_recalls(db_target: str | Path, tmp_path: Path) -> None:
    with open_store(db_target) as store:
        from playbook.curation import curate

        curate(store, [{"type": "add", "content": "Run pytest with -x before pushing"}])
    proc = subprocess.run(
        [sys.executable, "-c", ENTRY, "--db", str(db_target), "hook", "prompt"],
        input=json.dumps(
            {"session_id": "s1", "prompt": "why does pytest fail?", "cwd": str(tmp_path),
             "hook_event_name": "UserPromptSubmit"}
        ).encode(),
        capture_output=True,
        env=clean_env(XDG_STATE_HOME=str(tmp_path / "state")),
        timeout=60,
    )  # fmt: skip
    assert proc.returncode == 0
    assert "Run pytest with -x before pushing" in context_of(proc.stdout.decode())


def test_the_mcp_tools(db_target: str | Path) -> None:
    tools = PlaybookTools(db_target)
    added = tools.propose_deltas([{"type": "add", "content": "Cache docker layers in CI"}])
    assert added["staged"]
    with open_store(db_target) as store:
        bid = store.insert_bullet("Run pytest with -x in CI").id
    assert tools.mark_feedback(bid, "helpful")["status"] == "applied"
    assert [b["id"] for b in tools.recall("pytest")["bullets"]] == [bid]
    assert tools.show_bullet(bid)["bullet"]["id"] == bid


def test_the_workbench_reads_writes_and_hears_other_writers(db_target: str | Path) -> None:
    with open_store(db_target) as store:
        bid = store.insert_bullet("Run pytest with -x in CI").id
    source = data.Source(db_target)
    snap = reading.load_snapshot(source)
    assert [r.id for r in snap.rows] == [bid]
    watcher = source.watcher()
    try:
        before = watcher.version()
        time.sleep(0.2)
        assert watcher.version() == before  # nothing committed: nothing moves
        with open_store(db_target) as other:  # another process, say
            other.add_feedback(bid, "helpful")
        deadline = time.monotonic() + 1.0  # "within a second"
        while watcher.version() == before and time.monotonic() < deadline:
            time.sleep(0.01)
        assert watcher.version() != before
    finally:
        watcher.close()
    assert reading.load_snapshot(source).rows[0].helpful > 0


@pytest.mark.postgres
def test_the_postgresql_watcher_asks_the_server_nothing(pg_url: str) -> None:
    """It LISTENs: reading the token reads the socket, and runs no query."""
    open_store(pg_url).close()
    watcher = data.Watcher(pg_url)
    try:
        ran: list[Any] = []
        real = watcher.store.sql._conn.execute  # type: ignore[attr-defined]
        watcher.store.sql._conn.execute = lambda *a, **k: ran.append(a) or real(*a, **k)  # type: ignore[attr-defined]
        for _ in range(5):
            watcher.version()
        assert ran == []
    finally:
        watcher.close()


@async_test
async def test_the_workbench_app_shows_a_playbook_on_either_backend(
    db_target: str | Path, tmp_path: Path
) -> None:
    with open_store(db_target) as store:
        store.insert_bullet("Read the first error in the CI log")
    app = make_app(db_target, folder=tmp_path)
    async with app.run_test(size=(120, 36)) as pilot:
        await loaded(pilot, app)  # (the table paints just after the snapshot lands)
        await wait_for(pilot, lambda: "Read the first error in the CI log" in screen_text(app))
        with open_store(db_target) as other:
            other.insert_bullet("Write the failing test first")
        await wait_for(pilot, lambda: "Write the failing test first" in screen_text(app))


def test_pg_roles_is_for_a_postgresql_playbook(
    db_target: str | Path, capsys: pytest.CaptureFixture[str]
) -> None:
    open_store(db_target).close()
    rc = main(["--db", str(db_target), "pg", "roles", "--sql", "--json"])
    out, _ = capsys.readouterr()
    if isinstance(db_target, Path):
        assert rc == 2 and json.loads(out)["error"]["code"] == "usage"
    else:
        assert rc == 0
        statements = json.loads(out)["data"]["sql"]
        assert any("CREATE ROLE playbook_agent NOLOGIN" in s for s in statements)


def test_psycopg_is_not_imported_for_help_or_a_file() -> None:
    code = (
        "import sys\n"
        "from playbook.cli import main\n"
        "main(['--help'])\n"
        "main(['--db', sys.argv[1], 'add', 'Run the linter'])\n"
        "main(['--db', sys.argv[1], 'recall', 'linter'])\n"
        "print('psycopg' in sys.modules)"
    )
    import tempfile

    with tempfile.TemporaryDirectory() as folder:
        out = subprocess.run(
            [sys.executable, "-c", code, str(Path(folder) / "pb.sqlite3")],
            capture_output=True,
            text=True,
            env=clean_env(),
            timeout=60,
        )
    assert out.stdout.strip().endswith("False"), out.stderr
