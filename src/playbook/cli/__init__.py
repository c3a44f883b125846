"""The `playbook` command: thin wrappers over the public API (see the README for the contract).

Every data command takes `--json`: one JSON document on stdout, `{"ok": true, "data": ...}`
or `{"ok": false, "error": {"code", "message", "hint"}}`. Diagnostics go to stderr.
Exit codes: 0 ok, 1 user error, 2 usage error, 3 unusable database.
Heavy modules (numpy, textual) are imported inside the commands that need them.
"""

from __future__ import annotations

import sys

import typer

from .common import CliError, fail, state

app = typer.Typer(
    name="playbook",
    help="A decaying rule playbook for coding agents, with a curation workbench.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
    rich_markup_mode=None,
    context_settings={"help_option_names": ["-h", "--help"]},
)


def _version(value: bool) -> None:
    if value:
        from .. import __version__

        typer.echo(f"playbook {__version__}")
        raise typer.Exit()


@app.callback()
def _root(
    db: str | None = typer.Option(
        None,
        "--db",
        help="Playbook file. Default: $PLAYBOOK_DB, else $XDG_DATA_HOME/playbook/state.sqlite3.",
        envvar="PLAYBOOK_DB",
        show_envvar=False,
    ),
    version: bool = typer.Option(
        False, "--version", callback=_version, is_eager=True, help="Show the version and exit."
    ),
) -> None:
    state.db = db


from . import core  # noqa: E402,F401  (registers the commands)

from . import learning  # noqa: E402,F401  # isort: skip


def main(argv: list[str] | None = None) -> int:
    """Entry point. Typer reports usage errors (exit 2); user errors raised by the library
    become one plain line (or a JSON error with --json) and a non-zero exit, never a
    traceback. Anything else is a bug and keeps its traceback."""
    try:
        app(args=argv, prog_name="playbook")
    except SystemExit as exc:
        return int(exc.code or 0) if not isinstance(exc.code, str) else 1
    except CliError as exc:
        return fail(exc)
    except KeyboardInterrupt:
        return 130
    except Exception as exc:
        known = CliError.from_exception(exc)
        if known is None:
            raise
        return fail(known)
    return 0


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())


def run() -> None:
    """Console-script entry point."""
    sys.exit(main())
