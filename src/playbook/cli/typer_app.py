"""The typer application: the root options, and every command module imported in the
order of `playbook --help` (each declares its commands on `registry.app`)."""

from __future__ import annotations

import sys

import typer

from .common import state
from .registry import app as app  # (re-exported: `playbook.cli.app`)
from .running import run_guarded


def _version(value: bool) -> None:
    if value:
        from ..core.version import __version__  # lazy: --help, every typer command

        typer.echo(f"playbook {__version__}")
        raise typer.Exit()


@app.callback()
def _root(
    db: str | None = typer.Option(
        None,
        "--db",
        help="Playbook file, or a postgresql:// URL (a team's shared playbook). Default: "
        "$PLAYBOOK_DB, else the project's .playbook.toml, else "
        "$XDG_DATA_HOME/playbook/state.sqlite3 ('playbook where' says which).",
        envvar="PLAYBOOK_DB",
        show_envvar=False,
    ),
    policy: str | None = typer.Option(
        None,
        "--policy",
        help="A playbook.toml whose [policy] table overrides the defaults. "
        "Default: $PLAYBOOK_POLICY, else none.",
        envvar="PLAYBOOK_POLICY",
        show_envvar=False,
    ),
    read_db: str | None = typer.Option(
        None,
        "--read-db",
        help="The postgresql:// URL of a streaming replica of the --db playbook: recall, "
        "stats, stale, diff, exports and the prompt hooks read from it, writes (and show, "
        "and the workbench's reads after its own writes) go to --db; an unreachable "
        "replica is said once on stderr and --db read instead. Default: $PLAYBOOK_READ_DB.",
        show_envvar=False,
    ),
    version: bool = typer.Option(
        False, "--version", callback=_version, is_eager=True, help="Show the version and exit."
    ),
) -> None:
    state.db = db
    state.policy = policy
    state.read_db = read_db  # else $PLAYBOOK_READ_DB (`read_target`)


# Each import registers its commands; the order is the order of `playbook --help`.
# isort: off
from . import core  # noqa: E402,F401
from . import learning  # noqa: E402,F401
from . import proposals  # noqa: E402,F401
from . import admin  # noqa: E402,F401
from . import policy as policy_commands  # noqa: E402,F401
from . import conflicts  # noqa: E402,F401
from . import diff  # noqa: E402,F401
from . import interchange  # noqa: E402,F401
from . import copy as copy_command  # noqa: E402,F401
from . import index  # noqa: E402,F401
from . import serve  # noqa: E402,F401
from . import workbench  # noqa: E402,F401
from . import doctor  # noqa: E402,F401
from . import migrate  # noqa: E402,F401
from . import pg  # noqa: E402,F401
from . import hooks  # noqa: E402,F401
from . import project  # noqa: E402,F401
# isort: on


def main(argv: list[str] | None = None) -> int:
    """Entry point: every command line, under the contract of `running.run_guarded`."""
    args = sys.argv[1:] if argv is None else list(argv)
    return run_guarded(args, lambda: app(args=args, prog_name="playbook", standalone_mode=False))
