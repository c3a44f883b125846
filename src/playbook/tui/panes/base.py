"""The one interface every pane implements, tab or not.

A pane is a widget (its layout, vertical or horizontal, is CSS). As a tab of the workbench
(`TAB` set, registered once in `panes.PANES`) it says its title, which widget takes the
focus, its help section, and what a snapshot means to it: `prepare` (in the poll worker),
`apply` (on the UI thread), `count` and `label` (its tab's label).

Its keys come from the action table, and a key posts `Pane.Requested` for the app to
handle; the pane never calls the app. A pane names the subjects its keys act on
(`SUBJECTS`) and says what is selected (`subject()`); `check_action` asks the one rule
(`actions.check`) so the footer shows, dims or leaves out each key. While the pane's own
text box has the focus, its action keys are left out of the footer: they would type, not
act.
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

if TYPE_CHECKING:
    from ..reading import Snapshot

EMPTY = Context({}, DEFAULT_POLICY)


class Pane(Widget):
    """A pane of the workbench: `class XPane(Pane)`, and one line in `panes.PANES`."""

    DEFAULT_CSS = """
    Pane {
        width: 1fr;
        height: 1fr;
        layout: vertical;
        overflow: hidden hidden;
    }
    """

    TAB: ClassVar[str] = ""  # the tab's id ("" for a pane on a screen of its own)
    TITLE: ClassVar[str] = ""  # the tab's label, before its count
    FOCUS: ClassVar[str] = ""  # the widget that takes the focus when the tab shows
    # The help screen's section (panes with one title share it) and its note. Not `HELP`:
    # that is Textual's own (a widget's Markdown for its help panel, ctrl+p "Keys"), which
    # a tuple there made crash.
    HELP_SECTION: ClassVar[tuple[str, str]] = ("", "")
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

    # ---------------------------------------------------------------- a snapshot
    def prepare(self, snap: Snapshot) -> Any:
        """In the poll worker, off the UI thread: what `apply` will need (None: nothing).
        Reads only immutable state of the pane."""
        return None

    def apply(self, snap: Snapshot, context: Context, prepared: Any) -> None:
        """On the UI thread: show the snapshot (`prepared` is what `prepare` made of it)."""
        self.set_context(context)

    def count(self, snap: Snapshot) -> int | None:
        """The number on the tab (None: none)."""
        return None

    def label(self, snap: Snapshot, narrow: bool) -> str:
        """The tab's label (content markup); `narrow`: at 80 columns."""
        n = self.count(snap)
        return self.TITLE if n is None else f"{self.TITLE} [b]{n:,}[/b]"

    # ---------------------------------------------------------------- its keys
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
    def action(self: Pane) -> None:
        self.request(name)

    action.__name__ = f"action_{name}"
    return action
