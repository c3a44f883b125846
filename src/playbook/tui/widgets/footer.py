"""The footer: the focused pane's keys on the left; how to get help and how to leave always
on the right, so a narrow terminal cuts the pane's last keys, never those.

Textual's footer lists the focused widget's bindings first and the app's last, so at 80
columns `? Help` and `q Quit` fell off the end. Here the app-level keys named in `PINNED`
are pulled out of the flow and docked right beside the palette key; pane keys that would
not fit whole are left out (the help screen lists them all), and below 120 columns the
footer goes compact (no padding around keys).
"""

from __future__ import annotations

from collections.abc import Hashable

from textual.app import ComposeResult
from textual.containers import HorizontalGroup
from textual.screen import Screen
from textual.widget import Widget
from textual.widgets import Footer
from textual.widgets._footer import FooterKey

PINNED = ("help", "leave")  # actions kept visible at any width, in this order
COMPACT_BELOW = 120


class WorkbenchFooter(Footer):
    DEFAULT_CSS = """
    WorkbenchFooter .footer-pinned {
        dock: right;
        width: auto;
        height: 1;
        background: $footer-background;
        padding: 0 0 0 1;
    }
    WorkbenchFooter .footer-pinned FooterKey { margin: 0 1 0 0; }
    WorkbenchFooter .footer-pinned FooterKey.-command-palette {
        dock: none;
        border-left: none;
        padding: 0;
    }
    """

    _composed: Hashable = None  # what the footer shows now (`_signature`)

    def bindings_changed(self, screen: Screen) -> None:
        """Textual recomposes the footer (every key a new widget) whenever any binding
        may have changed: on every cursor move, every snapshot, every focus change. Most
        of those change nothing the footer shows; recompose only when something does."""
        if self._bindings_ready and self._signature(screen) == self._composed:
            return
        super().bindings_changed(screen)

    def _signature(self, screen: Screen) -> Hashable:
        """Everything the footer's keys are drawn from: the width, and each shown key."""
        keys = tuple(
            (binding.key, binding.action, binding.description, enabled, tooltip, binding.show)
            for _, binding, enabled, tooltip in screen.active_bindings.values()
        )
        return (self.app.size.width, keys)

    def compose(self) -> ComposeResult:
        if self._bindings_ready:
            self._composed = self._signature(self.screen)
        # The footer spans the screen; the app's width is known even before the first
        # layout. (It recomposes whenever the bindings change, and the app refreshes the
        # bindings when the terminal is resized.)
        width = self.app.size.width
        self.compact = width < COMPACT_BELOW
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
        room = width - sum(self._width(k) for k in (*pinned.values(), palette) if k)
        for widget in flowing:
            if isinstance(widget, FooterKey):
                room -= self._width(widget)
                if room < 2:
                    break  # no key cut in half: the rest are in the help screen
            yield widget
        if pinned or palette:
            # A class, not an id: Textual may start a second recompose (bindings changed
            # again) before the first has mounted, and two ids would collide.
            with HorizontalGroup(classes="footer-pinned"):
                for action in PINNED:
                    if action in pinned:
                        yield pinned[action]
                if palette is not None:
                    yield palette

    def _width(self, key: FooterKey) -> int:
        """Cells a key takes in the footer (its padding and margin included)."""
        return len(key.key_display) + len(key.description) + (2 if self.compact else 4)
