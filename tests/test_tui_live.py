"""The workbench follows other connections' writes, at its own refresh interval.

On PostgreSQL the watcher LISTENs on the playbook's channel and every writer NOTIFYs on
commit: the app's tick reads the notifications off the socket (no query), so a write by
another connection is on screen within a second, and a playbook nobody writes to is never
read again. On SQLite the tick reads `PRAGMA data_version`, as before: the same outcome.

The app runs with its default interval (`POLL_SECONDS`), as `playbook tui` does.
"""

from __future__ import annotations

import time
from pathlib import Path

import pytest

from playbook.store import open_store
from playbook.tui.app import POLL_SECONDS, Workbench

from .helpers.tui import async_test, loaded, make_app, screen_text, wait_for

WITHIN = 1.0  # seconds from another connection's commit to the new rule on screen (issue 16)


def workbench_on(target: str | Path, folder: Path) -> Workbench:
    """The workbench as `playbook tui` runs it (its own poll interval)."""
    return make_app(target, poll_seconds=POLL_SECONDS, folder=folder)


def listening_backends(url: str) -> list[tuple[int, str]]:
    """(pid, state) of every server process whose last statement was the LISTEN on this
    playbook's channel: the watcher, as long as it has asked the server nothing since."""
    with open_store(url) as store:
        schema = store.sql.schema  # type: ignore[attr-defined]
        rows = store.sql.all(
            "SELECT pid, state FROM pg_stat_activity WHERE query = ?",
            (f'LISTEN "playbook:{schema}"',),
        )
    return [(int(pid), str(state)) for pid, state in rows]


@async_test
async def test_another_connections_write_is_on_screen_within_a_second(
    db_target: str | Path, tmp_path: Path
) -> None:
    with open_store(db_target) as store:
        store.insert_bullet("Read the first error in the CI log")
    app = workbench_on(db_target, tmp_path)
    assert app.live.poll_seconds == POLL_SECONDS < WITHIN
    async with app.run_test(size=(120, 36)) as pilot:
        await loaded(pilot, app)
        await wait_for(pilot, lambda: "Read the first error in the CI log" in screen_text(app))
        loads = app.loads
        await pilot.pause(3 * POLL_SECONDS)  # three ticks, nobody writes
        assert app.loads == loads, "the playbook was read again though nothing changed"

        with open_store(db_target) as other:  # another engineer's agent, say
            other.insert_bullet("Write the failing test first")
        committed = time.monotonic()
        await wait_for(pilot, lambda: app.loads > loads, timeout=10)
        took = time.monotonic() - committed
        await wait_for(pilot, lambda: "Write the failing test first" in screen_text(app))
        assert took < WITHIN, f"the write reached the screen after {took:.2f} s"

        await pilot.pause(3 * POLL_SECONDS)
        assert app.loads == loads + 1, "one commit, one reload"


@pytest.mark.postgres
@async_test
async def test_on_postgresql_the_workbench_polls_no_data(pg_url: str, tmp_path: Path) -> None:
    """Between writes the watcher's connection runs nothing after its LISTEN: the refresh
    comes from the notification, not from asking the server whether anything changed."""
    with open_store(pg_url) as store:
        store.insert_bullet("Read the first error in the CI log")
    app = workbench_on(pg_url, tmp_path)
    async with app.run_test(size=(120, 36)) as pilot:
        await loaded(pilot, app)
        await pilot.pause(3 * POLL_SECONDS)
        watcher = listening_backends(pg_url)
        assert len(watcher) == 1 and watcher[0][1] == "idle", watcher

        with open_store(pg_url) as other:
            other.insert_bullet("Write the failing test first")
        await wait_for(pilot, lambda: len(app.snapshots.rows_by_id) == 2)
        await pilot.pause(3 * POLL_SECONDS)
        assert listening_backends(pg_url) == watcher  # the same connection, still silent
