"""A finished session reviews itself: its transcript reflected into the review queue, its
citations recorded as feedback.

`playbook hook session-end` only checks its input and starts a detached process
(`python -m playbook.hooks.worker`), so the agent is never kept waiting for a model; that
process writes one line per run to its own log (`state.reflect_log_path()`).

The work itself is `session_work.end_session`:

1. The agent's own citations past the session's watermark, ``[playbook: helpful b-…]`` and
   ``[playbook: harmful b-… reason]``, are curated at once as feedback (actor agent, the
   citing line as provenance). The session is the receipt: a bullet gets at most one
   helpful and one harmful vote per session, however often the transcript is read.
2. The same part of the transcript is reflected with the configured reflector and what it
   proposes is staged in the review queue with origin ``hook`` (feedback on a bullet the
   agent cited itself is left out: it is already recorded). The watermark then moves, so a
   second run for the same session stages nothing twice.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from playbook.project.sessions import check_transcript
from playbook.store import resolve_target

from ..core.files import open_append
from .payload import HookInput
from .state import reflect_log_path, state_dir

WORKER_DB_ENV = "PLAYBOOK_WORKER_DB"  # the playbook the detached worker writes to

__all__ = ["REFLECTORS", "REFLECTOR_ENV", "WORKER_DB_ENV", "start_session_end"]

REFLECTOR_ENV = "PLAYBOOK_REFLECTOR"  # a preset's name, when the hook is not given one
# `--reflector NAME`: the agent's own CLI run headless, the prompt on stdin, the answer on
# stdout. Opt-in: each session end costs a model call (up to `reflect_max_iterations`) of at
# most `reflect_prompt_chars` characters.
REFLECTORS: dict[str, list[str]] = {
    # no tools (the diary is all it needs), and no session file of its own
    "claude": [
        "claude",
        "-p",
        "--output-format",
        "text",
        "--tools",
        "",
        "--no-session-persistence",
    ],
    "codex": ["codex", "exec", "--sandbox", "read-only", "--skip-git-repo-check", "-"],
}


def start_session_end(
    payload: HookInput,
    db: str | Path,
    policy: Path | None,
    *,
    agent: str = "claude-code",
    reflector: str | None = None,
) -> None:
    """Start the session's reflection in a detached process and return at once. The
    transcript must be one the agent may have read (`project.sessions.check_transcript`:
    under an agent's own session folders); any other path is refused, unread."""
    transcript = check_transcript(Path(payload.need("transcript_path")).expanduser())
    where = resolve_target(db)
    location = str(where.path.absolute()) if where.is_file else where.location
    # The playbook goes in the worker's environment, not its command line: a command line
    # is anyone's to read (`ps`), and a PostgreSQL URL may hold a password.
    env = {**os.environ, WORKER_DB_ENV: location}
    args = [sys.executable, "-m", "playbook.hooks.worker"]
    if policy is not None:
        args += ["--policy", str(policy.absolute())]
    if reflector is not None:
        args += ["--reflector", reflector]
    args += ["--agent", agent, "--session-id", payload.session_id]
    args += ["--transcript", str(transcript)]
    with open_append(reflect_log_path()) as out:
        subprocess.Popen(
            args,
            stdin=subprocess.DEVNULL,
            stdout=out,
            stderr=out,
            close_fds=True,
            start_new_session=True,  # not killed with the agent's hook process group
            # Out of the project: a model CLI run from there would load its settings,
            # hooks and instructions (Claude Code's -p does, untrusted folder or not).
            cwd=state_dir(),
            env=env,
        )
