"""How the workbench acts: the one path from a key (or a palette command) to a write.

`perform(name, subject)` asks the rule (`actions.rule.why_not`); a refusal is said in one
line; otherwise the action's dialog asks what it needs (`dialogs.ask_then`) and its write
runs in a thread worker, through the same API as the CLI, as a human. A dimmed key pressed
says why it does nothing here instead of nothing at all (`refusal`, which the app's
`run_action` asks).
"""

from __future__ import annotations

from collections.abc import Callable
from functools import partial
from typing import Any

from rich.text import Text
from textual.app import App

from ..core.errors import PlaybookError
from .actions.rule import why_not
from .actions.spec import ActionSpec, Context
from .actions.table import ACTIONS
from .data import Source
from .dialogs import ask_then
from .messages import ActionDone, ActionFailed
from .panes.base import Pane
from .threads import in_thread


class Actions:
    """The app's actions: given the app (dialogs, workers, toasts), the playbook, and the
    context of the moment shown (read when an action is asked for)."""

    def __init__(self, app: App[None], source: Source, context: Callable[[], Context]) -> None:
        self.app = app
        self.source = source
        self.context = context

    def perform(self, name: str, subject: Any) -> None:
        """Action `name` on `subject`: refused in one line if it does not apply; otherwise
        ask what it needs (a dialog from the table), then write."""
        spec = ACTIONS[name]
        ctx = self.context()
        refusal = why_not(name, subject, ctx)
        if refusal is not None:
            self.say(refusal.text)
            return
        ask_then(self.app, spec, subject, ctx, partial(self.run_write, spec, subject))

    def say(self, text: str) -> None:
        """One line about why nothing happened."""
        self.app.notify(text, timeout=4, severity="warning")

    def refused_key(self, target: object, name: str, params: tuple[object, ...]) -> bool:
        """A pane's key for action `name`, dimmed here: say why (True), or False when the
        key is not a table action of a pane, or applies."""
        if not (
            isinstance(target, Pane)
            and name in ACTIONS
            and target.check_action(name, params) is None
        ):
            return False
        refusal = why_not(name, target.subject_for(ACTIONS[name].on), target.context)
        if refusal is None:
            return False
        self.say(refusal.text)
        return True

    def run_write(self, spec: ActionSpec, subject: Any, values: dict[str, str]) -> None:
        """Run one action's write in a thread worker (writes are never cancelled)."""
        in_thread(self.app, partial(self._write, spec, subject, values), "write")

    def _write(self, spec: ActionSpec, subject: Any, values: dict[str, str]) -> None:
        try:
            text = spec.write(self.source, subject, values)
        except (PlaybookError, ValueError) as exc:
            self.app.post_message(ActionFailed(str(exc)))
            return
        except Exception as exc:  # a driver error or a bug: say so, not fail silently
            self.app.post_message(ActionFailed(f"{type(exc).__name__}: {exc}"))
            raise
        self.app.post_message(ActionDone(text))

    def done(self, message: ActionDone) -> None:
        self.app.notify(Text(message.text).plain, title="Done", timeout=4)

    def failed(self, message: ActionFailed) -> None:
        self.app.notify(message.text, title="Not done", severity="error", timeout=8)
