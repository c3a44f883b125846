"""An action's `Ask` made into its dialog, and the dialog's answer into the values the
action's write takes (`{}` for a confirmation, the fields of a form, the harm reason)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from textual.app import App
from textual.screen import ModalScreen

from .actions.spec import ActionSpec, Context
from .screens.modals import ConfirmModal, FormModal, HarmfulModal

Then = Callable[[dict[str, str]], None]


def build_dialog(spec: ActionSpec, subject: Any, ctx: Context) -> tuple[ModalScreen[Any], Any]:
    """The modal for `spec` on `subject`, and a function from its result to the write's
    values (None: cancelled)."""
    ask = spec.ask
    assert ask is not None
    shown = ask.subject(subject, ctx)
    if ask.kind == "harmful":
        assert shown is not None
        return HarmfulModal(
            shown
        ), lambda answer: {"reason": answer[0], "context": answer[1]} if answer else None
    title, explain = ask.title(subject), ask.explain(subject, ctx)
    if ask.kind == "confirm":
        modal = ConfirmModal(title, explain, shown, confirm=ask.confirm, variant=ask.variant)
        return modal, lambda ok: {} if ok else None
    fields = ask.fields(subject)
    form = FormModal(title, explain, fields, shown, confirm=ask.confirm, variant=ask.variant)
    return form, lambda values: values


def ask_then(app: App[Any], spec: ActionSpec, subject: Any, ctx: Context, then: Then) -> None:
    """Ask what `spec` needs to know (or nothing), then call `then` with the answer."""
    if spec.ask is None:
        then({})
        return
    modal, answer = build_dialog(spec, subject, ctx)
    app.clear_notifications()  # a "Done" toast must not sit on the dialog's buttons

    def done(result: Any) -> None:
        values = answer(result)
        if values is not None:
            then(values)

    app.push_screen(modal, done)
