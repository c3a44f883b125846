"""The workbench at 80x24 and at 160x48: what shows, where the cursor goes, what keys do.

Each test drives the real app with keys (Pilot) on a small real playbook and reads the
screen as a terminal would show it (the SVG export as text lines).
"""

from __future__ import annotations

import re
from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest
from textual.widgets import Button, Input, Static, TabbedContent, TextArea
from textual.widgets._footer import FooterKey
from textual.widgets._toast import Toast

from playbook import curate
from playbook.tui.panes.blocked import BlockedPane
from playbook.tui.panes.bullets import COLUMNS
from playbook.tui.panes.detail import DetailPane
from playbook.tui.screens.modals import FormModal, HarmfulModal
from playbook.tui.widgets.footer import WorkbenchFooter

from .helpers import store_at
from .helpers.tui import (
    SIZES,
    after_write,
    async_test,
    build_playbook,
    loaded,
    make_app,
    press_to_quit,
    screen_lines,
    wait_for,
)

LONG = (
    "Read the whole CI log from the first failing step before retrying a job, "
    "and quote the first error in the pull request"
)


@pytest.fixture
def playbook(tmp_path: Path) -> tuple[Path, dict]:
    """build_playbook's rules, plus a long rule with the best score (selected first), a
    retired bullet (replaced) and two more blocked patterns."""
    path = tmp_path / "state.sqlite3"
    info = build_playbook(path)
    store = store_at(path)
    long_id = curate(store, [{"type": "add", "content": LONG}]).added[0]
    for _ in range(6):
        curate(store, [{"type": "helpful", "bullet_id": long_id}])
    old = info["ids"][3]
    new = curate(
        store,
        [{"type": "replace", "bullet_id": old, "content": "Write the failing test first"}],
        actor="human",
    )
    store.block("Skip the flaky test with a sleep", "hides the race")
    store.block("Retry the job until it passes", "wastes CI minutes")
    info.update(long_id=long_id, retired=old, successor=new.outcomes[0].bullet_id)
    return path, info


def _flat(app) -> str:
    """The screen's text with box borders and line breaks folded into single spaces."""
    text = re.sub(r"[│╭╮╰╯─▎▊▔▁]", " ", " ".join(screen_lines(app)))
    return " ".join(text.split())


def _header(app) -> list[str]:
    return next(line for line in screen_lines(app) if line.lstrip().startswith("id "))


@pytest.mark.parametrize("size", SIZES)
@async_test
async def test_every_tab_label_and_the_selected_rule_show_without_overlap(playbook, size) -> None:
    path, info = playbook
    app = make_app(path)
    async with app.run_test(size=size) as pilot:
        await loaded(pilot, app)
        await pilot.pause()
        assert app.bullets_pane.current_bullet_id() == info["long_id"]
        tabs = next(line for line in screen_lines(app) if "Bullets" in line)
        for label in ("Bullets 6", "Detail", "Proposals 2", "Conflicts 1", "Blocked 3"):
            assert label in tabs, (label, tabs)
        assert LONG in _flat(app)  # the selected rule's whole text, in the peek
        labels = {c.label for c in COLUMNS}
        words = _header(app).replace("▼", " ").replace("▲", " ").split()
        assert set(words) <= labels  # whole labels only: no "h" or "reaso"
        assert {"content", "score", "maturity", "id", "trend"} <= set(words)


@pytest.mark.parametrize("size", SIZES)
@async_test
async def test_other_tables_show_whole_column_labels(playbook, size) -> None:
    path, _ = playbook
    app = make_app(path)
    async with app.run_test(size=size) as pilot:
        await loaded(pilot, app)
        for key, expect in (
            ("3", {"proposal"}),
            ("4", {"left", "right", "the rule in question"}),
            ("5", {"pattern", "reason"}),
        ):
            await pilot.press(key)
            await pilot.pause()
            header = next(line for line in screen_lines(app) if any(e in line for e in expect))
            for label in expect:
                assert re.search(rf"(^|\s){re.escape(label)}(\s|$)", header), (label, header)


