"""Curation speed: a batch of 100 adds + 100 helpful into a 10k-bullet playbook, and one
feedback mark at 1k, 10k and 100k bullets (in-process; median of repeated runs).

Targets (issue 2): batch <= 0.1 s; mark <= 5 ms and not growing with the playbook.
"""

from __future__ import annotations

import random
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import synth

from playbook.curation import curate
from playbook.store import PlaybookStore, connect


def batch_time(n: int, rounds: int = 5) -> float:
    times = []
    with tempfile.TemporaryDirectory() as d:
        path = synth.copy_of(n, Path(d) / "pb.sqlite3")
        store = PlaybookStore(connect(path), clock=lambda: synth.NOW)
        ids = [b.id for b in store.bullets(state="active")]
        rng = random.Random(3)
        for r in range(rounds):
            batch = [
                {"type": "add", "content": f"Batch {r} rule {i}: check config{r}x{i} first",
                 "tags": ["bench"]}
                for i in range(100)
            ] + [{"type": "helpful", "bullet_id": b} for b in rng.sample(ids, 100)]  # fmt: skip
            t = time.perf_counter()
            result = curate(store, batch)
            times.append(time.perf_counter() - t)
            assert len(result.added) == 100, result.outcomes[:3]
    return statistics.median(times)


def mark_time(n: int, marks: int = 200) -> float:
    times = []
    with tempfile.TemporaryDirectory() as d:
        path = synth.copy_of(n, Path(d) / "pb.sqlite3")
        store = PlaybookStore(connect(path), clock=lambda: synth.NOW)
        ids = [b.id for b in store.bullets(state="active")]
        rng = random.Random(5)
        curate(store, [{"type": "helpful", "bullet_id": ids[0]}])  # warm up
        for _ in range(marks):
            delta = {"type": "helpful", "bullet_id": rng.choice(ids)}
            t = time.perf_counter()
            curate(store, [delta])
            times.append(time.perf_counter() - t)
    return statistics.median(times)


def main() -> None:
    sizes = [int(a) for a in sys.argv[1:]] or [1_000, 10_000, 100_000]
    for n in sizes:
        synth.playbook(n)
    if 10_000 in sizes:
        print(f"curate 100 adds + 100 helpful into 10k bullets: {batch_time(10_000) * 1000:7.1f} ms"
              "   (target <= 100 ms)")  # fmt: skip
    for n in sizes:
        print(f"one feedback mark at {n:>7,} bullets:            {mark_time(n) * 1000:7.2f} ms"
              "   (target <= 5 ms, flat)")  # fmt: skip


if __name__ == "__main__":
    main()
