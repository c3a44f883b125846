"""The `playbook` command: thin wrappers over the public API (see the README for the contract).

Every data command takes `--json`: one JSON document on stdout, `{"ok": true, "data": ...}`
or `{"ok": false, "error": {"code", "message", "hint"}}`. Diagnostics go to stderr.
Exit codes: 0 ok, 1 user error, 2 usage error, 3 unusable database, 4 internal error.
Heavy modules (numpy, textual, yaml, mcp) are imported inside the commands that need them.
"""

from __future__ import annotations

import os
import sys
import traceback

import typer

from .common import EXIT_INTERNAL, EXIT_INTERRUPTED, EXIT_USAGE, CliError, fail, state

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
        help="Playbook file, or a postgresql:// URL (a team's shared playbook). Default: "
        "$PLAYBOOK_DB, else $XDG_DATA_HOME/playbook/state.sqlite3.",
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
    version: bool = typer.Option(
        False, "--version", callback=_version, is_eager=True, help="Show the version and exit."
    ),
) -> None:
    state.db = db
    state.policy = policy


# Each import registers its commands; the order is the order of `playbook --help`.
# isort: off
from . import core  # noqa: E402,F401
from . import learning  # noqa: E402,F401
from . import review_queue  # noqa: E402,F401
from . import admin  # noqa: E402,F401
from . import policy as policy_commands  # noqa: E402,F401
from . import conflicts  # noqa: E402,F401
from . import history  # noqa: E402,F401
from . import interchange  # noqa: E402,F401
from . import copy as copy_command  # noqa: E402,F401
from . import index  # noqa: E402,F401
from . import serve  # noqa: E402,F401
from . import workbench  # noqa: E402,F401
from . import doctor  # noqa: E402,F401
from . import pg  # noqa: E402,F401
from . import hooks  # noqa: E402,F401
# isort: on


def _click_error(exc: BaseException, name: str) -> bool:
    """Whether `exc` is click's `name` exception (typer vendors click in recent versions)."""
    return any(c.__name__ == name for c in type(exc).__mro__)


def _wants_json(argv: list[str]) -> bool:
    args = argv[: argv.index("--")] if "--" in argv else argv
    return "--json" in args


def main(argv: list[str] | None = None) -> int:
    """Entry point. Usage errors exit 2; user errors raised by the library become one plain
    line (or a JSON error with --json) and a non-zero exit, never a traceback. Anything else
    is a bug: exit 4, with the traceback on stderr (and a JSON error with --json)."""
    args = sys.argv[1:] if argv is None else list(argv)
    state.json = _wants_json(args)
    # numpy's OpenBLAS starts one spinning thread per core when it loads. Our vector work
    # is elementwise or one matrix-vector product, so for a one-shot command those threads
    # are pure start-up cost (on 2 cores: ~50 ms of wall time, ~90 ms of CPU per recall).
    os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
    # pydantic looks for plugins through importlib.metadata (~20 ms) the first time it builds
    # a schema; this process has none to load.
    os.environ.setdefault("PYDANTIC_DISABLE_PLUGINS", "__all__")
    try:
        result = app(args=args, prog_name="playbook", standalone_mode=False)
        return int(result) if isinstance(result, int) and not isinstance(result, bool) else 0
    except SystemExit as exc:
        return int(exc.code or 0) if not isinstance(exc.code, str) else 1
    except CliError as exc:
        return fail(exc)
    except KeyboardInterrupt:
        return EXIT_INTERRUPTED
    except BrokenPipeError:
        _silence_stdout()
        return 1
    except Exception as exc:
        if _click_error(exc, "ClickException"):
            return _usage_error(exc)
        if _click_error(exc, "Abort"):
            sys.stderr.write("playbook: aborted\n")
            return 1
        known = CliError.from_exception(exc)
        if known is not None:
            return fail(known)
        if state.json:
            fail(CliError("internal", f"internal error: {type(exc).__name__}: {exc}"))
        traceback.print_exc()
        sys.stderr.write(
            "playbook: this is a bug in Playbook; please report it with the traceback above\n"
        )
        return EXIT_INTERNAL


def _usage_error(exc: Exception) -> int:
    code = int(getattr(exc, "exit_code", EXIT_USAGE))
    if type(exc).__name__ == "NoArgsIsHelpError":
        sys.stderr.write(str(exc.format_message()) + "\n")  # type: ignore[attr-defined]
        return code
    if code != EXIT_USAGE:  # e.g. a FileError: a user error, not a usage error
        return fail(CliError("file_error", str(exc.format_message())))  # type: ignore[attr-defined]
    # One plain line, as for every other error (click would print usage, hint and message
    # on three lines): the message, and where to read the usage.
    ctx = getattr(exc, "ctx", None)
    hint = f"see '{ctx.command_path} --help'" if ctx is not None else "see 'playbook --help'"
    message = " ".join(str(exc.format_message()).split()).rstrip(".")  # type: ignore[attr-defined]
    return fail(CliError("usage", message, hint, EXIT_USAGE))


def _silence_stdout() -> None:
    """After a closed pipe (`playbook export | head`), stop Python complaining at exit."""
    import os

    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
    except OSError:  # pragma: no cover
        pass


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())


def run() -> None:
    """Console-script entry point."""
    sys.exit(main())
