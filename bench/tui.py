"""Workbench speed: first paint and filled table (demo cold and warm, 10k, 100k), filter keys.

    python bench/tui.py [--sizes 10000,100000] [--keep DIR] [--no-demo]

The synthetic playbooks are written straight into the schema in one transaction (bullets,
token index, tags, maturity log, two or three feedback events each), then the store folds
the events into its evidence cache, as it would have done as they arrived; none of that is
timed. Timed, headless, at 160x45:

- first paint: from constructing the app to the first frame that shows the bullets table
  filled (the load runs in a thread worker; the table draws only the visible lines);
- filter: from a keystroke in the `/` box to the frame showing the re-ranked rows
  (recall's keyword points from the token index in a worker, then relevance x score).

Whole process, in a pseudo-terminal of 160x45 (what a user waits for, imports included):

- `playbook demo` with an empty cache (it builds the demo) and with a warm one: time to the
  first frame (the top bar drawn) and to the filled table (the "live" mark, set when the
  first snapshot is on screen);
- `playbook tui` on each synthetic playbook: the same two times.

Targets (issue 14): demo first paint <= 1 s (cold and warm), 100k first paint <= 1.5 s,
filter keystroke <= 100 ms at 100k.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import random
import re
import statistics
import sys
import tempfile
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path

from playbook.store import PlaybookStore, connect, iso
from playbook.text import content_hash, tokens

WORDS = (
    "test tests pytest ci cache lockfile docker image build release deploy migration schema "
    "database sqlite postgres index query log logs error errors retry flaky timeout worker "
    "branch commit rebase merge review diff lint format type types python typescript rust go "
    "node npm pip venv package dependency version pin secret token env config settings "
    "fixture mock stub clock time sleep wait thread async lock race file path tmp cleanup "
    "run runner job step matrix artifact upload download network port service container "
    "health probe metric trace span alert page oncall rollback feature flag api endpoint "
    "request response json yaml toml schema validate parse encode decode unicode bytes "
    "memory leak profile benchmark hot path allocation copy stream buffer batch queue"
).split()
CATEGORIES = ("ci", "testing", "python", "git", "docker", "security", "review", "workflow")
MATURITIES = ("candidate", "established", "proven", "deprecated")


def build(path: Path, n: int, seed: int = 1) -> None:
    rng = random.Random(seed)
    now = datetime.now(UTC)
    conn = connect(path)
    store = PlaybookStore(conn)
    bullets, tok_rows, tag_rows, log_rows, events = [], [], [], [], []
    df: dict[str, int] = {}
    for i in range(n):
        words = rng.sample(WORDS, rng.randint(8, 16))
        words[0] = words[0].capitalize()
        content = " ".join(words) + f" (variant {i})"
        bid = f"b-{i:08x}"
        created = now - timedelta(days=rng.uniform(1, 300))
        category = rng.choice(CATEGORIES)
        tags = [category, rng.choice(WORDS)]
        maturity = rng.choices(MATURITIES, weights=(5, 4, 2, 1))[0]
        at = iso(created)
        bullets.append(
            (
                i + 1,
                bid,
                content,
                category,
                json.dumps(tags),
                "global",
                None,
                "rule",
                "workflow_rule",
                "learned",
                "active",
                maturity,
                0,
                None,
                None,
                None,
                None,
                at,
                at,
                None,
                content_hash(content),
            )
        )
        toks = set(tokens(content))
        for t in toks:
            tok_rows.append((t, i + 1))
            df[t] = df.get(t, 0) + 1
        tag_rows.extend((t, i + 1) for t in set(tags))
        log_rows.append((bid, at, maturity))
        for _ in range(rng.randint(2, 3)):
            when = iso(created + (now - created) * rng.random())
            kind = "helpful" if rng.random() < 0.8 else "harmful"
            events.append((bid, kind, when, when))
    events.sort(key=lambda e: e[2])
    with store.transaction():
        conn.executemany(
            "INSERT INTO bullets (seq, id, content, category, tags, scope, scope_key, type, kind, "
            "source, state, maturity, pinned, pinned_reason, half_life_days, session_ref, "
            "byte_offset, created_at, valid_from, valid_to, content_hash) "
            "VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)",
            bullets,
        )
        conn.executemany("INSERT INTO bullet_tokens (token, seq) VALUES (?, ?)", tok_rows)
        conn.executemany("INSERT INTO vocab (token, df) VALUES (?, ?)", list(df.items()))
        conn.executemany("INSERT INTO bullet_tags (tag, seq) VALUES (?, ?)", tag_rows)
        conn.executemany(
            "INSERT INTO maturity_log (bullet_id, at, maturity) VALUES (?, ?, ?)", log_rows
        )
        conn.executemany(
            "INSERT INTO feedback (bullet_id, kind, at, recorded_at) VALUES (?, ?, ?, ?)",
            events,
        )
    store.sync_evidence()
    conn.close()


class _Frames:
    """Notes when the bullets table draws a line after something changed (a frame)."""

    def __init__(self) -> None:
        self.event = asyncio.Event()
        self.armed = False
        self.at = 0.0

    def install(self) -> None:
        from playbook.tui.widgets.table import RowTable

        original = RowTable.render_line
        frames = self

        def render_line(table: RowTable, y: int):  # type: ignore[no-untyped-def]
            if frames.armed and y > 0:
                frames.armed = False
                frames.at = time.perf_counter()
                frames.event.set()
            return original(table, y)

        RowTable.render_line = render_line  # type: ignore[method-assign]

    def arm(self) -> None:
        self.event.clear()
        self.armed = True


async def measure(path: Path, words: list[str]) -> dict[str, object]:
    from playbook.tui.app import Workbench
    from playbook.tui.widgets.table import RowTable

    frames = _Frames()
    frames.install()

    class Bench(Workbench):
        def snapshot_applied(self) -> None:
            frames.arm()  # the next line drawn is the first frame with the rows

        def filter_applied(self, text: str) -> None:
            frames.arm()

    started = time.perf_counter()
    app = Bench(path, poll_seconds=3600)  # no background polls during the timing
    async with app.run_test(size=(160, 45)) as pilot:
        await frames.event.wait()
        first_paint = frames.at - started
        table = app.query_one(RowTable)
        assert table.row_count > 0
        await app.workers.wait_for_complete()  # steady state: the sort index is built
        await pilot.press("slash")
        await pilot.pause()
        keystrokes: list[float] = []
        for word in words:
            for key in word:
                frames.event.clear()
                t0 = time.perf_counter()
                await pilot.press("space" if key == " " else key)
                if key == " ":
                    continue  # a space alone does not change the query's words
                await frames.event.wait()
                # From the key to the frame that showed its result (not to the end of
                # Pilot's own settling, which adds ~100 ms of waiting for idle).
                keystrokes.append(frames.at - t0)
            for _ in word:  # clear the box for the next word, untimed
                await pilot.press("backspace")
            await pilot.pause(0.3)
        return {
            "bullets": table.row_count,
            "first_paint_s": round(first_paint, 3),
            "load_s": round(app.snapshot.seconds if app.snapshot else 0, 3),
            "filter_ms_median": round(statistics.median(keystrokes) * 1000, 1),
            "filter_ms_p90": round(sorted(keystrokes)[int(0.9 * (len(keystrokes) - 1))] * 1000, 1),
            "filter_ms_max": round(max(keystrokes) * 1000, 1),
            "keystrokes": len(keystrokes),
        }


def measure_process(args: list[str], env: dict[str, str], timeout: float = 120) -> dict[str, float]:
    """Seconds from spawning `playbook ARGS` in a 160x45 pseudo-terminal to its first frame
    (the top bar's brand) and to its filled table (the top bar's "live" mark)."""
    import fcntl
    import pty
    import select
    import struct
    import subprocess
    import termios

    master, slave = pty.openpty()
    fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", 45, 160, 0, 0))
    started = time.perf_counter()
    proc = subprocess.Popen(
        [sys.executable, "-c", "from playbook.cli import run; run()", *args],
        stdin=slave,
        stdout=slave,
        stderr=slave,
        env={**env, "TERM": "xterm-256color"},
        start_new_session=True,
    )
    os.close(slave)
    seen = b""
    times: dict[str, float] = {}
    deadline = started + timeout
    while "filled_s" not in times and time.perf_counter() < deadline:
        ready, _, _ = select.select([master], [], [], 0.05)
        if not ready:
            continue
        try:
            seen += os.read(master, 1 << 16)
        except OSError:
            break
        text = re.sub(rb"\x1b\[[0-9;?]*[a-zA-Z]", b"", seen)
        if "frame_s" not in times and b"PLAYBOOK" in text:
            times["frame_s"] = time.perf_counter() - started
        if b"live " in text:
            times["filled_s"] = time.perf_counter() - started
    os.write(master, b"\x11")  # ctrl+q
    try:
        proc.wait(timeout=20)
    except subprocess.TimeoutExpired:
        proc.kill()
    os.close(master)
    return times


def _line(what: str, times: dict[str, float]) -> str:
    frame, filled = times.get("frame_s"), times.get("filled_s")
    show = lambda v: f"{v:.2f} s" if v is not None else "never"  # noqa: E731
    return f"{what:<28} first paint {show(frame)}, filled table {show(filled)}"


def bench_demo() -> None:
    cache = Path(tempfile.mkdtemp(prefix="playbook-bench-cache-"))
    env = {k: v for k, v in os.environ.items() if not k.startswith("PLAYBOOK_")}
    env["XDG_CACHE_HOME"] = str(cache)
    print(_line("playbook demo, cold cache", measure_process(["demo"], env)))
    for i in range(2):
        print(_line(f"playbook demo, warm ({i + 1})", measure_process(["demo"], env)))


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="10000,100000")
    parser.add_argument("--words", default="flaky,ci cache,sqlite lock")
    parser.add_argument("--keep", type=Path, default=None, help="Keep the playbooks here.")
    parser.add_argument("--no-demo", action="store_true", help="Skip the demo timings.")
    args = parser.parse_args()
    if not args.no_demo:
        bench_demo()
    words = args.words.split(",")
    folder = args.keep or Path(tempfile.mkdtemp(prefix="playbook-bench-"))
    folder.mkdir(parents=True, exist_ok=True)
    for n in (int(s) for s in args.sizes.split(",")):
        path = folder / f"bench-{n}.sqlite3"
        if not path.exists():
            t0 = time.perf_counter()
            partial = path.with_suffix(".building")
            partial.unlink(missing_ok=True)
            build(partial, n)
            partial.rename(path)
            print(f"built {n:,} bullets in {time.perf_counter() - t0:.1f} s", file=sys.stderr)
        import os

        env = {k: v for k, v in os.environ.items() if not k.startswith("PLAYBOOK_")}
        print(
            _line(f"playbook tui, {n:,} bullets", measure_process(["tui", "--db", str(path)], env))
        )
        result = asyncio.run(measure(path, words))
        print(
            f"{n:>7,} bullets  first paint {result['first_paint_s']:.2f} s "
            f"(read {result['load_s']:.2f} s)  filter keystroke median "
            f"{result['filter_ms_median']:.0f} ms, p90 {result['filter_ms_p90']:.0f} ms, "
            f"max {result['filter_ms_max']:.0f} ms over {result['keystrokes']} keys"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
