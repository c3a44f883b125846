"""Consolidation speed: topics() over synthetic playbooks (in-process)."""

from __future__ import annotations

import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import synth

from playbook.consolidation import topics
from playbook.store import PlaybookStore, connect


def main() -> None:
    for n in [int(a) for a in sys.argv[1:]] or [1_000, 10_000]:
        store = PlaybookStore(connect(synth.playbook(n)), clock=lambda: synth.NOW)
        t = time.perf_counter()
        found = topics(store)
        print(f"topics at {n:>7,} bullets: {time.perf_counter() - t:6.2f} s, {len(found)} groups")


if __name__ == "__main__":
    main()