@pytest.mark.parametrize("size", SIZES)
@async_test
async def test_sort_moves_the_cursor_to_the_first_row(playbook, size) -> None:
    path, _ = playbook
    app = make_app(path)
    async with app.run_test(size=size) as pilot:
        await loaded(pilot, app)
        table = app.bullets_pane.table
        await pilot.press("down", "down", "down")
        assert table.cursor_row == 3
        await pilot.press("s")  # by maturity
        assert app.bullets_pane.view.sort_column == "maturity"
        assert table.cursor_row == 0 and table.cursor_key == table.order[0]
        await pilot.press("down", "S")  # reversed: again the top of the new order
        assert table.cursor_row == 0 and table.cursor_key == table.order[0]


@pytest.mark.parametrize("size", SIZES)
@pytest.mark.parametrize("tab", ["1", "3", "4", "5"])
@async_test
async def test_q_quits_from_any_table(playbook, size, tab) -> None:
    path, _ = playbook
    app = make_app(path)
    async with app.run_test(size=size) as pilot:
        await loaded(pilot, app)
        await pilot.press(tab)
        await press_to_quit(app, "q")
        assert not app.is_running
    assert app.return_code == 0


@pytest.mark.parametrize("size", SIZES)
@async_test
async def test_q_types_in_the_filter_instead_of_quitting(playbook, size) -> None:
    path, _ = playbook
    app = make_app(path)
    async with app.run_test(size=size) as pilot:
        await loaded(pilot, app)
        await pilot.press("slash", "q")
        await pilot.pause()
        assert app.is_running
        assert app.query_one("#filter", Input).value == "q"


@pytest.mark.parametrize("size", SIZES)
@async_test
async def test_a_dimmed_key_pressed_says_why_in_one_line(playbook, size) -> None:
    path, info = playbook
    app = make_app(path)
    async with app.run_test(size=size) as pilot:
        await loaded(pilot, app)
        app.set_filter("is:retired")
        await wait_for(pilot, lambda: list(app.bullets_pane.table.order) == [info["retired"]])
        app.bullets_pane.table.focus()
        await pilot.pause()
        shown = app.screen.active_bindings
        assert shown["d"].enabled is False  # dimmed in the footer
        await pilot.press("d")
        await pilot.pause()
        said = [str(n.message) for n in app._notifications]
        assert said and f"{info['retired']} is retired" in said[-1]
        assert "\n" not in said[-1]
        assert not isinstance(app.screen, FormModal)  # nothing was asked


@pytest.mark.parametrize("size", SIZES)
@async_test
async def test_footer_shows_only_what_works_where_the_focus_is(playbook, size) -> None:
    path, _ = playbook
    app = make_app(path)
    async with app.run_test(size=size) as pilot:
        await loaded(pilot, app)

        def shown() -> set[str]:
            return {b.binding.action for b in app.screen.active_bindings.values()}

        assert {"helpful", "harmful", "cycle_sort"} <= shown()
        await pilot.press("slash")
        await pilot.pause()
        assert not {"helpful", "harmful", "cycle_sort", "pin", "deprecate"} & shown()
        # The footer redraws on its own message after the focus moves; wait for it (on a
        # busy machine one pause is not always enough), then read what it says.
        await wait_for(pilot, lambda: "Helpful" not in screen_lines(app)[-1])
        footer = screen_lines(app)[-1]
        assert "+" not in footer.split() and "Helpful" not in footer
        await pilot.press("escape")
        await wait_for(pilot, lambda: "cycle_sort" in shown())
        await pilot.pause()
        footer = screen_lines(app)[-1]
        assert "? Help" in footer and "q Quit" in footer  # never cut off, at any width
        assert "Helpful" in footer


