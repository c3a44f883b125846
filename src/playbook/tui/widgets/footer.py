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
from typing import Any

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

    _composed: Hashable = None  # the keys the footer shows now (`_signature`)
    _states: Hashable = None  # whether each is enabled, and its tooltip (`_signature`)
    _queued: Hashable = None  # the keys of a recompose asked for and not yet run

    def bindings_changed(self, screen: Screen[Any]) -> None:
        """Textual recomposes the footer (every key a new widget) whenever any binding
        may have changed: on every cursor move, every snapshot, every focus change. Most
        of those change nothing the footer shows; recompose only when its keys change, and
        when only which of them apply changed (time travel dims every write), restyle the
        keys in place (a recompose costs a tenth of a second at 160 columns)."""
        if screen is not screen.app.screen:
            # Covered by another screen (a modal): its keys apply there, not here. Textual
            # refreshes these bindings when this screen is back on top; compare then.
            return
        keys = None
        if self._bindings_ready and self._composed is not None:
            keys, states = self._signature(screen)
            if keys == self._queued:
                return  # the recompose asked for reads the bindings as they are then
            if keys == self._composed:
                if self.is_attached and screen is self.screen:
                    self._restate(screen, states)
                return
        super().bindings_changed(screen)
        if screen.app.app_focus and self.is_attached and screen is self.screen:
            self._queued = keys  # what Textual asked for just now (its own conditions)

    async def recompose(self) -> None:
        """Rebuild the keys, unless they came back to what is shown before the rebuild
        asked for ran (a write in flight hides keys for a moment, then shows them again)."""
        if self._composed is not None and self.is_attached:
            keys, states = self._signature(self.screen)
            if keys == self._composed:
                self._queued = None
                self._restate(self.screen, states)
                return
        await super().recompose()

    def _signature(self, screen: Screen[Any]) -> tuple[Hashable, Hashable]:
        """What the footer's keys are drawn from: the width and each shown key; and apart,
        whether each applies here and its tooltip."""
        found = list(screen.active_bindings.values())
        keys = tuple((b.key, b.action, b.description, b.show) for _, b, _, _ in found)
        states = tuple((enabled, tooltip) for _, _, enabled, tooltip in found)
        return (self.app.size.width, keys), states

    def _restate(self, screen: Screen[Any], states: Hashable) -> None:
        """Dim or light each key as `Footer.compose` would have built it, unless `states`
        (`_signature`) is what the keys show already."""
        if states == self._states:
            return
        self._states = states
        first: dict[str, tuple[bool, str]] = {}
        for _, binding, enabled, tooltip in screen.active_bindings.values():
            if binding.show:
                first.setdefault(binding.action, (enabled, tooltip))
        for key in self.query(FooterKey):
            if key.has_class("-command-palette") or key.action not in first:
                continue
            enabled, tooltip = first[key.action]
            key._disabled = not enabled  # what Textual's FooterKey reads when clicked
            key.set_class(not enabled, "-disabled")
            key.tooltip = tooltip or None

    def compose(self) -> ComposeResult:
        if self._bindings_ready:
            self._composed, self._states = self._signature(self.screen)
            self._queued = None
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
