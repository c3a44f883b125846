"""Drive the demo workbench with Pilot and save an SVG and a PNG of each pane.

    python scripts/export_screenshots.py [--out screenshots] [--size 160x45]

The playbook is `playbook demo`'s (the build shipped with the package, which a test holds
to the builder), restored in a temporary folder, so the pictures are the real app on the
demo data. The `narrow-*` pictures are the same workbench at 80x24. PNGs need `rsvg-convert` (Debian
`librsvg2-bin`) and a monospace font with box drawing (Debian `fonts-firacode`); without
it only the SVGs are written.
"""

from __future__ import annotations

import argparse
import asyncio
import re
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Callable
from datetime import timedelta
from pathlib import Path

from textual.pilot import Pilot
from textual.widgets import Input

from playbook.demo.cache import make_demo
from playbook.review.queue import Proposal
from playbook.tui.app import Workbench
from playbook.tui.panes.proposals import ProposalsPane
from playbook.tui.screens.compare import CompareScreen
from playbook.tui.screens.hidden import HiddenScreen
from playbook.tui.screens.modals import FormModal, HarmfulModal
from playbook.tui.screens.policy import PolicyScreen
from playbook.tui.tour import TourWorkbench
from playbook.tui.widgets.table import RowTable

# What `playbook demo` shows in its top bar, with the temporary folder's name left generic.
LABEL = "demo: $TMPDIR/playbook-demo-XXXX/demo.sqlite3"
NOTE = "deleted on exit; --keep keeps it"
SHOTS = (
    "bullets",
    "bullets-filter",
    "bullets-by-harm",
    "detail",
    "proposals",
    "conflicts",
    "blocked",
    "reject-and-block",
    "palette",
    "help",
    "proposals-diff",
    "time-travel",
    "then-and-now",
    "hidden",
    "narrow-bullets",
    "narrow-detail",
    "narrow-harmful",
    "narrow-time-travel",
    "narrow-hidden",
    "narrow-proposals-diff",
    "narrow-conflicts",
    "narrow-then-and-now",
    "narrow-policy",
    "tour",
    "narrow-tour",
)
TRAVEL_DAYS = 60  # how far back the time-travel pictures go


async def settle(pilot: Pilot[None], app: Workbench, *, loads: int = 1) -> None:
    """Until `loads` snapshots are on screen, the proposals' nearest rules read (they come
    after the snapshot) and the workers done."""
    for _ in range(100):
        await pilot.pause(0.05)
        if app.loads >= loads and app.snapshot is not None and app.snapshot.similar_read:
            break
    await app.workers.wait_for_complete()
    await pilot.pause(0.3)


def pick_detail_bullet(app: Workbench) -> str:
    """A bullet whose story reads well: inherited or flipped evidence, help and harm."""
    assert app.snapshot is not None
    best, best_score = None, -1.0
    for row in app.snapshot.rows:
        if row.state == "retired" or row.type != "rule":
            continue
        score = min(row.helpful, 4) + 3 * min(row.harmful, 1.5) + (2 if row.pinned else 0)
        if row.maturity == "established" and score > best_score:
            best, best_score = row.id, score
    assert best is not None
    return best


async def capture(app: Workbench, pilot: Pilot[None], out: Path) -> list[Path]:
    written: list[Path] = []

    def save(name: str) -> None:
        path = out / f"{name}.svg"
        app.save_screenshot(path.name, str(out))
        written.append(path)

    await settle(pilot, app)
    save("bullets")

    await pilot.press("slash")
    for key in "flaky ci":
        await pilot.press("space" if key == " " else key)
    await settle(pilot, app)
    app.query_one(RowTable).focus()
    await pilot.press("down", "down")
    await pilot.pause(0.2)
    save("bullets-filter")
    await pilot.press("escape")
    await pilot.pause(0.2)

    for _ in range(3):  # sort by harm: deprecated, contested and pinned rules
        await pilot.press("s")
    await pilot.press("home")
    await pilot.pause(0.3)
    save("bullets-by-harm")
    await pilot.press("s", "s", "s", "s", "s")  # back round to the score
    await pilot.pause(0.2)

    app.open_bullet(pick_detail_bullet(app))
    await settle(pilot, app)
    save("detail")

    pane = await on_proposal(app, pilot, lambda p: bool(p.similar))  # resembles a rule
    save("proposals")

    await pilot.press("4")
    await settle(pilot, app)
    save("conflicts")

    await pilot.press("5")
    await settle(pilot, app)
    save("blocked")

    await pilot.press("3")
    await pilot.pause(0.2)
    adds = [p.id for p in pane.proposals.values() if isinstance(p.delta.get("content"), str)]
    pane.table.move_to(adds[-1])
    await pilot.pause(0.2)
    await pilot.press("B")
    await pilot.pause(0.3)
    assert isinstance(app.screen, FormModal), "reject-and-block did not open its dialog"
    app.screen.query_one(
        "#field-reason", Input
    ).value = "one green run proves nothing; this advice is already covered by the CI rules"
    await pilot.pause(0.2)
    save("reject-and-block")
    await pilot.press("escape")
    await pilot.pause(0.2)

    await capture_review_and_travel(app, pilot, save)

    await pilot.press("1")
    await pilot.press("ctrl+p")
    await pilot.pause(0.3)
    for key in "pin":
        await pilot.press(key)
    await pilot.pause(0.5)
    save("palette")
    await pilot.press("escape")
    await pilot.pause(0.3)

    await pilot.press("question_mark")
    await pilot.pause(0.5)
    save("help")
    await pilot.press("escape")
    return written


