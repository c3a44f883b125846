"""Time travel, then-vs-now and what decay hid, in the workbench at 80x24 and 160x48:
keys in, the screen and the database checked."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
from textual.widgets import Input, Static, TabbedContent

from playbook import curate, review
from playbook.core.model import Provenance
from playbook.review import queue
from playbook.review.history_fold import moment_day
from playbook.store.history import Past
from playbook.tui.panes.detail import DetailPane
from playbook.tui.screens.compare import CompareScreen
from playbook.tui.screens.hidden import HiddenPane, HiddenScreen
from playbook.tui.screens.modals import FormModal
from playbook.tui.screens.moment import MomentModal
from playbook.tui.travel import months_on

from .helpers import store_at
from .helpers.tui import SIZES, after_write, async_test, loaded, make_app, screen_lines, wait_for

DAY = timedelta(days=1)


@pytest.fixture
def story(tmp_path: Path) -> tuple[Path, dict]:
    """A playbook with a past: an old rule proven long ago then deprecated last week; a
    proposal staged 40 days ago (still pending) and one staged 2 days ago; a rule added
    10 days ago; a CI rule and its near-twin deprecated (for what decay hid)."""
    path = tmp_path / "state.sqlite3"
    now = datetime.now(UTC).replace(microsecond=0)
    at = [now - 100 * DAY]
    store = store_at(path, clock=lambda: at[0])
    old = curate(store, [{"type": "add", "content": "Pin the Node version in CI images"}])
    old_id = old.added[0]
    for k in range(12):
        at[0] = now - (90 - k) * DAY
        curate(store, [{"type": "helpful", "bullet_id": old_id}])
    cache_ids = []
    for text in ("Cache pip downloads in CI jobs", "Key the CI cache on the lockfile hash"):
        cache_ids.append(curate(store, [{"type": "add", "content": text}]).added[0])
    at[0] = now - 40 * DAY
    early = queue.stage(
        store,
        [{"type": "add", "content": "Print the seed of every randomized test"}],
        provenance=Provenance(session_ref="s:early", byte_offset=1),
    ).staged[0]
    at[0] = now - 10 * DAY
    new_id = curate(store, [{"type": "add", "content": "Run database migrations in a job"}])
    new_id = new_id.added[0]
    at[0] = now - 7 * DAY
    curate(store, [{"type": "deprecate", "bullet_id": old_id, "reason": "images pin it"}])
    curate(store, [{"type": "deprecate", "bullet_id": cache_ids[0], "reason": "no pip"}])
    at[0] = now - 2 * DAY
    late = queue.stage(
        store,
        [{"type": "add", "content": "Delete merged branches every week"}],
        provenance=Provenance(session_ref="s:late", byte_offset=1),
    ).staged[0]
    store.close()
    return path, {
        "now": now,
        "old": old_id,
        "new": new_id,
        "cache": cache_ids,
        "early": early,
        "late": late,
    }


def _label(app, tab: str) -> str:
    return str(app.query_one(TabbedContent).get_tab(tab).label)


async def _travel(pilot, app, text: str) -> None:
    await pilot.press("t")
    await wait_for(pilot, lambda: isinstance(app.screen, MomentModal))
    app.screen.query_one("#when", Input).value = text
    await pilot.press("enter")
    await wait_for(pilot, lambda: app.snapshot is not None and app.snapshot.as_of is not None)
    await pilot.pause()


@async_test
async def test_each_moment_is_read_alone_as_the_api_gives_it(story) -> None:
    """No copy of the log is kept for stepping: each moment is read alone from the evidence
    cache's days (`review.rows_as_of`), and every one is the API's table."""
    path, info = story
    app = make_app(path)
    async with app.run_test(size=(80, 24)) as pilot:
        await loaded(pilot, app)
        for days in (30, 60, 9):
            when = info["now"] - days * DAY
            with store_at(path) as store:
                then = {r.id: r for r in review.rows_as_of(store, when)}
            app.travel_to(when)
            await wait_for(pilot, lambda w=when: app.snapshot.as_of == w)
            assert app.bullets_pane.rows == then


@async_test
async def test_a_step_back_finds_its_day_read_ahead(story, monkeypatch) -> None:
    """Once a moment is on screen, the days a week and a month either side are read in the
    background (`review.Moments`): the step back reads no checkpoint itself, and shows the
    API's table."""
    path, _ = story
    asked: list[int] = []
    original = Past.checkpoints_before

    def counted(self: Past, day: int) -> list:
        asked.append(day)
        return original(self, day)

    monkeypatch.setattr(Past, "checkpoints_before", counted)
    app = make_app(path)
    async with app.run_test(size=(80, 24)) as pilot:
        await loaded(pilot, app)
        now = app.now()
        when = now - 7 * DAY
        ahead = {moment_day(when), moment_day(months_on(now, -1)), moment_day(now - 30 * DAY)}
        await wait_for(pilot, lambda: ahead <= set(app.source.moments.kept_days()))
        assert ahead <= set(asked)  # read by the read-ahead, not by a step
        asked.clear()
        app.travel_to(when)
        await wait_for(pilot, lambda: app.snapshot.as_of == when)
        assert moment_day(when) not in asked
        with store_at(path) as store:
            assert app.bullets_pane.rows == {r.id: r for r in review.rows_as_of(store, when)}


