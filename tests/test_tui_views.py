"""The workbench as seen on screen: live refresh, untrusted content, filter, palette, help."""

from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
from textual.command import CommandList, CommandPalette
from textual.widgets import Input, Static

from playbook import curate
from playbook.tui.panes.detail import DetailPane
from playbook.tui.screens.help import HelpScreen
from playbook.tui.screens.modals import FormModal

from .helpers import store_at
from .helpers.tui import (
    SIZE,
    SIZES,
    async_test,
    build_playbook,
    loaded,
    make_app,
    press_to_quit,
    screen_text,
    wait_for,
)

HOSTILE = (
    "[bold red]x[/] [link=https://evil.example]click[/link] \x1b[31mred\x1b[0m "
    "\x1b]0;pwned\x07 \u202eevil"
)


@async_test
async def test_rows_written_by_another_process_appear(tmp_path: Path) -> None:
    path = tmp_path / "state.sqlite3"
    build_playbook(path)
    app = make_app(path)
    script = textwrap.dedent(
        f"""
        from playbook import curate
        from playbook.store import open_store
        store = open_store({str(path)!r})
        r = curate(store, [{{"type": "add", "content": "Written by another process entirely"}}])
        print(r.added[0])
        """
    )
    async with app.run_test(size=SIZE) as pilot:
        await loaded(pilot, app)
        table = app.bullets_pane.table
        cursor_before = table.cursor_key
        loads = app.loads
        out = subprocess.run(
            [sys.executable, "-c", script], capture_output=True, text=True, check=True
        )
        new_id = out.stdout.strip()
        await wait_for(pilot, lambda: new_id in table.rows, timeout=5)
        assert app.loads > loads
        assert new_id in table.order
        assert table.cursor_key == cursor_before  # the diff kept the cursor on its row
        assert "Bullets 6" in str(app.query_one("#tabs").get_tab("bullets").label)


@async_test
async def test_markup_and_escapes_in_content_are_shown_as_text(tmp_path: Path) -> None:
    path = tmp_path / "state.sqlite3"
    info = build_playbook(path)
    store = store_at(path)
    bid = curate(store, [{"type": "add", "content": HOSTILE, "tags": ["[b]tag[/b]"]}]).added[0]
    curate(store, [{"type": "helpful", "bullet_id": bid, "context": "[red]ctx[/] \x1b[2J"}])
    store.block("[blink]pattern[/blink] \x1b]8;;x\x07", "[i]why[/i]")
    app = make_app(path)
    async with app.run_test(size=(200, 40)) as pilot:
        await loaded(pilot, app)
        app.bullets_pane.table.move_to(bid)
        await pilot.pause()
        screen = screen_text(app)
        assert "[bold red]x[/] [link=https://evil.example]click[/link]" in screen
        assert "\\x1b[31mred\\x1b[0m" in screen
        assert "\\x1b]0;pwned\\x07" in screen
        assert "\\u202eevil" in screen
        assert "\x1b" not in screen and "\u202e" not in screen

        app.open_bullet(bid)
        await wait_for(pilot, lambda: app.query_one(DetailPane).detail is not None)
        await pilot.pause()
        content = str(app.query_one("#d-content", Static).content)
        assert "[bold red]x[/]" in content and "\\x1b[31m" in content
        screen = screen_text(app)
        assert "[red]ctx[/] \\x1b[2J" in screen
        assert "#[b]tag[/b]" in screen

        await pilot.press("5")
        await pilot.pause()
        screen = screen_text(app)
        assert "[blink]pattern[/blink] \\x1b]8;;x\\x07" in screen
        assert "[i]why[/i]" in screen

        await pilot.press("1")
        await pilot.press("d")  # the modal shows the content inert too
        await wait_for(pilot, lambda: isinstance(app.screen, FormModal))
        screen = screen_text(app)
        assert "[bold red]x[/]" in screen and "\\x1b]0;pwned\\x07" in screen
        await pilot.press("escape")
        assert app.is_running
    assert info["ids"]


