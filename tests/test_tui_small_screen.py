"""The workbench at 80x24, a laptop terminal split in two (issue 30): everything reachable,
nothing cut where it matters, nothing covering what the reader is looking at.

Each test drives the real app with keys (Pilot) at 80x24 and reads the screen as a
terminal shows it. The demo-based ones use the demo playbook (the build shipped with the
package, restored for this module).
"""

from __future__ import annotations

import re
import shutil
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
from textual.widgets import Button, Input, OptionList
from textual.widgets._footer import FooterKey
from textual.widgets._toast import Toast

from playbook import curate
from playbook.demo.build import DemoPlaybook
from playbook.demo.cache import make_demo
from playbook.review.proposal_view import proposal_diff
from playbook.tui.panes.proposal_text import diff_text
from playbook.tui.screens.compare import CompareScreen
from playbook.tui.screens.hidden import HiddenScreen
from playbook.tui.screens.modals import FormModal, HarmfulModal
from playbook.tui.screens.policy import PolicyScreen
from playbook.tui.seen import LastLooked
from playbook.tui.tour import STEPS, TourCaption, TourWorkbench

from .helpers import store_at
from .helpers.tui import (
    after_write,
    async_test,
    build_playbook,
    loaded,
    make_app,
    screen_lines,
    wait_for,
    workers_done,
)

SMALL = (80, 24)
LONG = (
    "Read the whole CI log from the first failing step before retrying a job, "
    "and quote the first error in the pull request"
)


@pytest.fixture(scope="module")
def demo(tmp_path_factory: pytest.TempPathFactory) -> DemoPlaybook:
    return make_demo(tmp_path_factory.mktemp("demo") / "demo.sqlite3")


@pytest.fixture
def demo_copy(demo: DemoPlaybook, tmp_path: Path) -> Path:
    """A copy of the demo this test may write to (with the session files beside it)."""
    folder = tmp_path / "demo"
    shutil.copytree(demo.path.parent, folder)
    return folder / demo.path.name


@pytest.fixture
def small(tmp_path: Path) -> tuple[Path, dict]:
    path = tmp_path / "state.sqlite3"
    return path, build_playbook(path)


def _wholly_visible(app, widget) -> bool:
    """On the screen from its first row to its last, nothing of it scrolled away."""
    geometry = app.screen.find_widget(widget)
    region = geometry.region
    return region.area > 0 and geometry.visible_region == region and region.bottom <= app.size[1]


def _footer_keys(app) -> set[str]:
    return {k.key_display or k.key for k in app.screen.query(FooterKey) if k.display}


# ------------------------------------------------------------------------------ top bar


def test_the_label_gives_way_whole_then_in_its_middle() -> None:
    from playbook.tui.widgets.topbar import fit_label

    path = "demo: /tmp/playbook-demo-c_ydtchv/demo.sqlite3"
    assert fit_label(path, "deleted on exit", 80) == (path, "deleted on exit")
    assert fit_label(path, "deleted on exit; --keep keeps it", 55) == (path, "")
    short, note = fit_label(path, None, 30)
    assert note == "" and len(short) == 30 and short.startswith("demo: /")
    assert short.endswith("/demo.sqlite3") and "…" in short


@async_test
async def test_the_top_bar_is_never_cut_off(small) -> None:
    path, _ = small
    app = make_app(path)
    app.label, app.label_note = f"demo: {path}", "deleted on exit; --keep keeps it"
    async with app.run_test(size=SMALL) as pilot:
        await loaded(pilot, app)
        top = screen_lines(app)[0]
        assert "live" in top  # the clock keeps its place
        # Whole words only: the note went whole, the path lost its middle, nothing ends
        # in a stump like "(del…".
        assert "(del" not in top and not re.search(r"\w…\s*live", top)
        assert top.split("…")[-1].split()[0].endswith("state.sqlite3")


# ------------------------------------------------------------------------------ numbers


