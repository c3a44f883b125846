"""The `playbook` console script.

Agents run `playbook hook prompt` before every prompt they send, and `playbook mark` and
`playbook recall` on every task, and wait for each. Those command lines, in their plain
form (`playbook.cli.fast`), run without loading the command-line framework (typer and
every command module, tens of milliseconds): the same command functions
(`playbook.cli.hot`, `playbook.hooks.run`) under the same error contract
(`playbook.cli.running`). `playbook --help` prints the text typer printed for it last
time while nothing it was made from has changed (`playbook.cli.helptext`). Every other
command line goes to `playbook.cli` unchanged.
"""

from __future__ import annotations

import atexit
import gc
import os
import sys
from pathlib import Path

from playbook.cli.fast import COMMANDS, Call, read


def run() -> None:
    """Console-script entry point."""
    args = sys.argv[1:]
    if args in (["--help"], ["-h"]):  # typer's own text, kept while its sources are unchanged
        from playbook.cli.helptext import show_help  # lazy: --help only
        from playbook.cli.running import run_guarded  # lazy: not on the hook path

        sys.exit(run_guarded(args, show_help))
    call = read(args)
    if call is None:
        from playbook.cli import run as cli_run  # lazy: typer, for every other command line

        cli_run()
        return
    # The process ends with the command, the playbook closed by then: nothing it built
    # needs collecting on the way out. Frozen at exit, it is skipped by the interpreter's
    # last collections, which traverse every object of every module loaded (6% of a
    # one-shot command's instructions; 7% of a prompt hook's on PostgreSQL, whose psycopg
    # holds many). (At exit, not here: a caller of `run` in a process that goes on, as the
    # tests are, keeps its collector as it was.)
    atexit.register(gc.freeze)
    # Nor does the command leave cycles worth collecting while it runs: the collections its
    # imports set off traverse every module's objects again and again for nothing (4.6% of
    # a PostgreSQL `mark`'s instructions, psycopg's import most of them). Paused for the
    # command, the collector is as it was after it (a first recall's read pauses it too,
    # `retrieval.rank`). What the command made is then in the oldest generation, as if it
    # had survived the collections it skipped: freezing and unfreezing moves it there
    # without a look at any object, where re-enabling alone would set off one collection
    # of all of it on the way out. (Not in a process that froze objects of its own, which
    # unfreezing would release.)
    was, frozen = gc.isenabled(), gc.get_freeze_count()
    gc.disable()
    # A one-shot command: on PostgreSQL, libpq itself rather than psycopg (`light.py`);
    # as it was after it (a caller of `run` in a process that goes on, as the tests are).
    from playbook.store.postgres.preference import prefer_light  # lazy: not --help (the store)

    light_before = prefer_light()
    try:
        _command(call, args)
    finally:
        prefer_light(light_before)
        if not frozen:
            gc.freeze()
            gc.unfreeze()
        if was:
            gc.enable()


def _command(call: Call, args: list[str]) -> None:
    if call.command == "hook":
        sys.exit(_hook(call.options, call.values))
    from playbook.cli import hot  # lazy: mark, recall (the hook path loads hooks.run instead)
    from playbook.cli.common import state  # lazy: mark, recall (not the hook path)
    from playbook.cli.running import run_guarded  # lazy: not on the hook path

    # What typer's root callback sets: --db (else $PLAYBOOK_DB, read by `db_target`), and
    # --policy (else $PLAYBOOK_POLICY, read by `policy_path`).
    state.db = call.options.get("--db")
    state.policy = call.options.get("--policy")  # else $PLAYBOOK_POLICY (`policy_path`)
    state.read_db = call.options.get("--read-db")  # else $PLAYBOOK_READ_DB (`read_target`)
    command = getattr(hot, COMMANDS[call.command].function)
    sys.exit(run_guarded(args, lambda: command(**call.values)))


def _hook(options: dict[str, str], values: dict[str, str | None]) -> int:
    from playbook.hooks.run import run_hook  # lazy: hook commands only

    os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")  # see playbook.cli.running
    os.environ.setdefault("PYDANTIC_DISABLE_PLUGINS", "__all__")
    # Without --db (an empty $PLAYBOOK_DB is unset here: a hook never fails on it), the hook
    # finds the playbook from the session's folder (`playbook.project.config`).
    db = options.get("--db") or os.environ.get("PLAYBOOK_DB") or None
    policy = options.get("--policy") or os.environ.get("PLAYBOOK_POLICY")
    read_db = options.get("--read-db") or os.environ.get("PLAYBOOK_READ_DB") or None
    return run_hook(
        str(values["event"]),
        sys.stdin.buffer,
        sys.stdout,
        db=db,  # a file or a postgresql:// URL (resolved by the hook)
        policy=Path(policy).expanduser() if policy else None,
        argument=values["argument"],
        reflector=values.get("reflector"),
        read_db=read_db,  # a streaming replica's URL: prompt and session-start read it
    )
