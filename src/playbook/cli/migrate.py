"""migrate: upgrade the playbook's schema to this Playbook's, on request.

A write command upgrades an older playbook on its own before it writes (someone is there to
wait); the agent's hooks never do (`playbook.hooks.upgrade`): an upgrade reads every row,
minutes on a large playbook. This is the command they name. Every step, however many, runs
in ONE transaction: a failure or Ctrl-C leaves the playbook exactly as it was.
"""

from __future__ import annotations

import sys
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from ..core.errors import ConnectionLost, NotAPlaybook, PlaybookError
from .common import CliError, emit, json_option, load_policy_option, set_json, target
from .registry import app

HEARTBEAT = 10.0  # seconds between the "still at step N" lines of a long step
STEPS = {  # what each step of the `memory` schema does (store/schema.py), for the progress
    1: "the tables",
    2: "an insertion order for the tables keyed by text",
    3: "checks that refuse a malformed row (reads every row)",
    4: "the evidence cache's days, for reads of the past (folds every event)",
    5: "what the database vouches for, so doctor need not read it again (reads every row)",
}


@app.command()
def migrate(json_out: bool = json_option()) -> int:
    """Upgrade the playbook's schema to this Playbook's: every step in one transaction,
    progress on stderr, no time limit (a large playbook takes minutes). Hooks never
    upgrade a playbook; they name this command. At the latest schema already it says so
    and changes nothing (exit 0). A failed upgrade changes nothing: exit 3 with the
    database's error code (1 for no_database, not_a_playbook, permission_denied). Step 4
    folds the days at the default half-life of --policy / $PLAYBOOK_POLICY."""
    set_json(json_out)
    from ..store import open_executor  # lazy: every typer command
    from ..store.schema import (  # lazy: every typer command
        MEMORY_LATEST,
        check_version,
        memory_migration,
        run_migrations,
        schema_version,
    )

    where = target()
    policy = load_policy_option()  # the days are folded at its default half-life
    ex = open_executor(where, "write")
    try:
        before = schema_version(ex)
        if before == 0:
            raise NotAPlaybook(f"{where} is not a playbook database")
        check_version(ex, memory_migration(), before)  # newer: schema_too_new, untouched
        data: dict[str, Any] = {"playbook": str(where), "from": before, "to": MEMORY_LATEST}
        if before == MEMORY_LATEST:
            emit(
                {**data, "applied": [], "seconds": 0.0},
                f"the playbook at {where} is already at schema {before}: nothing to do",
            )
            return 0
        _say(f"upgrading the playbook at {where} from schema {before} to {MEMORY_LATEST}")
        started = time.monotonic()
        step = before
        try:
            with ex.transaction():  # the steps' own transactions join this one
                for step in range(before + 1, MEMORY_LATEST + 1):
                    with _progress(step, MEMORY_LATEST):
                        run_migrations(ex, [memory_migration(step)], policy=policy)
        except PlaybookError as exc:
            raise _failed(exc, before, step, lambda: schema_version(ex)) from None
        seconds = round(time.monotonic() - started, 3)
        emit(
            {**data, "applied": list(range(before + 1, MEMORY_LATEST + 1)), "seconds": seconds},
            f"upgraded the playbook at {where} from schema {before} to {MEMORY_LATEST} "
            f"in {seconds:.1f} s",
        )
        return 0
    finally:
        ex.close()


def _say(line: str) -> None:
    sys.stderr.write(f"playbook: {line}\n")
    sys.stderr.flush()


@contextmanager
def _progress(step: int, last: int) -> Iterator[None]:
    """'step N of M: what ...' on stderr, a line every HEARTBEAT seconds while it runs,
    then how long it took."""
    what = STEPS.get(step, "")
    _say(f"step {step} of {last}{': ' + what if what else ''} ...")
    started = time.monotonic()
    done = threading.Event()

    def beat() -> None:
        while not done.wait(HEARTBEAT):
            _say(f"  still at step {step}: {time.monotonic() - started:.0f} s")

    ticker = threading.Thread(target=beat, daemon=True)
    ticker.start()
    try:
        yield
    finally:
        done.set()
        ticker.join()
    _say(f"  step {step} done in {time.monotonic() - started:.1f} s")


def _failed(exc: PlaybookError, before: int, step: int, version: Any) -> CliError:
    """The error of a failed upgrade: the database's own code, and what became of it."""
    said = f"the upgrade from schema {before} failed at step {step}: {exc}"
    if isinstance(exc, ConnectionLost):  # it says itself whether the commit went through
        return CliError(exc.code, said, exc.hint)
    try:
        now = version()
    except PlaybookError:
        return CliError(exc.code, said, exc.hint)
    return CliError(
        exc.code, f"{said}; nothing was changed (the playbook is at schema {now})", exc.hint
    )