@async_test
async def test_filter_ranks_like_recall_and_is_words_narrow(tmp_path: Path) -> None:
    path = tmp_path / "state.sqlite3"
    info = build_playbook(path)
    store = store_at(path)
    store.pin(info["ids"][1], "policy")
    app = make_app(path)
    async with app.run_test(size=SIZE) as pilot:
        await loaded(pilot, app)
        pane = app.bullets_pane
        await pilot.press("slash")
        assert isinstance(app.focused, Input)
        for key in "test":
            await pilot.press(key)
        await wait_for(pilot, lambda: pane.view.relevance is not None)
        await pilot.pause()
        shown = list(pane.table.order)
        # "test" is a token of two rules; the one with help ranks first (relevance x score)
        assert shown[:2] == [info["ids"][0], info["ids"][3]]
        assert info["ids"][1] not in shown
        app.query_one("#filter", Input).value = "is:pinned"
        await wait_for(pilot, lambda: list(pane.table.order) == [info["ids"][1]])
        await pilot.press("escape")
        await wait_for(pilot, lambda: len(pane.table.order) == 5)


@pytest.mark.parametrize("size", SIZES)
@async_test
async def test_sort_by_header_click_and_key(tmp_path: Path, size: tuple[int, int]) -> None:
    path = tmp_path / "state.sqlite3"
    info = build_playbook(path)
    app = make_app(path)
    async with app.run_test(size=size) as pilot:
        await loaded(pilot, app)
        pane = app.bullets_pane
        assert pane.table.order[0] == info["ids"][0]  # the only one with help: best score
        await pilot.press("s")  # next column: maturity
        assert pane.view.sort_column == "maturity"
        await pilot.press("S")
        assert pane.view.sort_reverse
        await pilot.click("#bullets-table", offset=(3, 0))  # the id header
        assert pane.view.sort_column == "id"
        assert list(pane.table.order) == sorted(pane.table.order)


@pytest.mark.parametrize("size", SIZES)
@async_test
async def test_palette_jumps_to_a_bullet_by_id(tmp_path: Path, size: tuple[int, int]) -> None:
    path = tmp_path / "state.sqlite3"
    info = build_playbook(path)
    target = info["ids"][2]
    app = make_app(path)
    async with app.run_test(size=size) as pilot:
        await loaded(pilot, app)
        await pilot.press("ctrl+p")
        await wait_for(pilot, lambda: isinstance(app.screen, CommandPalette))
        for key in target[:6]:
            await pilot.press(key)
        hits = app.screen.query_one(CommandList)

        def jump_highlighted() -> bool:
            # The search runs in the background: Enter before its hits show does nothing.
            if hits.highlighted is None:
                return False
            return target in str(hits.get_option_at_index(hits.highlighted).prompt)

        await wait_for(pilot, jump_highlighted)
        await pilot.press("enter")
        await wait_for(pilot, lambda: app.query_one(DetailPane).detail is not None)
        assert app.query_one(DetailPane).detail.bullet.id == target
        assert app.query_one("#tabs").active == "detail"


@pytest.mark.parametrize("size", SIZES)
@async_test
async def test_help_screen_and_quit(tmp_path: Path, size: tuple[int, int]) -> None:
    path = tmp_path / "state.sqlite3"
    build_playbook(path)
    app = make_app(path)
    async with app.run_test(size=size) as pilot:
        await loaded(pilot, app)
        await pilot.press("question_mark")
        assert isinstance(app.screen, HelpScreen)
        await pilot.press("escape")
        assert not isinstance(app.screen, HelpScreen)
        await press_to_quit(app, "ctrl+q")
    assert app.return_code == 0


@pytest.mark.parametrize("size", SIZES)
@async_test
async def test_detail_shows_history_lineage_and_the_diary_passage(
    tmp_path: Path, size: tuple[int, int]
) -> None:
    path = tmp_path / "state.sqlite3"
    diary = tmp_path / "session.md"
    diary.write_text("# Session\n\nIntro.\n\nRULE: Keep one source of truth for config\n")
    store = store_at(path)
    offset = diary.read_bytes().index(b"RULE")
    prov = {"session_ref": str(diary), "byte_offset": offset}
    bid = curate(
        store, [{"type": "add", "content": "Keep one source of truth for config"}], provenance=prov
    ).added[0]
    curate(store, [{"type": "helpful", "bullet_id": bid}])
    new = curate(
        store,
        [
            {
                "type": "replace",
                "bullet_id": bid,
                "content": "Keep a single source of truth for configuration",
            }
        ],
    )
    successor = new.outcomes[0].bullet_id
    app = make_app(path)
    async with app.run_test(size=size) as pilot:
        await loaded(pilot, app)
        app.open_bullet(successor)
        await wait_for(pilot, lambda: app.query_one(DetailPane).detail is not None)
        await pilot.pause()
        detail = app.query_one(DetailPane).detail
        assert [b.id for _, b in detail.predecessors] == [bid]
        assert detail.score.helpful > 0.9  # evidence follows lineage
        lineage = str(app.query_one("#d-lineage", Static).content)
        assert f"supersedes {bid}" in lineage
        app.open_bullet(bid)
        await wait_for(pilot, lambda: getattr(app.query_one(DetailPane).detail, "bullet", None))
        assert app.query_one(DetailPane).detail.bullet.id == bid
        await pilot.pause()
        passage = str(app.query_one("#d-passage", Static).content)
        assert f"@ byte {offset}" in passage
        assert "RULE: Keep one source of truth for config" in passage
        assert f"superseded by {successor}" in str(app.query_one("#d-lineage", Static).content)


