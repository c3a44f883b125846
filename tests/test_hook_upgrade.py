"""A playbook at an older schema meets the agent's hooks: they never upgrade it (an upgrade
reads every row; under a hook's deadline it was cut off, rolled back and started again by
the next hook, for ever), and `playbook migrate` does, on request (issue 31).

Run through the real `playbook hook …` entry with Claude Code's hook input, on both
backends: the hooks write nothing and leave the schema as it is, say so in one log line
each and to the user once per session, the prompt hook still answers from a schema it can
read; after `playbook migrate` every hook works again.
"""

from __future__ import annotations

import json
import shlex
from pathlib import Path
from typing import Any

import pytest

from playbook.store import PlaybookStore, open_executor, open_store, schema_version
from playbook.store import testing as raw
from playbook.store.schema import MEMORY_LATEST, memory_migration, run_migrations

from .helpers.cli import Result, run_cli
from .helpers.hooks import ENTRY, Agent, claude_record, fixture, wait_for

RELEASE = "The release job fails on npm ci, can you fix it?"


def old_playbook(target: str | Path, version: int) -> str:
    """A playbook made by a Playbook whose schema ended at `version`: a rule with a vote."""
    ex = open_executor(target, "create")
    try:
        run_migrations(ex, [memory_migration(version)])
        store = PlaybookStore(ex, migrate=False)
        rule = store.insert_bullet("Pin npm to 11 in release jobs", tags=["ci"]).id
        store.add_feedback(rule, "helpful")
    finally:
        ex.close()
    return rule


def version_of(target: str | Path) -> int:
    ex = open_executor(target, "read")
    try:
        return schema_version(ex)
    finally:
        ex.close()


def snapshot(target: str | Path) -> dict[str, Any]:
    """Every row of every table, and what the schema holds besides tables (SQLite: its
    whole schema; PostgreSQL: constraints, functions and triggers)."""
    store = PlaybookStore(open_executor(target, "read"), migrate=False)
    try:
        out: dict[str, Any] = raw.dump(store)
        if store.sql.dialect != "sqlite":
            out["(constraints)"] = raw.rows(
                store,
                "SELECT conname FROM pg_constraint c JOIN pg_namespace n ON n.oid = "
                "c.connamespace WHERE n.nspname = current_schema() ORDER BY 1",
            )
            out["(functions)"] = raw.rows(
                store,
                "SELECT proname FROM pg_proc p JOIN pg_namespace n ON n.oid = p.pronamespace "
                "WHERE n.nspname = current_schema() ORDER BY 1",
            )
            out["(triggers)"] = raw.rows(
                store,
                "SELECT tgname FROM pg_trigger t JOIN pg_class c ON c.oid = t.tgrelid JOIN "
                "pg_namespace n ON n.oid = c.relnamespace WHERE n.nspname = current_schema() "
                "AND NOT t.tgisinternal ORDER BY 1",
            )
        return out
    finally:
        store.close()


@pytest.fixture
def agent(tmp_path: Path) -> Agent:
    return Agent(db=tmp_path / "unused.sqlite3", state=tmp_path / "state")


def hook(agent: Agent, target: str | Path, event: str, payload: dict[str, Any]) -> Result:
    """`playbook --db TARGET hook EVENT`, as the agent runs it (the console script's entry)."""
    data = json.dumps(payload).encode()
    r = run_cli("--db", target, "hook", event, stdin=data, env=agent.env(), entry=ENTRY)
    assert r.rc == 0 and r.err == "", r
    return r


def migrate(agent: Agent, target: str | Path, *args: str) -> Result:
    return run_cli("--db", target, "migrate", *args, env=agent.env())


def answer(r: Result) -> dict[str, Any]:
    doc = json.loads(r.out)
    assert isinstance(doc, dict)
    return doc


def prompt(session: str, text: str = RELEASE) -> dict[str, Any]:
    return fixture("user_prompt_submit.json", session_id=session, prompt=text)


def upgrade_line(target: str | Path) -> str:
    """How the notice names the command (the hook was given --db: so is the command)."""
    shown = str(target.absolute()) if isinstance(target, Path) else target
    return f"Run `{shlex.join(['playbook', '--db', shown, 'migrate'])}`"


# ------------------------------------------------------------------ the hooks


