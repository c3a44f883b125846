"""The `playbook` command: thin wrappers over the public API (see the README for the contract).

Every data command takes `--json`: one JSON document on stdout, `{"ok": true, "data": ...}`
or `{"ok": false, "error": {"code", "message", "hint"}}`. Diagnostics go to stderr.
Exit codes: 0 ok, 1 user error, 2 usage error, 3 unusable database, 4 internal error.
Heavy modules (numpy, textual, yaml, mcp) are imported inside the commands that need them.

The typer application (`app`) lives in `typer_app.py` and loads on first use: this package
itself loads no framework, so the parts a hot command needs without typer (`common`,
`running`, `hot`, `fast`) import on their own (`playbook.launcher`).
"""

from __future__ import annotations

import sys
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from .typer_app import app as app


def main(argv: list[str] | None = None) -> int:
    """Entry point: every command line, under the contract of `running.run_guarded`."""
    from .typer_app import main as typer_main  # lazy: mark, recall, every hook

    return typer_main(argv)


def run() -> None:
    """Console-script entry point (the full command line; `playbook.launcher.run` is the
    installed script, which takes a fast path for the hot commands)."""
    sys.exit(main())


def __getattr__(name: str) -> Any:
    if name == "app":  # `from playbook.cli import app`: the whole command line
        from .typer_app import app  # lazy: mark, recall, every hook

        globals()["app"] = app
        return app
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