@async_test
async def test_tab_reaches_both_columns_of_detail(tmp_path: Path) -> None:
    """Keyboard alone: in Detail, tab goes round the tab bar, the left column (the content,
    facts and lineage, which scroll) and the feedback events, as in every other tab. (A
    method named `loading` once hid Textual's `Widget.loading`: always true, it kept the
    whole pane out of the focus chain, and tab reached only the tab bar.)"""
    path = tmp_path / "state.sqlite3"
    build_playbook(path)
    app = make_app(path)
    async with app.run_test(size=SIZE) as pilot:
        await loaded(pilot, app)
        await pilot.press("enter")
        await wait_for(pilot, lambda: app.query_one(DetailPane).detail is not None)
        assert app.focused is app.query_one("#d-timeline")
        reached = []
        for _ in range(3):
            await pilot.press("tab")
            reached.append(app.focused.id if app.focused else None)
        assert {"detail-left", "d-timeline"} <= set(reached)


@async_test
async def test_footer_offers_what_applies_to_the_row(tmp_path: Path) -> None:
    path = tmp_path / "state.sqlite3"
    info = build_playbook(path)
    store_at(path).pin(info["ids"][1], "policy")
    app = make_app(path)
    async with app.run_test(size=SIZE) as pilot:
        await loaded(pilot, app)
        pane = app.bullets_pane

        def shown() -> set[str]:
            return {b.binding.action for b in app.screen.active_bindings.values()}

        pane.table.move_to(info["ids"][1])
        await pilot.pause()
        assert pane.check_action("unpin", ()) and not pane.check_action("pin", ())
        assert "unpin" in shown()
        pane.table.move_to(info["ids"][0])
        await pilot.pause()
        assert pane.check_action("pin", ()) and not pane.check_action("unpin", ())
        assert pane.check_action("restore", ()) is False


@async_test
async def test_idle_polls_reload_nothing_and_a_write_reloads_once(tmp_path: Path) -> None:
    path = tmp_path / "state.sqlite3"
    info = build_playbook(path)
    app = make_app(path)  # polls every 0.1 s
    async with app.run_test(size=SIZE) as pilot:
        await loaded(pilot, app)
        await pilot.pause(1.0)
        assert app.loads == 1  # ten idle polls: data_version unchanged, nothing read
        curate(store_at(path), [{"type": "helpful", "bullet_id": info["ids"][2]}])
        await wait_for(pilot, lambda: app.loads == 2)
        await pilot.pause(0.5)
        assert app.loads == 2
        assert app.row(info["ids"][2]).helpful > 0.9


@async_test
async def test_help_and_palette_hints_follow_the_live_bindings(tmp_path: Path) -> None:
    path = tmp_path / "state.sqlite3"
    build_playbook(path)
    app = make_app(path)
    async with app.run_test(size=SIZE) as pilot:
        await loaded(pilot, app)
        app.update_keymap({"approve": "A", "pin": "P"})  # a user's keymap, by binding id
        await pilot.press("question_mark")
        assert isinstance(app.screen, HelpScreen)
        keys = {s.title: dict(s.keys) for s in app.screen.sections}
        assert keys["Proposals"]["A"] == "Curate it, with its recorded provenance"
        assert keys["Bullets and Detail"]["P"] == "Pin: its maturity never moves"
        assert "a" not in keys["Proposals"]
        await pilot.press("escape")
        hints = {c.name.split(" d-")[0]: c.help for c in app.palette_commands()}
        assert hints["Approve proposal"].endswith("(A)")
