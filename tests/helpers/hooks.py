"""Running `playbook hook …` as an agent does: the console script's entry, JSON on stdin."""

from __future__ import annotations

import json
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from .cli import clean_env, run_cli

FIXTURES = Path(__file__).parents[1] / "fixtures"
HOOK_FIXTURES = FIXTURES / "hooks"
FAKE_MODEL = FIXTURES / "fake_model.py"
ENTRY = "from playbook.launcher import run; run()"  # what the `playbook` script runs


def fixture(name: str, **override: Any) -> dict[str, Any]:
    """A hook input fixture (shaped like Claude Code's documented input), some fields
    replaced."""
    doc = json.loads((HOOK_FIXTURES / name).read_text(encoding="utf-8"))
    doc.update(override)
    return doc


@dataclass
class Hooked:
    rc: int
    out: str
    err: str


@dataclass
class Agent:
    """A playbook file and a state folder (the hook log, session memory) for one test.
    Transcripts are read from the test's folder (the state folder's parent), as from an
    agent's own session folder (`PLAYBOOK_SESSION_DIRS`)."""

    db: Path
    state: Path

    def env(self, **extra: str) -> dict[str, str]:
        sessions = {"PLAYBOOK_SESSION_DIRS": str(self.state.parent)}
        return clean_env(XDG_STATE_HOME=str(self.state), **{**sessions, **extra})

    def hook(
        self,
        event: str,
        payload: dict[str, Any] | bytes | None,
        *args: str,
        env: dict[str, str] | None = None,
        db: Path | None = None,
        argument: str | None = None,
    ) -> Hooked:
        """Run `playbook --db DB ARGS… hook EVENT [ARGUMENT]` with `payload` on stdin."""
        data = payload if isinstance(payload, bytes | None) else json.dumps(payload).encode()
        tail = [argument] if argument is not None else []
        r = run_cli(
            "--db", db or self.db, *args, "hook", event, *tail,
            stdin=data, env=env or self.env(), entry=ENTRY,
        )  # fmt: skip
        return Hooked(r.rc, r.out, r.err)

    @property
    def log(self) -> list[str]:
        path = self.state / "playbook" / "hooks.log"
        return path.read_text(encoding="utf-8").splitlines() if path.exists() else []

    @property
    def reflect_log(self) -> list[str]:
        path = self.state / "playbook" / "reflect.log"
        return path.read_text(encoding="utf-8").splitlines() if path.exists() else []


def context_of(out: str, event: str = "UserPromptSubmit") -> str:
    """The additionalContext of a hook's stdout, which must be exactly one JSON document."""
    doc = json.loads(out)
    assert set(doc) == {"hookSpecificOutput"}
    assert doc["hookSpecificOutput"]["hookEventName"] == event
    assert set(doc["hookSpecificOutput"]) == {"hookEventName", "additionalContext"}
    return str(doc["hookSpecificOutput"]["additionalContext"])


def wait_for(condition: Callable[[], Any], what: str, timeout: float = 60.0) -> Any:
    """Poll until `condition()` is truthy (and return it); fail after `timeout` seconds."""
    deadline = time.monotonic() + timeout
    while True:
        value = condition()
        if value:
            return value
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out waiting for {what}")
        time.sleep(0.05)


def claude_record(role: str, text: str, session: str = "s") -> bytes:
    """One line of a Claude Code transcript (the shape of ~/.claude/projects/*/*.jsonl)."""
    content: Any = text if role == "user" else [{"type": "text", "text": text}]
    record = {
        "parentUuid": None,
        "isSidechain": False,
        "userType": "external",
        "cwd": "/home/dev/web",
        "sessionId": session,
        "version": "2.0.61",
        "type": role,
        "message": {"role": role, "content": content},
        "uuid": f"u-{abs(hash(text)) % 10**8}",
        "timestamp": "2026-03-01T12:00:00.000Z",
    }
    return json.dumps(record, ensure_ascii=False).encode() + b"\n"
