"""A session is its records (issue 26): a fork or a resumed copy of a session is not
reflected again, a compaction summary is not read as what the user said, and what an agent
injects (Codex's permissions, plugins, AGENTS.md; Claude Code's command wrappers) is not
read at all. The fixtures mirror real transcripts' shapes (see tests/fixtures/README.md).
"""

from __future__ import annotations

import json
import os
import stat
from pathlib import Path

import pytest

from playbook.reflection.diaries import read_diary
from playbook.reflection.reflectors import HeuristicReflector
from playbook.review.queue import approve, list_proposals, pending

from .helpers import store_at
from .helpers.hooks import FIXTURES, Agent, fixture, wait_for

CITED = "b-0a111753"  # the bullet the fixtures' agent cites


def lines(name: str) -> list[bytes]:
    return (FIXTURES / name).read_bytes().splitlines(keepends=True)


@pytest.fixture
def agent(tmp_path: Path) -> Agent:
    agent = Agent(db=tmp_path / "pb.sqlite3", state=tmp_path / "state")
    with store_at(agent.db) as store:
        store.insert_bullet("Pin npm to 11 in release jobs", tags=["ci"], bullet_id=CITED)
    return agent


def end(agent: Agent, transcript: Path, session: str, runs: int, name: str = "session_end.json"):
    payload = fixture(name, transcript_path=str(transcript), session_id=session)
    r = agent.hook("session-end", payload)
    assert (r.rc, r.out) == (0, ""), agent.log
    return wait_for(lambda: len(agent.reflect_log) >= runs and agent.reflect_log, "reflection")


def staged(agent: Agent) -> list[str]:
    with store_at(agent.db) as store:
        return [str(p.delta.get("content")) for p in list_proposals(store)]


def helpful_votes(agent: Agent) -> int:
    with store_at(agent.db) as store:
        return sum(1 for e in store.timeline(CITED) if e.kind == "helpful")


# ------------------------------------------------------------------ reading


def test_a_compaction_summary_is_not_read_as_the_users_words() -> None:
    diary = read_diary(FIXTURES / "claude_fork_original.jsonl")
    texts = [p.text for p in diary.passages]
    assert not any("This session is being continued" in t for t in texts)
    proposed = HeuristicReflector().propose(diary, [], [])
    # The RULE and the citation come once each: from the agent's own lines, not again from
    # the summary that repeats them.
    assert [p.item.get("content") or p.item["type"] for p in proposed] == [
        "helpful",
        "Pin npm to 11 in the canary job too",
        "AVOID: retrying npm ci without clearing the cache",
    ]


def test_codex_injected_blocks_are_not_read() -> None:
    diary = read_diary(FIXTURES / "codex_rollout_injected.jsonl")
    rendered = diary.render()
    for injected in (
        "<permissions instructions>",
        "<recommended_plugins>",
        "AGENTS.md instructions",
        "<environment_context>",
        "<turn_aborted>",
        "<collaboration_mode>",
    ):
        assert injected not in rendered
    assert "Why does the migration test hang?" in rendered
    proposed = HeuristicReflector().propose(diary, [], [])
    assert [p.item["content"] for p in proposed] == [
        "Close the sqlite connection before running migrations"
    ]


def test_claude_code_command_wrappers_are_not_read(tmp_path: Path) -> None:
    """A slash command's record (`<command-name>/clear</command-name>` and its siblings,
    as in the LeoDChen/claude-config fork files) is the agent's wrapping; a message that
    merely starts with a tag is a person's."""
    wrapper = (
        "<command-name>/clear</command-name>\n            <command-message>clear"
        "</command-message>\n            <command-args></command-args>"
    )
    records = [
        {"type": "user", "message": {"role": "user", "content": wrapper}, "uuid": "u-1"},
        {"type": "user", "message": {"role": "user", "content": "<b>why</b> is CI red?"}},
    ]
    path = tmp_path / "t.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")
    assert [p.text for p in read_diary(path).passages] == ["<b>why</b> is CI red?"]


def test_a_copy_keeps_the_identity_of_each_record() -> None:
    """Claude Code: the uuid, whatever the session id; Codex: the item, whatever the time
    it was written again."""
    original = read_diary(FIXTURES / "claude_fork_original.jsonl").passages
    copy = read_diary(FIXTURES / "claude_fork_copy.jsonl").passages
    assert [p.record for p in copy[: len(original)]] == [p.record for p in original]
    assert len({p.record for p in copy}) == len(copy)  # and each record is its own
    codex = read_diary(FIXTURES / "codex_rollout_injected.jsonl").passages
    fork = read_diary(FIXTURES / "codex_rollout_fork.jsonl").passages
    assert [p.record for p in fork[: len(codex)]] == [p.record for p in codex]
    assert fork[len(codex)].record not in {p.record for p in codex}


# ------------------------------------------------------------------ through the hooks