@async_test
async def test_no_number_is_wrapped_away_from_its_label(small) -> None:
    path, _ = small
    then = datetime.now(UTC) - timedelta(days=200)
    with store_at(path, clock=lambda: then) as store:  # "(6mo ago)": two words, one unit
        old = curate(store, [{"type": "add", "content": "Pin the Rust toolchain in CI"}])
        curate(store, [{"type": "helpful", "bullet_id": old.added[0]}])
    app = make_app(path)
    async with app.run_test(size=SMALL) as pilot:
        await loaded(pilot, app)
        app.open_bullet(old.added[0])
        await wait_for(pilot, lambda: app.query_one("#d-timeline").row_count > 0)
        await pilot.pause()
        lines = screen_lines(app)
        text = "\n".join(lines)
        for label in ("score", "help", "harm"):
            for line in lines:
                line = re.sub(r"[╭╰]─.*?─[╮╯]", "", line)  # box titles ("score over time")
                for m in re.finditer(rf"\b{label}\b(?!\w)", line):
                    rest = line[m.end() :].split()
                    assert rest and re.match(r"[+-]?\d", rest[0]), (label, line)
        assert re.search(r"\(\w+ ago\)", text)  # the age, whole on one line
        assert "now +" in text  # the chart's subtitle is not cut to "first +…"
        assert not re.search(r"\S…\s*─+╯", text)


# ------------------------------------------------------------------------------ dialogs


@async_test
async def test_every_field_of_the_mark_harmful_dialog_is_above_the_fold(small) -> None:
    path, _ = small
    with store_at(path) as store:  # a rule of two lines in the dialog, as in the demo
        long = curate(store, [{"type": "add", "content": LONG}]).added[0]
    app = make_app(path)
    async with app.run_test(size=SMALL) as pilot:
        await loaded(pilot, app)
        assert app.bullets_pane.table.move_to(long)
        await pilot.press("minus")
        await wait_for(pilot, lambda: isinstance(app.screen, HarmfulModal))
        await pilot.pause()
        dialog = app.screen
        fields = [dialog.query_one(OptionList), dialog.query_one("#context", Input)]
        buttons = list(dialog.query(Button))
        for widget in fields + buttons:
            assert _wholly_visible(app, widget), widget
        for field in fields:  # and not under the buttons docked at the dialog's foot
            for button in buttons:
                assert not field.region.intersection(button.region).area, (field, button)
        await pilot.press("tab")
        assert app.focused is dialog.query_one("#context", Input)
        await pilot.press(*"it hid the race", "enter")
        await workers_done(app)


# ------------------------------------------------------------------------------ the table


@async_test
async def test_sort_goes_only_by_columns_on_screen_and_the_header_says_which(small) -> None:
    path, _ = small
    app = make_app(path)
    async with app.run_test(size=SMALL) as pilot:
        await loaded(pilot, app)
        pane = app.bullets_pane
        shown = pane.table.shown_columns()
        assert "helpful" not in shown  # too narrow for help and harm
        seen = []
        for _ in range(len(shown) + 1):
            await pilot.press("s")
            column = pane.view.sort_column
            seen.append(column)
            assert column in shown, (column, shown)
            header = next(line for line in screen_lines(app) if line.lstrip().startswith("id"))
            label = next(c.label for c in pane.table.columns if c.key == column)
            assert re.search(rf"{re.escape(label)} [▼▲]", header), (label, header)
        assert len(set(seen)) >= 3


@async_test
async def test_the_deprecated_row_stays_on_screen_after_the_table_resorts(demo_copy) -> None:
    app = make_app(demo_copy)
    async with app.run_test(size=SMALL) as pilot:
        await loaded(pilot, app)
        table = app.bullets_pane.table
        for start in range(4):  # the second rule's peek grows when it is deprecated
            table.action_edge(0)
            for _ in range(start):
                await pilot.press("down")
            bid = table.cursor_key
            await pilot.press("d")
            await wait_for(pilot, lambda: isinstance(app.screen, FormModal))
            await pilot.press(*"superseded", "enter")
            await after_write(pilot, app, lambda bid=bid: app.row(bid).maturity == "deprecated")
            await pilot.pause()
            top, rows = int(table.scroll_offset.y), table.scrollable_content_region.height - 1
            assert table.cursor_key == bid
            assert top <= table.cursor_row < top + rows, (start, table.cursor_row, top, rows)
            assert any(bid in line for line in screen_lines(app))