def test_a_prompt_hook_answers_from_an_older_schema_and_writes_nothing(
    agent: Agent, db_target: str | Path
) -> None:
    rule = old_playbook(db_target, 2)
    before = snapshot(db_target)

    first = answer(hook(agent, db_target, "prompt", prompt("s-1")))
    context = first["hookSpecificOutput"]["additionalContext"]
    assert f"[{rule}] Pin npm to 11 in release jobs" in context  # it still answers
    told = first["systemMessage"]  # the user is told, once, what to run
    assert f"schema version 2, older than this Playbook's {MEMORY_LATEST}" in told
    assert "rules are still given, but nothing from your sessions is recorded" in told
    assert upgrade_line(db_target) in told
    assert "upgrade" not in context and "migrate" not in context  # not the model's business
    (line,) = agent.log
    assert "hook prompt:" in line and "schema version 2" in line
    assert "answered from it read-only, wrote nothing" in line
    assert "run 'playbook --db" in line and "migrate'" in line

    again = hook(agent, db_target, "prompt", prompt("s-1", "npm ci in the release job again"))
    assert "systemMessage" not in (answer(again) if again.out else {})  # said once
    assert len(agent.log) == 2  # but every hook that did not write says so in the log
    assert "systemMessage" in answer(hook(agent, db_target, "prompt", prompt("s-2")))

    assert version_of(db_target) == 2
    assert snapshot(db_target) == before  # nothing written, not even a cache


def test_session_start_gives_the_protocol_and_the_notice_once_per_session(
    agent: Agent, db_target: str | Path
) -> None:
    old_playbook(db_target, 2)
    start = fixture("session_start.json", session_id="s-9")
    doc = answer(hook(agent, db_target, "session-start", start))
    assert "[playbook: helpful <id>]" in doc["hookSpecificOutput"]["additionalContext"]
    assert "playbook" in doc["systemMessage"] and "migrate" in doc["systemMessage"]
    later = hook(agent, db_target, "prompt", prompt("s-9"))
    assert "systemMessage" not in answer(later)
    assert version_of(db_target) == 2


def test_a_schema_too_old_to_read_gives_only_the_notice(
    agent: Agent, db_target: str | Path
) -> None:
    old_playbook(db_target, 1)
    before = snapshot(db_target)
    doc = answer(hook(agent, db_target, "prompt", prompt("s-1")))
    assert set(doc) == {"systemMessage"}  # no rules: version 1 is not read as it is
    assert "hooks give no rules and record nothing" in doc["systemMessage"]
    (line,) = agent.log
    assert "version 1" in line and "did nothing" in line
    assert hook(agent, db_target, "prompt", prompt("s-1")).out == ""
    assert version_of(db_target) == 1 and snapshot(db_target) == before


def test_session_end_reflects_nothing_until_migrate_then_everything(
    agent: Agent, db_target: str | Path, tmp_path: Path
) -> None:
    """The detached worker has no deadline, yet does not upgrade either (hooks/upgrade.py
    says why): it leaves the transcript unread past its watermark, so the run after
    `playbook migrate` reflects all of it."""
    rule = old_playbook(db_target, 2)
    before = snapshot(db_target)
    transcript = tmp_path / "8c35adc1.jsonl"
    transcript.write_bytes(
        claude_record("user", RELEASE)
        + claude_record(
            "assistant",
            f"Pinned npm as [playbook: helpful {rule}] says.\n"
            "RULE: Clear the npm cache before npm ci in release jobs #ci",
        )
    )
    end = fixture("session_end.json", transcript_path=str(transcript))
    assert hook(agent, db_target, "session-end", end).out == ""
    (reflected,) = wait_for(lambda: agent.reflect_log, "the worker's line")
    assert "not reflected" in reflected and "schema version 2" in reflected
    (line,) = agent.log
    assert line.split(" ", 1)[1].startswith("hook session-end: ")
    assert "did nothing" in line and "migrate'" in line
    assert version_of(db_target) == 2 and snapshot(db_target) == before

    done = migrate(agent, db_target)
    assert done.rc == 0, done.err
    assert version_of(db_target) == MEMORY_LATEST

    assert hook(agent, db_target, "session-end", end).out == ""
    lines = wait_for(lambda: len(agent.reflect_log) == 2 and agent.reflect_log, "the rerun")
    assert "staged 1" in lines[1] and "recorded 1 citation(s)" in lines[1]
    assert len(agent.log) == 1  # nothing more to say
    fresh = answer(hook(agent, db_target, "prompt", prompt("s-3")))
    assert "systemMessage" not in fresh  # upgraded: the hooks are back to normal


