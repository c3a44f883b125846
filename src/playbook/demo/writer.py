"""The `playbook demo --writer` companion: another process that keeps adding feedback and
proposals every second or two, so the workbench's live refresh can be watched. It stops
when its parent goes away.

No Textual here: this module is part of the core.
"""

from __future__ import annotations

import os
import random
import time
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from ..curation import curate
from ..review import queue
from ..store import PlaybookStore, open_store

WRITER_RULES = (
    "Run `ruff check --fix` before `ruff format` so the formatter sees the fixed code",
    "Give every background job a timeout and log when it is hit",
    "Check the migration's down path on a copy of production data before merging it",
    "Prefer `pathlib.Path` over string concatenation for file paths in Python scripts",
    "Read the CHANGELOG of a dependency before bumping its major version",
    "Keep feature flags out of library code; read them at the edge of the application",
    "Record the exact command that reproduced a flaky test in the issue",
    "Use `--frozen-lockfile` in CI so an out-of-date lockfile fails the build",
)


def run_writer(
    path: str | Path,
    *,
    interval: tuple[float, float] = (1.0, 2.0),
    iterations: int | None = None,
    parent: int | None = None,
    seed: int | None = None,
) -> int:
    """Keep writing to the playbook like a busy team of agents would; returns writes made.

    Every step: mostly helpful/harmful feedback on a random bullet, sometimes a proposal for
    the review queue, now and then a new rule. Stops after `iterations`, or when `parent`
    (a pid) is gone, or on SIGTERM/KeyboardInterrupt.
    """
    rng = random.Random(seed)
    store = open_store(path, mode="write")
    writes = 0
    try:
        while iterations is None or writes < iterations:
            if parent is not None and os.getppid() != parent:
                break
            _write_once(store, rng, writes)
            writes += 1
            time.sleep(rng.uniform(*interval))
    except KeyboardInterrupt:
        pass
    finally:
        store.close()
    return writes


def _write_once(store: PlaybookStore, rng: random.Random, n: int) -> None:
    roll = rng.random()
    ref = f"session:writer/{datetime.now(UTC):%H%M%S}"
    if roll < 0.15:
        content = WRITER_RULES[n % len(WRITER_RULES)]
        if n >= len(WRITER_RULES):
            content += f" (seen again in run {n})"
        queue.stage(
            store,
            [{"type": "add", "content": content, "tags": ["writer"]}],
            provenance={"session_ref": ref, "byte_offset": 0},
        )
        return
    if roll < 0.22:
        content = f"{rng.choice(WRITER_RULES)} [live {n}]"
        curate(store, [{"type": "add", "content": content}], provenance={"session_ref": ref})
        return
    ids = store.active_ids()
    if not ids:
        return
    bid = rng.choice(ids)
    if rng.random() < 0.8:
        delta: dict[str, Any] = {"type": "helpful", "bullet_id": bid, "context": "live writer"}
    else:
        delta = {"type": "harmful", "bullet_id": bid, "reason": "wasted_time"}
        delta["context"] = "live writer: cost a retry"
    curate(store, [delta], provenance={"session_ref": ref})
