"""Shared pieces of the workbench tests: a small real playbook and ways to wait on the app."""

from __future__ import annotations

import asyncio
import contextlib
import functools
import io
import tempfile
import time
from collections.abc import Callable, Coroutine
from pathlib import Path
from typing import Any

import pytest
import textual._wait
import textual.constants
from rich.console import Console
from textual.app import App
from textual.pilot import Pilot
from textual.worker import WorkerCancelled

from playbook import curate
from playbook.core.model import Provenance
from playbook.review import queue
from playbook.tui.app import Workbench
from playbook.tui.seen import LastLooked

from . import store_at

# How Pilot drives the workbench here. After each key it waits until the app is idle, by
# sleeping in steps of SLEEP_GRANULARITY (20 ms) until one passes with almost no CPU used;
# 5 ms steps see the same idle moment sooner (the suite presses thousands of keys, and the
# 20 ms steps left a worker idle for about half of each workbench test). Animations are
# off, as with TEXTUAL_ANIMATIONS=none: Pilot waits for each to finish, and every test looks
# at where things end, not at how they move. Every app made after this import uses both.
textual._wait.SLEEP_GRANULARITY = 0.005
textual._wait.SLEEP_IDLE = textual._wait.SLEEP_GRANULARITY / 20
textual.constants.TEXTUAL_ANIMATIONS = "none"

RULES = [
    "Run the full test suite before saying a change is done",
    "Read the first error in the CI log, not the last one",
    "Pin base images to a specific version tag instead of latest",
    "Write a failing test that reproduces the bug before fixing it",
]
SIZE = (120, 36)
# Issue 14: every action and view at 80x24 and at 160x48. The suite runs each at 80x24, the
# cramped size where layout goes wrong; the 160x48 runs are the long variant (-m slow),
# which keeps the README's test command within its three minutes.
SIZES = [
    pytest.param((80, 24), id="80x24"),
    pytest.param((160, 48), id="160x48", marks=pytest.mark.slow),
]


def build_playbook(path: Path) -> dict[str, Any]:
    """A few rules with feedback, a conflict, a blocked pattern and two proposals."""
    store = store_at(path)
    try:
        ids = [
            curate(store, [{"type": "add", "content": c, "tags": ["testing"]}]).added[0]
            for c in RULES
        ]
        for _ in range(3):
            curate(store, [{"type": "helpful", "bullet_id": ids[0]}])
        conflict = curate(
            store, [{"type": "add", "content": "Never " + RULES[2][0].lower() + RULES[2][1:]}]
        )
        block_id = store.block("Disable the failing test to get CI green", "hides regressions")
        staged = queue.stage(
            store,
            [
                {"type": "add", "content": "Give each pytest-xdist worker its own SQLite file"},
                {"type": "add", "content": "Use --no-verify to skip the slow hooks"},
            ],
            provenances=[
                Provenance(session_ref="session:test", byte_offset=100),
                Provenance(session_ref="session:test", byte_offset=200),
            ],
        )
    finally:
        store.close()
    return {
        "ids": ids,
        "conflict_new": conflict.added[0],
        "block_id": block_id,
        "proposals": staged.staged,
    }


def screen_lines(app: App[Any]) -> list[str]:
    """What the terminal shows, one line of text per row: the frame Textual's own
    `export_screenshot` renders, as text instead of SVG (a quarter of the time, and far
    less on a full screen; the suite looks at the screen a few hundred times)."""
    width, height = app.size
    console = Console(
        width=width,
        height=height,
        file=io.StringIO(),
        force_terminal=True,
        color_system=None,
        record=True,
        legacy_windows=False,
        safe_box=False,
    )
    console.print(
        app.screen._compositor.render_update(full=True, screen_stack=app._background_screens)
    )
    return [line.rstrip() for line in console.export_text().splitlines()]


def plain(renderable: Any, width: int = 200) -> str:
    """A Rich renderable (what a Static shows: a Text, a Group, a table) as plain text."""
    console = Console(width=width, file=io.StringIO(), color_system=None, record=True)
    console.print(renderable)
    return console.export_text()


def screen_text(app: App[Any]) -> str:
    """The screen's rows, joined."""
    return "".join(screen_lines(app))


def make_app(
    path: str | Path, *, poll_seconds: float = 0.1, folder: Path | None = None
) -> Workbench:
    """The workbench on `path`, remembering "last looked" in `folder`, else beside the file
    (for a postgresql:// URL, in a folder of its own), never in $HOME."""
    if folder is None:
        folder = path.parent if isinstance(path, Path) else Path(tempfile.mkdtemp(prefix="pb-"))
    return Workbench(path, poll_seconds=poll_seconds, seen=LastLooked(path, folder / "seen.json"))


async def wait_for(pilot: Pilot[None], predicate: Any, timeout: float = 20.0) -> None:
    """Let the app run until `predicate()` holds (workers finish, messages land)."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        await pilot.pause(0.02)
        if predicate():
            return
    raise AssertionError(f"timed out after {timeout}s waiting for {predicate}")


async def loaded(pilot: Pilot[None], app: Workbench) -> None:
    await wait_for(pilot, lambda: app.loads >= 1)


async def workers_done(app: Workbench) -> None:
    """Wait for the app's workers to finish. Exclusive workers (poll, filter, detail) may be
    cancelled by a newer one meanwhile, more often on a busy machine; a cancelled one is done
    as far as this wait is concerned (`wait_for_complete` would raise WorkerCancelled)."""
    for worker in list(app.workers):
        with contextlib.suppress(WorkerCancelled):
            await worker.wait()


async def after_write(pilot: Pilot[None], app: Workbench, check: Any) -> None:
    """Wait for a write worker to finish and the refreshed snapshot to satisfy `check`."""
    await workers_done(app)
    await wait_for(pilot, check)


async def press_to_quit(app: Workbench, key: str, timeout: float = 20.0) -> None:
    """Press a key that should end the app, and wait until it has ended. The key goes the
    way `Pilot.press` sends it (the driver, then the bindings); what Pilot awaits after a
    key (every widget answering, the animator finishing) can wait forever once the app has
    closed under it, which hung the test under load after the app had quit. So the press
    runs as a task and the wait is on the app."""
    press = asyncio.ensure_future(app._press_keys([key]))
    deadline = time.monotonic() + timeout
    while app.is_running and time.monotonic() < deadline:
        await asyncio.sleep(0.02)
    if not press.done():
        press.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await press


def async_test(fn: Callable[..., Coroutine[Any, Any, None]]) -> Callable[..., None]:
    """Run an async test on a fresh event loop (no pytest-asyncio needed)."""

    @functools.wraps(fn)
    def wrapper(*args: Any, **kwargs: Any) -> None:
        asyncio.run(fn(*args, **kwargs))

    return wrapper
