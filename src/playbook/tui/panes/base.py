"""What every pane with actions shares: its keys come from the action table, and a key
posts `ActionPane.Requested` for the app to handle; the pane never calls the app.

A subclass names the subjects its keys act on (`SUBJECTS`) and says what is selected
(`subject()`); `check_action` asks the one rule (`actions.check`) so the footer shows,
dims or leaves out each key. While the pane's own text box has the focus, its action keys
are left out of the footer: they would type, not act.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, ClassVar

from textual.message import Message
from textual.widget import Widget
from textual.widgets import Input, TextArea

from ...core.policy import DEFAULT_POLICY
from ..actions.rule import check
from ..actions.spec import Context, Subject
from ..actions.table import ACTIONS

EMPTY = Context({}, DEFAULT_POLICY)

# A mixin, not a Widget subclass: Textual inherits CSS along the first DOMNode base only,
# so `class DetailPane(ActionPane, Horizontal)` must find Horizontal there.
_Pane = Widget if TYPE_CHECKING else object


class ActionPane(_Pane):
    """Mix in before the container class: `class XPane(ActionPane, Vertical)`."""

    SUBJECTS: ClassVar[tuple[Subject, ...]] = ()

    class Requested(Message):
        """The user asked for action `action` on `subject` (the app asks, then writes)."""

        def __init__(self, action: str, subject: Any) -> None:
            super().__init__()
            self.action = action
            self.subject = subject

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        for spec in ACTIONS.values():
            if spec.on in cls.SUBJECTS and not hasattr(cls, f"action_{spec.name}"):
                setattr(cls, f"action_{spec.name}", _requester(spec.name))

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self.context = EMPTY

    def subject(self) -> Any:
        """The selected thing the keys act on (None: nothing selected)."""
        return None

    def subject_for(self, on: Subject) -> Any:
        """What an action on `on` things would act on here (a pane whose keys act on two
        kinds of subject, such as one proposal and the marked ones, tells them apart)."""
        return None if on == "none" else self.subject()

    def set_context(self, context: Context) -> None:
        self.context = context
        self.refresh_bindings()

    def typing(self) -> bool:
        focused = self.screen.focused if self.is_mounted else None
        return isinstance(focused, Input | TextArea) and self in focused.ancestors

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        if action not in ACTIONS:
            return True
        if self.typing():
            return False
        return check(action, self.subject_for(ACTIONS[action].on), self.context)

    def request(self, action: str) -> None:
        self.post_message(self.Requested(action, self.subject_for(ACTIONS[action].on)))


def _requester(name: str) -> Any:
    def action(self: ActionPane) -> None:
        self.request(name)

    action.__name__ = f"action_{name}"
    return action
