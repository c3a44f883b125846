"""Consolidation speed: topics() over synthetic playbooks (in-process; no target yet).

python bench/topics.py [SIZE ...]
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import synth
from report import figure, note

from playbook.review.topics import topics
from playbook.store import PlaybookStore, connect


def main() -> None:
    for n in [int(a) for a in sys.argv[1:]] or [1_000, 10_000]:
        store = PlaybookStore(connect(synth.playbook(n)), clock=lambda: synth.NOW)
        t = time.perf_counter()
        found = topics(store)
        seconds = time.perf_counter() - t
        store.close()
        note(f"topics at {n:,} rules: {len(found)} groups")
        figure(f"topics at {n // 1000}k (in-process)", seconds, "s")


if __name__ == "__main__":
    main()
