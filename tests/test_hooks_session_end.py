"""`playbook hook session-end`: the transcript reflected into the review queue by a detached
process, the agent's citations recorded as feedback, never twice for one session.

The hook returns before the reflection is done, so every check waits for what it needs
(the reflection's line in its log, a file the fake model writes), never for a fixed time.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from playbook.review.queue import count_pending, list_proposals

from .helpers import store_at
from .helpers.hooks import FAKE_MODEL, Agent, claude_record, fixture, wait_for


@pytest.fixture
def agent(tmp_path: Path) -> Agent:
    return Agent(db=tmp_path / "state.sqlite3", state=tmp_path / "state")


@pytest.fixture
def ids(agent: Agent) -> dict[str, str]:
    with store_at(agent.db) as store:
        return {
            "rule": store.insert_bullet("Pin npm to 11 in release jobs", tags=["ci"]).id,
            "avoid": store.insert_bullet("AVOID: running npm ci as root").id,
        }


def write_transcript(path: Path, ids: dict[str, str]) -> bytes:
    data = b"".join(
        [
            claude_record("user", "The release job fails on npm ci, can you fix it?"),
            claude_record(
                "assistant",
                f"Following [playbook: helpful {ids['rule']}] I pinned npm.\n"
                "RULE: Pin npm to 11 in the canary job too #ci",
            ),
            claude_record(
                "assistant",
                f"[playbook: harmful {ids['avoid']} wasted_time the root check was a red herring]\n"
                "AVOID: retrying npm ci without clearing the cache",
            ),
        ]
    )
    path.write_bytes(data)
    return data


def session_end(transcript: Path, session: str = "s-1") -> dict[str, object]:
    return fixture("session_end.json", transcript_path=str(transcript), session_id=session)


def finished(agent: Agent, runs: int) -> list[str]:
    """The reflection log once `runs` detached runs have written their line."""
    return wait_for(lambda: len(agent.reflect_log) >= runs and agent.reflect_log, "the reflection")


def test_session_end_stages_proposals_and_records_citations(
    agent: Agent, ids: dict[str, str], tmp_path: Path
) -> None:
    transcript = tmp_path / "8c35adc1.jsonl"
    data = write_transcript(transcript, ids)
    r = agent.hook("session-end", session_end(transcript))
    assert (r.rc, r.out) == (0, "")
    (line,) = finished(agent, 1)
    assert "staged 2" in line and "recorded 2 citation(s)" in line
    with store_at(agent.db) as store:
        staged = list_proposals(store)
        assert [(p.delta.get("content"), p.origin, p.status) for p in staged] == [
            ("Pin npm to 11 in the canary job too", "hook", "pending"),
            ("AVOID: retrying npm ci without clearing the cache", "hook", "pending"),
        ]
        for p, marker in zip(staged, (b"RULE: Pin npm", b"AVOID: retrying"), strict=True):
            assert p.provenance.session_ref == str(transcript.resolve())
            offset = p.provenance.byte_offset
            assert offset is not None and marker in data[offset : data.index(b"\n", offset)]
        # Citations are feedback now, not proposals; the citing line is their provenance.
        (helpful,) = store.timeline(ids["rule"])
        assert (helpful.kind, helpful.actor) == ("helpful", "agent")
        assert helpful.provenance.session_ref == str(transcript.resolve())
        assert helpful.provenance.byte_offset == data.index(b'{"parentUuid', 1)
        (harmful,) = store.timeline(ids["avoid"])
        assert (harmful.kind, harmful.reason) == ("harmful", "wasted_time")
        assert harmful.context == "the root check was a red herring"
        assert store.watermark(str(transcript.resolve())) == len(data)
    assert agent.log == []


def test_run_twice_a_session_is_staged_and_cited_once(
    agent: Agent, ids: dict[str, str], tmp_path: Path
) -> None:
    transcript = tmp_path / "s.jsonl"
    write_transcript(transcript, ids)
    for _ in range(2):
        assert agent.hook("session-end", session_end(transcript)).rc == 0
    finished(agent, 2)
    with store_at(agent.db) as store:
        assert count_pending(store) == 2
        assert len(store.timeline(ids["rule"])) == 1
        assert len(store.timeline(ids["avoid"])) == 1
    # The session goes on (Stop hooks, a resumed session): only the new part is read, and
    # a rule cited again in the same session is not counted again.
    with transcript.open("ab") as f:
        f.write(
            claude_record(
                "assistant",
                f"[playbook: helpful {ids['rule']}] again.\nRULE: Run npm ci with --ignore-scripts",
            )
        )
    stop = fixture("stop.json", transcript_path=str(transcript), session_id="s-1")
    assert agent.hook("session-end", stop).rc == 0
    line = finished(agent, 3)[-1]
    assert "staged 1" in line and "(1 already recorded)" in line
    with store_at(agent.db) as store:
        assert [p.delta.get("content") for p in list_proposals(store)][-1] == (
            "Run npm ci with --ignore-scripts"
        )
        assert len(store.timeline(ids["rule"])) == 1


def reflect_with(tmp_path: Path, *command: str) -> Path:
    policy = tmp_path / "playbook.toml"
    policy.write_text(f"[reflect]\ncommand = {json.dumps(list(command))}\n", encoding="utf-8")
    return policy


def test_with_a_slow_reflector_the_hook_returns_at_once_and_proposals_come_later(
    agent: Agent, ids: dict[str, str], tmp_path: Path
) -> None:
    gate = tmp_path / "gate"
    gate.mkdir()
    policy = reflect_with(tmp_path, sys.executable, str(FAKE_MODEL), "gate", str(gate))
    transcript = tmp_path / "s.jsonl"
    write_transcript(transcript, ids)
    r = agent.hook("session-end", session_end(transcript), "--policy", str(policy))
    assert (r.rc, r.out) == (0, "")
    # The hook has returned while the model is still thinking (it waits for the gate).
    wait_for((gate / "started").exists, "the reflector to start")
    with store_at(agent.db) as store:
        assert count_pending(store) == 0
    (gate / "open").touch()
    finished(agent, 1)
    with store_at(agent.db) as store:
        assert [p.delta.get("content") for p in list_proposals(store)] == [
            "Keep the release job on npm 11"
        ]


def test_a_failing_reflector_stages_nothing_and_logs_one_line(
    agent: Agent, ids: dict[str, str], tmp_path: Path
) -> None:
    policy = reflect_with(tmp_path, sys.executable, str(FAKE_MODEL), "fail")
    transcript = tmp_path / "s.jsonl"
    write_transcript(transcript, ids)
    r = agent.hook("session-end", session_end(transcript), "--policy", str(policy))
    assert (r.rc, r.out) == (0, "")
    (line,) = finished(agent, 1)
    assert "reflection failed" in line and "exited with status 3" in line
    with store_at(agent.db) as store:
        assert count_pending(store) == 0
        assert store.watermark(str(transcript.resolve())) == 0  # read again next time
    assert agent.log == []


def test_a_missing_transcript_is_one_log_line(
    agent: Agent, ids: dict[str, str], tmp_path: Path
) -> None:
    r = agent.hook("session-end", session_end(tmp_path / "gone.jsonl"))
    assert (r.rc, r.out) == (0, "")
    assert len(agent.log) == 1 and "gone.jsonl: No such file" in agent.log[0]
    assert agent.reflect_log == []


def test_codex_notify_reflects_the_threads_rollout(
    agent: Agent, ids: dict[str, str], tmp_path: Path
) -> None:
    notify = fixture("codex_notify.json")
    thread = str(notify["thread-id"])
    home = tmp_path / "codex"
    rollout = (
        home / "sessions" / "2026" / "03" / "01" / f"rollout-2026-03-01T12-00-00-{thread}.jsonl"
    )
    rollout.parent.mkdir(parents=True)
    item = {
        "type": "message",
        "role": "assistant",
        "content": [{"type": "output_text", "text": "RULE: Pin npm to 11 in the nightly job"}],
    }
    record = {"timestamp": "2026-03-01T12:00:00Z", "type": "response_item", "payload": item}
    rollout.write_text(json.dumps(record) + "\n", encoding="utf-8")
    r = agent.hook(
        "codex-notify", None, argument=json.dumps(notify), env=agent.env(CODEX_HOME=str(home))
    )
    assert (r.rc, r.out) == (0, ""), agent.log
    finished(agent, 1)
    with store_at(agent.db) as store:
        (p,) = list_proposals(store)
        assert p.delta.get("content") == "Pin npm to 11 in the nightly job"
        assert p.provenance.session_ref == str(rollout.resolve())


def test_the_worker_is_never_given_a_password_on_its_command_line(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A command line is anyone's to read (`ps`); the playbook goes in the environment."""
    from playbook.hooks import session_end as se
    from playbook.hooks.payload import HookInput

    transcript = tmp_path / "sessions" / "s.jsonl"
    transcript.parent.mkdir()
    transcript.write_text("{}\n")
    monkeypatch.setenv("PLAYBOOK_SESSION_DIRS", str(transcript.parent))
    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path / "state"))
    started: list[tuple[list[str], dict[str, str]]] = []
    monkeypatch.setattr(
        se.subprocess, "Popen", lambda args, **kw: started.append((args, kw["env"]))
    )
    url = "postgresql://agents:s3cret-pw@db.example:5432/playbook"
    se.start_session_end(HookInput(session_id="s-1", transcript_path=str(transcript)), url, None)
    [(args, env)] = started
    assert not any("s3cret-pw" in a for a in args) and "--db" not in args
    assert env[se.WORKER_DB_ENV] == url  # only this user can read a process's environment
