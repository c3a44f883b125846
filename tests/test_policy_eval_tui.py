"""The workbench's Policy screen: opened from the palette, computed in a worker (issue 18)."""

from __future__ import annotations

from pathlib import Path

import pytest
from textual.command import CommandPalette
from textual.widgets import DataTable, Static

from playbook.core.policy import Policy
from playbook.tui.app import Workbench
from playbook.tui.screens.policy import PolicyScreen, open_policy_screen
from playbook.tui.screens.policy_plot import ForestPlot

from .helpers import Clock, store_at
from .helpers.policy_eval_worlds import flipping_world
from .helpers.tui import SIZE, async_test, loaded, make_app, wait_for


def _world(path: Path) -> None:
    clock = Clock()
    store = store_at(path, clock=clock)
    flipping_world(store, clock, period=60, rules=20, marks_per_day=16)
    store.close()


@async_test
async def test_policy_screen_from_the_palette(tmp_path: Path) -> None:
    path = tmp_path / "state.sqlite3"
    _world(path)
    app = make_app(path)
    async with app.run_test(size=(160, 50)) as pilot:
        await loaded(pilot, app)
        await pilot.press("ctrl+p")
        await wait_for(pilot, lambda: isinstance(app.screen, CommandPalette))
        for key in "measured":
            await pilot.press(key)
        await pilot.pause(0.3)
        await pilot.press("enter")
        await wait_for(pilot, lambda: isinstance(app.screen, PolicyScreen))
        screen = app.screen
        assert isinstance(screen, PolicyScreen)
        await wait_for(pilot, lambda: screen.report is not None, timeout=60)
        report = screen.report
        assert report is not None
        table = screen.query_one(DataTable)
        assert table.row_count == 15
        first = [str(c) for c in table.get_row_at(0)]
        assert first[0] == "current (= hl90-harm4)" and first[1] == "90"
        verdict = str(screen.query_one("#policy-verdict", Static).render())
        assert verdict == report.line() and verdict.startswith("recommended: hl30-")
        plot = screen.query_one(ForestPlot)
        half_lives = [float(r.label.split("-")[0][2:]) for r in plot.rows if not r.current]
        assert half_lives == sorted(half_lives)  # grouped by half-life
        assert [r.mark for r in plot.rows].count("*") == 1
        await pilot.press("escape")
        assert not isinstance(app.screen, PolicyScreen)


@async_test
async def test_closing_while_it_replays_stops_the_worker(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import time

    from playbook import policy_eval

    path = tmp_path / "state.sqlite3"
    _world(path)
    seen: list[object] = []
    real = policy_eval.evaluate

    def slow(store, *args, progress, **kw):  # type: ignore[no-untyped-def]
        def tick(done: int, total: int) -> None:
            seen.append(done)
            time.sleep(0.02)  # a replay long enough to close the screen during it
            progress(done, total)

        try:
            return real(store, *args, progress=tick, **kw)
        except BaseException as exc:
            seen.append(type(exc).__name__)
            raise

    monkeypatch.setattr(policy_eval, "evaluate", slow)
    app = make_app(path)
    async with app.run_test(size=SIZE) as pilot:
        await loaded(pilot, app)
        screen = PolicyScreen(path, app_policy())
        await app.push_screen(screen)
        await wait_for(pilot, lambda: len(seen) >= 2)
        await pilot.press("escape")
        await wait_for(pilot, lambda: "_Closed" in seen, timeout=30)
        assert screen.report is None and not isinstance(app.screen, PolicyScreen)
        ticks = [d for d in seen if isinstance(d, int)]
        assert max(ticks) < 4000  # stopped well before the end of the 4,800-mark log


def app_policy():  # type: ignore[no-untyped-def]
    from playbook.core.policy import DEFAULT_POLICY

    return DEFAULT_POLICY


@async_test
async def test_the_screen_evaluates_against_the_workbenchs_policy(tmp_path: Path) -> None:
    path = tmp_path / "state.sqlite3"
    _world(path)
    custom = Policy(half_life_days=45, harm_multiplier=2)
    app = Workbench(path, policy=custom, poll_seconds=0.1)
    async with app.run_test(size=SIZE) as pilot:
        await loaded(pilot, app)
        open_policy_screen(app)
        await wait_for(pilot, lambda: isinstance(app.screen, PolicyScreen))
        assert app.screen.policy == custom  # what `--policy` named, not the defaults
