"""The loop, end to end, as Claude Code would run it in a team's repository: the project's
playbook named by its committed `.playbook.toml`, the hooks installed in its committed
settings (no path of this machine in them), a prompt recalls, the session's end stages what
it taught, a person approves, the next prompt gives it."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from playbook.review.queue import approve, pending

from .helpers import store_at
from .helpers.hooks import ENTRY, Agent, claude_record, context_of, fixture, wait_for


def installed_commands(settings: Path) -> dict[str, str]:
    doc = json.loads(settings.read_text(encoding="utf-8"))
    return {event: groups[-1]["hooks"][0]["command"] for event, groups in doc["hooks"].items()}


BIN = str(Path(sys.executable).parent)  # `playbook` is on the PATH


def run_as_claude(command: str, payload: dict[str, object], agent: Agent, cwd: Path) -> str:
    """Run a hook command the way Claude Code does: through a shell, JSON on stdin."""
    proc = subprocess.run(
        command,
        shell=True,
        input=json.dumps(payload).encode(),
        capture_output=True,
        cwd=cwd,
        env=agent.env(PATH=f"{BIN}:/usr/bin:/bin"),
        timeout=60,
    )
    assert proc.returncode == 0, proc.stderr
    return proc.stdout.decode()


def test_install_recall_reflect_approve_recall(tmp_path: Path) -> None:
    web = tmp_path / "web"
    (web / ".git").mkdir(parents=True)
    (web / ".playbook.toml").write_text('db = ".playbook/team.sqlite3"\n', encoding="utf-8")
    agent = Agent(db=web / ".playbook" / "team.sqlite3", state=tmp_path / "state")
    with store_at(agent.db) as store:
        known = store.insert_bullet("Pin npm to 11 in release jobs", tags=["ci"]).id

    install = subprocess.run(
        [sys.executable, "-c", ENTRY, "hooks", "install", "claude-code"],
        capture_output=True,
        text=True,
        cwd=web,
        env=agent.env(PATH=f"{BIN}:/usr/bin:/bin"),
        timeout=60,
    )
    assert install.returncode == 0, install.stderr
    assert "web/.playbook.toml: db = .playbook/team.sqlite3" in install.stdout
    settings = web / ".claude" / "settings.json"
    hooks = installed_commands(settings)
    assert set(hooks) == {"SessionStart", "UserPromptSubmit", "SessionEnd"}
    assert str(tmp_path) not in settings.read_text(encoding="utf-8")  # commit-able

    # 0. The session starts: the agent is told how to cite and write lessons down.
    start = fixture("session_start.json", cwd=str(web), session_id="e2e-1")
    told = context_of(run_as_claude(hooks["SessionStart"], start, agent, web), "SessionStart")
    assert "[playbook: helpful <id>]" in told and "starts with RULE:" in told

    # 1. A prompt recalls the rule that is there.
    ask = fixture("user_prompt_submit.json", cwd=str(web), session_id="e2e-1")
    first = run_as_claude(hooks["UserPromptSubmit"], ask, agent, web)
    assert f"[{known}] Pin npm to 11 in release jobs" in context_of(first)

    # 2. The session ends; what it taught is staged for review.
    transcript = tmp_path / "e2e-1.jsonl"
    transcript.write_bytes(
        claude_record("user", "The release job fails on npm ci, can you fix it?")
        + claude_record(
            "assistant",
            f"Pinned npm as [playbook: helpful {known}] says.\n"
            "RULE: Clear the npm cache before npm ci in release jobs #ci",
        )
    )
    end = fixture("session_end.json", cwd=str(web), transcript_path=str(transcript))
    assert run_as_claude(hooks["SessionEnd"], end, agent, web) == ""

    def staged() -> list[str]:
        with store_at(agent.db) as store:
            return [p.id for p in pending(store)]

    (proposal,) = wait_for(staged, "the session's proposal")

    # 3. A person approves it (the workbench and `playbook approve` act as a human).
    with store_at(agent.db) as store:
        result = approve(store, proposal, actor="human")
        (new_id,) = result.added

    # 4. The next session's prompt gives the approved rule.
    again = fixture(
        "user_prompt_submit.json",
        cwd=str(web),
        session_id="e2e-2",
        prompt="npm ci is slow in the release job, what should I do about the cache?",
    )
    context = context_of(run_as_claude(hooks["UserPromptSubmit"], again, agent, web))
    assert f"[{new_id}] Clear the npm cache before npm ci in release jobs (candidate)" in context
