"""The controllers' one way to start work off the UI thread."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from textual.app import App


def in_thread(
    app: App[Any], work: Callable[[], object], group: str, *, exclusive: bool = False
) -> None:
    """Run `work` in a thread worker of `app`'s, in `group` (exclusive: cancelling the
    group's worker before it). The work reports its own errors, as messages: the app never
    exits on one."""
    app.run_worker(
        work, name=group, group=group, exclusive=exclusive, exit_on_error=False, thread=True
    )
