"""What happens in a team's year: the rules, the sessions and each day's marks (no database).

`Plan(spec)` draws, from the spec's seed alone, everything a year of agents would do:

- rules arrive through the year (a twentieth on the first day, the rest on working days),
  each with a popularity from a Zipf law (exponent `spec.zipf`: at 0.9 and 100k rules the
  most cited 1% take about half the marks), a usefulness (mostly helpful; about one rule
  in twelve turns bad at some day, so its harm grows and the engine inverts or deprecates
  it), and, for three in ten, a day it goes silent (no mark after);
- sessions (`spec.sessions`, e.g. 5,000) each live a few days (log-normal, median 3) and
  cite rules in turns: a turn is one curate batch of 1-6 distinct rules, or one task
  outcome (success, failure, partial) citing 1-4;
- bursts: every day a few dozen rules are cited 20x their usual rate for 1-5 days;
- the volume follows the week (weekends a fifth of a weekday) and grows through the year.

`day_events(d, ...)` gives day `d`'s turns; which rules may be cited is the caller's (the
world) to say, since the engine retires, inverts and replaces rules as the year goes.
Everything is deterministic: the same spec gives the same year, on either backend.
"""

from __future__ import annotations

import random
import sys
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
import synth

END = datetime(2026, 12, 1, tzinfo=UTC)  # the year's last day ends here
EPOCH = np.datetime64("1970-01-01T00:00:00", "us")
HARM = ("caused_bug", "wasted_time", "wrong_context", "outdated", "contradicted_requirements")
HARM_P = (0.25, 0.32, 0.2, 0.15, 0.08)
CATEGORIES = ("ci", "testing", "git", "python", "release", "deploy", "security", "docs")
REPOS = tuple(f"github.com/team/service-{i}" for i in range(20))


@dataclass(frozen=True)
class Spec:
    """A year to generate. `team_year()` and `heavy_user()` are the benches' worlds."""

    rules: int
    events: int
    sessions: int
    days: int = 365
    seed: int = 31
    zipf: float = 0.9

    @property
    def name(self) -> str:
        def k(n: int) -> str:
            return f"{n // 1_000_000}m" if n % 1_000_000 == 0 else f"{n // 1000}k"

        return f"year-{k(self.rules)}-{k(self.events)}-{self.sessions}s-{self.days}d-{self.seed}"

    @property
    def start(self) -> datetime:
        return END - timedelta(days=self.days)

    def per_year(self, per_100k: float, least: int) -> int:
        """How many of a rare action the year has: `per_100k` at 100k rules, scaled."""
        return max(least, round(per_100k * self.rules / 100_000))


def team_year() -> Spec:
    return Spec(rules=100_000, events=10_000_000, sessions=5_000)


def heavy_user() -> Spec:
    """One engineer's year of heavy use: 10k rules, 1M marks, 500 sessions."""
    return Spec(rules=10_000, events=1_000_000, sessions=500, seed=32)


@dataclass
class Turn:
    """One curate batch (votes) or one outcome report, as a session sent it."""

    at: str  # ISO, when it was recorded
    session: int
    rules: list[int]  # indexes into the world's rules, distinct
    outcome: str | None = None  # "success" | "failure" | "partial" for an outcome report
    kinds: list[str] = field(default_factory=list)  # per rule, for votes
    reasons: list[str | None] = field(default_factory=list)


@dataclass
class NewRule:
    content: str
    category: str
    tags: list[str]
    scope: str
    scope_key: str | None
    at: str  # ISO, created
    session: int


