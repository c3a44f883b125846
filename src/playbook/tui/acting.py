"""How the workbench acts: the one path from a key (or a palette command) to a write.

`perform(name, subject)` asks the rule (`actions.rule.why_not`); a refusal is said in one
line; otherwise the action's dialog asks what it needs (`dialogs.ask_then`) and its write
runs in a thread worker, through the same API as the CLI, as a human. A dimmed key pressed
says why it does nothing here instead of nothing at all.
"""

from __future__ import annotations

from functools import partial
from typing import Any

from rich.text import Text
from textual import on, work

from ..core.errors import PlaybookError
from .actions.rule import why_not
from .actions.spec import ActionSpec, Context
from .actions.table import ACTIONS
from .dialogs import ask_then
from .messages import ActionDone, ActionFailed
from .panes.base import Pane
from .refresh import LiveApp


class ActingApp(LiveApp):
    """A live app whose panes request actions from the table."""

    context: Context

    # ---------------------------------------------------------------- actions
    @on(Pane.Requested)
    def _requested(self, message: Pane.Requested) -> None:
        self.perform(message.action, message.subject)

    def perform(self, name: str, subject: Any) -> None:
        """Action `name` on `subject`: refused in one line if it does not apply; otherwise
        ask what it needs (a dialog from the table), then write."""
        spec = ACTIONS[name]
        refusal = why_not(name, subject, self.context)
        if refusal is not None:
            self.say(refusal.text)
            return
        ask_then(self, spec, subject, self.context, partial(self.run_write, spec, subject))

    def say(self, text: str) -> None:
        """One line about why nothing happened."""
        self.notify(text, timeout=4, severity="warning")

    async def run_action(
        self, action: Any, default_namespace: Any = None, namespaces: Any = None
    ) -> bool:
        """A dimmed key, pressed, says why it does nothing here (instead of nothing)."""
        if isinstance(action, str):
            target, name, params = self._parse_action(
                action, self if default_namespace is None else default_namespace, namespaces
            )
            if (
                isinstance(target, Pane)
                and name in ACTIONS
                and target.check_action(name, params) is None
            ):
                refusal = why_not(name, target.subject_for(ACTIONS[name].on), target.context)
                if refusal is not None:
                    self.say(refusal.text)
                    return True
        return await super().run_action(action, default_namespace, namespaces)

    def run_write(self, spec: ActionSpec, subject: Any, values: dict[str, str]) -> None:
        """Run one action's write in a thread worker (writes are never cancelled)."""
        self._write_worker(spec, subject, values)

    @work(thread=True, exit_on_error=False, group="write")
    def _write_worker(self, spec: ActionSpec, subject: Any, values: dict[str, str]) -> None:
        try:
            text = spec.write(self.source, subject, values)
        except (PlaybookError, ValueError) as exc:
            self.post_message(ActionFailed(str(exc)))
            return
        except Exception as exc:  # a driver error or a bug: say so, not fail silently
            self.post_message(ActionFailed(f"{type(exc).__name__}: {exc}"))
            raise
        self.post_message(ActionDone(text))

    @on(ActionDone)
    def _action_done(self, message: ActionDone) -> None:
        self.notify(Text(message.text).plain, title="Done", timeout=4)
        self.poll()  # show it at once, not at the next tick

    @on(ActionFailed)
    def _action_failed(self, message: ActionFailed) -> None:
        self.notify(message.text, title="Not done", severity="error", timeout=8)
