"""A new pane is its class and one line in `PANES`: the workbench composes it, binds the
next number key to it, labels its tab from the snapshot, offers "Go to" it in the palette
and gives it a help section, with nothing else edited (issue 28)."""

from __future__ import annotations

from pathlib import Path
from typing import Any, ClassVar

from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.widgets import HelpPanel, Static, TabbedContent

from playbook.tui.actions.spec import Context
from playbook.tui.panes import registry
from playbook.tui.panes.base import Pane
from playbook.tui.reading import Snapshot
from playbook.tui.screens.help import HelpScreen

from .helpers import store_at
from .helpers.tui import async_test, build_playbook, loaded, make_app, screen_text, wait_for


class TagsList(Static, can_focus=True):
    pass


class TagsPane(Pane):
    """A throwaway pane: the first words (verbs) of the live rules, called tags here."""

    TAB = "tags"
    TITLE = "Tags"
    FOCUS = "#tags-list"
    HELP_SECTION = ("Tags", "The word each live rule starts with.")
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("s", "shout", "Shout", tooltip="Say the number of tags")
    ]

    def compose(self) -> ComposeResult:
        yield TagsList("no tags yet", id="tags-list")

    def prepare(self, snap: Snapshot) -> Any:
        return sorted({r.content.split()[0] for r in snap.rows if r.state != "retired"})

    def apply(self, snap: Snapshot, context: Context, prepared: Any) -> None:
        super().apply(snap, context, prepared)
        self.tags = prepared
        self.query_one("#tags-list", Static).update("tags: " + ", ".join(prepared))

    def count(self, snap: Snapshot) -> int:
        return len(self.prepare(snap))

    def action_shout(self) -> None:
        self.notify(f"{len(self.tags)} tags")


@async_test
async def test_a_pane_registered_in_panes_is_composed_bound_labelled_and_offered(
    tmp_path: Path, monkeypatch
) -> None:
    monkeypatch.setattr(registry, "PANES", (*registry.PANES, TagsPane))
    path = tmp_path / "state.sqlite3"
    build_playbook(path)
    store = store_at(path)
    tags = sorted({b.content.split()[0] for b in store.bullets()})  # live rules' verbs
    store.close()
    assert len(tags) > 1
    app = make_app(path)
    async with app.run_test(size=(120, 36)) as pilot:
        await loaded(pilot, app)
        tabs = app.query_one(TabbedContent)
        assert str(tabs.get_tab("tags").label) == f"Tags {len(tags)}"  # from the snapshot
        pane = app.query_one(TagsPane)
        assert pane.tags == tags

        await pilot.press("6")  # the next number after the five tabs
        assert tabs.active == "tags"
        assert app.focused is app.query_one("#tags-list")
        await wait_for(pilot, lambda: f"tags: {tags[0]}, {tags[1]}" in screen_text(app))

        offered = {c.name: c for c in app.palette_commands()}
        assert offered["Go to Tags"].help == "Tab 6"
        await pilot.press("1")
        assert tabs.active == "bullets"
        offered["Go to Tags"].run()
        await pilot.pause()
        assert tabs.active == "tags"

        await pilot.press("question_mark")
        assert isinstance(app.screen, HelpScreen)
        sections = {s.title: s for s in app.screen.sections}
        assert sections["Tags"].note == "The word each live rule starts with."
        assert dict(sections["Tags"].keys)["s"] == "Say the number of tags"


@async_test
async def test_the_five_tabs_come_from_panes_in_order(tmp_path: Path) -> None:
    path = tmp_path / "state.sqlite3"
    build_playbook(path)
    app = make_app(path)
    async with app.run_test(size=(120, 36)) as pilot:
        await loaded(pilot, app)
        shown = [str(t.label).split(" ")[0] for t in app.query_one(TabbedContent).query("Tab")]
        assert shown == ["Bullets", "Detail", "Proposals", "Conflicts", "Blocked"]
        for key, tab in zip(
            "54321", ["blocked", "conflicts", "proposals", "detail", "bullets"], strict=True
        ):
            await pilot.press(key)
            assert app.query_one(TabbedContent).active == tab


@async_test
async def test_textual_help_panel_opens_over_every_tab(tmp_path: Path) -> None:
    """ctrl+p "Keys" opens Textual's help panel, which shows the `HELP` (Markdown) of the
    focused widget or its nearest ancestor with one. A pane's help-screen section once sat
    in that name, a tuple, and the panel crashed the workbench on it."""
    path = tmp_path / "state.sqlite3"
    build_playbook(path)
    app = make_app(path)
    async with app.run_test(size=(120, 36)) as pilot:
        await loaded(pilot, app)
        for key, pane in zip("12345", registry.PANES, strict=True):
            await pilot.press(key)
            assert app.focused is not None and app.query_one(f"#{pane.TAB}-pane") in (
                app.focused.ancestors_with_self
            )
            app.action_show_help_panel()
            await pilot.pause()
            assert len(app.screen.query(HelpPanel)) == 1
            app.action_hide_help_panel()
            await pilot.pause()
