"""What one unrelated mark costs, and moves, on a playbook of silent proven rules.

    python bench/maturity.py [--bullets 10000] [--runs 5]

Builds `--bullets` rules that each earned "proven" with ten helpful marks 200 days ago
(their decayed evidence now earns only candidate, and their score is positive), plus one
fresh rule. Then times `curate` of one helpful mark on the fresh rule, several times, and
reports the median wall time and how many other bullets the maturity pass moved. Under
SPEC §4 (cass-memory's rule) decay alone never demotes, so the answer should be 0 moved.
Run it against another tree with PYTHONPATH=that/src to compare. Figures on a shared
machine are noisy.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from report import figure, note


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--bullets", type=int, default=10_000)
    parser.add_argument("--runs", type=int, default=5)
    args = parser.parse_args()

    import playbook
    from playbook.curation import curate, run_maturity_pass
    from playbook.store import open_store

    now = datetime.now(UTC)
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "bench.sqlite3"
        then = now - timedelta(days=200)
        built = open_store(path, clock=lambda: then)
        ids = []
        with built.transaction():
            for i in range(args.bullets):
                b = built.insert_bullet(f"Rule number {i} about tool{i % 97} and step{i}")
                ids.append(b.id)
                for _ in range(10):
                    built.add_feedback(b.id, "helpful")
            run_maturity_pass(built, touched=ids)
        built.close()
        store = open_store(path)
        started = time.perf_counter()
        fresh = curate(store, [{"type": "add", "content": "A fresh rule, marked below"}])
        add_time = time.perf_counter() - started
        add_moved = sum(1 for c in fresh.maturity_changes if c[0] not in fresh.added)
        target = fresh.added[0]
        times, moved = [], []
        for _ in range(args.runs):
            started = time.perf_counter()
            r = curate(store, [{"type": "helpful", "bullet_id": target}])
            times.append(time.perf_counter() - started)
            moved.append(sum(1 for c in r.maturity_changes if c[0] != target))
        proven = len(store.bullets(maturity="proven"))
        store.close()
    note(f"playbook from {Path(playbook.__file__).parent}")
    note(f"{args.bullets:,} silent proven rules; one add, then helpful marks on it")
    note(f"  the add           {add_time * 1000:8.1f} ms, moved {add_moved:,} others")
    note(f"  each mark (ms)    {', '.join(f'{t * 1000:.1f}' for t in times)}")
    note(f"  others moved      {moved} (per mark)")
    note(f"  still proven      {proven:,} of {args.bullets:,}")
    where = f"among {args.bullets // 1000}k silent proven rules"
    figure(f"mark {where} (in-process, median)", statistics.median(times) * 1000, "ms")
    figure(f"others re-rated by an unrelated mark {where}", max([*moved, add_moved]), "rules", 0)
    figure(f"proven rules demoted by decay alone {where}", args.bullets - proven, "rules", 0)


if __name__ == "__main__":
    main()
