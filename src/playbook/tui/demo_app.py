"""The workbench on the demo playbook: the frame paints at once, then fills in.

`prepare(progress)` makes the demo file (a copy of the cached demo, or a fresh build) in a
thread worker while the app shows a progress bar; the live refresh starts only when the
file is complete (before that, the watcher would create an empty database in its place).
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

from rich.text import Text
from textual import on, work
from textual.app import ComposeResult
from textual.containers import Vertical
from textual.message import Message
from textual.widgets import ProgressBar, Static

from . import format as fmt
from .app import Workbench

Prepare = Callable[[Callable[[float, str], None]], None]


class DemoWorkbench(Workbench):
    class Progressed(Message):
        def __init__(self, fraction: float, what: str) -> None:
            super().__init__()
            self.fraction = fraction
            self.what = what

    class Prepared(Message):
        def __init__(self, error: str | None = None) -> None:
            super().__init__()
            self.error = error

    def __init__(self, path: str | Path, *, prepare: Prepare, **kwargs: Any) -> None:
        super().__init__(path, **kwargs)
        self.prepare = prepare
        self.prepared_at: float | None = None  # seconds from start to a complete file

    def compose(self) -> ComposeResult:
        yield from super().compose()
        with Vertical(id="building"):
            yield Static(Text("Opening the demo playbook…", style=fmt.MUTED), id="building-text")
            yield ProgressBar(total=100, show_eta=False, id="building-bar")

    def start(self) -> None:
        self.bullets_pane.table.empty_text = "Building the demo playbook…"
        # After the first frame: the build imports the whole core in a thread, and under
        # the GIL that would hold back the frame itself.
        self.call_after_refresh(self._prepare_worker)

    @work(thread=True, exit_on_error=False, group="prepare")
    def _prepare_worker(self) -> None:
        def progress(fraction: float, what: str) -> None:
            self.post_message(self.Progressed(fraction, what))

        try:
            self.prepare(progress)
        except Exception as exc:  # shown in the app; the CLI's own errors come first
            self.post_message(self.Prepared(f"{type(exc).__name__}: {exc}"))
            return
        self.post_message(self.Prepared())

    @on(Progressed)
    def _progressed(self, message: Progressed) -> None:
        self.query_one("#building-bar", ProgressBar).update(progress=100 * message.fraction)
        text = Text("Preparing the demo (kept for next time): ")
        text.append(message.what, style=fmt.MUTED)
        self.query_one("#building-text", Static).update(text)

    @on(Prepared)
    def _prepared(self, message: Prepared) -> None:
        if message.error is not None:
            self.query_one("#building-text", Static).update(
                Text(f"The demo could not be built: {message.error}", style=fmt.BAD)
            )
            return
        self.prepared_at = self.elapsed()
        self.query_one("#building").display = False
        self.bullets_pane.table.empty_text = "Reading the playbook…"
        self.live.start()
