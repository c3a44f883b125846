"""Histories for the replay's tests: one that exercises everything that moves a view, and
marks written before the database checked them.

`varied_history`: adds, marks with contexts, back-dated and future-dated marks, replace,
merge, inversion, deprecation, pins, bullets with their own half-life, through the public
API. `malformed_marks`: feedback rows the checks would refuse, written with the checks
dropped (as another tool could), the checks then restored (NOT VALID on PostgreSQL).
"""

from __future__ import annotations

import random
from datetime import timedelta
from typing import Any

from playbook import curate
from playbook.store import PlaybookStore
from playbook.store import testing as raw
from playbook.store.checks import RULES, sqlite_step

from . import Clock, log_mark_dated_ahead

WORDS = ["npm", "cache", "docker", "pytest", "lockfile", "release", "ci", "deploy", "yarn"]


ACTIVE_IDS = "SELECT id FROM bullets WHERE state != 'retired' ORDER BY created_at, seq"


def varied_history(store: PlaybookStore, clock: Clock, seed: int, steps: int = 450) -> None:
    rng = random.Random(seed)

    def active() -> list[str]:  # the ids of store.bullets(), in its order, without models
        return [r[0] for r in raw.rows(store, ACTIVE_IDS)]

    for step in range(steps):
        clock.advance(hours=rng.uniform(0, 40))
        ids = active()
        r = rng.random()
        session = {"session_ref": f"session:{step // 4}"}
        if r < 0.12 or len(ids) < 6:
            content = " ".join(rng.sample(WORDS, 3)) + f" step{step}"
            store.insert_bullet(
                content,
                type="anti-pattern" if rng.random() < 0.2 else "rule",
                tags=[rng.choice(WORDS)] if rng.random() < 0.5 else [],
                half_life_days=20.0 if rng.random() < 0.15 else None,
            )
        elif r < 0.72:
            kind = "helpful" if rng.random() < 0.65 else "harmful"
            delta = {"type": kind, "bullet_id": rng.choice(ids)}
            if rng.random() < 0.8:
                delta["context"] = " ".join(rng.sample(WORDS, 2))
            curate(store, [delta], provenance=session)
        elif r < 0.8:
            shift = timedelta(days=rng.uniform(-40, 10))
            bid, kind = rng.choice(ids), rng.choice(["helpful", "harmful"])
            mark = {"context": rng.choice(WORDS), "weight": rng.choice([1.0, 0.5, 1 / 3])}
            if shift > timedelta(0):  # observed after it was recorded: an older log's mark
                log_mark_dated_ahead(store, bid, kind, clock.t + shift, **mark)
            else:
                store.add_feedback(bid, kind, at=clock.t + shift, **mark)
        elif r < 0.86:
            text = " ".join(rng.sample(WORDS, 3)) + f" replaced{step}"
            curate(store, [{"type": "replace", "bullet_id": rng.choice(ids), "content": text}])
        elif r < 0.9 and len(ids) >= 2:
            a, b = rng.sample(ids, 2)
            text = " ".join(rng.sample(WORDS, 3)) + f" merged{step}"
            curate(store, [{"type": "merge", "bullet_ids": [a, b], "content": text}])
        elif r < 0.94:
            curate(
                store,
                [{"type": "deprecate", "bullet_id": rng.choice(ids), "reason": "old"}],
                actor="human",
            )
        else:
            bid = rng.choice(ids)
            if store.get_bullet(bid).pinned:  # type: ignore[union-attr]
                store.unpin(bid)
            else:
                store.pin(bid, "keep")
    clock.advance(days=1)


def malformed_marks(store: PlaybookStore, rows: list[dict[str, Any]]) -> None:
    """Write feedback `rows` (column -> value) past the database's checks."""
    rules = RULES["feedback"][0]
    sqlite = store.sql.dialect == "sqlite"
    for rule in rules:
        if sqlite:
            raw.run(store, f"DROP TRIGGER IF EXISTS {rule.name}")
        else:
            raw.run(store, f"ALTER TABLE feedback DROP CONSTRAINT IF EXISTS {rule.name}")
    for row in rows:
        raw.run(
            store,
            f"INSERT INTO feedback ({', '.join(row)}) VALUES ({', '.join('?' * len(row))})",
            tuple(row.values()),
        )
    if sqlite:
        for statement in sqlite_step():
            if " ON feedback " in statement:
                raw.run(store, statement)
    else:
        for rule in rules:
            raw.run(
                store,
                f"ALTER TABLE feedback ADD CONSTRAINT {rule.name} CHECK {rule.postgres()} "
                "NOT VALID",
            )