def test_the_store_opens_without_upgrading_only_when_asked(db_target: str | Path) -> None:
    from playbook.core.errors import SchemaTooOld

    old_playbook(db_target, 2)
    with pytest.raises(SchemaTooOld, match="schema version 2, older") as info:
        open_store(db_target, mode="write", upgrade=False)
    assert info.value.hint == "run 'playbook migrate' to upgrade it"
    assert version_of(db_target) == 2
    with open_store(db_target, mode="write") as store:  # every other writer: as before
        assert schema_version(store.sql) == MEMORY_LATEST
    with open_store(db_target, mode="write", upgrade=False) as store:  # current: opens
        assert not store.read_only


# ------------------------------------------------------------------ playbook migrate


def test_migrate_upgrades_with_progress_and_then_says_it_is_current(
    agent: Agent, db_target: str | Path
) -> None:
    rule = old_playbook(db_target, 1)
    r = migrate(agent, db_target)
    assert r.rc == 0, r.err
    assert r.out.startswith("upgraded the playbook at ") and "from schema 1 to 5 in" in r.out
    progress = r.err.splitlines()
    assert progress[0].startswith("playbook: upgrading the playbook at ")
    assert [p for p in progress if " of 5" in p] == [
        "playbook: step 2 of 5: an insertion order for the tables keyed by text ...",
        "playbook: step 3 of 5: checks that refuse a malformed row (reads every row) ...",
        "playbook: step 4 of 5: the evidence cache's days, for reads of the past (folds every "
        "event) ...",
        "playbook: step 5 of 5: what the database vouches for, so doctor need not read it "
        "again (reads every row) ...",
    ]
    assert version_of(db_target) == MEMORY_LATEST
    with open_store(db_target, mode="read") as store:
        assert store.score(rule).helpful == pytest.approx(1.0, abs=1e-3)  # the data came across

    again = migrate(agent, db_target, "--json")
    assert (again.rc, again.err) == (0, "")
    assert again.data == {
        "playbook": again.data["playbook"],
        "from": 5,
        "to": 5,
        "applied": [],
        "seconds": 0.0,
    }
    text = migrate(agent, db_target)
    assert text.rc == 0 and "is already at schema 5: nothing to do" in text.out


def test_migrate_json_says_what_it_applied(agent: Agent, db_target: str | Path) -> None:
    old_playbook(db_target, 2)
    r = migrate(agent, db_target, "--json")
    assert r.rc == 0, r.err
    assert {k: r.data[k] for k in ("from", "to", "applied")} == {
        "from": 2,
        "to": 5,
        "applied": [3, 4, 5],
    }


