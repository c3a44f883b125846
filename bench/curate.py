"""Curation speed, in-process: a batch of 100 adds + 100 helpful into a 10k-rule playbook,
and one feedback mark at 1k, 10k and 100k rules (median of repeated runs).

    python bench/curate.py [SIZE ...]

Targets (issues 2 and 15): the batch ≤ 100 ms; a mark ≤ 5 ms and flat from 1k to 100k
(reported as the 100k / 1k ratio, ≤ 2x: a mark that grew with the playbook would show
tens or hundreds).
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
from report import figure

from playbook.curation import curate
from playbook.store import PlaybookStore, connect


def batch_median(store: PlaybookStore, rounds: int = 5, label: str = "Batch") -> float:
    """Median seconds of `rounds` batches of 100 new rules + 100 helpful marks on `store`
    (bench/backends.py times the same batch on each backend; another `label` makes rules
    of their own, for a second measure on one playbook)."""
    ids = [b.id for b in store.bullets(state="active")]
    rng = random.Random(3)
    times = []
    for r in range(rounds):
        batch = [
            {"type": "add", "content": f"{label} {r} rule {i}: check config{r}x{i} first",
             "tags": ["bench"]}
            for i in range(100)
        ] + [{"type": "helpful", "bullet_id": b} for b in rng.sample(ids, 100)]  # fmt: skip
        t = time.perf_counter()
        result = curate(store, batch)
        times.append(time.perf_counter() - t)
        assert len(result.added) == 100, result.outcomes[:3]
    return statistics.median(times)


def batch_time(n: int, rounds: int = 5) -> float:
    with tempfile.TemporaryDirectory() as d:
        path = synth.copy_of(n, Path(d) / "pb.sqlite3")
        store = PlaybookStore(connect(path), clock=lambda: synth.NOW)
        try:
            return batch_median(store, rounds)
        finally:
            store.close()


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
        store.close()
    return statistics.median(times)


def main() -> None:
    sizes = [int(a) for a in sys.argv[1:]] or [1_000, 10_000, 100_000]
    for n in sizes:
        synth.playbook(n)
    if 10_000 in sizes:
        figure("curate 100 adds + 100 helpful at 10k", batch_time(10_000) * 1000, "ms", 100)
    marks = {}
    for n in sizes:
        marks[n] = mark_time(n) * 1000
        figure(f"mark in-process at {n // 1000}k", marks[n], "ms", 5)
    if len(marks) > 1:
        figure(f"mark in-process {max(marks) // 1000}k / {min(marks) // 1000}k",
               marks[max(marks)] / marks[min(marks)], "x", 2)  # fmt: skip


if __name__ == "__main__":
    main()
