"""Hostile content in the workbench: every kind of tests/test_hostile.py, on screen.

Each hostile rule (and a megabyte one) is in the bullets table; each is opened in the
detail pane. The screen (the app's own SVG export) shows the escaped text, never a raw
control, escape, bidi or invisible character, and the app keeps running.
"""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

from playbook.core.inert import inert
from playbook.curation import curate
from playbook.store import PlaybookStore, connect
from playbook.tui.app import Workbench

from .helpers.hostile import HOSTILE, assert_inert
from .helpers.tui import screen_text, wait_for

MEGABYTE = ("[bold]\x1b[31m\u202e" + "y" * 1000 + "\n") * 1024


def hostile_playbook(path: Path) -> dict[str, str]:
    conn = connect(path)
    store = PlaybookStore(conn)
    ids: dict[str, str] = {}
    for name, text in HOSTILE.items():
        r = curate(store, [{"type": "add", "content": f"{text} {name}", "tags": [name]}])
        ids[name] = r.added[0]
        curate(store, [{"type": "helpful", "bullet_id": ids[name], "context": text}])
    # Over Policy.max_content_length, so only an import or a store call can put it there.
    ids["megabyte"] = store.insert_bullet(MEGABYTE, tags=["big"]).id
    conn.close()
    return ids


def showing(app: Any, bullet_id: str) -> bool:
    from playbook.tui.panes.detail import DetailPane

    detail = app.query_one(DetailPane).detail
    return detail is not None and detail.bullet.id == bullet_id


def test_the_workbench_shows_hostile_content_inert(tmp_path: Path) -> None:
    from textual.widgets import Static

    path = tmp_path / "state.sqlite3"
    ids = hostile_playbook(path)

    async def run() -> None:
        app = Workbench(path, poll_seconds=0.1)
        async with app.run_test(size=(220, 50)) as pilot:
            await wait_for(pilot, lambda: app.loads >= 1)
            table = app.bullets_pane.table
            assert set(ids.values()) <= set(table.rows)
            for name, bid in ids.items():
                table.move_to(bid)
                await pilot.pause()
                assert_inert(screen_text(app))
                app.open_bullet(bid)
                await wait_for(pilot, lambda b=bid: showing(app, b))
                await pilot.pause()
                content = str(app.query_one("#d-content", Static).content)
                text = MEGABYTE if name == "megabyte" else f"{HOSTILE[name]} {name}"
                assert content == inert(text), name
                shown = screen_text(app)
                assert_inert(shown)
                first = inert(text.splitlines()[0], one_line=True)[:40]
                assert first.replace("\\", "") and first in shown.replace("\n", ""), name
            assert app.is_running

    asyncio.run(run())
