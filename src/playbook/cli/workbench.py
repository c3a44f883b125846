"""tui, demo: the curation workbench. Textual is imported only when one of them runs."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import typer

from . import app
from .common import CliError, db_path, load_policy_option, open_store, state


@app.command()
def tui(
    db: str | None = typer.Option(
        None, "--db", help="Playbook file (default: the global --db, $PLAYBOOK_DB, XDG path)."
    ),
) -> None:
    """Open the curation workbench: review proposals, pin, block, resolve conflicts."""
    if db:
        state.db = db
    path = db_path()
    if not path.exists():
        raise CliError(
            "no_database",
            f"no playbook at {path}",
            "run 'playbook init', pass --db, or try 'playbook demo'",
        )
    with open_store(create=False):  # refuses a file that is not a playbook, migrates one
        pass
    policy = load_policy_option()  # scores as the CLI does under --policy / $PLAYBOOK_POLICY
    from ..tui.app import Workbench

    Workbench(path, policy=policy).run()


@app.command()
def demo(
    writer: bool = typer.Option(
        False,
        "--writer",
        help="Also run a background writer that adds feedback and proposals every second "
        "or two, to watch the live refresh. It stops when the workbench closes.",
    ),
    keep: bool = typer.Option(
        False, "--keep", help="Keep the demo playbook afterwards and print where it is."
    ),
) -> None:
    """Build a realistic demo playbook in a temporary file and open the workbench on it.

    About 400 rules with nine months of feedback history (decay, maturity moves,
    inversions), open conflicts, blocked patterns, and proposals from a reflected session,
    all made through the public API.
    """
    from ..demo import build_demo

    folder = Path(tempfile.mkdtemp(prefix="playbook-demo-"))
    writer_proc: subprocess.Popen[bytes] | None = None
    try:
        info = build_demo(folder / "demo.sqlite3")
        sys.stderr.write(
            f"demo playbook: {info.bullets} bullets, {info.events} feedback events, "
            f"{info.proposals} proposals, {info.conflicts} conflicts, {info.blocked} blocked "
            f"patterns (built in {info.seconds:.1f} s)\n"
        )
        if writer:
            writer_proc = subprocess.Popen(
                [sys.executable, "-m", "playbook.demo", "writer", str(info.path), str(os.getpid())],
                stdin=subprocess.DEVNULL,
                stdout=subprocess.DEVNULL,
                stderr=subprocess.DEVNULL,
            )
        from ..tui.app import Workbench

        label = f"demo playbook {info.path}" + ("  (live writer on)" if writer else "")
        Workbench(info.path, label=label).run()
    finally:
        if writer_proc is not None:
            writer_proc.terminate()
            try:
                writer_proc.wait(timeout=5)
            except subprocess.TimeoutExpired:
                writer_proc.kill()
        if keep:
            sys.stderr.write(f"demo playbook kept at {folder / 'demo.sqlite3'}\n")
        else:
            shutil.rmtree(folder, ignore_errors=True)
