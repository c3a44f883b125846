"""Ask for a moment: a date (`2026-05-01`), a date and time, or how long ago (`7d`, `4w`,
`3m`, `1y`), read by the API's `review.parse_moment`. Used by time travel (`t`) and by
then-vs-now (`c`) when the workbench is at now."""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime
from typing import ClassVar

from textual import on
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Horizontal, VerticalScroll
from textual.screen import ModalScreen
from textual.widgets import Button, Input, Label, Static

Parse = Callable[[str], datetime]


class MomentModal(ModalScreen[datetime | None]):
    """Enter a moment; an unreadable one is said under the box, nothing is dismissed."""

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("escape", "cancel", "Cancel", tooltip="Close without travelling"),
    ]

    def __init__(
        self, title: str, explain: str, parse: Parse, *, value: str = "", confirm: str = "Go"
    ) -> None:
        super().__init__()
        self.title_text = title
        self.explain = explain
        self.parse = parse
        self.value = value
        self.confirm_label = confirm

    def compose(self) -> ComposeResult:
        with VerticalScroll(classes="dialog -primary") as box:
            box.border_title = self.title_text
            with Horizontal(classes="buttons"):
                yield Button("Cancel", id="cancel")
                yield Button(self.confirm_label, id="confirm", variant="primary")
            yield Static(self.explain, classes="explain", markup=False)
            yield Label("When", classes="field-label")
            yield Input(self.value, placeholder="2026-05-01, or 7d, 4w, 3m, 1y ago", id="when")
            yield Static("", classes="error-line", id="error-line", markup=False)

    def on_mount(self) -> None:
        box = self.query_one("#when", Input)
        box.focus()
        box.action_end()

    @on(Input.Changed)
    def _typed(self) -> None:
        self.query_one("#error-line", Static).update("")  # the error was about the old text

    @on(Input.Submitted)
    @on(Button.Pressed, "#confirm")
    def action_submit(self) -> None:
        text = self.query_one("#when", Input).value.strip()
        try:
            when = self.parse(text)
        except ValueError as exc:
            self.query_one("#error-line", Static).update(str(exc) or f"not a moment: {text!r}")
            return
        self.dismiss(when)

    @on(Button.Pressed, "#cancel")
    def action_cancel(self) -> None:
        self.dismiss(None)
