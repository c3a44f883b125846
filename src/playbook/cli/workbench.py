"""tui, demo: the curation workbench. Textual is imported only when one of them runs."""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
import tempfile
from collections.abc import Callable
from pathlib import Path

import typer

from .common import CliError, load_policy_option, open_store, read_target, state, target
from .registry import app


@app.command()
def tui(
    db: str | None = typer.Option(
        None,
        "--db",
        help="Playbook file or postgresql:// URL (default: the global --db, $PLAYBOOK_DB, "
        "XDG path).",
    ),
) -> None:
    """Open the curation workbench: review proposals, pin, block, resolve conflicts."""
    if db:
        state.db = db
    where = target()  # a file or a postgresql:// URL
    if not where.exists():
        raise CliError(
            "no_database",
            f"no playbook at {where}",
            "run 'playbook init', pass --db, or try 'playbook demo'",
        )
    with open_store(create=False):  # refuses a file that is not a playbook, migrates one
        pass
    policy = load_policy_option()  # scores as the CLI does under --policy / $PLAYBOOK_POLICY
    from ..tui.app import Workbench  # lazy: every typer command

    location = where.path if where.is_file else where.location
    read = read_target()  # its snapshots read the replica; writes go to --db
    read_path = read.location if read is not None else None
    Workbench(location, policy=policy, label=str(where), read_path=read_path).run()


@app.command()
def demo(
    writer: bool = typer.Option(
        False,
        "--writer",
        help="Also run a background writer that adds feedback and proposals every second "
        "or two, to watch the live refresh. It stops when the workbench closes.",
    ),
    keep: bool = typer.Option(
        False,
        "--keep",
        help="Keep the demo playbook afterwards (it is deleted on exit otherwise) and print "
        "where it is.",
    ),
    rebuild: bool = typer.Option(
        False,
        "--rebuild",
        help="Build the demo afresh, replaying its nine months through the API, instead of "
        "starting from the build shipped with Playbook or the cached one.",
    ),
    tour: bool = typer.Option(
        False,
        "--tour",
        help="A guided tour: the workbench walks through its panes with a caption per step "
        "(approve a proposal, pin, block, resolve a conflict, time travel, what decay hid); "
        "right arrow goes on, left goes back.",
    ),
) -> None:
    """Open the workbench on a realistic demo playbook (a copy in a temporary folder).

    Hundreds of rules with nine months of feedback history (decay, maturity moves,
    inversions), open conflicts, blocked patterns, and proposals from a reflected session,
    all made through the public API. The first run builds it and keeps it in your cache
    folder ($XDG_CACHE_HOME/playbook, or ~/.cache/playbook); later runs of the same version
    start from that copy. The top bar names the demo's database file.
    """
    folder = Path(tempfile.mkdtemp(prefix="playbook-demo-"))
    path = folder / "demo.sqlite3"
    policy = load_policy_option()
    writers: list[subprocess.Popen[bytes]] = []

    def prepare(progress: Callable[[float, str], None]) -> None:
        """In the app's worker: a copy of the cached demo, built first if need be. (The core
        is imported here, after the frame is on screen.)"""
        from ..demo.cache import (  # lazy: every typer command
            build_cached_demo,
            cache_root,
            cached_demo,
            copy_demo,
            make_demo,
        )

        root = cache_root()
        cached = None if rebuild else cached_demo(root)
        try:
            if cached is None:
                cached = build_cached_demo(root, progress=progress, replay=rebuild).path
            copy_demo(cached, path)
        except OSError:  # no usable cache folder: make the demo in place
            make_demo(path, progress, replay=rebuild)
        if writer:
            writers.append(
                subprocess.Popen(
                    [
                        sys.executable,
                        "-m",
                        "playbook.demo.build",
                        "writer",
                        str(path),
                        str(os.getpid()),
                    ],
                    stdin=subprocess.DEVNULL,
                    stdout=subprocess.DEVNULL,
                    stderr=subprocess.DEVNULL,
                )
            )

    def clean_up() -> None:
        for proc in writers:
            proc.terminate()
            try:
                proc.wait(timeout=5)
            except subprocess.TimeoutExpired:
                proc.kill()
        if keep:
            sys.stderr.write(f"demo playbook kept at {path}\n")
        else:
            shutil.rmtree(folder, ignore_errors=True)

    def on_signal(signum: int, frame: object) -> None:
        # The terminal closed (SIGHUP) or someone asked us to stop: leave no folder behind,
        # then die of the same signal as we would have.
        clean_up()
        signal.signal(signum, signal.SIG_DFL)
        os.kill(os.getpid(), signum)

    for sig in (signal.SIGHUP, signal.SIGTERM):
        signal.signal(sig, on_signal)
    from ..tui.demo_app import DemoWorkbench  # lazy: every typer command
    from ..tui.tour import TourWorkbench  # lazy: every typer command

    fate = "kept on exit" if keep else "deleted on exit; --keep keeps it"
    note = fate + ("; live writer on" if writer else "")
    try:
        kind = TourWorkbench if tour else DemoWorkbench
        kind(path, prepare=prepare, label=f"demo: {path}", note=note, policy=policy).run()
    finally:
        clean_up()
