"""`playbook hook EVENT`: read the agent's hook JSON on stdin, answer on stdout.

| event | agent event | prints |
|---|---|---|
| ``prompt`` | ``UserPromptSubmit`` | the rules recalled for the prompt, as ``additionalContext`` |
| ``session-start`` | ``SessionStart`` | the proven rules for the workspace, the same way |
| ``session-end`` | ``SessionEnd`` (or ``Stop``) | nothing: starts the session's reflection |
| ``codex-notify`` | Codex ``notify`` (JSON as the last argument) | nothing: the same, per turn |

A hook never breaks the agent. A missing or locked playbook, hook JSON that is not what it
should be, an unknown event, a failure of any kind: the hook exits 0, prints nothing, and
writes one line to its log (`state.hook_log_path()`). A hook that has not answered within
``PLAYBOOK_HOOK_DEADLINE`` seconds (default 5) gives up the same way, so a playbook locked by
another process costs the agent a few seconds at most. With ``PLAYBOOK_HOOKS=off`` in the
environment every hook does nothing (a reflector's own model session runs that way).
"""

from __future__ import annotations

import json
import os
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, BinaryIO, TextIO

from .payload import (
    MAX_PAYLOAD_BYTES,
    HookInput,
    parse_codex_notify,
    parse_payload,
    workspace_of,
)
from .state import SessionMemory, log_line, prune_sessions

if TYPE_CHECKING:
    from playbook.store import PlaybookStore

    from .context import Item

__all__ = ["EVENTS", "HookError", "run_hook"]

DEADLINE_ENV = "PLAYBOOK_HOOK_DEADLINE"
DEFAULT_DEADLINE = 5.0  # seconds
PROMPT_HEADING = "Playbook rules for this prompt."


class HookError(Exception):
    """Why a hook did nothing (logged, never shown to the agent)."""


def run_hook(
    event: str,
    stdin: BinaryIO,
    stdout: TextIO,
    *,
    db: str | Path,
    policy: Path | None = None,
    argument: str | None = None,
) -> int:
    """Run one hook; always returns 0 (see the module doc). `argument` is the hook input
    when the agent passes it as an argument instead of on stdin (Codex's notify)."""
    if os.environ.get("PLAYBOOK_HOOKS", "").lower() == "off":
        return 0
    answered = threading.Lock()  # held by whoever ends the hook: the answer or the deadline
    timer = _deadline(event, answered)
    try:
        handler = EVENTS.get(event)
        if handler is None:
            raise HookError(f"unknown hook event {event!r} (known: {', '.join(EVENTS)})")
        data = argument.encode("utf-8", "replace") if argument is not None else None
        if data is None:
            data = stdin.read(MAX_PAYLOAD_BYTES + 1)
        payload = parse_codex_notify(data, _codex_home()) if event == "codex-notify" else None
        out = handler(payload or parse_payload(data), db, policy)
    except BaseException as exc:  # a hook never breaks the agent
        out = ""
        if answered.acquire(blocking=False):
            log_line(f"hook {event}: {_describe(exc)}")
    else:
        if not answered.acquire(blocking=False):
            threading.Event().wait()  # the deadline is ending the process: print nothing
    finally:
        if timer is not None:
            timer.cancel()
    if out:
        stdout.write(out + "\n")
        stdout.flush()
    return 0


def _deadline(event: str, answered: threading.Lock) -> threading.Timer | None:
    try:
        seconds = float(os.environ.get(DEADLINE_ENV) or DEFAULT_DEADLINE)
    except ValueError:
        seconds = DEFAULT_DEADLINE
    if seconds <= 0:
        return None

    def give_up() -> None:
        if answered.acquire(blocking=False):
            log_line(f"hook {event}: gave up after {seconds:g} s (is the playbook locked?)")
            os._exit(0)

    timer = threading.Timer(seconds, give_up)
    timer.daemon = True
    timer.start()
    return timer


def _codex_home() -> Path:
    return Path(os.environ.get("CODEX_HOME") or Path.home() / ".codex")


def _describe(exc: BaseException) -> str:
    text = " ".join(str(exc).split())
    if isinstance(exc, HookError | ValueError | OSError) and text:
        return text
    return f"{type(exc).__name__}: {text}" if text else type(exc).__name__


@contextmanager
def _store(db: str | Path, policy: Path | None) -> Iterator[PlaybookStore]:
    """The playbook, which a hook never creates (a file, or a database URL)."""
    from playbook.store import open_store, resolve_target

    where = resolve_target(db)
    if not where.exists():
        raise HookError(f"no playbook at {where}")

    loaded = None
    if policy is not None:
        from playbook.policy import load_policy

        loaded = load_policy(policy)
    with open_store(db, loaded, mode="write") as store:
        yield store


def _give(
    payload: HookInput,
    db: str | Path,
    policy: Path | None,
    event_name: str,
    heading: str,
    pick: Callable[[PlaybookStore, set[str]], list[Item]],
) -> str:
    """The hook's answer: the items `pick` chooses (given the ids the session has had),
    within the budget, remembered for the session; "" when there is nothing to say."""
    from .context import render

    memory = SessionMemory(payload.session_id)
    with _store(db, policy) as store:
        items = pick(store, memory.seen())
        context, chosen = render(heading, items, store.policy.hook_context_chars)
    if not chosen:
        return ""
    try:
        memory.remember(i.bullet_id for i in chosen)
    except OSError as exc:  # the rules are still worth giving; they may come again
        log_line(f"hook {event_name}: could not remember the rules given: {exc}")
    doc = {"hookSpecificOutput": {"hookEventName": event_name, "additionalContext": context}}
    return json.dumps(doc, ensure_ascii=False)


def prompt(payload: HookInput, db: str | Path, policy: Path | None) -> str:
    from .context import prompt_items

    text = payload.need("prompt")
    if not text.strip():
        return ""
    workspace = workspace_of(payload.cwd)
    return _give(
        payload,
        db,
        policy,
        "UserPromptSubmit",
        PROMPT_HEADING,
        lambda store, seen: prompt_items(store, text, workspace, seen),
    )


def session_start(payload: HookInput, db: str | Path, policy: Path | None) -> str:
    from .context import session_start_items

    if payload.source in ("clear", "compact"):
        SessionMemory(payload.session_id).forget()  # the context that held them is gone
    else:
        prune_sessions()
    workspace = workspace_of(payload.cwd)
    heading = f"Playbook: proven rules for {workspace}." if workspace else "Playbook: proven rules."
    return _give(
        payload,
        db,
        policy,
        "SessionStart",
        heading,
        lambda store, seen: session_start_items(store, workspace, seen),
    )


def session_end(payload: HookInput, db: str | Path, policy: Path | None) -> str:
    from .session_end import start_session_end

    start_session_end(payload, db, policy, agent="claude-code")
    return ""


def codex_notify(payload: HookInput, db: str | Path, policy: Path | None) -> str:
    from .session_end import start_session_end

    start_session_end(payload, db, policy, agent="codex")
    return ""


EVENTS: dict[str, Callable[[HookInput, Path, Path | None], str]] = {
    "prompt": prompt,
    "session-start": session_start,
    "session-end": session_end,
    "codex-notify": codex_notify,
}