class Plan:
    """The year's random draws (see the module's docstring)."""

    def __init__(self, spec: Spec) -> None:
        self.spec = spec
        self.rng = np.random.default_rng(spec.seed)
        self.text = random.Random(spec.seed)
        d = spec.days
        # sessions: a start day and a length in days
        self.session_ids = [self._uuid() for _ in range(spec.sessions)]
        self.session_start = self.rng.integers(0, d, spec.sessions)
        length = np.minimum(60, np.ceil(self.rng.lognormal(np.log(3), 1.0, spec.sessions)))
        self.session_end = np.minimum(d - 1, self.session_start + length.astype(int) - 1)
        self.byte_offset = np.zeros(spec.sessions, dtype=np.int64)
        self._steps: list[int] = []
        # rules: how many arrive each day
        arrivals = np.zeros(d, dtype=np.int64)
        arrivals[0] = spec.rules // 20
        work = np.array([self._weekday(i) >= 1 for i in range(1, d)], dtype=float)
        share = work / work.sum() * (spec.rules - arrivals[0])
        arrivals[1:] = np.floor(share)
        arrivals[1 + int(np.argmax(work))] += spec.rules - arrivals.sum()
        self.arrivals = arrivals
        # marks per day: the week, and growth through the year
        w = np.array([self._weekday(i) * (0.7 + 0.6 * i / d) for i in range(d)])
        w[0] = 0  # nothing to cite before the first rules exist
        per_day = np.floor(w / w.sum() * spec.events).astype(np.int64)
        per_day[int(np.argmax(w))] += spec.events - per_day.sum()
        self.per_day = per_day

    def _uuid(self) -> str:
        h = self.text.getrandbits(128).to_bytes(16, "big").hex()
        return f"{h[:8]}-{h[8:12]}-{h[12:16]}-{h[16:20]}-{h[20:]}"

    def _weekday(self, day: int) -> float:
        """A day's share of a weekday's work (Saturday and Sunday: a fifth)."""
        return 0.2 if (self.spec.start + timedelta(days=day)).weekday() >= 5 else 1.0

    def day_start(self, day: int) -> datetime:
        return self.spec.start + timedelta(days=day)

    # ----------------------------------------------------------------- rules
    def rule_traits(self, n: int, day: int) -> dict[str, np.ndarray]:
        """Popularity, usefulness, the day it turns bad and the day it goes silent, for
        `n` rules created on `day`."""
        d = self.spec.days
        rank = self.rng.integers(1, self.spec.rules + 1, n)  # a Zipf rank, with repeats
        pop = rank.astype(float) ** -self.spec.zipf
        good = self.rng.beta(8, 1.2, n)
        bad_day = np.where(self.rng.random(n) < 0.08, self.rng.integers(day, d + 1, n), d + 1)
        silent = np.where(self.rng.random(n) < 0.3, self.rng.integers(day + 1, d + 2, n), d + 2)
        return {"pop": pop, "good": good, "bad_day": bad_day, "silent_day": silent}

    def new_rules(self, day: int, n: int) -> list[NewRule]:
        times = self.times(day, n)
        out = []
        for i in range(n):
            content = synth._sentence(self.text)
            if self.text.random() < 0.15:
                content = f"AVOID: {content}"
            workspace = self.text.random() < 0.15
            out.append(
                NewRule(
                    content=content,
                    category=self.text.choice(CATEGORIES),
                    tags=[self.text.choice(synth.TERMS)] if self.text.random() < 0.5 else [],
                    scope="workspace" if workspace else "global",
                    scope_key=self.text.choice(REPOS) if workspace else None,
                    at=times[i],
                    session=self.session_on(day),
                )
            )
        return out

    def sentence(self) -> str:
        return synth._sentence(self.text)

    # ----------------------------------------------------------------- sessions, time
    def session_on(self, day: int) -> int:
        live = np.flatnonzero((self.session_start <= day) & (self.session_end >= day))
        if live.size == 0:
            live = np.flatnonzero(self.session_start <= day)
        if live.size == 0:
            return int(np.argmin(self.session_start))
        return int(live[self.rng.integers(0, live.size)])

    def offset(self, session: int) -> int:
        """The session's transcript grows with each turn: the byte offset of this one."""
        if not self._steps:
            self._steps = self.rng.integers(2_000, 40_000, 100_000).tolist()
        self.byte_offset[session] += self._steps.pop()
        return int(self.byte_offset[session])

    def times(self, day: int, n: int) -> list[str]:
        """`n` sorted ISO times of day `day`, in working hours (06:00-22:00, busiest at
        14:00), to the microsecond."""
        hours = np.clip(self.rng.normal(14, 3.2, n), 6, 21.999)
        us = np.sort((hours * 3_600_000_000).astype(np.int64))
        base = np.datetime64(self.day_start(day).replace(tzinfo=None), "us")
        stamps = np.datetime_as_string(base + us.astype("timedelta64[us]"), unit="us")
        return [f"{s}Z" for s in stamps.tolist()]

    # ----------------------------------------------------------------- marks
    def day_turns(self, day: int, weights: np.ndarray, good: np.ndarray) -> list[Turn]:
        """Day `day`'s turns: `weights[i]` is how likely rule i is cited today (0: it
        cannot be), `good[i]` how likely a citation of it is helpful."""
        n = int(self.per_day[day])
        total = weights.sum()
        if n == 0 or total <= 0:
            return []
        p = weights / total
        pool = self.rng.choice(weights.size, size=int(n * 1.15) + 16, p=p).tolist()
        live = np.flatnonzero((self.session_start <= day) & (self.session_end >= day))
        # per turn, drawn for the whole day at once: outcome or votes, size, session
        most = n + 1
        is_outcome = (self.rng.random(most) < 0.2).tolist()
        sizes = self.rng.integers(1, 7, most).tolist()
        outcome_sizes = self.rng.integers(1, 5, most).tolist()
        sessions = (
            live[self.rng.integers(0, live.size, most)].tolist()
            if live.size
            else [self.session_on(day)] * most
        )
        results = self.rng.choice(["success", "failure", "partial"], most, p=[0.7, 0.15, 0.15])
        u = self.rng.random(n + 16).tolist()
        reasons = self.rng.choice(HARM, n + 16, p=HARM_P).tolist()
        turns: list[Turn] = []
        used = cursor = 0
        while used < n:
            k = len(turns)
            outcome = is_outcome[k]
            size = min(outcome_sizes[k] if outcome else sizes[k], n - used)
            picked: dict[int, None] = {}
            while len(picked) < size:
                if cursor >= len(pool):  # the pool ran out: draw more
                    pool += self.rng.choice(weights.size, size=size * 4, p=p).tolist()
                picked.setdefault(pool[cursor])
                cursor += 1
            rules = list(picked)
            turn = Turn(at="", session=sessions[k], rules=rules)
            if outcome:
                turn.outcome = str(results[k])
            else:
                turn.kinds = [
                    "helpful" if u[used + j] < good[r] else "harmful" for j, r in enumerate(rules)
                ]
                turn.reasons = [
                    None if kind == "helpful" else reasons[used + j]
                    for j, kind in enumerate(turn.kinds)
                ]
            turns.append(turn)
            used += len(rules)
        for turn, at in zip(turns, self.times(day, len(turns)), strict=True):
            turn.at = at
        return turns

    def bursts(self, alive: np.ndarray, count: int) -> tuple[np.ndarray, np.ndarray]:
        """`count` rules (of the indexes `alive`) that burst today, and for how many days."""
        if alive.size == 0:
            return alive, alive
        chosen = self.rng.choice(alive, size=min(count, alive.size), replace=False)
        return chosen, self.rng.integers(1, 6, chosen.size)
