"""A model reflector's prompt is bounded (issue 26): a digest of the session within
`Policy.reflect_prompt_chars` (default 32,000 characters per call) that keeps what a lesson
comes from: the user's asks, the errors and what followed them, the final state, the
agent's own markers; tool output trimmed first. And `--reflector claude` runs the agent's
own CLI headless with that prompt."""

from __future__ import annotations

import json
import os
import stat
import sys
from pathlib import Path

import pytest

from playbook.core.policy import DEFAULT_POLICY, Policy
from playbook.reflection.diaries import Diary, Passage
from playbook.reflection.reflectors.digest import digest
from playbook.reflection.reflectors.prompt import PROMPT_TEMPLATE, build_prompt

from .helpers import store_at
from .helpers.hooks import Agent, claude_record, fixture, wait_for


def session(turns: int = 60) -> Diary:
    """A long session: asks, tool calls with long output, an error and its fix, an end."""
    passages: list[Passage] = []
    offset = 0

    def add(role: str, text: str) -> None:
        nonlocal offset
        passages.append(Passage(offset, text, role, record=f"cc:{offset}"))
        offset += len(text) + 100

    add("user", "FIRST ASK: the release job fails on npm ci, fix it")
    for i in range(turns):
        add("assistant", f"Looking at step {i}. " + "reasoning " * 60)
        add("assistant", f"[tool: Bash] npm run step-{i}")
        add("user", f"[tool result] {'output line ' * 300}")
        if i == turns // 2:
            add("user", "[tool error] npm ERR! code EBADENGINE Unsupported engine")
            add("assistant", "THE FIX: the engine check needs npm 11, so I pinned it.")
            add("user", "MIDDLE ASK: and the nightly job?")
    add("assistant", "RULE: Pin npm to 11 in release jobs #ci")
    add("assistant", "FINAL STATE: both jobs are green.")
    return Diary("s.jsonl", passages, offset)


def test_a_long_session_fits_and_keeps_what_lessons_come_from() -> None:
    diary = session()
    assert len(diary.render()) > 100_000
    text = digest(diary, 20_000)
    assert len(text) <= 20_000
    for kept in (
        "FIRST ASK",
        "MIDDLE ASK",
        "EBADENGINE",
        "THE FIX",
        "RULE: Pin npm to 11",
        "FINAL STATE",
    ):
        assert kept in text, kept
    assert "passages left out" in text
    # Every passage kept keeps its marker, in the session's order.
    offsets = [int(line[2 : line.index(" ")]) for line in text.splitlines() if line[:2] == "[@"]
    assert offsets == sorted(offsets) and len(offsets) > 10
    # Tool output is clipped: no passage of it is kept whole.
    assert "output line " * 60 not in text


def test_a_short_session_goes_in_whole() -> None:
    diary = session(turns=2)
    assert digest(diary, 1_000_000) == diary.render()


def test_the_whole_prompt_stays_within_the_policy() -> None:
    diary = session()
    playbook = [{"id": f"b-{i:08x}", "content": "x " * 100, "type": "rule"} for i in range(300)]
    prior = [{"type": "add", "content": "y " * 90} for _ in range(50)]
    budget = DEFAULT_POLICY.reflect_prompt_chars
    assert budget == 32_000
    prompt = build_prompt(diary, playbook, prior, budget)
    assert len(prompt) <= budget
    assert "FIRST ASK" in prompt and "FINAL STATE" in prompt
    assert prompt.startswith(PROMPT_TEMPLATE[:200])
    assert len(build_prompt(diary, playbook, prior)) > 3 * budget  # unbounded: all of it


def test_the_policy_bounds_the_budget() -> None:
    assert Policy(reflect_prompt_chars=16_000).reflect_prompt_chars == 16_000
    for bad in (100, 10**9, "many"):
        with pytest.raises(ValueError):
            Policy(reflect_prompt_chars=bad)


FAKE_CLAUDE = """#!{python}
import json, sys
prompt = sys.stdin.read()
with open({record!r}, "w") as f:
    json.dump({{"argv": sys.argv[1:], "chars": len(prompt), "prompt": prompt}}, f)
print('[{{"type": "add", "content": "Keep the release job on npm 11"}}]')
"""


def test_the_claude_reflector_runs_claude_headless_with_a_bounded_prompt(
    tmp_path: Path,
) -> None:
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    record = tmp_path / "claude-called.json"
    claude = bin_dir / "claude"
    claude.write_text(FAKE_CLAUDE.format(python=sys.executable, record=str(record)))
    claude.chmod(claude.stat().st_mode | stat.S_IXUSR)
    agent = Agent(db=tmp_path / "pb.sqlite3", state=tmp_path / "state")
    store_at(agent.db).close()
    transcript = tmp_path / "s.jsonl"
    big = "x" * 5000
    transcript.write_bytes(
        b"".join(
            claude_record("user" if i % 2 else "assistant", f"turn {i} {big}") for i in range(80)
        )
    )
    payload = fixture("session_end.json", transcript_path=str(transcript), session_id="s-9")
    env = agent.env(PLAYBOOK_REFLECTOR="claude", PATH=f"{bin_dir}{os.pathsep}{os.environ['PATH']}")
    assert agent.hook("session-end", payload, env=env).rc == 0
    (line,) = wait_for(lambda: agent.reflect_log, "the reflection")
    assert "staged 1" in line, line
    called = json.loads(record.read_text(encoding="utf-8"))
    assert called["argv"][:1] == ["-p"] and "--output-format" in called["argv"]
    assert 20_000 < called["chars"] <= 32_000  # a digest of 400,000 characters of session
    assert "turn 1 " in called["prompt"] and "turn 79 " in called["prompt"]  # first ask, end


@pytest.mark.parametrize(
    ("argv", "reflector"),
    [
        (["hook", "session-end", "--reflector", "codex"], "codex"),
        (["hook", "codex-notify", "--reflector=claude", "{}"], "claude"),
        (["hook", "session-end"], None),
        (["hook", "session-end", "--reflector"], "no plain form"),
        (["hook", "session-end", "--reflector", "-x"], "no plain form"),
    ],
)
def test_a_hook_command_names_its_reflector(argv: list[str], reflector: str | None) -> None:
    """The installed Stop command (`playbook hook session-end --reflector codex`) takes the
    fast path like every hook; anything else goes to the full command line."""
    from playbook.cli.fast import read

    call = read(argv)
    if reflector == "no plain form":
        assert call is None
    else:
        assert call is not None and call.values["reflector"] == reflector
