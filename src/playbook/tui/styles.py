"""The named text styles (`format.py`'s names, styled in `text.tcss`) handed to the
console as the theme in use draws them: a `Text(style=fmt.MUTED)` anywhere in the
workbench is then drawn in `$pb-muted`, and drawn again after a change of theme."""

from __future__ import annotations

from textual.app import App

from . import format as fmt
from .widgets.table import RowTable


class TextStyles:
    """Given the app (its component styles, its console and its screens)."""

    def __init__(self, app: App[None]) -> None:
        self.app = app
        self._pushed = False

    def push(self) -> None:
        """Give the console the named styles as the theme in use draws them."""
        app = self.app
        styles = fmt.rich_theme(lambda name: app.get_component_styles(name).partial_rich_style)
        if self._pushed:
            app.console.pop_theme()
        app.console.push_theme(styles)
        self._pushed = True

    def theme_changed(self, _theme: object) -> None:
        """Another theme (ctrl+p, "Change theme"): once its CSS is applied, the named
        styles again, and every table drawn again with them."""
        self.app.call_after_refresh(self._restyle)

    def _restyle(self) -> None:
        self.push()
        for screen in self.app.screen_stack:
            for table in screen.query(RowTable):
                table.refresh_rows()
            screen.refresh(repaint=True)
