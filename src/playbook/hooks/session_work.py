"""The work of a session's end, run by the detached worker (`hooks.worker`): the agent's
citations recorded as feedback, the rest of the transcript reflected into the review queue
(see `session_end` for the two steps and the hook that starts the worker).
"""

from __future__ import annotations

import os
import tomllib
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from playbook.core.model import Provenance
from playbook.core.terms import HOOK_ORIGIN
from playbook.curation import curate
from playbook.reflection.copies import unread
from playbook.reflection.diaries import read_diary
from playbook.reflection.reflectors import CommandReflector, HeuristicReflector
from playbook.reflection.session import reflect_session

from .session_end import REFLECTORS

if TYPE_CHECKING:
    from playbook.reflection.diaries import Diary
    from playbook.reflection.reflectors import ProposedItem, Reflector
    from playbook.reflection.session import ReflectionResult
    from playbook.store import PlaybookStore

__all__ = ["ConfigError", "SessionEndResult", "end_session", "reflector_from_config"]

DEFAULT_REFLECT_TIMEOUT = 300.0  # seconds a configured reflector command may run
DISABLE_ENV = "PLAYBOOK_HOOKS"  # "off" in a process started by a reflector: no hooks there
SESSION_READ_BYTES = 16 << 20  # bytes of a transcript read per pass (one reflection each)
_FEEDBACK = ("helpful", "harmful")


class ConfigError(ValueError):
    """The ``[reflect]`` table of playbook.toml is not usable."""


def reflector_from_config(
    policy: Path | None, preset: str | None = None, *, prompt_chars: int | None = None
) -> Reflector:
    """The reflector to run: a `preset` (`REFLECTORS`: the agent's own CLI, headless), else
    the one a ``[reflect]`` table names (``command = "claude -p"``, optional ``timeout`` in
    seconds), else the heuristic one. A model's prompt holds at most `prompt_chars`
    characters (`Policy.reflect_prompt_chars`). The command runs with hooks off, so a model
    CLI that has Playbook's hooks installed does not reflect on its own prompt."""
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