# ------------------------------------------------------------------------------ views


@async_test
async def test_what_decay_hid_without_words_waits_for_them(small) -> None:
    path, _ = small
    app = make_app(path)
    async with app.run_test(size=SMALL) as pilot:
        await loaded(pilot, app)
        await pilot.press("h")
        await wait_for(pilot, lambda: isinstance(app.screen, HiddenScreen))
        await pilot.pause()
        text = " ".join(screen_lines(app))
        assert "Reading" not in text and "No words yet" in text
        words = app.screen.query_one("#hidden-words", Input)
        assert app.focused is words
        assert "/" not in _footer_keys(app)  # typing: the footer does not offer "/"
        await pilot.press(*"pytest", "enter")
        await wait_for(pilot, lambda: app.screen.report is not None)
        await pilot.pause()
        assert "/" in _footer_keys(app)  # in the list, "/" goes back to the words
        await pilot.press("slash")
        assert app.focused is words and words.value == "pytest"  # no slash typed


@async_test
async def test_escape_from_a_rule_opened_in_then_and_now_goes_back_to_the_list(small) -> None:
    path, _ = small
    app = make_app(path)
    async with app.run_test(size=SMALL) as pilot:
        await loaded(pilot, app)
        await pilot.press("c")
        await wait_for(pilot, lambda: app.screen.query("#when"))
        await pilot.press("enter")  # 30 days: every rule here appeared since
        await wait_for(pilot, lambda: isinstance(app.screen, CompareScreen))
        screen = app.screen
        await wait_for(pilot, lambda: screen.diff is not None)
        await pilot.press("down", "down")
        key = screen.query_one("#compare-table").cursor_key
        await pilot.press("enter")
        await wait_for(pilot, lambda: app.query_one("#tabs").active == "detail")
        await pilot.press("escape")
        await wait_for(pilot, lambda: isinstance(app.screen, CompareScreen))
        back = app.screen
        await wait_for(pilot, lambda: back.diff is not None)
        await pilot.pause()
        assert back.since == screen.since
        assert back.query_one("#compare-table").cursor_key == key  # on the same row
        await pilot.press("escape")  # and from the list, back to the workbench
        await wait_for(pilot, lambda: not isinstance(app.screen, CompareScreen))
        app.open_bullet(app.bullets_pane.current_bullet_id())  # opened from the bullets:
        await pilot.press("escape")  # escape goes to the bullets
        await wait_for(pilot, lambda: app.query_one("#tabs").active == "bullets")
        assert not isinstance(app.screen, CompareScreen)


@async_test
async def test_the_measured_policy_verdict_and_plot_are_reached_by_keys(demo: DemoPlaybook) -> None:
    app = make_app(demo.path)
    async with app.run_test(size=SMALL) as pilot:
        await loaded(pilot, app)
        app.push_screen(PolicyScreen(demo.path, app.policy))
        await wait_for(pilot, lambda: getattr(app.screen, "report", None) is not None, 180)
        await pilot.pause()
        verdict = app.screen.query_one("#policy-verdict")
        plot = app.screen.query_one("#policy-plot")
        assert not _wholly_visible(app, verdict)  # below the table at first
        await pilot.press("pagedown")
        await wait_for(pilot, lambda: app.screen.find_widget(plot).visible_region.area > 0)
        await pilot.press("end")
        await wait_for(pilot, lambda: _wholly_visible(app, verdict))
        assert re.search(r"(recommended|inert):", " ".join(screen_lines(app)))


# ------------------------------------------------------------------------------ proposals


