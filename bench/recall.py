"""Recall speed at 1k, 10k and 100k rules (~10 feedback events each).

    python bench/recall.py [SIZE ...]

- in-process keyword recall (median over repeated queries);
- semantic recall with the hashed-trigram embedder: `playbook index` (whole process), the
  first recall after it (in-process on a fresh store, and `playbook recall --semantic
  --json` as a whole process, with its peak memory), warm recalls (in-process), and for
  comparison the first recall on a playbook never indexed (every vector computed then);
- the upgrade of a cache an older Playbook wrote (float32 rows, four times the size):
  `playbook index` rewriting it as int8 counts, and the first recall after that.

Targets: keyword in-process ≤ 10 ms at 10k and ≤ 50 ms at 100k (issue 3); first semantic
recall after indexing ≤ 1 s at 100k (issue 15).
"""

from __future__ import annotations

import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import synth
from report import figure, note, run_measured

from playbook.retrieval.query import recall
from playbook.retrieval.vectors import HashTrigramEmbedder, MemoryVectors
from playbook.store import PlaybookStore, connect

QUERIES = [
    "flaky pytest fixture in ci",
    "npm lockfile release job",
    "docker compose cache",
    "postgres migrations transaction",
    "rebase squash branch hooks",
    "typescript eslint vitest",
]
KEYWORD_TARGET = {1_000: 10.0, 10_000: 10.0, 100_000: 50.0}  # ms


def k(n: int) -> str:
    return f"{n // 1000}k"


def playbook_cmd(db: Path, *args: str) -> list[str]:
    exe = Path(sys.executable).with_name("playbook")
    return [str(exe), "--db", str(db), *args]


def in_process(path: Path, semantic: bool, repeats: int = 5) -> tuple[float, float]:
    """(first recall, median of the following ones) in seconds, on a fresh store."""
    store = PlaybookStore(connect(path), clock=lambda: synth.NOW)
    vectors = MemoryVectors(store, HashTrigramEmbedder()) if semantic else None
    t = time.perf_counter()
    recall(store, QUERIES[0], vectors=vectors)
    first = time.perf_counter() - t
    times = []
    for _ in range(repeats):
        for q in QUERIES:
            t = time.perf_counter()
            recall(store, q, vectors=vectors)
            times.append(time.perf_counter() - t)
    store.close()
    return first, statistics.median(times)


def write_float32_cache(path: Path) -> None:
    """Every live rule's vector as Playbook kept it before int8 counts: float32 unit rows."""
    store = PlaybookStore(connect(path), clock=lambda: synth.NOW)
    embedder = HashTrigramEmbedder()
    rows = store.sql.all(
        "SELECT content_hash, MIN(content) FROM bullets WHERE state != 'retired' "
        "GROUP BY content_hash"
    )
    with store.transaction():
        for start in range(0, len(rows), 4096):
            chunk = rows[start : start + 4096]
            vectors = embedder.embed([c for _, c in chunk])
            store.cache_put(
                embedder.id,
                embedder.dims,
                {h: v.tobytes() for (h, _), v in zip(chunk, vectors, strict=True)},
            )
    store.close()


def main() -> None:
    sizes = [int(a) for a in sys.argv[1:]] or [1_000, 10_000, 100_000]
    for n in sizes:
        synth.playbook(n)
    with tempfile.TemporaryDirectory() as tmp:
        for n in sizes:
            _, kw = in_process(synth.playbook(n), semantic=False)
            figure(f"recall keyword in-process at {k(n)}", kw * 1000, "ms", KEYWORD_TARGET.get(n))

            cold = synth.copy_of(n, Path(tmp) / "cold.sqlite3")
            t = time.perf_counter()
            store = PlaybookStore(connect(cold), clock=lambda: synth.NOW)
            recall(store, QUERIES[0], vectors=MemoryVectors(store, HashTrigramEmbedder()))
            store.close()
            figure(f"first semantic recall at {k(n)}, never indexed", time.perf_counter() - t, "s")
            cold.unlink()

            db = synth.copy_of(n, Path(tmp) / "indexed.sqlite3")
            wall, _, _ = run_measured(playbook_cmd(db, "index"))
            figure(f"playbook index at {k(n)} (whole process)", wall, "s")
            first, warm = in_process(db, semantic=True)
            target = 1.0 if n >= 100_000 else None
            figure(f"first semantic recall at {k(n)}, indexed (in-process)", first, "s", target)
            run_measured(playbook_cmd(db, "recall", QUERIES[1], "--semantic", "--json"))
            runs = [
                run_measured(playbook_cmd(db, "recall", q, "--semantic", "--json"))
                for q in QUERIES[:3]
            ]
            wall = statistics.median(r[0] for r in runs)
            figure(f"recall --semantic at {k(n)}, indexed (whole process)", wall, "s", target)
            figure(f"recall --semantic peak memory at {k(n)}", max(r[1] for r in runs), "MB")
            figure(f"semantic recall warm in-process at {k(n)}", warm * 1000, "ms")
            db.unlink()

            old = synth.copy_of(n, Path(tmp) / "float32.sqlite3")
            write_float32_cache(old)
            wall, _, _ = run_measured(playbook_cmd(old, "index"))
            figure(
                f"playbook index compacting a float32 cache at {k(n)} (whole process)", wall, "s"
            )
            first, _ = in_process(old, semantic=True, repeats=1)
            figure(f"first semantic recall at {k(n)}, compacted (in-process)", first, "s", target)
            old.unlink()
    note("(the whole-process semantic figure includes start-up: see bench/cli.py for it alone)")


if __name__ == "__main__":
    main()
