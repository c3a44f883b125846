"""A finished session reviews itself: its transcript reflected into the review queue, its
citations recorded as feedback.

`playbook hook session-end` only checks its input and starts a detached process
(`python -m playbook.hooks.worker`), so the agent is never kept waiting for a model; that
process writes one line per run to its own log (`state.reflect_log_path()`).

`end_session` is the work itself:

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
import tomllib
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..core.files import open_append
from .payload import HookInput
from .state import reflect_log_path, state_dir

WORKER_DB_ENV = "PLAYBOOK_WORKER_DB"  # the playbook the detached worker writes to

if TYPE_CHECKING:
    from playbook.reflection.diaries import Diary
    from playbook.reflection.reflectors import ProposedItem, Reflector
    from playbook.reflection.session import ReflectionResult
    from playbook.store import PlaybookStore

__all__ = [
    "ConfigError",
    "SessionEndResult",
    "end_session",
    "reflector_from_config",
    "start_session_end",
]

DEFAULT_REFLECT_TIMEOUT = 300.0  # seconds a configured reflector command may run
DISABLE_ENV = "PLAYBOOK_HOOKS"  # "off" in a process started by a reflector: no hooks there
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
SESSION_READ_BYTES = 16 << 20  # bytes of a transcript read per pass (one reflection each)
_FEEDBACK = ("helpful", "harmful")


class ConfigError(ValueError):
    """The ``[reflect]`` table of playbook.toml is not usable."""


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
    from playbook.project.sessions import check_transcript
    from playbook.store import resolve_target

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


def reflector_from_config(
    policy: Path | None, preset: str | None = None, *, prompt_chars: int | None = None
) -> Reflector:
    """The reflector to run: a `preset` (`REFLECTORS`: the agent's own CLI, headless), else
    the one a ``[reflect]`` table names (``command = "claude -p"``, optional ``timeout`` in
    seconds), else the heuristic one. A model's prompt holds at most `prompt_chars`
    characters (`Policy.reflect_prompt_chars`). The command runs with hooks off, so a model
    CLI that has Playbook's hooks installed does not reflect on its own prompt."""
    from playbook.reflection.reflectors import CommandReflector, HeuristicReflector

    table = _reflect_table(policy)
    command: object = table.get("command")
    if preset is not None:
        if preset not in REFLECTORS:
            raise ConfigError(f"unknown reflector {preset!r} (known: {', '.join(REFLECTORS)})")
        command = REFLECTORS[preset]
    if command is None:
        return HeuristicReflector()
    if not isinstance(command, str | list) or not command:
        raise ConfigError("[reflect] command must be a command line or a list of arguments")
    timeout = table.get("timeout", DEFAULT_REFLECT_TIMEOUT)
    if isinstance(timeout, bool) or not isinstance(timeout, int | float) or timeout <= 0:
        raise ConfigError("[reflect] timeout must be a positive number of seconds")
    try:
        return CommandReflector(
            command,
            timeout=float(timeout),
            env={**os.environ, DISABLE_ENV: "off"},
            max_prompt_chars=prompt_chars,
        )
    except ValueError as exc:
        raise ConfigError(f"[reflect] command: {exc}") from None


def _reflect_table(policy: Path | None) -> dict[str, Any]:
    if policy is None:
        return {}
    try:
        with policy.open("rb") as f:
            data = tomllib.load(f)
    except OSError as exc:
        raise ConfigError(f"cannot read {policy}: {exc.strerror or exc}") from None
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(f"{policy}: not valid TOML ({exc})") from None
    table = data.get("reflect", {})
    if not isinstance(table, dict):
        raise ConfigError(f"{policy}: reflect must be a table")
    unknown = set(table) - {"command", "timeout"}
    if unknown:
        raise ConfigError(f"{policy}: unknown [reflect] key {sorted(unknown)[0]!r}")
    return table


@dataclass
class SessionEndResult:
    session_ref: str
    recorded: list[tuple[str, str]] = field(default_factory=list)  # (kind, bullet id)
    repeated: int = 0  # citations already recorded for this session
    refused: list[str] = field(default_factory=list)  # citations curation rejected, why
    reflections: list[ReflectionResult] = field(default_factory=list)  # one per pass
    already_read: int = 0  # passages a reflection of a copy of this session had read

    @property
    def reflection(self) -> ReflectionResult | None:
        """The last pass's reflection (the one that failed, if one did)."""
        return self.reflections[-1] if self.reflections else None

    def summary(self) -> str:
        passes = self.reflections
        r = self.reflection
        parts = [f"session {self.session_ref}:"]
        if r is not None and not r.ok:
            parts.append(f"reflection failed ({'; '.join(r.errors)}); nothing staged;")
        elif r is not None:
            staged = [i for p in passes for i in p.staged]
            parts.append(f"staged {len(staged)}")
            if staged:
                parts.append(f"({', '.join(staged)})")
            parts.append(f"of {sum(len(p.proposed) for p in passes)} proposed,")
            if r.truncated:
                parts.append(f"{r.truncated} left for the next run,")
        parts.append(f"recorded {len(self.recorded)} citation(s)")
        if self.repeated:
            parts.append(f"({self.repeated} already recorded)")
        if self.refused:
            parts.append(f"refused {len(self.refused)}: {self.refused[0]}")
        if self.already_read:
            parts.append(f"{self.already_read} passage(s) already read in a copy of the session")
        if passes:
            parts.append(f"watermark {passes[0].watermark_before} -> {passes[-1].watermark_after}")
            if len(passes) > 1:
                parts.append(f"in {len(passes)} passes")
        return " ".join(parts)


def end_session(
    store: PlaybookStore,
    session_id: str,
    transcript: Path,
    reflector: Reflector,
    *,
    agent: str = "claude-code",
    read_bytes: int = SESSION_READ_BYTES,
) -> SessionEndResult:
    """Record the agent's citations, then reflect the rest (see the module doc), a part of
    at most `read_bytes` of the transcript at a time, until its end or a failed pass."""
    from playbook.core.terms import HOOK_ORIGIN
    from playbook.reflection.copies import unread
    from playbook.reflection.diaries import read_diary
    from playbook.reflection.session import reflect_session

    session_ref = str(transcript)
    result = SessionEndResult(session_ref)
    while True:
        start = store.watermark(session_ref)
        diary, copied = unread(store, read_diary(transcript, start=start, limit=read_bytes))
        result.already_read += copied
        cited = _record_citations(store, diary, session_ref, f"{agent}:{session_id}", result)
        done = reflect_session(
            store, session_ref, diary, _WithoutCitations(reflector, cited), origin=HOOK_ORIGIN
        )
        result.reflections.append(done)
        if not done.ok or done.truncated or done.watermark_after <= start or not diary.unfinished:
            return result


def _citations(diary: Diary) -> list[tuple[dict[str, Any], int | None]]:
    """The agent's own feedback marks in the diary: (delta, offset) each."""
    from playbook.reflection.reflectors import HeuristicReflector

    found = HeuristicReflector().propose(diary, [], [])
    return [
        (p.item, p.offset)
        for p in found
        if isinstance(p.item, dict) and p.item.get("type") in _FEEDBACK
    ]


def _record_citations(
    store: PlaybookStore, diary: Diary, session_ref: str, session: str, result: SessionEndResult
) -> set[str]:
    """Curate each citation once per session and kind; the ids cited."""
    from playbook.core.model import Provenance
    from playbook.curation import curate

    citations = _citations(diary)
    with store.transaction():
        for delta, offset in citations:
            receipt = f"{session}:{delta['type']}:{delta['bullet_id']}"
            if store.has_receipt(receipt):
                result.repeated += 1
                continue
            prov = Provenance(session_ref=session_ref, byte_offset=offset)
            done = curate(store, [delta], provenance=prov, actor="agent")
            outcome = done.outcomes[0]
            if outcome.status == "applied":
                store.add_receipt(receipt, str(delta["type"]), done.batch_id)
                result.recorded.append((str(delta["type"]), str(delta["bullet_id"])))
            else:
                result.refused.append(f"{delta['bullet_id']}: {outcome.reason or outcome.status}")
    return {str(delta["bullet_id"]) for delta, _ in citations}


class _WithoutCitations:
    """The configured reflector, minus feedback on the bullets the agent cited itself."""

    def __init__(self, inner: Reflector, cited: set[str]) -> None:
        self.inner = inner
        self.cited = cited

    def propose(
        self, diary: Diary, playbook: list[dict[str, Any]], prior: list[dict[str, Any]]
    ) -> list[ProposedItem]:
        return [
            p
            for p in self.inner.propose(diary, playbook, prior)
            if not (
                isinstance(p.item, dict)
                and p.item.get("type") in _FEEDBACK
                and p.item.get("bullet_id") in self.cited
            )
        ]
