"""The score trend column (read lazily for the rows on screen) and the events on the Detail
plot, at 80x24 and at 160x48."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from playbook import curate
from playbook.tui.panes.detail import DetailPane
from playbook.tui.trends import BARS
from playbook.tui.widgets.chart import ScoreChart

from .helpers import store_at
from .helpers.tui import SIZES, async_test, loaded, make_app, screen_lines, wait_for


@pytest.fixture
def history(tmp_path: Path) -> tuple[Path, dict]:
    """A rule marked helpful five times exactly 60 days ago, then harmful 20 days ago, and
    60 filler rules (more than a screen holds)."""
    path = tmp_path / "state.sqlite3"
    now = datetime.now(UTC)
    at = [now - timedelta(days=120)]
    store = store_at(path, clock=lambda: at[0])
    bid = curate(store, [{"type": "add", "content": "Pin the Node version in CI images"}])
    rule = bid.added[0]
    words = [f"topic{chr(97 + i // 26)}{chr(97 + i % 26)}" for i in range(60)]
    fillers = [
        curate(store, [{"type": "add", "content": f"Keep {w} notes apart from {w} code"}]).added[0]
        for w in words
    ]
    at[0] = now - timedelta(days=60)
    for _ in range(5):
        curate(store, [{"type": "helpful", "bullet_id": rule}])
    at[0] = now - timedelta(days=20)
    curate(store, [{"type": "harmful", "bullet_id": rule, "reason": "outdated"}])
    store.close()
    return path, {"rule": rule, "fillers": fillers}


@pytest.mark.parametrize("size", SIZES)
@async_test
async def test_trends_are_read_for_the_rows_on_screen_only(history, size) -> None:
    path, info = history
    app = make_app(path)
    async with app.run_test(size=size) as pilot:
        await loaded(pilot, app)
        pane = app.bullets_pane
        table = pane.table
        assert "trend" in table.shown_columns()  # at 80 columns too: type and pin give way
        await wait_for(pilot, lambda: table.order[0] in pane.trends)
        on_screen = set(table.order[: table.size.height])
        assert set(pane.trends) <= on_screen  # never the rows below the fold
        assert len(pane.trends) < len(table.order)
        assert info["rule"] == table.order[-1] and info["rule"] not in pane.trends
        await pilot.press("end")  # scrolled into view: read then
        await wait_for(pilot, lambda: info["rule"] in pane.trends)


@pytest.mark.parametrize("size", SIZES)
@async_test
async def test_the_sparkline_rises_at_the_marks_and_fades_after(history, size) -> None:
    path, info = history
    app = make_app(path)
    async with app.run_test(size=size) as pilot:
        await loaded(pilot, app)
        pane = app.bullets_pane
        pane.table.move_to(info["rule"])  # the lowest score: the last row
        await wait_for(pilot, lambda: info["rule"] in pane.trends)
        await pilot.pause()
        values = pane.trends[info["rule"]][1]
        # 10 moments, 10 days apart, from 90 days ago to now: nothing before the marks of
        # 60 days ago (index 3), the peak there, then decay and the harmful mark's dip.
        assert len(values) == 10
        assert values[:3] == [0.0, 0.0, 0.0]
        assert values[3] == max(values) > 0
        assert values[4] < values[3] and values[-1] < values[6]
        row = next(line for line in screen_lines(app) if info["rule"] in line)
        spark = "".join(ch for ch in row if ch in BARS)
        assert spark.startswith(BARS[0] * 3 + BARS[-1])
        # ...drawn in colour: a rising trend green (a cell's own style once went missing)
        table = pane.table
        line = table.render_line(table.order.index(info["rule"]) - int(table.scroll_offset.y) + 1)
        bars = [seg for seg in line if seg.text.strip() and set(seg.text.strip()) <= set(BARS)]
        rising = values[-1] >= values[0]
        # the theme's success (error) colour: the style fmt.GOOD (fmt.BAD) in app.tcss
        want = app.theme_variables["success" if rising else "error"].lower()
        assert bars and all(seg.style.color.triplet.hex == want for seg in bars)


@pytest.mark.parametrize("size", SIZES)
@async_test
async def test_the_detail_plot_marks_each_event_on_the_curve(history, size) -> None:
    path, info = history
    app = make_app(path)
    async with app.run_test(size=size) as pilot:
        await loaded(pilot, app)
        app.open_bullet(info["rule"])
        await wait_for(pilot, lambda: app.query_one(DetailPane).detail is not None)
        await pilot.pause()
        chart = app.query_one(ScoreChart)
        lines = chart.render().plain.splitlines()
        plot = lines[:-2]  # the last two lines: the ticks row and the dates
        assert any("+" in line for line in plot), "helpful marks sit on the curve"
        assert any("x" in line for line in plot), "the harmful mark sits on the curve"
        assert lines[-2].strip().startswith("events")


@async_test
async def test_trends_that_arrive_while_the_pane_is_taken_down_are_kept_not_raised(
    history,
) -> None:
    """The trends worker may answer while the app closes: the table may already be gone
    from the pane (a test saw NoMatches from Textual's teardown). The answer is kept and
    nothing raises."""
    path, info = history
    app = make_app(path)
    async with app.run_test(size=(80, 24)) as pilot:
        await loaded(pilot, app)
        pane = app.bullets_pane
        await pane.table.remove()
        pane.set_trends({info["rule"]: [1.0, 2.0]}, pane.epoch)
        assert pane.trends[info["rule"]] == (pane.epoch, [1.0, 2.0])
        assert app.is_running
