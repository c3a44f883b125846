"""`playbook demo --tour`: a caption per step, advancing on a key, each step's action done
through the API, at 80x24 and at 160x48."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from playbook.demo.build import DemoPlaybook
from playbook.demo.cache import make_demo
from playbook.review import queue
from playbook.tui.screens.compare import CompareScreen
from playbook.tui.screens.hidden import HiddenScreen
from playbook.tui.seen import LastLooked
from playbook.tui.tour import BLOCK_PATTERN, STEPS, TourCaption, TourWorkbench

from .helpers import store_at
from .helpers.tui import SIZES, async_test, screen_lines, wait_for, workers_done


@pytest.fixture(scope="module")
def demo(tmp_path_factory: pytest.TempPathFactory) -> DemoPlaybook:
    return make_demo(tmp_path_factory.mktemp("demo") / "demo.sqlite3")


def _caption(app: TourWorkbench) -> str:
    found = app.screen.query(TourCaption)
    return f"{found.first().border_title} {found.first().content}" if found else ""


@pytest.mark.parametrize("size", SIZES)
@async_test
async def test_the_tour_walks_every_step_and_acts_through_the_api(
    demo: DemoPlaybook, tmp_path: Path, size
) -> None:
    path = tmp_path / "demo.sqlite3"
    app = TourWorkbench(
        path,
        prepare=lambda progress: shutil.copy(demo.path, path),
        label="demo",
        poll_seconds=0.1,
        seen=LastLooked(path, tmp_path / "seen.json"),
    )
    with store_at(demo.path) as store:
        pending = queue.count_pending(store)
    seen_screens = set()
    async with app.run_test(size=size) as pilot:
        await wait_for(pilot, lambda: app.step == 0 and "Tour 1/" in _caption(app))
        # the caption is on the screen itself, not only in the DOM
        await wait_for(pilot, lambda: "Tour 1/" in " ".join(screen_lines(app)))
        for i, step in enumerate(STEPS[1:], start=2):
            await pilot.press("right")
            await wait_for(pilot, lambda i=i: f"Tour {i}/{len(STEPS)}" in _caption(app))
            assert step.title in _caption(app)
            seen_screens.add(type(app.screen))
            if step.title == "Time travel":
                await wait_for(pilot, lambda: app.snapshot.as_of is not None)
                assert "as of" in screen_lines(app)[0]
        await pilot.press("right")  # the last step stays
        assert app.step == len(STEPS) - 1
        await pilot.press("left")
        await wait_for(pilot, lambda: f"Tour {len(STEPS) - 1}/" in _caption(app))
        await workers_done(app)
    assert {CompareScreen, HiddenScreen} <= seen_screens
    store = store_at(path)
    assert queue.count_pending(store) == pending - 1  # the tour approved one proposal
    approved = [p for p in queue.list_proposals(store, status="approved")]
    assert approved[0].delta["type"] == "replace" and approved[0].decided_by == "human"
    assert any(b.pattern == BLOCK_PATTERN for b in store.blocked())
    assert any(b.pinned_reason == "team policy (pinned in the tour)" for b in store.bullets())
    resolved = [c for c in store.conflicts(include_resolved=True) if c.status == "resolved"]
    assert len(resolved) == 1 and resolved[0].resolution.startswith("deprecated ")


def test_demo_offers_the_tour() -> None:
    import contextlib
    import io

    from playbook.cli import main

    with contextlib.redirect_stdout(io.StringIO()) as out:
        main(["demo", "--help"])
    assert "--tour" in out.getvalue()
