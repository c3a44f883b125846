"""The `playbook` console script.

An agent runs `playbook hook prompt` before every prompt it sends, and waits for it. That
path answers without loading the command-line framework (typer and every command module,
tens of milliseconds); every other command line goes to `playbook.cli` unchanged.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

_OPTIONS = ("--db", "--policy")


def run() -> None:
    """Console-script entry point."""
    hook = _hook_call(sys.argv[1:])
    if hook is None:
        from playbook.cli import run as cli_run

        cli_run()
        return
    options, event, argument = hook
    from playbook.hooks.run import run_hook

    os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")  # see playbook.cli.main
    os.environ.setdefault("PYDANTIC_DISABLE_PLUGINS", "__all__")
    db = options.get("--db") or os.environ.get("PLAYBOOK_DB") or str(_default_db())
    policy = options.get("--policy") or os.environ.get("PLAYBOOK_POLICY")
    sys.exit(
        run_hook(
            event,
            sys.stdin.buffer,
            sys.stdout,
            db=db,  # a file or a postgresql:// URL (resolved by the hook)
            policy=Path(policy).expanduser() if policy else None,
            argument=argument,
        )
    )


def _hook_call(args: list[str]) -> tuple[dict[str, str], str, str | None] | None:
    """(global options, event, argument) for `[--db X] [--policy Y] hook EVENT [JSON]`;
    None for anything else, which the full command line handles (help included)."""
    options: dict[str, str] = {}
    i = 0
    while i < len(args) and args[i].startswith("--"):
        name, eq, value = args[i].partition("=")
        if name not in _OPTIONS:
            return None
        if not eq:
            if i + 1 >= len(args):
                return None
            value = args[i + 1]
            i += 1
        if not value:
            return None  # an empty path: let the command line report it
        options[name] = value
        i += 1
    rest = args[i:]
    if len(rest) not in (2, 3) or rest[0] != "hook" or rest[1].startswith("-"):
        return None
    if len(rest) == 3 and rest[2].startswith("-"):
        return None
    return options, rest[1], rest[2] if len(rest) == 3 else None


def _default_db() -> Path:
    """The playbook's default path; the same rule as `playbook.cli.common.default_db_path`
    (which cannot be imported here without loading the command-line framework)."""
    base = os.environ.get("XDG_DATA_HOME") or str(Path.home() / ".local" / "share")
    return Path(base) / "playbook" / "state.sqlite3"