def test_the_word_diff_keeps_deleted_and_added_text_apart() -> None:
    old = "Read the first error in the CI log, not the last one"
    new = "Read the first error in the CI log and quote it in the pull request"
    plain = diff_text(proposal_diff(old, new)).plain
    assert "notlog" not in plain and "one;pull" not in plain
    assert "log, not log and quote it in" in plain
    assert "last one pull request" in plain


# ------------------------------------------------------------------------------ the tour


def _tour(demo_copy: Path, tmp_path: Path) -> TourWorkbench:
    path = tmp_path / "tour" / "demo.sqlite3"
    return TourWorkbench(
        path,
        prepare=lambda progress: shutil.copytree(demo_copy.parent, path.parent),
        label="demo",
        poll_seconds=0.1,
        seen=LastLooked(path, tmp_path / "seen.json"),
    )


def _step(app: TourWorkbench) -> int:
    found = app.screen.query(TourCaption)
    title = str(found.first().border_title) if found else ""
    m = re.match(r"Tour (\d+)/", title)
    return int(m.group(1)) if m else 0


@async_test
async def test_the_tour_leaves_what_it_describes_in_view(demo_copy, tmp_path: Path) -> None:
    app = _tour(demo_copy, tmp_path)
    async with app.run_test(size=SMALL, notifications=True) as pilot:
        await wait_for(pilot, lambda: _step(app) == 1)
        caption = app.screen.query_one(TourCaption)
        assert caption.region.height <= 5  # the keys are on its border, not a line of it
        await pilot.press("right")  # 2: one rule's story: its score over time
        await wait_for(pilot, lambda: _step(app) == 2)
        await pilot.pause()
        chart = app.query_one("#d-chart-box")
        assert _wholly_visible(app, chart)
        assert not caption.region.intersection(chart.region).area
        await pilot.press("right")  # 3: the rewrite's word diff is on screen
        await wait_for(pilot, lambda: _step(app) == 3)

        def diff_lines() -> list[int]:
            return [i for i, line in enumerate(screen_lines(app)) if "│ vs b-" in line]

        await wait_for(pilot, diff_lines)
        caption = app.screen.query_one(TourCaption)
        assert diff_lines()[0] < caption.region.y
        await pilot.press("right")  # approve: the toast leaves the tab counts readable
        await wait_for(pilot, lambda: any(t.region.area for t in app.screen.query(Toast)))
        tabs = app.query_one("#tabs Tabs")
        for toast in app.screen.query(Toast):
            assert not toast.region.intersection(tabs.region).area
        await wait_for(pilot, lambda: "Proposals 15" in " ".join(screen_lines(app)))


@async_test
async def test_the_tour_deprecates_a_rule_that_was_live(demo_copy, tmp_path: Path) -> None:
    # The demo's first conflict is one whose right side is deprecated already.
    with store_at(demo_copy) as store:
        first = store.conflicts()[0]
        assert store.get_bullet(first.b).maturity == "deprecated"
    app = _tour(demo_copy, tmp_path)
    async with app.run_test(size=SMALL) as pilot:
        await wait_for(pilot, lambda: _step(app) == 1)
        resolve = next(i for i, s in enumerate(STEPS, start=1) if s.title == "Resolve a conflict")
        for step in range(2, resolve + 1):
            await pilot.press("right")
            await wait_for(pilot, lambda step=step: _step(app) == step)
            await workers_done(app)
        chosen = app.tour_subject
        right = chosen.b.bullet
        assert right.maturity != "deprecated"
        assert app.query_one("#conflicts-table").cursor_key == str(chosen.conflict.id)
        await pilot.press("right")  # deprecate it, then on to time travel
        await workers_done(app)

        def deprecated() -> bool:
            with store_at(app.source.path) as store:
                return store.get_bullet(right.id).maturity == "deprecated"

        await wait_for(pilot, deprecated)
    with store_at(app.source.path) as store:
        resolved = [c for c in store.conflicts(include_resolved=True) if c.status == "resolved"]
        assert [c.id for c in resolved] == [chosen.conflict.id]
        assert resolved[0].resolution == f"deprecated {right.id}"