async def on_proposal(
    app: Workbench, pilot: Pilot[None], pick: Callable[[Proposal], bool]
) -> ProposalsPane:
    """The Proposals tab, the cursor on the first proposal `pick` accepts."""
    await pilot.press("3")
    await pilot.pause(0.2)
    await until(
        pilot, lambda: app.snapshot is not None and app.snapshot.similar_read, "close rules"
    )
    pane = app.query_one(ProposalsPane)
    target = next((p.id for p in pane.proposals.values() if pick(p)), None)
    if target is not None:
        pane.table.move_to(target)
    await settle(pilot, app)
    return pane


async def until(pilot: Pilot[None], check: Callable[[], bool], what: str) -> None:
    for _ in range(400):
        await pilot.pause(0.05)
        if check():
            return
    raise AssertionError(f"timed out waiting for {what}")


async def capture_review_and_travel(
    app: Workbench, pilot: Pilot[None], save: Callable[[str], None]
) -> None:
    """A rewrite's word diff in the queue, time travel, then-vs-now and what decay hid."""
    await on_proposal(app, pilot, lambda p: p.delta.get("type") == "replace")
    save("proposals-diff")

    await pilot.press("1")
    await travel(app, pilot)
    save("time-travel")
    await then_and_now(app, pilot)
    save("then-and-now")
    await back_to_now(app, pilot)

    await hidden(app, pilot)
    save("hidden")
    await pilot.press("escape")
    app.set_filter("")
    await pilot.pause(0.3)


async def travel(app: Workbench, pilot: Pilot[None]) -> None:
    """Show the playbook as it stood TRAVEL_DAYS ago (as `t` and a date would)."""
    app.travel_to(app.now() - timedelta(days=TRAVEL_DAYS))
    await until(pilot, lambda: app.snapshot is not None and app.snapshot.as_of, "time travel")
    await settle(pilot, app)


async def then_and_now(app: Workbench, pilot: Pilot[None]) -> None:
    """While travelling: then (the moment shown) against now (`c`), its list read."""
    await pilot.press("c")
    await until(pilot, lambda: isinstance(app.screen, CompareScreen), "then-vs-now")
    screen = app.screen
    await until(pilot, lambda: screen.diff is not None, "the diff")  # type: ignore[attr-defined]
    await pilot.pause(0.3)


async def back_to_now(app: Workbench, pilot: Pilot[None]) -> None:
    """Out of then-vs-now and back from time travel."""
    await pilot.press("escape", "T")
    await until(pilot, lambda: app.snapshot is not None and app.snapshot.as_of is None, "now")


async def hidden(app: Workbench, pilot: Pilot[None]) -> None:
    """What decay hid for "ci cache", the cursor on its first rule."""
    app.set_filter("ci cache")
    await until(pilot, lambda: app.bullets_pane.view.relevance is not None, "the filter")
    app.bullets_pane.table.focus()
    await pilot.press("h")
    await until(pilot, lambda: isinstance(app.screen, HiddenScreen), "what decay hid")
    screen = app.screen
    await until(pilot, lambda: screen.report is not None, "the report")  # type: ignore[attr-defined]
    await pilot.pause(0.3)


_LEADING_NBSP = re.compile(
    r'(<text [^>]*?x=")([\d.]+)("[^>]*?textLength=")([\d.]+)("[^>]*>)((?:&#160;)+)([^<]*)</text>'
)


def _fix_leading_spaces(svg: str) -> str:
    """rsvg drops leading non-breaking spaces in a <text>, shifting what follows left;
    move the text's x right by their width instead (the SVG itself is left as written)."""

    def fix(m: re.Match[str]) -> str:
        n = m.group(6).count("&#160;")
        rest = m.group(7)
        chars = n + len(re.sub(r"&#?\w+;", "x", rest))
        width = float(m.group(4)) / max(1, chars)
        x = float(m.group(2)) + n * width
        length = float(m.group(4)) - n * width
        if not rest:
            return ""
        return f"{m.group(1)}{x:.1f}{m.group(3)}{length:.1f}{m.group(5)}{rest}</text>"

    return _LEADING_NBSP.sub(fix, svg)


