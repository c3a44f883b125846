"""The footer: the focused pane's keys on the left; how to get help and how to leave always
on the right, so a narrow terminal cuts the pane's last keys, never those.

Textual's footer lists the focused widget's bindings first and the app's last, so at 80
columns `? Help` and `q Quit` fell off the end. Here the app-level keys named in `PINNED`
are pulled out of the flow and docked right beside the palette key, and below 120 columns
the footer goes compact (no padding around keys).
"""

from __future__ import annotations

from textual import events
from textual.app import ComposeResult
from textual.containers import HorizontalGroup
from textual.widget import Widget
from textual.widgets import Footer
from textual.widgets._footer import FooterKey

PINNED = ("help", "leave")  # actions kept visible at any width, in this order
COMPACT_BELOW = 120


class WorkbenchFooter(Footer):
    DEFAULT_CSS = """
    WorkbenchFooter #footer-pinned {
        dock: right;
        width: auto;
        height: 1;
        background: $footer-background;
        padding: 0 0 0 1;
    }
    WorkbenchFooter #footer-pinned FooterKey { margin: 0 1 0 0; }
    WorkbenchFooter #footer-pinned FooterKey.-command-palette {
        dock: none;
        border-left: none;
        padding: 0;
    }
    """

    def compose(self) -> ComposeResult:
        flowing: list[Widget] = []
        pinned: dict[str, FooterKey] = {}
        palette: FooterKey | None = None
        for widget in super().compose():
            if isinstance(widget, FooterKey) and widget.has_class("-command-palette"):
                palette = widget
            elif isinstance(widget, FooterKey) and widget.action in PINNED:
                pinned[widget.action] = widget
            else:
                flowing.append(widget)
        yield from flowing
        if pinned or palette:
            with HorizontalGroup(id="footer-pinned"):
                for action in PINNED:
                    if action in pinned:
                        yield pinned[action]
                if palette is not None:
                    yield palette

    def on_resize(self, event: events.Resize) -> None:
        self.compact = event.size.width < COMPACT_BELOW