@pytest.mark.parametrize("size", SIZES)
@async_test
async def test_time_travel_shows_the_playbook_as_it_was_read_only(story, size) -> None:
    path, info = story
    when = info["now"] - 30 * DAY
    with store_at(path) as store:  # what the API says the playbook was then
        then = {r.id: r for r in review.rows_as_of(store, when)}
    app = make_app(path)
    async with app.run_test(size=size) as pilot:
        await loaded(pilot, app)
        assert "Bullets 4" in _label(app, "bullets")
        await _travel(pilot, app, f"{when:%Y-%m-%dT%H:%M:%S}+00:00")
        rows = app.bullets_pane.rows
        assert set(rows) == set(then) and info["new"] not in rows  # not yet added then
        assert rows[info["old"]].maturity == then[info["old"]].maturity != "deprecated"
        assert rows[info["old"]].effective == pytest.approx(then[info["old"]].effective)
        assert "Bullets 3" in _label(app, "bullets")
        assert "Proposals 1" in _label(app, "proposals")  # the late one was not staged yet
        top = screen_lines(app)[0]
        assert f"as of {when:%Y-%m-%d}" in top and "read-only" in top
        # Every write is dimmed, and pressed says why.
        app.bullets_pane.table.move_to(info["old"])
        await pilot.pause()
        assert app.screen.active_bindings["p"].enabled is False
        await pilot.press("p")
        await pilot.pause()
        said = [str(n.message) for n in app._notifications]
        assert said and "Read-only" in said[-1] and f"{when:%Y-%m-%d}" in said[-1]
        assert not isinstance(app.screen, FormModal)
        await pilot.press("3")
        await pilot.pause()
        assert app.query_one("#proposals-table").cursor_key == info["early"]
        await pilot.press("a")
        await pilot.pause()
        assert "Read-only" in str(list(app._notifications)[-1].message)
        # T comes back to now.
        await pilot.press("T")
        await wait_for(pilot, lambda: app.snapshot.as_of is None)
        assert "Bullets 4" in _label(app, "bullets") and "as of" not in screen_lines(app)[0]
    store = store_at(path)
    assert queue.get(store, info["early"]).status == "pending"
    assert not store.get_bullet(info["old"]).pinned


@pytest.mark.parametrize("size", SIZES)
@async_test
async def test_the_angle_keys_step_a_week_and_never_past_now(story, size) -> None:
    path, info = story
    app = make_app(path)
    async with app.run_test(size=size) as pilot:
        await loaded(pilot, app)
        await pilot.press("less_than_sign", "less_than_sign")
        await wait_for(pilot, lambda: app.snapshot.as_of is not None)
        await wait_for(pilot, lambda: app.snapshot.as_of == app.as_of)
        assert abs(app.now() - 14 * DAY - app.as_of) < timedelta(minutes=1)
        assert info["new"] not in app.bullets_pane.rows  # added 10 days ago
        await pilot.press("greater_than_sign", "greater_than_sign")
        await wait_for(pilot, lambda: app.as_of is None and app.snapshot.as_of is None)
        assert info["new"] in app.bullets_pane.rows
        # { and } step a calendar month: back a month, then on again to now.
        await pilot.press("left_curly_bracket")
        await wait_for(pilot, lambda: app.as_of is not None and app.snapshot.as_of == app.as_of)
        now = app.now()
        month_back = now.month - 1 or 12
        assert app.as_of.month == month_back and app.as_of.day <= now.day
        assert 27 * DAY < now - app.as_of < 32 * DAY
        assert info["new"] not in app.bullets_pane.rows  # added 10 days ago
        await pilot.press("right_curly_bracket")
        await wait_for(pilot, lambda: app.as_of is None and app.snapshot.as_of is None)


