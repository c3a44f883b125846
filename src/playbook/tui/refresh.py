"""The live refresh: an app that follows other processes' writes to the playbook.

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

from textual import on, work
from textual.app import App
from textual.screen import ModalScreen
from textual.worker import Worker, get_current_worker

from .data import Source, Watcher
from .messages import LoadFailed, PollFinished, ServerBack, ServerLost


class LiveApp(App[None]):
    """Polls the playbook every `poll_seconds` once `start_refresh()` is called."""

    def __init__(self, source: Source, *, poll_seconds: float) -> None:
        super().__init__()
        self.source = source
        self.poll_seconds = poll_seconds
        self.version: int | None = None
        self._watcher: Watcher | None = None
        self._watch_lock = threading.Lock()
        self._closing = False
        self._polling = False
        self._again = False
        self.lost = False  # the last poll could not reach the playbook

    def start_refresh(self) -> None:
        self.poll()
        self.set_interval(self.poll_seconds, self.poll, name="poll")

    def on_unmount(self) -> None:
        # A poll thread may be inside `version()` right now: close under the same lock.
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
        return self._closing or not self.screen_stack or not self.is_running

    def poll(self) -> None:
        """Reload if another connection committed. Never overlapping, never under a modal."""
        if self._polling:
            self._again = True
            return
        if self.closing or isinstance(self.screen, ModalScreen):
            return
        self._polling = True
        self._poll_worker(self.version)

    # Not `exclusive`: the flag already keeps polls apart, and an exclusive group would
    # cancel a worker whose thread is still returning after its result was applied.
    @work(thread=True, exit_on_error=False, group="poll")
    def _poll_worker(self, known: int | None) -> None:
        worker = get_current_worker()
        try:
            with self._watch_lock:
                if self._closing:
                    return
                if self._watcher is None:
                    self._watcher = self.source.watcher()
                version = self._watcher.version()
        except Exception as exc:  # the server went away, say: a new watcher next tick
            self._drop_watcher()
            self.post_message(ServerLost(f"{exc}"))
            self.post_message(PollFinished())
            return
        try:
            if self.lost:  # back: what was written meanwhile, whatever the token says
                self.post_message(ServerBack())
                known = None
            if version == known or not self.read_changes(version, worker):
                self.post_message(PollFinished())
        except Exception as exc:  # reported, and the next tick tries again
            self.post_message(LoadFailed(f"could not read {self.source.path}: {exc}"))
            self.post_message(PollFinished())

    def _drop_watcher(self) -> None:
        with self._watch_lock:
            if self._watcher is not None:
                with contextlib.suppress(Exception):
                    self._watcher.close()
                self._watcher = None

    @on(ServerLost)
    def _server_lost(self, message: ServerLost) -> None:
        """Said once, and left on screen until the playbook answers again (the panes show
        what was read last meanwhile; an action tried meanwhile says it failed)."""
        if self.lost or self.closing:
            return
        self.lost = True
        self.notify(
            f"lost the playbook ({message.text}); showing what was read last, and trying "
            f"again every {self.poll_seconds:g} s",
            severity="error",
            title="Playbook offline",
            timeout=24 * 3600,
        )

    @on(ServerBack)
    def _server_back(self) -> None:
        if not self.lost:
            return
        self.lost = False
        self.clear_notifications()
        self.notify("the playbook answers again: caught up with what changed meanwhile")

    # A message, not `call_from_thread`: that blocks the thread until the UI runs it, and
    # an app shutting down (waiting for its threads) would never run it.
    @on(PollFinished)
    def _poll_finished(self) -> None:
        self.poll_done()

    def read_changes(self, version: int, worker: Worker[None]) -> bool:
        """In the poll worker: read what changed and post it. False when nothing was posted
        (cancelled); otherwise the handler of what was posted calls `poll_done`."""
        raise NotImplementedError

    def poll_done(self) -> None:
        """The poll ended (nothing new, or its snapshot is on screen); run the one that was
        asked for meanwhile, if any."""
        self._polling = False
        if self._again:
            self._again = False
            self.poll()