def _count_footer_builds(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """A list that grows by one each time the footer is built."""
    built: list[int] = []
    compose = WorkbenchFooter.compose

    def counting(self: WorkbenchFooter) -> Any:
        built.append(1)
        return compose(self)

    monkeypatch.setattr(WorkbenchFooter, "compose", counting)
    return built


@async_test
async def test_the_footer_is_rebuilt_only_when_its_keys_change(
    playbook, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Textual rebuilds the footer (every key a new widget) whenever bindings may have
    changed: on each cursor move. Moving between rules that take the same keys must not."""
    path, _ = playbook
    built = _count_footer_builds(monkeypatch)
    app = make_app(path)
    async with app.run_test(size=(80, 24)) as pilot:
        await loaded(pilot, app)
        await pilot.pause(0.3)
        before = len(built)
        rows = [app.bullets_pane.current_bullet_id()]
        for _ in range(3):  # active, unpinned rules: the same keys apply to each
            await pilot.press("down")
            await pilot.pause(0.1)
            rows.append(app.bullets_pane.current_bullet_id())
        assert len(set(rows)) == 4 and not any(app.row(r).pinned for r in rows)  # type: ignore[union-attr]
        assert len(built) == before
        await pilot.press("slash")  # the filter box takes other keys: rebuilt
        await wait_for(pilot, lambda: len(built) > before)
        assert "Helpful" not in screen_lines(app)[-1]


@async_test
async def test_a_form_over_the_workbench_leaves_its_footer_alone_and_a_write_rebuilds_once(
    playbook, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Under a form, the workbench's own keys do not apply (the form has the focus), but
    its footer stays as it was until the form is gone: rebuilding it there is work nobody
    sees. Blocking a pattern through the form then changes no key, so nothing is rebuilt,
    even though the bindings flicker while the write is in flight."""
    path, _ = playbook
    built = _count_footer_builds(monkeypatch)
    app = make_app(path)
    async with app.run_test(size=(80, 24)) as pilot:
        await loaded(pilot, app)
        await pilot.press("5")  # the Blocked tab; its table takes the focus
        blocked = app.query_one(BlockedPane)
        await wait_for(pilot, lambda: blocked in app.screen.focused.ancestors_with_self)
        await pilot.pause(0.3)
        before, footer = len(built), screen_lines(app)[-1]
        await pilot.press("n")
        await wait_for(pilot, lambda: isinstance(app.screen, FormModal))
        await pilot.press(*"Force push", "tab", *"shared", "escape")
        await wait_for(pilot, lambda: not isinstance(app.screen, FormModal))
        await pilot.pause(0.3)
        assert len(built) == before and screen_lines(app)[-1] == footer
        await pilot.press("n")
        await wait_for(pilot, lambda: isinstance(app.screen, FormModal))
        await pilot.press(*"Force push to main", "tab", *"main is shared", "enter")
        await after_write(pilot, app, lambda: len(app.snapshot.blocked) == 4)
        await pilot.pause(0.3)
        assert len(built) == before and screen_lines(app)[-1] == footer


@async_test
async def test_keys_that_stop_applying_are_dimmed_in_place_and_one_rebuild_per_change(
    playbook, monkeypatch: pytest.MonkeyPatch
) -> None:
    """From a live rule to a retired one the same keys show, some dimmed: the footer
    restyles them rather than rebuild (a tenth of a second at 160 columns). Into time
    travel the keys change (T appears): one rebuild, however many times Textual says the
    bindings changed before it runs."""
    path, info = playbook
    built = _count_footer_builds(monkeypatch)

    def pin_key(app: Any) -> Any:
        return next(k for k in app.query(FooterKey) if k.action == "pin")

    app = make_app(path)
    async with app.run_test(size=(160, 48)) as pilot:
        await loaded(pilot, app)
        app.set_filter("is:all")
        await wait_for(
            pilot, lambda: app.bullets_pane.table.row_count == len(app.snapshots.rows_by_id)
        )
        table = app.bullets_pane.table
        rows = [app.row(k) for k in table.order]
        live = next(r.id for r in rows if r.state != "retired" and r.maturity != "deprecated"
                    and not r.pinned)  # fmt: skip
        table.focus()
        table.move_to(live)
        await wait_for(pilot, lambda: not pin_key(app).has_class("-disabled"))
        await pilot.pause(0.3)
        before = len(built)
        table.move_to(info["retired"])
        await wait_for(pilot, lambda: pin_key(app).has_class("-disabled"))
        assert pin_key(app)._disabled and len(built) == before
        table.move_to(live)
        await wait_for(pilot, lambda: not pin_key(app).has_class("-disabled"))
        assert len(built) == before
        real_now = app.now()
        app.now = lambda: real_now + timedelta(days=30)  # a week back: every rule exists
        await pilot.press("less_than_sign")
        await wait_for(pilot, lambda: app.snapshot.as_of is not None)
        await pilot.pause(0.5)
        assert app.bullets_pane.current_bullet_id() == live
        assert len(built) == before + 1
        assert "T Now" in screen_lines(app)[-1] and pin_key(app).has_class("-disabled")
        # Textual says "bindings changed" at every idle moment before the rebuild runs:
        # the keys asked for are rebuilt once.
        footer = app.query_one(WorkbenchFooter)
        asked: list[Any] = []
        monkeypatch.setattr(footer, "call_after_refresh", lambda *a, **k: asked.append(a))
        app.set_focus(app.query_one("#filter"))
        for _ in range(3):
            footer.bindings_changed(app.screen)
        assert len(asked) == 1


@pytest.mark.parametrize("size", SIZES)
@async_test
async def test_detail_shows_a_loading_state_never_an_empty_pane(playbook, size) -> None:
    path, info = playbook
    app = make_app(path)
    async with app.run_test(size=size) as pilot:
        await loaded(pilot, app)
        app.open_bullet(info["long_id"])  # no await: what shows before the worker answers
        head = str(app.query_one("#d-head", Static).content)
        assert info["long_id"] in head and "reading its history" in head
        assert LONG in str(app.query_one("#d-content", Static).content)
        await wait_for(pilot, lambda: app.query_one(DetailPane).detail is not None)
        await pilot.pause()
        assert "reading its history" not in " ".join(screen_lines(app))


@pytest.mark.parametrize("size", SIZES)
@async_test
async def test_filter_counts_agree_with_the_rows_shown(playbook, size) -> None:
    path, info = playbook
    app = make_app(path)
    async with app.run_test(size=size) as pilot:
        await loaded(pilot, app)
        pane = app.bullets_pane

        def info_text() -> str:
            return str(app.query_one("#filter-info", Static).content)

        app.set_filter("is:retired")
        await wait_for(pilot, lambda: list(pane.table.order) == [info["retired"]])
        assert re.match(r"1( of |/)7", info_text())  # one of all seven, retired included
        app.set_filter("test")
        await wait_for(pilot, lambda: pane.view.relevance is not None)
        await pilot.pause()
        shown = len(pane.table.order)
        assert shown >= 2
        assert re.match(rf"{shown}( of |/)6", info_text())  # of the six live bullets


@pytest.mark.parametrize("size", SIZES)
@async_test
async def test_an_unknown_is_word_is_an_error_listing_the_known_ones(playbook, size) -> None:
    path, _ = playbook
    app = make_app(path)
    async with app.run_test(size=size) as pilot:
        await loaded(pilot, app)
        await pilot.press("slash")
        box = app.query_one("#filter", Input)
        await wait_for(pilot, lambda: app.focused is box)
        await pilot.press(*"is:bogus")
        assert box.value == "is:bogus"
        error = app.query_one("#filter-error", Static)
        await wait_for(pilot, lambda: error.display)
        text = str(error.content)
        assert "unknown is:bogus" in text
        for known in ("is:pinned", "is:stale", "is:retired", "is:anti"):
            assert known in text
        assert len(app.bullets_pane.table.order) == 6  # not searched for as a word
        await pilot.press(*["backspace"] * 8, *"is:pinned")
        await wait_for(pilot, lambda: not error.display)


@pytest.mark.parametrize("size", SIZES)
@async_test
async def test_mark_harmful_by_keyboard_buttons_shown_enter_on_a_reason(playbook, size) -> None:
    path, info = playbook
    bid = info["long_id"]
    app = make_app(path)
    async with app.run_test(size=size) as pilot:
        await loaded(pilot, app)
        await pilot.press("minus")
        await wait_for(pilot, lambda: isinstance(app.screen, HarmfulModal))
        await pilot.pause()
        confirm = app.screen.query_one("#confirm", Button)
        assert app.screen.find_widget(confirm).visible_region.area > 0  # on screen, whole
        assert confirm.region.bottom <= size[1]
        await pilot.press("down", "enter")  # "wasted time", then Enter submits
        await after_write(pilot, app, lambda: app.row(bid).harmful > 0.9)
    events = store_at(path).timeline(bid)
    assert (events[-1].kind, events[-1].reason, events[-1].actor) == (
        "harmful",
        "wasted_time",
        "human",
    )


def _overlaps(a, b) -> bool:
    return bool(a.intersection(b).area)


@pytest.mark.parametrize("size", SIZES)
@async_test
async def test_a_done_toast_never_covers_the_block_or_restore_buttons(playbook, size) -> None:
    path, info = playbook
    bid = info["ids"][0]
    app = make_app(path)
    async with app.run_test(size=size, notifications=True) as pilot:  # (off by default)
        await loaded(pilot, app)
        assert app.bullets_pane.table.move_to(bid)
        await pilot.press("plus")
        await after_write(pilot, app, lambda: any(n.title == "Done" for n in app._notifications))
        await pilot.press("b")  # while "Done" is still up
        await wait_for(pilot, lambda: isinstance(app.screen, FormModal))
        await pilot.pause(0.3)
        for button in app.screen.query(Button):
            for toast in app.screen.query(Toast):
                assert not _overlaps(button.region, toast.region)
        await pilot.press("escape")
        curate(store_at(path), [{"type": "deprecate", "bullet_id": bid, "reason": "x"}])
        await wait_for(pilot, lambda: app.row(bid).maturity == "deprecated")
        app.notify("Done: something else", title="Done", timeout=10)
        await pilot.press("r")
        await wait_for(pilot, lambda: isinstance(app.screen, FormModal))
        app.notify("Done: arrived while the dialog was open", title="Done", timeout=10)
        await pilot.pause(0.3)
        buttons = list(app.screen.query(Button))
        assert buttons
        for button in buttons:
            assert button.region.bottom <= size[1]
            for toast in app.screen.query(Toast):
                assert not _overlaps(button.region, toast.region)


@pytest.mark.parametrize("size", SIZES)
@async_test
async def test_enter_moves_to_the_next_field_and_submits_from_the_last(playbook, size) -> None:
    path, _ = playbook
    app = make_app(path)
    async with app.run_test(size=size) as pilot:
        await loaded(pilot, app)
        await pilot.press("5")  # the Blocked tab; its table takes the focus, then n
        blocked = app.query_one(BlockedPane)
        await wait_for(pilot, lambda: blocked in app.screen.focused.ancestors_with_self)
        await pilot.press("n")
        await wait_for(pilot, lambda: isinstance(app.screen, FormModal))
        await wait_for(pilot, lambda: app.screen.focused.id == "field-pattern")
        await pilot.press(*"Force push to main", "enter")
        await wait_for(pilot, lambda: app.screen.focused.id == "field-reason")
        assert isinstance(app.screen, FormModal)  # not submitted with an empty reason
        await pilot.press(*"main is shared", "enter")
        await after_write(pilot, app, lambda: len(app.snapshot.blocked) == 4)
    assert "Force push to main" in [b.pattern for b in store_at(path).blocked()]


@pytest.mark.parametrize("size", SIZES)
@async_test
async def test_edit_then_approve_starts_at_the_end_of_the_text(playbook, size) -> None:
    path, info = playbook
    app = make_app(path)
    async with app.run_test(size=size) as pilot:
        await loaded(pilot, app)
        await pilot.press("3")
        assert app.query_one("#proposals-pane").table.move_to(info["proposals"][0])
        await pilot.press("e")
        await wait_for(pilot, lambda: isinstance(app.screen, FormModal))
        area = app.screen.query_one(TextArea)
        assert app.screen.focused is area
        assert area.cursor_location == area.document.end
        await pilot.press(*" in tmp_path", "ctrl+s")
        await after_write(pilot, app, lambda: len(app.snapshot.proposals) == 1)
    contents = {b.content for b in store_at(path).bullets()}
    assert "Give each pytest-xdist worker its own SQLite file in tmp_path" in contents


@pytest.mark.parametrize("size", SIZES)
@async_test
async def test_end_on_the_blocked_tab_goes_to_the_last_row(playbook, size) -> None:
    path, _ = playbook
    app = make_app(path)
    async with app.run_test(size=size) as pilot:
        await loaded(pilot, app)
        await pilot.press("5")
        pane = app.query_one(BlockedPane)
        assert pane.table.cursor_row == 0
        await pilot.press("end")
        assert pane.table.cursor_row == pane.table.row_count - 1 == 2
        assert pane.current().pattern == "Retry the job until it passes"
        assert app.query_one(TabbedContent).active == "blocked"