def test_a_failed_migration_leaves_the_playbook_exactly_as_it_was(
    db_target: str | Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """Steps 2 and 3 in one transaction: a failure at the very end of step 3 takes step 2
    back too (each step alone would have left the playbook at version 2)."""
    from playbook.cli import main
    from playbook.store import schema

    old_playbook(db_target, 1)
    before = snapshot(db_target)
    broken = "CREATE TABLE injected_failure ("  # incomplete: the database refuses it
    monkeypatch.setattr(schema, "MEMORY_STEPS", (*schema.MEMORY_STEPS[:2],
                        (*schema.MEMORY_STEPS[2], broken)))  # fmt: skip
    monkeypatch.setattr(schema, "POSTGRES_STEPS", (*schema.POSTGRES_STEPS[:2],
                        (*schema.POSTGRES_STEPS[2], broken)))  # fmt: skip

    assert main(["--db", str(db_target), "migrate", "--json"]) == 3
    out, err = capsys.readouterr()
    error = json.loads(out)["error"]
    assert error["code"] == "database_error"
    assert "the upgrade from schema 1 failed at step 3" in error["message"]
    assert "nothing was changed (the playbook is at schema 1)" in error["message"]
    assert err.count("\n") >= 1 and err.splitlines()[-1].startswith("playbook: error: ")
    assert version_of(db_target) == 1
    assert snapshot(db_target) == before


def test_migrate_refuses_what_is_not_an_older_playbook(agent: Agent, tmp_path: Path) -> None:
    missing = migrate(agent, tmp_path / "nowhere.sqlite3", "--json")
    assert (missing.rc, missing.error["code"]) == (1, "no_database")
    assert not (tmp_path / "nowhere.sqlite3").exists()

    other = tmp_path / "other.sqlite3"
    ex = open_executor(other, "create")
    ex.execute("CREATE TABLE notes (body TEXT)")
    ex.close()
    foreign = migrate(agent, other, "--json")
    assert (foreign.rc, foreign.error["code"]) == (1, "not_a_playbook")

    newer = tmp_path / "newer.sqlite3"
    old_playbook(newer, MEMORY_LATEST)
    ex = open_executor(newer, "write")
    ex.execute("INSERT INTO _migrations VALUES ('memory', ?, 'later')", (MEMORY_LATEST + 1,))
    ex.close()
    digest = newer.read_bytes()
    too_new = migrate(agent, newer)
    assert too_new.rc == 3 and "newer than this Playbook" in too_new.err
    assert newer.read_bytes() == digest


def test_a_long_step_says_it_is_still_running(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """Minutes with nothing on the screen look like a hang: a line every HEARTBEAT."""
    import time

    from playbook.cli import main
    from playbook.cli import migrate as command
    from playbook.store import schema

    path = tmp_path / "v2.sqlite3"
    old_playbook(path, 2)
    real = schema.run_migrations

    def slow(ex: Any, migrations: Any, **kw: Any) -> Any:
        time.sleep(0.5)
        return real(ex, migrations, **kw)

    monkeypatch.setattr(schema, "run_migrations", slow)
    monkeypatch.setattr(command, "HEARTBEAT", 0.1)
    assert main(["--db", str(path), "migrate"]) == 0
    err = capsys.readouterr().err
    assert "playbook:   still at step 3: 0 s" in err
    lines = err.splitlines()
    beats = [i for i, line in enumerate(lines) if line.startswith("playbook:   still at step 3")]
    (done,) = [i for i, line in enumerate(lines) if line.startswith("playbook:   step 3 done")]
    assert beats and max(beats) < done  # the beat stops when the step is done


def test_a_session_is_told_once_and_its_notes_are_pruned_with_it(tmp_path: Path) -> None:
    import os

    from playbook.hooks.state import SessionMemory, prune_sessions

    memory = SessionMemory("s-1", tmp_path)
    assert memory.first_time("upgrade") is True
    assert memory.first_time("upgrade") is False
    assert SessionMemory("s-2", tmp_path).first_time("upgrade") is True
    memory.forget()  # a cleared context: the rules may come again, the notice does not
    assert memory.first_time("upgrade") is False
    told = sorted(p.name for p in tmp_path.iterdir())
    assert all(name.endswith(".upgrade.told") for name in told) and len(told) == 2
    old = tmp_path / told[0]
    os.utime(old, (0, 0))
    prune_sessions(tmp_path)
    assert not old.exists() and (tmp_path / told[1]).exists()


# ------------------------------------------------------------------ the MCP server


def test_an_agents_mcp_call_never_upgrades_and_reads_what_it_can(db_target: str | Path) -> None:
    """The MCP server is an agent's too, under its client's time limit: no call upgrades;
    a reading tool answers from a readable older schema, a writing one is refused with the
    command that upgrades, and nothing is written either way."""
    from playbook.mcp.tools import PlaybookTools, ToolFailure

    rule = old_playbook(db_target, 2)
    before = snapshot(db_target)
    tools = PlaybookTools(db_target)
    found = tools.recall("npm release job")
    assert [b["id"] for b in found["bullets"]] == [rule]
    assert tools.show_bullet(rule)["bullet"]["id"] == rule
    with pytest.raises(ToolFailure, match="nothing was written; a person upgrades it with"):
        tools.mark_feedback(rule, "helpful")
    with pytest.raises(ToolFailure, match="'playbook migrate'"):
        tools.propose_deltas([{"type": "add", "content": "Run npm ci with --ignore-scripts"}])
    assert version_of(db_target) == 2 and snapshot(db_target) == before


def test_an_mcp_read_of_a_schema_too_old_to_read_says_what_upgrades_it(tmp_path: Path) -> None:
    from playbook.mcp.tools import PlaybookTools, ToolFailure

    db = tmp_path / "old.sqlite3"
    rule = old_playbook(db, 1)
    before = snapshot(db)
    with pytest.raises(ToolFailure, match="'playbook migrate'"):
        PlaybookTools(db).show_bullet(rule)
    assert version_of(db) == 1 and snapshot(db) == before
