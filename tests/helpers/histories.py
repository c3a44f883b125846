"""A random playbook history: adds, votes, replacements, merges, pins and
deprecations over simulated days, with events dated ahead of the clock."""

from __future__ import annotations

import random
from datetime import timedelta

from playbook.curation import curate
from playbook.store import PlaybookStore

from . import Clock, feedback_from_ahead

WORDS = "npm pytest docker release cache lockfile ci flaky migration rebase hooks lint".split()


def random_history(store: PlaybookStore, clock: Clock, rng: random.Random) -> None:
    ids: list[str] = []
    for n in range(120):
        op = rng.random()
        live = [b.id for b in store.bullets()]
        if op < 0.3 or len(live) < 3:
            words = [*rng.sample(WORDS, rng.randint(2, 4)), f"x{n}"]
            content = " ".join(words)
            if rng.random() < 0.2:
                content = "AVOID: " + content
            delta = {
                "type": "add",
                "content": content,
                "tags": rng.sample(WORDS, rng.randint(0, 2)),
            }
            r = curate(store, [delta])
            ids += r.added
        elif op < 0.75:
            kind = rng.choice(["helpful", "helpful", "harmful"])
            bid = rng.choice(live)
            extra = {"reason": "caused_bug"} if kind == "harmful" else {}
            curate(store, [{"type": kind, "bullet_id": bid, **extra}])
        elif op < 0.8:
            # an event observed ahead of now (clock skew): the fast path must defer it
            feedback_from_ahead(
                store, clock, rng.choice(live), "helpful", at=clock.t + timedelta(days=2)
            )
        elif op < 0.88:
            bid = rng.choice(live)
            curate(store, [{"type": "replace", "bullet_id": bid, "content": f"replaced {n} npm"}])
        elif op < 0.93 and len(live) >= 2:
            a, b = rng.sample(live, 2)
            curate(store, [{"type": "merge", "bullet_ids": [a, b], "content": f"merged {n} ci"}])
        elif op < 0.96:
            store.pin(rng.choice(live), "keep")
        else:
            curate(store, [{"type": "deprecate", "bullet_id": rng.choice(live), "reason": "old"}])
        clock.advance(hours=rng.uniform(1, 96))
