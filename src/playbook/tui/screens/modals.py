"""Modal dialogs: confirm, ask for a reason (or a pattern), edit text, pick a harm reason.

Every destructive action goes through one of these: the dialog names what will happen, shows
the text it applies to (as inert text), and the confirm button says the verb.

Usable by keyboard alone at 80x24: the body scrolls while the buttons stay docked at the
bottom of the dialog; Enter in a one-line field moves to the next field and submits from
the last; toasts show at the top while a dialog is open, never over its buttons.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, ClassVar, Literal

from rich.text import Text
from textual import on
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Horizontal, VerticalScroll
from textual.screen import ModalScreen
from textual.widgets import Button, Checkbox, Input, Label, OptionList, Static, TextArea
from textual.widgets.option_list import Option

Variant = Literal["default", "primary", "success", "warning", "error"]
COMPACT = (Input, Button, OptionList, TextArea, Checkbox)


def compact_when_short(screen: ModalScreen[Any]) -> None:
    """On a short terminal (the app's `-short` class, under 34 rows) a dialog's fields and
    buttons lose their borders: at 80x24 the last field of the longest dialog (mark
    harmful: six reasons, then "what happened") sits above the fold, not below it."""
    short = screen.app.has_class("-short")
    for widget in screen.query("*"):
        if isinstance(widget, COMPACT):
            widget.compact = short


class ConfirmModal(ModalScreen[bool]):
    """Yes or no, with the subject shown; the confirm button carries the verb."""

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("escape", "cancel", "Cancel", tooltip="Close without changing anything"),
        Binding("y", "confirm", "Confirm", show=False),
    ]

    def __init__(
        self,
        title: str,
        explain: str,
        subject: Text | None = None,
        *,
        confirm: str = "Confirm",
        variant: Variant = "error",
    ) -> None:
        super().__init__()
        self.title_text = title
        self.explain = explain
        self.subject = subject
        self.confirm_label = confirm
        self.variant = variant

    def compose(self) -> ComposeResult:
        with VerticalScroll(classes=f"dialog -{self.variant}") as box:
            box.border_title = self.title_text
            with Horizontal(classes="buttons"):
                yield Button("Cancel", id="cancel")
                yield Button(self.confirm_label, id="confirm", variant=self.variant)
            yield Static(self.explain, classes="explain", markup=False)
            if self.subject is not None:
                with VerticalScroll(classes="subject"):
                    yield Static(self.subject, markup=False)

    def on_mount(self) -> None:
        compact_when_short(self)
        self.query_one("#confirm", Button).focus()

    @on(Button.Pressed, "#confirm")
    def action_confirm(self) -> None:
        self.dismiss(True)

    @on(Button.Pressed, "#cancel")
    def action_cancel(self) -> None:
        self.dismiss(False)


@dataclass(frozen=True)
class Field:
    name: str
    label: str
    value: str = ""
    placeholder: str = ""
    required: bool = True
    multiline: bool = False
    check: bool = False  # a box to tick (value "yes" when ticked, "" when not; never required)


class FormModal(ModalScreen[dict[str, str] | None]):
    """A few text fields (a reason, a pattern, new content) and a confirm button."""

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("escape", "cancel", "Cancel", tooltip="Close without changing anything"),
        Binding("ctrl+s", "submit", "Confirm", tooltip="Confirm (also Enter in a one-line field)"),
    ]

    def __init__(
        self,
        title: str,
        explain: str,
        fields: list[Field],
        subject: Text | None = None,
        *,
        confirm: str = "Confirm",
        variant: Variant = "primary",
    ) -> None:
        super().__init__()
        self.title_text = title
        self.explain = explain
        self.fields = fields
        self.subject = subject
        self.confirm_label = confirm
        self.variant = variant

    def compose(self) -> ComposeResult:
        with VerticalScroll(classes=f"dialog -{self.variant}") as box:
            box.border_title = self.title_text
            with Horizontal(classes="buttons"):
                yield Button("Cancel", id="cancel")
                yield Button(self.confirm_label, id="confirm", variant=self.variant)
            yield Static(self.explain, classes="explain", markup=False)
            if self.subject is not None:
                with VerticalScroll(classes="subject"):
                    yield Static(self.subject, markup=False)
            for f in self.fields:
                if f.check:
                    yield Checkbox(f.label, bool(f.value), id=f"field-{f.name}")
                    continue
                yield Label(f.label + ("" if f.required else " (optional)"), classes="field-label")
                if f.multiline:
                    yield TextArea(f.value, id=f"field-{f.name}", soft_wrap=True)
                else:
                    yield Input(f.value, placeholder=f.placeholder, id=f"field-{f.name}")
            yield Static("", classes="error-line", id="error-line", markup=False)

    def on_mount(self) -> None:
        compact_when_short(self)
        first = self.fields[0] if self.fields else None
        if first is None:
            return
        widget = self.query_one(f"#field-{first.name}")
        widget.focus()
        if isinstance(widget, TextArea):  # editing: carry on from the end of the text
            widget.move_cursor(widget.document.end)

    def values(self) -> dict[str, str]:
        out: dict[str, str] = {}
        for f in self.fields:
            widget = self.query_one(f"#field-{f.name}")
            if isinstance(widget, Checkbox):
                out[f.name] = "yes" if widget.value else ""
            elif isinstance(widget, TextArea):
                out[f.name] = widget.text.strip()
            else:  # the one other kind `compose` makes
                out[f.name] = self.query_one(f"#field-{f.name}", Input).value.strip()
        return out

    @on(Input.Submitted)
    def _enter(self, event: Input.Submitted) -> None:
        """Enter in a one-line field: on to the next field, or submit from the last."""
        names = [f"field-{f.name}" for f in self.fields]
        at = names.index(event.input.id) if event.input.id in names else len(names) - 1
        if at < len(names) - 1:
            self.query_one(f"#{names[at + 1]}").focus()
        else:
            self.action_submit()

    @on(Button.Pressed, "#confirm")
    def action_submit(self) -> None:
        values = self.values()
        missing = [
            f.label for f in self.fields if f.required and not f.check and not values[f.name]
        ]
        if missing:
            self.query_one("#error-line", Static).update(f"{missing[0]} is required.")
            return
        self.dismiss(values)

    @on(Button.Pressed, "#cancel")
    def action_cancel(self) -> None:
        self.dismiss(None)


HARM_REASONS = (
    ("caused_bug", "caused a bug"),
    ("wasted_time", "wasted time"),
    ("contradicted_requirements", "contradicted the requirements"),
    ("wrong_context", "applied in the wrong context"),
    ("outdated", "outdated"),
    ("other", "other"),
)


class HarmfulModal(ModalScreen[tuple[str, str] | None]):
    """Mark a bullet harmful: pick why, optionally say what happened."""

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("escape", "cancel", "Cancel", tooltip="Close without changing anything"),
        Binding("ctrl+s", "submit", "Mark harmful"),
    ]

    def __init__(self, subject: Text) -> None:
        super().__init__()
        self.subject = subject

    def compose(self) -> ComposeResult:
        with VerticalScroll(classes="dialog -warning") as box:
            box.border_title = "Mark harmful"
            with Horizontal(classes="buttons"):
                yield Button("Cancel", id="cancel")
                yield Button("Mark harmful", id="confirm", variant="warning")
            yield Static(
                "Harm weighs four times as much as help, and a rule whose recent harm "
                "dominates is inverted into an AVOID: warning.",
                classes="explain",
                markup=False,
            )
            with VerticalScroll(classes="subject"):
                yield Static(self.subject, markup=False)
            yield Label("Why (enter marks it; tab to say what happened)", classes="field-label")
            yield OptionList(*[Option(label, id=key) for key, label in HARM_REASONS], id="reason")
            yield Label("What happened (optional)", classes="field-label")
            yield Input(placeholder="e.g. the retry hid the real failure", id="context")

    def on_mount(self) -> None:
        compact_when_short(self)
        options = self.query_one("#reason", OptionList)
        options.highlighted = 0
        options.focus()

    @on(OptionList.OptionSelected)
    @on(Input.Submitted)
    @on(Button.Pressed, "#confirm")
    def action_submit(self) -> None:
        """Enter on a reason submits (tab first to say what happened)."""
        options = self.query_one("#reason", OptionList)
        index = options.highlighted if options.highlighted is not None else 0
        reason = HARM_REASONS[index][0]
        self.dismiss((reason, self.query_one("#context", Input).value.strip()))

    @on(Button.Pressed, "#cancel")
    def action_cancel(self) -> None:
        self.dismiss(None)
