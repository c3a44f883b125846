"""`playbook hook EVENT`: read the agent's hook JSON on stdin, answer on stdout.

| event | agent event | prints |
|---|---|---|
| ``prompt`` | ``UserPromptSubmit`` | the rules recalled for the prompt, as ``additionalContext`` |
| ``session-start`` | ``SessionStart`` | the agent's protocol and the workspace's proven rules |
| ``session-end`` | ``SessionEnd``, ``Stop`` (Codex: ``Stop``) | nothing: starts the reflection |
| ``codex-notify`` | Codex ``notify`` (JSON as the last argument) | nothing: the same, per turn |

Claude Code and Codex send the same hook input. Without ``--db`` the playbook is the one
the session's folder finds (`project.config`), so one committed hook command serves every
clone of the repository.

A hook never upgrades the playbook's schema (`upgrade`: that can take minutes); at an older
schema the prompt and session-start hooks answer from it read-only if they can, and say
once per session, to the user, which command upgrades it.

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
import sys
import threading
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, BinaryIO, TextIO

from playbook.core.errors import SchemaTooOld
from playbook.core.record import FrozenRecord
from playbook.store import resolve_target

from .payload import MAX_PAYLOAD_BYTES, HookInput, parse_codex_notify, parse_payload
from .state import SessionMemory, log_line, prune_sessions
from .upgrade import notice, open_for_hook, upgrade_command

if TYPE_CHECKING:
    from playbook.core.policy import Policy
    from playbook.project.workspace import Workspace
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
    db: str | Path | None,
    policy: Path | None = None,
    argument: str | None = None,
    reflector: str | None = None,
    read_db: str | None = None,
) -> int:
    """Run one hook; always returns 0 (see the module doc). `argument` is the hook input
    when the agent passes it as an argument instead of on stdin (Codex's notify). Without
    `db` (``--db``) the playbook is found from the session's folder, the payload's
    ``cwd`` (`project.config.locate_playbook`: ``$PLAYBOOK_DB``, the project's config, the
    default file). `reflector` (else ``$PLAYBOOK_REFLECTOR``) names the model reflector a
    session's end runs (`session_end.REFLECTORS`). `read_db`: a streaming replica's URL, which
    the prompt and session-start hooks read (`_store`)."""
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
        payload = payload or parse_payload(data)
        where = db if db is not None else _locate(payload)
        config = _Config(where, policy, reflector, explicit=db is not None, read_db=read_db)
        out = handler(payload, config)
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


class _Config(FrozenRecord):
    """What every hook is given: the playbook, the policy file, the session-end reflector."""

    db: str | Path
    policy: Path | None
    reflector: str | None
    explicit: bool  # the playbook was named (--db), not found from the session
    read_db: str | None  # --read-db: the prompt and session-start hooks read it

    def __init__(
        self,
        db: str | Path,
        policy: Path | None,
        reflector: str | None = None,
        explicit: bool = False,
        read_db: str | None = None,
    ) -> None:
        object.__setattr__(self, "db", db)
        object.__setattr__(self, "policy", policy)
        object.__setattr__(self, "reflector", reflector)
        object.__setattr__(self, "explicit", explicit)
        object.__setattr__(self, "read_db", read_db)

    def recall_hint(self) -> str:
        """How the agent recalls from this playbook, in its shell."""
        import shlex  # lazy: hook prompt

        words = 'recall "<a few words>"'
        if not self.explicit or "://" in str(self.db):
            return f"playbook {words}"  # found from the project, as the hook found it
        script = sys.argv[0] if os.path.basename(sys.argv[0]) == "playbook" else "playbook"
        return f"{shlex.join([script, '--db', str(self.db)])} {words}"


def _locate(payload: HookInput) -> str:
    from playbook.project.config import locate_playbook  # lazy: hook prompt

    return locate_playbook(None, payload.cwd).target


def _codex_home() -> Path:
    return Path(os.environ.get("CODEX_HOME") or Path.home() / ".codex")


def _describe(exc: BaseException) -> str:
    text = " ".join(str(exc).split())
    if isinstance(exc, HookError | ValueError | OSError) and text:
        return text
    return f"{type(exc).__name__}: {text}" if text else type(exc).__name__


@contextmanager
def _store(config: _Config) -> Iterator[tuple[PlaybookStore, SchemaTooOld | None]]:
    """The playbook, which a hook never creates (a file, or a database URL) and never
    upgrades: at an older schema it reads it as it is, and says why (`upgrade`). With a
    read replica (``--read-db``) it reads the replica; one that is wrong or unreachable is
    one line in the hook log, and the primary is read instead."""
    where = resolve_target(config.db)
    if not where.exists():
        raise HookError(f"no playbook at {where}")

    loaded = None
    if config.policy is not None:
        from playbook.core.policy_file import load_policy  # lazy: hook prompt

        loaded = load_policy(config.policy)
    replica = _replica(config, loaded) if config.read_db is not None else None
    if replica is not None:
        with replica:
            yield replica, None
        return
    with open_for_hook(config.db, loaded, read_ok=True) as opened:
        yield opened


def _replica(config: _Config, policy: Policy | None) -> PlaybookStore | None:
    from playbook.core.errors import UsageError  # lazy: hook prompt with --read-db
    from playbook.store.replica import (  # lazy: hook prompt with --read-db
        Unreachable,
        check_read_target,
        open_replica,
    )

    try:
        read = check_read_target(config.db, str(config.read_db))
    except UsageError as exc:
        log_line(f"hook: {exc}: read the primary")
        return None
    try:
        return open_replica(read, policy)
    except Unreachable as exc:
        log_line(f"hook: the read replica is unreachable ({exc}): read the primary")
        return None


def _give(
    payload: HookInput,
    config: _Config,
    event: tuple[str, str],
    heading: str,
    pick: Callable[[PlaybookStore, set[str]], list[Item]],
    preface: str = "",
) -> str:
    """The hook's answer: `preface`, then the items `pick` chooses (given the ids the
    session has had), within the budget, remembered for the session; "" when there is
    nothing to say. `event`: the hook's name and the agent's name of its event. A playbook
    that needs an upgrade adds a note for the user, once per session (`upgrade`)."""
    from .context import render  # lazy: hook session-end (each event loads its own branch)

    hook, event_name = event
    memory = SessionMemory(payload.session_id)

    def tell(exc: SchemaTooOld, *, answered: bool) -> dict[str, str]:
        command = upgrade_command(config.db, explicit=config.explicit)
        return notice(hook, exc, command, payload.session_id, answered=answered)

    try:
        with _store(config) as (store, old):
            items = pick(store, memory.seen())
            budget = store.policy.hook_context_chars - (len(preface) + 1 if preface else 0)
            context, chosen = render(heading, items, budget, cite=not preface)
    except SchemaTooOld as exc:  # not even readable as it is: nothing to give
        return _answer(tell(exc, answered=False))
    if chosen:
        try:
            memory.remember(i.bullet_id for i in chosen)
        except OSError as exc:  # the rules are still worth giving; they may come again
            log_line(f"hook {event_name}: could not remember the rules given: {exc}")
    doc: dict[str, object] = {}
    text = "\n".join(t for t in (preface, context) if t)
    if text:
        doc["hookSpecificOutput"] = {"hookEventName": event_name, "additionalContext": text}
    if old is not None:
        doc.update(tell(old, answered=True))
    return _answer(doc)


def _answer(doc: Mapping[str, object]) -> str:
    return json.dumps(doc, ensure_ascii=False) if doc else ""


def _workspace(payload: HookInput) -> Workspace | None:
    from playbook.project.workspace import workspace_of  # lazy: hook session-end

    return workspace_of(payload.cwd)


def prompt(payload: HookInput, config: _Config) -> str:
    from .context import prompt_items  # lazy: hook session-end (each event loads its own branch)

    text = payload.need("prompt")
    if not text.strip():
        return ""
    workspace = _workspace(payload)
    return _give(
        payload,
        config,
        ("prompt", "UserPromptSubmit"),
        PROMPT_HEADING,
        lambda store, seen: prompt_items(store, text, workspace, seen),
    )


def session_start(payload: HookInput, config: _Config) -> str:
    """The agent's protocol (`project.protocol`), then the proven rules for the workspace.
    The protocol is told at every start, resume, clear and compaction: it is what makes a
    session leave something behind, and a cleared context no longer holds it."""
    from .context import (  # lazy: hook session-end (each event loads its own branch)
        protocol_text,
        session_start_items,
    )

    if payload.source in ("clear", "compact"):
        SessionMemory(payload.session_id).forget()  # the context that held them is gone
    else:
        prune_sessions()
    workspace = _workspace(payload)
    name = workspace.name if workspace else None
    heading = f"Proven rules for {name}:" if name else "Proven rules:"
    return _give(
        payload,
        config,
        ("session-start", "SessionStart"),
        heading,
        lambda store, seen: session_start_items(store, workspace, seen),
        preface=protocol_text(config.recall_hint()),
    )


def session_end(payload: HookInput, config: _Config) -> str:
    return _end(payload, config, "claude-code")


def codex_notify(payload: HookInput, config: _Config) -> str:
    return _end(payload, config, "codex")


def _end(payload: HookInput, config: _Config, agent: str) -> str:
    from .session_end import REFLECTOR_ENV, start_session_end  # lazy: hook prompt

    if payload.turn_id is not None:
        agent = "codex"  # Codex's Stop hook, which runs when each turn ends
    reflector = config.reflector or os.environ.get(REFLECTOR_ENV) or None
    start_session_end(payload, config.db, config.policy, agent=agent, reflector=reflector)
    return ""


EVENTS: dict[str, Callable[[HookInput, _Config], str]] = {
    "prompt": prompt,
    "session-start": session_start,
    "session-end": session_end,
    "codex-notify": codex_notify,
}
