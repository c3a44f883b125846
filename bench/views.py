"""Issue 14's API views on synthetic playbooks (~10 feedback events per rule).

    python bench/views.py

- time travel: the workbench's switch to a date at 10k rules (`rows_as_of` +
  `conflicts_as_of` + `proposals_as_of`), a week and a month back, and `diff_since` a month
  back; for comparison, `evidence_many(as_of=)` over every bullet (the walk it replaces);
- score trends: `score_trends` for the 100 rows on screen at 100k rules;
- what decay hid: `explain_hidden` at 10k and 100k rules.

Targets: time-travel switch ≤ 500 ms at 10k (issue 14); trends for 100 rows ≤ 20 ms at
100k (the brief). Medians of repeated runs; a shared machine moves these by tens of percent.
"""

from __future__ import annotations

import statistics
import sys
import time
from datetime import timedelta
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import synth
from report import figure

from playbook import review
from playbook.store import open_store


def median_ms(fn, repeats: int = 5) -> float:  # type: ignore[no-untyped-def]
    times = []
    for _ in range(repeats):
        t = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t)
    return statistics.median(times) * 1000


def main() -> None:
    with open_store(synth.playbook(10_000), mode="read", clock=lambda: synth.NOW) as store:
        for days in (7, 30):
            when = synth.NOW - timedelta(days=days)

            def switch(when=when):  # type: ignore[no-untyped-def]
                review.rows_as_of(store, when)
                review.conflicts_as_of(store, when)
                review.proposals_as_of(store, when)

            figure(f"time-travel switch {days} days back at 10k", median_ms(switch), "ms", 500)
        month = synth.NOW - timedelta(days=30)
        figure("diff_since a month back at 10k", median_ms(
            lambda: review.diff_since(store, month)), "ms")  # fmt: skip
        ids = store.sql.column("SELECT id FROM bullets")
        figure("evidence_many(as_of=) over every bullet at 10k (the walk replaced)",
               median_ms(lambda: store.evidence_many(ids, as_of=month), 3), "ms")  # fmt: skip
        figure("explain_hidden 'npm lockfile release job' at 10k", median_ms(
            lambda: review.explain_hidden(store, "npm lockfile release job")), "ms")  # fmt: skip
    with open_store(synth.playbook(100_000), mode="read", clock=lambda: synth.NOW) as store:
        ids = store.sql.column("SELECT id FROM bullets ORDER BY seq LIMIT 100 OFFSET 50000")
        review.score_trends(store, ids)  # warm the page cache
        figure("score_trends for 100 rows at 100k", median_ms(
            lambda: review.score_trends(store, ids, days=90, points=16)), "ms", 20)  # fmt: skip
        figure("explain_hidden 'npm lockfile release job' at 100k", median_ms(
            lambda: review.explain_hidden(store, "npm lockfile release job"), 3), "ms")  # fmt: skip


if __name__ == "__main__":
    main()
