"""What a PostgreSQL connection pays for `pool=transaction` when it goes straight to the
server: the session's settings sent in every transaction and no prepared statements
(`store/postgres/pooling.py`), against the settings sent once with the connection.

    python bench/pg_pool.py [SIZE]        # default 10000 rules

The synthetic playbook (`synth.py`) is copied into a schema of the server in
$PLAYBOOK_TEST_PG or of a throwaway one (as `bench/backends.py` does). Then, alternately
(straight, pooled, straight, pooled, ... `ROUNDS` times each), in-process medians of: a
read on its own (one `SELECT` of a rule by key), a mark (one helpful vote through
`curate`), a keyword recall; and the same URL with `pool=transaction` but prepared
statements kept, to tell the two costs apart. Then the whole process: `playbook recall
--json` and `playbook mark`, alternately, 10 runs each. The load average is printed with
every round (the machine is shared; compare within a round).
"""

# bench: only when named

from __future__ import annotations

import os
import random
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import synth
from backends import drop_schemas, in_schema, opened, recall_ms, server
from cli import command
from report import environment, figure, note

from playbook.curation import curate
from playbook.store import copy_playbook

ROUNDS = 4
KEPT = "pool=transaction, prepared statements kept"


def load() -> str:
    return f"load {os.getloadavg()[0]:.1f}"


def read_ms(url: str, reads: int = 400) -> float:
    with opened(url) as store:
        ids = [b.id for b in store.bullets(state="active")][:200]
        times = []
        for i in range(reads):
            t = time.perf_counter()
            store.sql.one("SELECT id, content FROM bullets WHERE id = ?", (ids[i % len(ids)],))
            times.append(time.perf_counter() - t)
    return statistics.median(times) * 1000


def mark_ms(url: str, marks: int = 100) -> float:
    with opened(url) as store:
        ids = [b.id for b in store.bullets(state="active")]
        rng = random.Random(5)
        curate(store, [{"type": "helpful", "bullet_id": ids[0]}])
        times = []
        for _ in range(marks):
            t = time.perf_counter()
            curate(store, [{"type": "helpful", "bullet_id": rng.choice(ids)}])
            times.append(time.perf_counter() - t)
    return statistics.median(times) * 1000


def keeping_prepared(run: Callable[[str], float], url: str) -> float:
    """`run` on a pooled URL whose connections prepare as psycopg does by default."""
    from playbook.store.postgres import opening

    plain = opening.session

    def session(*args: object, **kwargs: object) -> tuple[str, dict[str, object], str]:
        found = plain(*args, **kwargs)  # type: ignore[arg-type]
        found[1].pop("prepare_threshold", None)
        return found

    opening.session = session  # type: ignore[assignment]  # this bench's variant only
    try:
        return run(url)
    finally:
        opening.session = plain  # type: ignore[assignment]


def whole(url: str, args: list[str], runs: int) -> list[float]:
    env = environment()
    env.pop("PLAYBOOK_READ_DB", None)
    times = []
    for _ in range(runs):
        t = time.perf_counter()
        subprocess.run([*command(), "--db", url, *args], env=env, check=True,
                       capture_output=True)  # fmt: skip
        times.append(time.perf_counter() - t)
    return times


def main() -> int:
    n = int(sys.argv[1]) if len(sys.argv) > 1 else 10_000
    synth.playbook(n)
    with tempfile.TemporaryDirectory() as tmp, server() as base:
        schema = f"bench_pool_{os.getpid()}"
        straight = in_schema(base, schema)
        pooled = f"{straight}&pool=transaction"
        try:
            path = synth.copy_of(n, Path(tmp) / "pb.sqlite3")
            opened(path).close()
            copy_playbook(path, straight)
            got: dict[tuple[str, str], list[float]] = {}
            for r in range(ROUNDS):
                note(f"round {r + 1}: {load()}")
                for what, run in (("read", read_ms), ("mark", mark_ms), ("recall", recall_ms)):
                    for how, url in (("straight", straight), ("pooled", pooled), (KEPT, pooled)):
                        ms = keeping_prepared(run, url) if how == KEPT else run(url)
                        got.setdefault((what, how), []).append(ms)
                        note(f"  {what:6} {how:40} {ms:8.3f} ms")
            for (what, how), values in got.items():
                figure(f"{what} in-process at {n // 1000}k, {how} (median of rounds)",
                       statistics.median(values), "ms")  # fmt: skip
            bid = synth.some_id(path)
            for args, name in ((["recall", "npm release", "--json"], "recall --json"),
                               (["mark", bid, "helpful", "--json"], "mark")):  # fmt: skip
                walls: dict[str, list[float]] = {"straight": [], "pooled": []}
                note(f"whole process, {name}: {load()}")
                for _ in range(5):
                    for how, url in (("straight", straight), ("pooled", pooled)):
                        walls[how] += whole(url, args, 2)
                for how, values in walls.items():
                    figure(f"{name} whole process at {n // 1000}k, {how} (median of 10)",
                           statistics.median(values), "s")  # fmt: skip
            note(load())
        finally:
            drop_schemas(base, [schema])
    return 0


if __name__ == "__main__":
    sys.exit(main())
