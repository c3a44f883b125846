"""Running one command line: the error contract every command shares (exit codes, one
plain line for a user error, a traceback only for a bug). Without the command-line
framework, so that `playbook.launcher`'s fast path runs a hot command under the very same
contract as `playbook.cli.main` does for every other one."""

from __future__ import annotations

import os
import sys
from collections.abc import Callable
from typing import Any, Protocol, TypeGuard

from .common import EXIT_INTERNAL, EXIT_INTERRUPTED, EXIT_USAGE, CliError, fail, state


def run_guarded(args: list[str], call: Callable[[], Any]) -> int:
    """Run `call` (the parsed command line `args`) and return the exit code. Usage errors
    exit 2; user errors raised by the library become one plain line (or a JSON error with
    --json) and a non-zero exit, never a traceback. Anything else is a bug: exit 4, with the
    traceback on stderr (and a JSON error with --json)."""
    state.json = _wants_json(args)
    # numpy's OpenBLAS starts one spinning thread per core when it loads. Our vector work
    # is elementwise or one matrix-vector product, so for a one-shot command those threads
    # are pure start-up cost (on 2 cores: ~50 ms of wall time, ~90 ms of CPU per recall).
    os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
    # pydantic looks for plugins through importlib.metadata (~20 ms) the first time it builds
    # a schema; this process has none to load.
    os.environ.setdefault("PYDANTIC_DISABLE_PLUGINS", "__all__")
    try:
        result = call()
        _tell_malformed()
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
        if _is_click_exception(exc):
            return _usage_error(exc)
        if _click_error(exc, "Abort"):
            sys.stderr.write("playbook: aborted\n")
            return 1
        known = CliError.from_exception(exc)
        if known is not None:
            return fail(known)
        if state.json:
            fail(CliError("internal", f"internal error: {type(exc).__name__}: {exc}"))
        import traceback  # lazy: --help, mark, recall (only for a bug: ~1 ms)

        traceback.print_exc()
        sys.stderr.write(
            "playbook: this is a bug in Playbook; please report it with the traceback above\n"
        )
        return EXIT_INTERNAL


def _tell_malformed() -> None:
    """One line on stderr when a reader skipped rows that break the database's rules
    (`store/checks.py`): they count as absent, and `playbook doctor` lists them."""
    checks = sys.modules.get("playbook.store.checks")
    seen = checks.malformed_seen() if checks is not None else {}
    if not seen:
        return
    from ..core.inert import inert  # lazy: --help

    parts = [f"{table} {', '.join(sorted(map(str, keys))[:5])}" for table, keys in seen.items()]
    n = sum(len(keys) for keys in seen.values())
    line = f"playbook: note: skipped {n} malformed row(s) ({'; '.join(parts)}); "
    sys.stderr.write(inert(line + "'playbook doctor' lists them", one_line=True) + "\n")


def _click_error(exc: BaseException, name: str) -> bool:
    """Whether `exc` is click's `name` exception (typer vendors click in recent versions)."""
    return any(c.__name__ == name for c in type(exc).__mro__)


class _ClickException(Protocol):
    def format_message(self) -> str: ...


def _is_click_exception(exc: BaseException) -> TypeGuard[_ClickException]:
    return _click_error(exc, "ClickException")


def _wants_json(argv: list[str]) -> bool:
    args = argv[: argv.index("--")] if "--" in argv else argv
    return "--json" in args


def _usage_error(exc: _ClickException) -> int:
    code = int(getattr(exc, "exit_code", EXIT_USAGE))
    if type(exc).__name__ == "NoArgsIsHelpError":
        sys.stderr.write(str(exc.format_message()) + "\n")
        return code
    if code != EXIT_USAGE:  # e.g. a FileError: a user error, not a usage error
        return fail(CliError("file_error", str(exc.format_message())))
    # One plain line, as for every other error (click would print usage, hint and message
    # on three lines): the message, and where to read the usage.
    ctx = getattr(exc, "ctx", None)
    hint = f"see '{ctx.command_path} --help'" if ctx is not None else "see 'playbook --help'"
    message = " ".join(str(exc.format_message()).split()).rstrip(".")
    return fail(CliError("usage", message, hint, EXIT_USAGE))


def _silence_stdout() -> None:
    """After a closed pipe (`playbook export | head`), stop Python complaining at exit."""
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
    except OSError:  # pragma: no cover
        pass
