"""Then-vs-now in the workbench takes the table of now from the snapshot on screen while
nothing has been written since it was read, and reads it again after any write: another
process's (the watcher's change token moves) or the workbench's own (counted by `Source`,
even before the watcher hears of it)."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest

from playbook import curate
from playbook.review import diff as review_diff
from playbook.store.views import Views
from playbook.tui.screens.compare import CompareScreen

from .helpers import store_at
from .helpers.tui import SIZE, async_test, build_playbook, loaded, make_app, wait_for


@pytest.fixture
def counted(monkeypatch: pytest.MonkeyPatch) -> list[Any]:
    """Each read of the whole bullets table from now on (a moment it was asked at)."""
    reads: list[Any] = []
    original = Views.bullet_rows

    def bullet_rows(self: Views, **kw: Any) -> Any:
        reads.append(kw.get("at"))
        return original(self, **kw)

    monkeypatch.setattr(Views, "bullet_rows", bullet_rows)
    return reads


async def _compare(pilot: Any, app: Any, since: datetime | None = None) -> Any:
    screen = CompareScreen(app.source, since or datetime.now(UTC) - timedelta(days=30))
    await app.push_screen(screen)
    await wait_for(pilot, lambda: screen.diff is not None)
    diff = screen.diff
    app.pop_screen()
    await pilot.pause()
    return diff


def _new(before: Any, after: Any) -> list[str]:
    """The rules that appeared in diff `after` and not in `before`."""
    seen = {c.id for c in before.appeared}
    return [c.content for c in after.appeared if c.id not in seen]


@async_test
async def test_then_and_now_uses_the_snapshot_until_someone_writes(
    tmp_path: Path, counted: list[Any]
) -> None:
    path = tmp_path / "state.sqlite3"
    build_playbook(path)
    app = make_app(path, poll_seconds=3600)  # no poll reads the writes below: the check does
    async with app.run_test(size=SIZE) as pilot:
        await loaded(pilot, app)
        snap, loads = app.snapshot, app.loads
        counted.clear()
        first = await _compare(pilot, app)
        assert counted == []  # nothing written since the snapshot: its rows, its moment
        assert first.until == snap.read_at and first.counts["rules_now"] == snap.live_count
        with store_at(path) as other:  # another process adds a rule
            curate(other, [{"type": "add", "content": "Squash fixup commits before merging"}])
        diff = await _compare(pilot, app)
        assert app.loads == loads and app.snapshot is snap  # the screen was not read again
        assert len(counted) == 1  # then-vs-now read the table itself, and saw the rule
        assert _new(first, diff) == ["Squash fixup commits before merging"]


@async_test
async def test_a_write_of_the_workbench_is_seen_before_the_watcher_hears_of_it(
    tmp_path: Path, counted: list[Any], monkeypatch: pytest.MonkeyPatch
) -> None:
    path = tmp_path / "state.sqlite3"
    build_playbook(path)
    app = make_app(path, poll_seconds=3600)
    async with app.run_test(size=SIZE) as pilot:
        await loaded(pilot, app)
        # the watcher says nothing moved (a NOTIFY still on its way, say)
        monkeypatch.setattr(app.live, "unchanged_since", lambda version: True)
        counted.clear()
        first = await _compare(pilot, app)
        assert counted == []
        with app.source.open() as store:  # a write of the workbench's own
            curate(store, [{"type": "add", "content": "Tag releases from the main branch"}])
        diff = await _compare(pilot, app)
        assert len(counted) == 1
        assert _new(first, diff) == ["Tag releases from the main branch"]


@async_test
async def test_a_new_watcher_never_vouches_for_a_snapshot_read_under_the_old_one(
    tmp_path: Path,
) -> None:
    """The watcher's token counts from zero again when it is made anew (a lost server,
    say): versions carry which watcher read them."""
    path = tmp_path / "state.sqlite3"
    build_playbook(path)
    app = make_app(path, poll_seconds=3600)
    async with app.run_test(size=SIZE) as pilot:
        await loaded(pilot, app)
        version = app.live.version
        assert app.live.unchanged_since(version) and app.source.table_now() is not None
        app.live._drop_watcher()
        assert not app.live.unchanged_since(version) and app.source.table_now() is None
        app.live.poll()  # a new watcher: the playbook read again under it
        await wait_for(pilot, lambda: app.live.version not in (None, version))
        assert app.live.version[1] == version[1] and app.live.version[0] == version[0] + 1
        assert not app.live.unchanged_since(version)
        await wait_for(pilot, lambda: app.source.table_now() is not None)


@async_test
async def test_while_travelling_then_and_now_uses_the_moment_on_screen_until_a_write(
    tmp_path: Path, counted: list[Any], monkeypatch: pytest.MonkeyPatch
) -> None:
    path = tmp_path / "state.sqlite3"
    build_playbook(path)
    read_then: list[Any] = []
    original = review_diff.rows_as_of

    def rows_as_of(store: Any, when: Any, moments: Any = None) -> Any:
        read_then.append(when)
        return original(store, when, moments)

    monkeypatch.setattr(review_diff, "rows_as_of", rows_as_of)
    app = make_app(path, poll_seconds=3600)
    async with app.run_test(size=SIZE) as pilot:
        await loaded(pilot, app)
        when = datetime.now(UTC) - timedelta(minutes=30)  # before every rule: none then
        app.travel_to(when)
        await wait_for(pilot, lambda: app.snapshot.as_of == when)
        counted.clear()
        first = await _compare(pilot, app, when)
        assert read_then == [] and counted == []  # both tables from the snapshots kept
        assert first.counts["rules_then"] == 0 and first.since == when
        with store_at(path) as other:  # another process writes: both tables may differ
            curate(other, [{"type": "add", "content": "Keep CI under ten minutes"}])
        diff = await _compare(pilot, app, when)
        assert read_then == [when] and len(counted) == 1  # both read again
        assert _new(first, diff) == ["Keep CI under ten minutes"]
