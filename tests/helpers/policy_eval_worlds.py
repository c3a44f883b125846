"""Synthetic feedback logs with a known truth, written through the real store API.

`flipping_world`: every rule is really useful or really harmful, and flips between the two
at known times (every `period` days, each rule at its own phase). A mark is helpful with
probability `p_good` while the rule is useful, `1 - p_good` while it is not. Recent marks
are then the only evidence worth having, and the shorter the memory the better (within the
grid): a 30-day half-life is right, 90 days remembers a state that is gone.

`noise_world`: every mark is helpful with the same probability, whatever came before: no
policy can predict it better than another.
"""

from __future__ import annotations

import random
from datetime import timedelta

from playbook.core.model import Provenance
from playbook.store import PlaybookStore

from . import Clock

TOPICS = ["npm", "pytest", "docker", "postgres", "git", "ruff", "cargo", "helm", "vite", "uv"]


def _rules(store: PlaybookStore, n: int, rng: random.Random) -> list[tuple[str, str]]:
    out = []
    for i in range(n):
        topic = TOPICS[i % len(TOPICS)]
        words = f"{topic} {rng.choice(TOPICS)} step{i}"
        b = store.insert_bullet(
            f"Rule {i}: check {words} before release", tags=[topic], bullet_id=f"b-{i:04d}"
        )
        out.append((b.id, topic))
    return out


def flipping_world(
    store: PlaybookStore,
    clock: Clock,
    *,
    rules: int = 30,
    days: int = 300,
    period: float = 30.0,
    marks_per_day: float = 14.0,
    p_good: float = 0.9,
    seed: int = 1,
) -> dict[str, list[float]]:
    """Write the log; return each rule's flip times (days from the start)."""
    rng = random.Random(seed)
    start = clock.t
    made = _rules(store, rules, rng)
    phase = {bid: rng.uniform(0, period) for bid, _ in made}
    flips = {bid: [phase[bid] + j * period for j in range(int(days / period) + 1)] for bid in phase}

    start_useful = {bid: i % 2 == 0 for i, (bid, _) in enumerate(made)}

    def useful(bid: str, day: float) -> bool:
        return (sum(1 for f in flips[bid] if f <= day) + start_useful[bid]) % 2 == 1

    _sessions(store, clock, start, made, days, marks_per_day, rng,
              lambda bid, day: p_good if useful(bid, day) else 1 - p_good)  # fmt: skip
    return flips


def noise_world(
    store: PlaybookStore,
    clock: Clock,
    *,
    rules: int = 30,
    days: int = 300,
    marks_per_day: float = 14.0,
    p_helpful: float = 0.7,
    seed: int = 2,
) -> None:
    rng = random.Random(seed)
    made = _rules(store, rules, rng)
    _sessions(store, clock, clock.t, made, days, marks_per_day, rng, lambda b, d: p_helpful)


def _sessions(store, clock, start, made, days, marks_per_day, rng, p_helpful) -> None:  # type: ignore[no-untyped-def]
    """About `marks_per_day` marks a day, in sessions of 2-5 marks; each mark names what the
    agent was working on (the rule's topic, which several rules share), so recall@k can
    be measured too."""
    with store.transaction():
        for day in range(days):
            left = max(0, round(rng.gauss(marks_per_day, 2)))
            session = 0
            while left > 0:
                size = min(left, rng.randint(2, 5))
                left -= size
                ref = f"session:{day}:{session}"
                session += 1
                for _ in range(size):
                    clock.t = start + timedelta(days=day + rng.random())
                    bid, words = rng.choice(made)
                    kind = "helpful" if rng.random() < p_helpful(bid, day) else "harmful"
                    store.add_feedback(
                        bid,
                        kind,
                        context=f"working on {words}",
                        provenance=Provenance(session_ref=ref),
                        reason=None if kind == "helpful" else "other",
                    )
