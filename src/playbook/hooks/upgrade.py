"""A playbook at an older schema, as a hook meets it: never upgraded by a hook.

An upgrade reads every row: minutes on a team's playbook of millions of feedback events.
Under a hook's deadline (`run`) it would be cut off, rolled back, and started again by the
next hook, for ever, while every hook that writes did nothing. So hooks open the playbook
with `upgrade=False` (`store.open_store`), and at an older schema:

- the prompt and session-start hooks answer from it read-only when this Playbook can read
  it as it is (`MEMORY_READABLE`), and otherwise give nothing;
- the session end's worker reflects nothing (the transcript stays unread past its
  watermark: a later run for the session reads it once the playbook is upgraded). It has
  no deadline, but an upgrade started by whichever session ends first would hold the
  playbook's write lock for minutes (on PostgreSQL, the locks of the tables it changes,
  which readers wait for too) in the background, for a whole team, with nobody there to
  see it or to choose the moment; and it would lock out every teammate whose Playbook is
  older still (`schema_too_new`).

Either way one line goes to the hook log, naming the command that upgrades the playbook
(`playbook migrate`, a person's deliberate step), and the first hook of a session that the
agent lets speak to the user (Claude Code's and Codex's ``SessionStart`` and
``UserPromptSubmit``: ``systemMessage``, shown to the user, not to the model) says it once.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING

from playbook.core.errors import SchemaTooOld
from playbook.store import open_store, resolve_target
from playbook.store.urls import url_without_password

from .state import SessionMemory, log_line

if TYPE_CHECKING:
    from playbook.core.policy import Policy
    from playbook.store import PlaybookStore

__all__ = ["UPGRADE", "not_written", "notice", "open_for_hook", "upgrade_command"]

UPGRADE = "playbook migrate"
TOPIC = "upgrade"  # the session's note that it was told (`SessionMemory.first_time`)


def upgrade_command(db: str | Path, *, explicit: bool) -> str:
    """The command that upgrades the playbook at `db`, as the user would type it: plain
    when the hook found the playbook from the project (the same command in the project's
    folder finds it too), with ``--db`` when it was named (a URL without its password)."""
    if not explicit:
        return UPGRADE
    import shlex  # lazy: hook prompt (a playbook at the latest schema never needs it)

    where = resolve_target(db)
    shown = str(where.path.absolute()) if where.is_file else url_without_password(where.location)
    return shlex.join(["playbook", "--db", shown, "migrate"])


@contextmanager
def open_for_hook(
    db: str | Path, policy: Policy | None, *, read_ok: bool
) -> Iterator[tuple[PlaybookStore, SchemaTooOld | None]]:
    """The playbook opened to write, never upgraded; with `read_ok`, at an older schema this
    Playbook can read, opened read-only instead, with why (else `SchemaTooOld`)."""
    old: SchemaTooOld | None = None
    try:
        store = open_store(db, policy, mode="write", upgrade=False)
    except SchemaTooOld as exc:
        if not read_ok:
            raise
        store = open_store(db, policy, mode="read")  # SchemaTooOld below MEMORY_READABLE
        old = exc
    with store:
        yield store, old


def not_written(event: str, exc: SchemaTooOld, command: str, *, answered: bool) -> str:
    """The hook log's line for a hook that met `exc` (`answered`: it answered read-only)."""
    did = "answered from it read-only, wrote nothing" if answered else "did nothing"
    return f"hook {event}: {exc}: {did}; a hook never upgrades a playbook, run '{command}'"


def notice(
    event: str, exc: SchemaTooOld, command: str, session_id: str, *, answered: bool
) -> dict[str, str]:
    """One line in the hook log; and the first time in this session, the `systemMessage`
    that tells the user (else {})."""
    log_line(not_written(event, exc, command, answered=answered))
    if not SessionMemory(session_id).first_time(TOPIC):
        return {}
    meanwhile = (
        "rules are still given, but nothing from your sessions is recorded"
        if answered
        else "hooks give no rules and record nothing"
    )
    return {
        "systemMessage": f"Playbook: {exc}. Until it is upgraded, {meanwhile}. Run "
        f"`{command}` in a terminal to upgrade it (a large playbook takes minutes; hooks "
        "never start it)."
    }