def to_png(svg: Path) -> Path | None:
    tool = shutil.which("rsvg-convert")
    if tool is None:
        return None
    png = svg.with_suffix(".png")
    with tempfile.NamedTemporaryFile("w", suffix=".svg", delete=False, encoding="utf-8") as tmp:
        tmp.write(_fix_leading_spaces(svg.read_text(encoding="utf-8")))
    try:
        subprocess.run([tool, "-o", str(png), tmp.name], check=True)
    finally:
        Path(tmp.name).unlink()
    return png


async def capture_narrow(app: Workbench, pilot: Pilot[None], out: Path) -> list[Path]:
    """The same workbench at 80x24: what a default terminal shows."""
    written: list[Path] = []

    def save(name: str) -> None:
        app.save_screenshot(f"{name}.svg", str(out))
        written.append(out / f"{name}.svg")

    await settle(pilot, app)
    save("narrow-bullets")
    app.open_bullet(pick_detail_bullet(app))
    await settle(pilot, app)
    save("narrow-detail")
    await pilot.press("1", "minus")
    await pilot.pause(0.5)
    assert isinstance(app.screen, HarmfulModal), "mark harmful did not open its dialog"
    save("narrow-harmful")
    await pilot.press("escape")
    await pilot.pause(0.3)
    await travel(app, pilot)
    save("narrow-time-travel")
    await pilot.press("T")
    await until(pilot, lambda: app.snapshot is not None and app.snapshot.as_of is None, "now")
    await hidden(app, pilot)
    save("narrow-hidden")
    await pilot.press("escape")
    app.set_filter("")
    await on_proposal(app, pilot, lambda p: p.delta.get("type") == "replace")
    save("narrow-proposals-diff")
    await pilot.press("4")
    await settle(pilot, app)
    save("narrow-conflicts")
    await pilot.press("1")
    await travel(app, pilot)
    await then_and_now(app, pilot)
    save("narrow-then-and-now")
    await back_to_now(app, pilot)
    app.push_screen(PolicyScreen(app.source.path, app.policy))
    policy = app.screen
    await until(pilot, lambda: policy.report is not None, "the evaluation")  # type: ignore[attr-defined]
    await pilot.press("end")  # by keys, to the forest plot and the verdict
    await pilot.pause(0.5)
    save("narrow-policy")
    await pilot.press("escape")
    return written


async def capture_tour(app: TourWorkbench, pilot: Pilot[None], out: Path) -> list[Path]:
    """`playbook demo --tour` at its third step: a caption over a rewrite's word diff."""
    await until(pilot, lambda: app.step == 0, "the tour")
    for step in (1, 2):  # as a presenter would: each step once the last is on screen
        await pilot.press("right")
        await until(pilot, lambda step=step: app.step == step, f"the tour's step {step + 1}")
        await settle(pilot, app)
    await settle(pilot, app)
    name = "tour.svg" if app.size.width > 100 else "narrow-tour.svg"
    app.save_screenshot(name, str(out))
    return [out / name]


async def main_async(out: Path, size: tuple[int, int]) -> list[Path]:
    out.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix="playbook-demo-") as tmp:
        info = make_demo(Path(tmp) / "demo.sqlite3")
        app = Workbench(info.path, label=LABEL, note=NOTE)
        async with app.run_test(size=size) as pilot:
            written = await capture(app, pilot, out)
        app = Workbench(info.path, label=LABEL, note=NOTE)
        async with app.run_test(size=(80, 24)) as pilot:
            written += await capture_narrow(app, pilot, out)
        for tour_size in (size, (80, 24)):  # (the tour writes: each on a fresh copy)
            copy = Path(tmp) / f"tour-{tour_size[0]}" / "demo.sqlite3"
            copy.parent.mkdir()
            make_demo(copy)
            tour = TourWorkbench(copy, prepare=lambda progress: None, label=LABEL, note=NOTE)
            async with tour.run_test(size=tour_size, notifications=True) as pilot:
                written += await capture_tour(tour, pilot, out)
        return written


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", default="screenshots", type=Path)
    parser.add_argument("--size", default="160x45")
    args = parser.parse_args()
    width, height = (int(v) for v in args.size.split("x"))
    svgs = asyncio.run(main_async(args.out, (width, height)))
    for svg in svgs:
        png = to_png(svg)
        print(svg, png or "(no rsvg-convert: SVG only)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
