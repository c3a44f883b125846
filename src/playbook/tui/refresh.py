"""The live refresh: the workbench follows other processes' writes to the playbook.

Threads and connections: every read runs in a thread worker on a connection of its own
(`Source.open()`); a single long-lived connection (`Watcher`) answers `PRAGMA
data_version`. Polls never overlap (a flag, cleared on the UI thread when a poll's result
is on screen) and are skipped while a modal is open (the snapshot would move the ground
under it); a change calls `read_changes` in the worker, which posts what it read for the
panes to apply.
"""

from __future__ import annotations

import contextlib
import threading
from collections.abc import Callable, Hashable
from functools import partial

from textual.app import App
from textual.screen import ModalScreen
from textual.worker import Worker, get_current_worker

from .data import Source, Watcher
from .messages import LoadFailed, PollFinished, ServerBack, ServerLost
from .threads import in_thread

# In the poll worker: read what changed since change token `version` and post it. False
# when nothing was posted (cancelled); otherwise the handler of what was posted calls
# `Refresh.poll_done`.
ReadChanges = Callable[[Hashable, Worker[None]], bool]


class Refresh:
    """Polls the playbook every `poll_seconds` once `start()` is called.

    Given the app (timers, workers, messages, toasts), the playbook, and what reads a
    change (`read_changes`)."""

    def __init__(
        self, app: App[None], source: Source, *, poll_seconds: float, read_changes: ReadChanges
    ) -> None:
        self.app = app
        self.source = source
        self.poll_seconds = poll_seconds
        self.read_changes = read_changes
        self.version: Hashable | None = None  # the change token of what is on screen
        self._watcher: Watcher | None = None
        # Which watcher: a new one's token starts again from its own count, so a version is
        # (this, its token) and never matches one read from a watcher before.
        self._generation = 0
        self._watch_lock = threading.Lock()
        self._closing = False
        self._polling = False
        self._again = False
        self.lost = False  # the last poll could not reach the playbook

    def start(self) -> None:
        self.poll()
        self.app.set_interval(self.poll_seconds, self.poll, name="poll")

    def close(self) -> None:
        """The app unmounts. A poll thread may be inside `version()` right now: close under
        the same lock."""
        with self._watch_lock:
            self._closing = True
            if self._watcher is not None:
                self._watcher.close()
                self._watcher = None

    @property
    def closing(self) -> bool:
        """The app is shutting down: no screen to refresh, nothing more to apply. (Textual
        stops running the app before it removes the screens' widgets: a snapshot read
        meanwhile must not look for them.)"""
        app = self.app
        return self._closing or not app.screen_stack or not app.is_running

    def poll(self) -> None:
        """Reload if another connection committed. Never overlapping, never under a modal."""
        if self._polling:
            self._again = True
            return
        if self.closing or isinstance(self.app.screen, ModalScreen):
            return
        self._polling = True
        # Not `exclusive`: the flag already keeps polls apart, and an exclusive group would
        # cancel a worker whose thread is still returning after its result was applied.
        in_thread(self.app, partial(self._poll, self.version), "poll")

    def _poll(self, known: Hashable | None) -> None:
        worker = get_current_worker()
        post = self.app.post_message
        try:
            with self._watch_lock:
                if self._closing:
                    return
                if self._watcher is None:
                    self._watcher = self.source.watcher()
                    self._generation += 1
                version: Hashable = (self._generation, self._watcher.version())
        except Exception as exc:  # the server went away, say: a new watcher next tick
            self._drop_watcher()
            post(ServerLost(f"{exc}"))
            post(PollFinished())
            return
        try:
            if self.lost:  # back: what was written meanwhile, whatever the token says
                post(ServerBack())
                known = None
            if version == known or not self.read_changes(version, worker):
                post(PollFinished())
        except Exception as exc:  # reported, and the next tick tries again
            post(LoadFailed(f"could not read {self.source.path}: {exc}"))
            post(PollFinished())

    def unchanged_since(self, version: Hashable | None) -> bool:
        """Whether nobody has committed since change token `version` was read, asked of
        the watcher now (from any thread). False when in doubt: no version, no watcher, the
        playbook unreachable, the app closing. (A commit is seen once the watcher has it:
        on PostgreSQL its NOTIFY, which the server sends as the commit returns.)"""
        if version is None or self.lost:
            return False
        with self._watch_lock:
            if self._closing or self._watcher is None:
                return False
            try:
                return (self._generation, self._watcher.version()) == version
            except Exception:  # the next poll says what went wrong
                return False

    def _drop_watcher(self) -> None:
        with self._watch_lock:
            if self._watcher is not None:
                with contextlib.suppress(Exception):
                    self._watcher.close()
                self._watcher = None

    def server_lost(self, message: ServerLost) -> None:
        """Said once, and left on screen until the playbook answers again (the panes show
        what was read last meanwhile; an action tried meanwhile says it failed)."""
        if self.lost or self.closing:
            return
        self.lost = True
        self.app.notify(
            f"lost the playbook ({message.text}); showing what was read last, and trying "
            f"again every {self.poll_seconds:g} s",
            severity="error",
            title="Playbook offline",
            timeout=24 * 3600,
        )

    def server_back(self) -> None:
        if not self.lost:
            return
        self.lost = False
        self.app.clear_notifications()
        self.app.notify("the playbook answers again: caught up with what changed meanwhile")

    def poll_done(self) -> None:
        """The poll ended (nothing new, or its snapshot is on screen); run the one that was
        asked for meanwhile, if any."""
        self._polling = False
        if self._again:
            self._again = False
            self.poll()
