"""The top bar's label: where the playbook is, and a note, in the room the bar leaves.

At 80 columns a demo's path and its note ("deleted on exit; --keep keeps it") do not both
fit beside the brand and the live clock. Cut at the end, the bar read "(del…". Here the
note gives way first, whole; then the middle of the location, so its start and its file
name stay readable.
"""

from __future__ import annotations

from rich.cells import cell_len
from rich.text import Text
from textual.widget import Widget

from .. import format as fmt


def fit_label(label: str, note: str | None, width: int) -> tuple[str, str]:
    """(label, note) as shown in `width` cells: both, the label alone, or the label with
    an ellipsis in its middle."""
    if note and cell_len(label) + 2 + cell_len(note) + 2 <= width:
        return label, note
    if cell_len(label) <= width:
        return label, ""
    if width < 2:
        return "", ""
    name = len(label) - max(label.rfind("/"), label.rfind(" "))  # the file name, its "/"
    tail = min(width - 1, max((width - 1) * 2 // 3, name))  # the file name whole if it fits
    head = width - 1 - tail
    return label[:head] + "…" + label[len(label) - tail :], ""


class TopLabel(Widget):
    """The playbook's location and a note (both shown inert), fitted to the bar."""

    DEFAULT_CSS = """
    TopLabel { width: 1fr; height: 1; padding: 0 1; color: $text-muted; }
    """

    def __init__(self, label: str, note: str | None = None, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self.label = fmt.untrusted(label, one_line=True).plain
        self.note = fmt.untrusted(note, one_line=True).plain if note else None

    def render(self) -> Text:
        label, note = fit_label(self.label, self.note, self.content_size.width)
        text = Text(label)
        if note:
            text.append(f"  ({note})", style="italic")
        return text
