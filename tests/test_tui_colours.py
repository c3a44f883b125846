"""Colours live in text.tcss as theme variables, none in the workbench's Python (issue 28):
the palette itself (`theme.py`) is the one Python file with colour codes, and every style
the panes name is drawn in the colour the theme in use gives it."""

from __future__ import annotations

import re
from pathlib import Path

from rich.color import Color

from playbook.tui import format as fmt
from playbook.tui.theme import PLAYBOOK_THEME

from .helpers.tui import async_test, build_playbook, loaded, make_app

TUI = Path(__file__).resolve().parents[1] / "src" / "playbook" / "tui"
HEX = re.compile(r"#[0-9a-fA-F]{6}")


def test_no_colour_code_in_the_workbench_python_but_the_theme() -> None:
    found = [
        f"{path.relative_to(TUI)}:{n}: {line.strip()}"
        for path in sorted(TUI.rglob("*.py"))
        if path.name != "theme.py"
        for n, line in enumerate(path.read_text().splitlines(), 1)
        if HEX.search(line)
    ]
    assert found == []
    assert HEX.search((TUI / "theme.py").read_text())  # the check would see one


@async_test
async def test_every_named_style_takes_the_theme_colour(tmp_path: Path) -> None:
    path = tmp_path / "state.sqlite3"
    build_playbook(path)
    app = make_app(path)
    async with app.run_test(size=(120, 36)) as pilot:
        await loaded(pilot, app)
        get = app.console.get_style
        unstyled = [name for name in fmt.STYLE_NAMES if get(name).color is None]
        assert unstyled == []  # each has its rule in text.tcss

        def colour(name: str) -> str:
            return get(name).color.get_truecolor().hex

        variables = app.theme_variables
        assert colour(fmt.ID) == variables["primary"].lower() == PLAYBOOK_THEME.primary
        proven = get(fmt.MATURITY_STYLE["proven"])
        assert proven.bold and colour(fmt.MATURITY_STYLE["proven"]) == variables["success"].lower()
        assert colour(fmt.STALE) == PLAYBOOK_THEME.variables["pb-orange"]
        assert colour(fmt.MUTED) == PLAYBOOK_THEME.variables["pb-muted"]
        deleted, inserted = get(fmt.DIFF_DELETED), get(fmt.DIFF_INSERTED)
        assert deleted.strike and not deleted.underline  # a word diff: what goes
        assert inserted.underline and inserted.bold and not inserted.strike  # what comes

        # Another theme: the named styles follow it.
        app.theme = "textual-light"
        await pilot.pause()
        await pilot.pause()
        assert colour(fmt.ID) == app.theme_variables["primary"].lower() != PLAYBOOK_THEME.primary
        assert Color.parse(app.theme_variables["pb-orange"])  # defined for every theme
