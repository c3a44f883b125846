"""Recall speed at 1k, 10k and 100k bullets (~10 events each).

Prints in-process latency (median of repeated queries) by keyword and with the hashed
trigram embedder, and whole-process `playbook recall --json` wall time and peak memory.
Targets (issue 3): in-process <= 10 ms at 10k and <= 50 ms at 100k (keyword); whole process
<= 0.3 s at 10k and <= 0.6 s at 100k; <= 300 MB at 100k.
"""

from __future__ import annotations

import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import synth

from playbook.retrieval import recall
from playbook.store import PlaybookStore, connect
from playbook.vectors import HashTrigramEmbedder, MemoryVectors

QUERIES = [
    "flaky pytest fixture in ci",
    "npm lockfile release job",
    "docker compose cache",
    "postgres migrations transaction",
    "rebase squash branch hooks",
    "typescript eslint vitest",
]

CHILD = """
import resource, subprocess, sys, time
t = time.perf_counter()
p = subprocess.run(sys.argv[1:], capture_output=True)
wall = time.perf_counter() - t
rss = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
print(wall, rss, p.returncode, len(p.stdout))
"""


def in_process(path: Path, semantic: bool, repeats: int = 5) -> tuple[float, float]:
    store = PlaybookStore(connect(path), clock=lambda: synth.NOW)
    vectors = MemoryVectors(store, HashTrigramEmbedder()) if semantic else None
    t = time.perf_counter()
    recall(store, QUERIES[0], vectors=vectors)  # first call (embeds what is missing)
    first = time.perf_counter() - t
    times = []
    for _ in range(repeats):
        for q in QUERIES:
            t = time.perf_counter()
            recall(store, q, vectors=vectors)
            times.append(time.perf_counter() - t)
    store.close()
    return first, statistics.median(times)


def whole_process(path: Path, runs: int = 5) -> tuple[float, float]:
    exe = Path(sys.executable).with_name("playbook")
    walls, peaks = [], []
    for i in range(runs):
        cmd = [str(exe), "--db", str(path), "recall", QUERIES[i % len(QUERIES)], "--json"]
        out = subprocess.run(
            [sys.executable, "-c", CHILD, *cmd], capture_output=True, text=True, check=True
        ).stdout.split()
        wall, rss, rc = float(out[0]), int(out[1]), int(out[2])
        assert rc == 0, cmd
        walls.append(wall)
        peaks.append(rss / 1024)
    return statistics.median(walls), max(peaks)


def main() -> None:
    sizes = [int(a) for a in sys.argv[1:]] or [1_000, 10_000, 100_000]
    rows = []
    for n in sizes:
        path = synth.playbook(n)
        _, kw = in_process(path, semantic=False)
        first, sem = in_process(path, semantic=True) if n <= 100_000 else (0.0, 0.0)
        wall, peak = whole_process(path)
        rows.append((n, kw, first, sem, wall, peak))
        print(
            f"{n:>7,} bullets: in-process keyword {kw * 1000:6.1f} ms | with hash embedder "
            f"{sem * 1000:6.1f} ms (first call {first:5.2f} s) | whole process "
            f"{wall:5.2f} s, peak {peak:5.0f} MB",
            flush=True,
        )
    if os.environ.get("BENCH_JSON"):
        print(json.dumps(rows))


if __name__ == "__main__":
    main()