def test_a_forked_session_is_not_reflected_again(agent: Agent, tmp_path: Path) -> None:
    original = lines("claude_fork_original.jsonl")
    first = tmp_path / "5cd42d8e.jsonl"
    first.write_bytes(b"".join(original[:4]))  # the session, up to its first end
    end(agent, first, "5cd42d8e", 1)
    assert staged(agent) == [
        "Pin npm to 11 in the canary job too",
        "AVOID: retrying npm ci without clearing the cache",
    ]
    assert helpful_votes(agent) == 1
    with store_at(agent.db) as store:  # a person approves the rule
        (rule,) = [p.id for p in pending(store) if "canary" in str(p.delta.get("content"))]
        approve(store, rule, actor="human")

    # The session goes on and is compacted: the summary repeats the RULE and the citation.
    with first.open("ab") as f:
        f.write(b"".join(original[4:]))
    line = end(agent, first, "5cd42d8e", 2)[-1]
    assert "staged 0" in line and "recorded 0 citation(s)" in line
    assert helpful_votes(agent) == 1

    # Forked (a new session id and file, the same records first): only its own part counts.
    fork = tmp_path / "64538e16.jsonl"
    fork.write_bytes((FIXTURES / "claude_fork_copy.jsonl").read_bytes())
    line = end(agent, fork, "64538e16", 3)[-1]
    assert "already read in a copy" in line
    assert helpful_votes(agent) == 1  # the copied citation is not counted twice
    assert staged(agent) == [
        "Pin npm to 11 in the canary job too",  # approved once, not staged again
        "AVOID: retrying npm ci without clearing the cache",
        "Pin npm to 11 in the nightly job",
    ]


def test_a_forked_codex_thread_is_not_reflected_again(agent: Agent, tmp_path: Path) -> None:
    sessions = tmp_path / "codex" / "sessions" / "2026" / "04" / "08"
    sessions.mkdir(parents=True)
    first = sessions / "rollout-2026-04-08T22-18-42-019d6d75.jsonl"
    first.write_bytes((FIXTURES / "codex_rollout_injected.jsonl").read_bytes())
    end(agent, first, "019d6d75", 1, "codex_stop.json")
    fork = sessions / "rollout-2026-04-09T00-16-48-019d6de1.jsonl"
    fork.write_bytes((FIXTURES / "codex_rollout_fork.jsonl").read_bytes())
    line = end(agent, fork, "019d6de1", 2, "codex_stop.json")[-1]
    assert "staged 1" in line and "already read in a copy" in line
    assert staged(agent) == [
        "Close the sqlite connection before running migrations",
        "Run the seed script after the migrations finish",
    ]


def test_a_transcript_outside_the_agents_session_folders_is_refused(
    agent: Agent, tmp_path: Path, tmp_path_factory: pytest.TempPathFactory
) -> None:
    elsewhere = tmp_path_factory.mktemp("elsewhere") / "secrets.jsonl"
    elsewhere.write_text('{"type":"user","message":{"role":"user","content":"RULE: x"}}\n')
    link = tmp_path / "link.jsonl"  # inside the session folder, pointing out of it
    link.symlink_to(elsewhere)
    for path in (elsewhere, link):
        payload = fixture("session_end.json", transcript_path=str(path), session_id="s")
        r = agent.hook("session-end", payload)
        assert (r.rc, r.out) == (0, "")
    assert len(agent.log) == 2
    assert all("is not under an agent's session folder" in line for line in agent.log)
    assert agent.reflect_log == [] and staged(agent) == []


@pytest.mark.parametrize("shared", [False, True], ids=["own", "group-shared"])
def test_the_hooks_files_are_the_users_only(agent: Agent, tmp_path: Path, shared: bool) -> None:
    """0600 in folders made 0700; in a state folder a group shares (set-group-ID, made by
    a person), 0640: issue 29's rule, the one `playbook.core.files.open_private` keeps."""
    folder = agent.state / "playbook"
    if shared:
        folder.mkdir(parents=True)
        folder.chmod(0o2750)
    transcript = tmp_path / "s.jsonl"
    transcript.write_bytes(b"".join(lines("claude_fork_original.jsonl")[:4]))
    prompt = fixture("user_prompt_submit.json", cwd=str(tmp_path), prompt="npm release jobs")
    assert agent.hook("prompt", prompt).out  # a session memory file
    agent.hook("prompt", b"not json")  # a line in the hook log
    end(agent, transcript, "s-1", 1)  # a line in the reflection log, a lock file
    made = [p for p in folder.rglob("*") if p.is_file()]
    assert {p.suffix for p in made} >= {".log", ".seen", ".lock"}
    for path in made:
        assert stat.S_IMODE(path.stat().st_mode) == (0o640 if shared else 0o600), path
    assert stat.S_IMODE(folder.stat().st_mode) == (0o2750 if shared else 0o700)
    # sessions/ inherits the set-group-ID bit (Linux), never more than the owner's access
    assert stat.S_IMODE((folder / "sessions").stat().st_mode) == (0o2700 if shared else 0o700)
    assert os.access(folder, os.R_OK)
