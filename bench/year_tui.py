"""The workbench on a team-year, in-process (Textual's `run_test`, 160x45, headless).

    python bench/year_tui.py TARGET [--limit SECONDS]     # prints one JSON object

Four times, each from asking to the frame that shows the answer (`bench/tui.py`'s frame
detector: the bullets table draws a line after the new rows are in):

- first paint: constructing the app to the first frame with the table filled;
- a week back, a month back: `travel_to(now - 7 / 30 days)` to the frame as of then
  (the first switch of the session, then the second; then back to now, not timed);
- then-vs-now: the compare screen for a month back (`c`), from pushing it to its groups
  on screen (`CompareScreen`'s `Loaded` handled).

A wait longer than `--limit` seconds stops the run: that figure and those after it are
reported as null (the bench prints "> limit"). A line of JSON is printed after each
figure, so a run stopped from outside still reports what it measured. Run as a child of
`bench/team_year.py`, so a stuck read costs its time limit, not the whole bench.
"""

# bench: only when named

from __future__ import annotations

import argparse
import asyncio
import json
import os
import sys
import tempfile
import time
from datetime import timedelta
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from tui import _Frames


async def measure(target: str, limit: float) -> dict[str, float | None]:
    from playbook.tui.app import Workbench
    from playbook.tui.screens.compare import CompareScreen

    frames = _Frames()
    frames.install()

    class Bench(Workbench):
        def snapshot_applied(self) -> None:
            frames.arm()

    out: dict[str, float | None] = dict.fromkeys(
        ("first_paint", "week_back", "month_back", "then_vs_now")
    )

    def got(key: str, seconds: float) -> None:  # each figure as it comes: a run stopped
        out[key] = seconds  # later still reports it
        print(json.dumps(out), flush=True)

    started = time.perf_counter()
    app = Bench(target, poll_seconds=3600)
    async with app.run_test(size=(160, 45)) as pilot:
        try:
            await asyncio.wait_for(frames.event.wait(), limit)
            got("first_paint", frames.at - started)
            await asyncio.wait_for(app.workers.wait_for_complete(), limit)
            for key, days in (("week_back", 7), ("month_back", 30)):
                frames.event.clear()
                t0 = time.perf_counter()
                app.travel_to(app.now() - timedelta(days=days))
                await asyncio.wait_for(frames.event.wait(), limit)
                got(key, frames.at - t0)
                await asyncio.wait_for(app.workers.wait_for_complete(), limit)
                await pilot.pause(0.2)
            frames.event.clear()
            app.travel_to(None)
            await asyncio.wait_for(frames.event.wait(), limit)
            await asyncio.wait_for(app.workers.wait_for_complete(), limit)
            t0 = time.perf_counter()
            screen = CompareScreen(app.source, app.now() - timedelta(days=30))
            await app.push_screen(screen)
            await asyncio.wait_for(_compared(screen), limit)
            await pilot.pause()  # the frame with the groups
            got("then_vs_now", time.perf_counter() - t0)
        except TimeoutError:
            os._exit(0)  # a read still running in a worker thread is not waited for
    return out


async def _compared(screen: object) -> None:
    """Until the compare screen has its answer (or says why not)."""
    from textual.widgets import Static

    while getattr(screen, "diff", None) is None:
        counts = screen.query_one("#compare-counts", Static)  # type: ignore[attr-defined]
        if str(counts.render()).startswith("Could not compare"):
            raise RuntimeError(str(counts.render()))
        await asyncio.sleep(0.005)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("target")
    ap.add_argument("--limit", type=float, default=120)
    args = ap.parse_args()
    os.environ["XDG_STATE_HOME"] = tempfile.mkdtemp(prefix="playbook-bench-state-")
    result = asyncio.run(measure(args.target, args.limit))
    print(json.dumps(result), flush=True)
    os._exit(0)  # a read still running in a worker thread is not waited for


if __name__ == "__main__":
    sys.exit(main())
