"""The detached half of `playbook hook session-end`: ``python -m playbook.hooks.worker``.

Runs `session_work.end_session` for one session and writes one line to the reflection log
(`state.reflect_log_path()`): what was staged and recorded, or why nothing was. Runs for
the same session wait for each other (a lock per session), and each reads only what the
previous one left past the watermark, so a session is never staged twice. It never
upgrades the playbook's schema (`upgrade` says why): at an older one it reflects nothing,
and says so in both logs.
"""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from playbook.core.errors import SchemaTooOld
from playbook.core.policy import DEFAULT_POLICY
from playbook.core.policy_file import load_policy
from playbook.project.sessions import TranscriptRefused, check_transcript
from playbook.store import open_store, resolve_target

from ..core.files import open_private
from .session_end import WORKER_DB_ENV
from .session_work import end_session, reflector_from_config
from .state import log_line, reflect_log_path, session_key, state_dir
from .upgrade import not_written, upgrade_command


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m playbook.hooks.worker")
    # The playbook (a file or a postgresql:// URL) comes in the environment, where only
    # this user can read it; --db is for a person running the worker by hand.
    ap.add_argument("--db", default=os.environ.get(WORKER_DB_ENV))
    ap.add_argument("--policy", type=Path)
    ap.add_argument("--reflector")  # a preset of session_end.REFLECTORS
    ap.add_argument("--agent", default="claude-code")
    ap.add_argument("--session-id", required=True)
    ap.add_argument("--transcript", required=True, type=Path)
    args = ap.parse_args(argv)
    if not args.db:
        ap.error(f"no playbook: --db or ${WORKER_DB_ENV}")
    os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
    try:
        with _session_lock(args.session_id):
            line = _run(args)
    except Exception as exc:  # the agent is gone; all that is left is to say what happened
        line = f"session {args.transcript}: failed: {type(exc).__name__}: {exc}"
    log_line(line, reflect_log_path())
    return 0


def _run(args: argparse.Namespace) -> str:
    try:
        transcript = check_transcript(args.transcript)
    except TranscriptRefused as exc:
        return f"session {args.transcript}: refused: {exc}"
    where = resolve_target(args.db)
    if not where.exists():
        return f"session {transcript}: no playbook at {where}; nothing done"
    policy = load_policy(args.policy) if args.policy is not None else None
    prompt_chars = (policy or DEFAULT_POLICY).reflect_prompt_chars
    reflector = reflector_from_config(args.policy, args.reflector, prompt_chars=prompt_chars)
    try:
        store = open_store(args.db, policy, mode="write", upgrade=False)
    except SchemaTooOld as exc:  # never upgraded here (`upgrade`): nothing read, nothing written
        command = upgrade_command(args.db, explicit=True)
        log_line(not_written("session-end", exc, command, answered=False))
        return (
            f"session {transcript}: not reflected: {exc} (run '{command}'; a later run for "
            "this session reads it from where it stopped)"
        )
    with store:
        done = end_session(store, args.session_id, transcript, reflector, agent=args.agent)
        return done.summary()


@contextmanager
def _session_lock(session_id: str) -> Iterator[None]:
    """An exclusive lock on a per-session file while the session is reflected (POSIX; where
    there is no flock, the watermark check alone keeps a second run from storing twice)."""
    try:
        import fcntl  # lazy: POSIX only (no lock elsewhere)
    except ImportError:  # pragma: no cover - not POSIX
        yield
        return
    path = state_dir() / "sessions" / f"{session_key(session_id)}.lock"
    fd = open_private(path, os.O_RDWR)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        yield
    finally:
        os.close(fd)  # closing releases the lock


if __name__ == "__main__":
    sys.exit(main())
