"""A small year of a playbook with every case time travel's days cannot answer alone, and
the moments to read it at (`tests/test_history_days.py`, `tests/test_moments.py`)."""

from __future__ import annotations

import contextlib
import random
from datetime import timedelta
from typing import Any

from playbook import review
from playbook.curation import curate
from playbook.store import PlaybookStore
from playbook.store import testing as raw

from . import T0, Clock, add, feedback_from_ahead, log_mark_dated_ahead, mark


def small_year(store: PlaybookStore, clock: Clock, seed: int = 7) -> list[str]:
    """A small year: a dozen rules marked most days, some merged, replaced, deprecated."""
    rng = random.Random(seed)
    ids = [add(store, f"Rule {i}: use tool{i} for task{i}") for i in range(10)]
    for day in range(120):
        clock.advance(hours=rng.choice([3, 7, 24, 30]))
        live = [b.id for b in store.bullets() if b.state != "retired"]
        for bid in rng.sample(live, min(3, len(live))):
            with contextlib.suppress(review.NotApplied):  # inverted by its harm meanwhile
                mark(store, bid, rng.choice(["helpful", "helpful", "harmful"]), rng.randint(1, 2))
        if day == 20:  # lineage: a merge's successor inherits both
            a, b = live[:2]
            curate(store, [{"type": "merge", "bullet_ids": [a, b], "content": "Merged rule"}],
                   actor="human")  # fmt: skip
        if day == 35:
            bid = rng.choice(live)
            curate(store, [{"type": "replace", "bullet_id": bid, "content": "Replaced v2"}],
                   actor="human")  # fmt: skip
        if day == 50:  # a changed half-life: older checkpoints were kept at another
            raw.run(store, "UPDATE bullets SET half_life_days = 30 WHERE id = ?", (live[-1],))
            store.add_feedback(live[-1], "helpful")
        if day == 60:  # observed long before it was recorded
            store.add_feedback(live[2], "harmful", at=clock() - timedelta(days=40))
        if day == 70:  # a writer whose clock runs ahead: recorded and observed ahead
            feedback_from_ahead(store, clock, live[3], "helpful", clock() + timedelta(days=3))
        if day == 80:  # observed after it was recorded (an older log's form)
            log_mark_dated_ahead(store, live[4], "helpful", clock() + timedelta(days=9))
        if day == 90:  # feedback on a retired rule: after its retirement
            gone = [b.id for b in store.bullets() if b.state == "retired"]
            if gone:
                store.add_feedback(gone[0], "helpful")
    clock.advance(days=5)
    return ids


def moments_of(store: PlaybookStore, clock: Clock) -> list[Any]:
    out = []
    t = T0
    while t < clock():
        midnight = t.replace(hour=0, minute=0, second=0, microsecond=0)
        out += [t, midnight, midnight - timedelta(microseconds=1), midnight + timedelta(days=1)]
        t += timedelta(days=9, hours=5)
    # the moments events were recorded at, exactly
    out += [e.recorded_at for b in store.bullets()[:4] for e in store.timeline(b.id)[:3]]
    return [*out, clock()]