@pytest.mark.parametrize("size", SIZES)
@async_test
async def test_an_unreadable_moment_is_said_under_the_box(story, size) -> None:
    path, _ = story
    app = make_app(path)
    async with app.run_test(size=size) as pilot:
        await loaded(pilot, app)
        await pilot.press("t")
        await wait_for(pilot, lambda: isinstance(app.screen, MomentModal))
        app.screen.query_one("#when", Input).value = "last tuesday"
        await pilot.press("enter")
        await pilot.pause()
        assert isinstance(app.screen, MomentModal)  # still asking
        assert str(app.screen.query_one("#error-line", Static).content)
        await pilot.press("x")  # typing again: the error was about the old text
        await pilot.pause()
        assert not str(app.screen.query_one("#error-line", Static).content)
        await pilot.press("escape")
        await pilot.pause()
        assert app.as_of is None


@pytest.mark.parametrize("size", SIZES)
@async_test
async def test_then_and_now_lists_what_changed_and_opens_a_rule(story, size) -> None:
    path, info = story
    app = make_app(path)
    async with app.run_test(size=size) as pilot:
        await loaded(pilot, app)
        await _travel(pilot, app, "30d")
        await pilot.press("c")
        await wait_for(pilot, lambda: isinstance(app.screen, CompareScreen))
        screen = app.screen
        await wait_for(pilot, lambda: screen.diff is not None)
        kinds = {key.split(":")[0]: key.split(":")[1] for key in screen.changes}
        assert info["new"] == kinds["appeared"]
        rung = [k for k in screen.changes if k.startswith("rung_changes:")]
        assert f"rung_changes:{info['old']}" in rung  # deprecated since
        counts = str(screen.query_one("#compare-counts", Static).content)
        assert "1 appeared" in counts and "3 rules then, 4 now" in counts
        text = "\n".join(screen_lines(app))
        assert "appeared" in text and "Run database migrations" in text
        table = screen.query_one("#compare-table")
        groups = list(dict.fromkeys(k.split(":")[0] for k in screen.changes))
        assert len(groups) >= 2 and table.cursor_key.startswith(f"{groups[0]}:")
        for group in [*groups[1:], groups[0]]:  # n: the first rule of each group, around
            await pilot.press("n")
            first = next(k for k in screen.changes if k.startswith(f"{group}:"))
            await wait_for(pilot, lambda f=first: table.cursor_key == f)
        assert table.move_to(f"appeared:{info['new']}")
        await pilot.press("enter")
        await wait_for(pilot, lambda: app.query_one(DetailPane).detail is not None)
        assert app.query_one(DetailPane).detail.bullet.id == info["new"]


@pytest.mark.parametrize("size", SIZES)
@async_test
async def test_what_decay_hid_explains_and_restores_from_there(story, size) -> None:
    path, info = story
    pip = info["cache"][0]  # deprecated: recall lists it only as a warning
    app = make_app(path)
    async with app.run_test(size=size) as pilot:
        await loaded(pilot, app)
        app.set_filter("ci cache")
        await wait_for(pilot, lambda: app.bullets_pane.view.relevance is not None)
        app.bullets_pane.table.focus()
        await pilot.press("h")
        await wait_for(pilot, lambda: isinstance(app.screen, HiddenScreen))
        screen = app.screen
        await wait_for(pilot, lambda: screen.report is not None)
        pane = screen.query_one(HiddenPane)
        assert pip in pane.items
        item = pane.items[pip]
        assert item.reason == "deprecated"
        pane.table.move_to(pip)
        await pilot.pause()
        why = str(screen.query_one("#hidden-text", Static).content)
        assert item.why() in why and "restore" in why
        shown = " ".join(" ".join(screen_lines(app)).split())
        assert "brings it back" in shown  # the numbers and the remedy fit, even at 80x24
        await pilot.press("r")  # restore, from here
        await wait_for(pilot, lambda: isinstance(app.screen, FormModal))
        await pilot.press("ctrl+s")
        await after_write(pilot, app, lambda: app.row(pip).maturity != "deprecated")
        await wait_for(
            pilot, lambda: pip not in pane.items or pane.items[pip].reason != "deprecated"
        )
        await pilot.press("escape")
        await pilot.pause()
        assert not isinstance(app.screen, HiddenScreen)
    assert store_at(path).get_bullet(pip).maturity != "deprecated"
