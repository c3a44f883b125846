"""The demo playbook: months of realistic history, built through the public API.

`build_demo(path)` replays `playbook.demo.content` through a `PlaybookStore` whose clock is
moved through about nine simulated months: rules are curated in when they were written, each
day's feedback is curated in batches (one vote per bullet per batch, as the curator wants),
humans pin, deprecate and merge along the way, agents add conflicting rules, and at the end a
session diary is reflected into the review queue. Decay, maturity moves, inversions and the
decision log are therefore the real thing, not fixtures.

`python -m playbook.demo.build writer PATH` runs `writer.run_writer`, the `playbook demo
--writer` companion; `cache` keeps a built demo for the next run; `python -m
playbook.demo.template` writes the build shipped with the package (`template`).

No Textual here: this module is part of the core.
"""

from __future__ import annotations

import random
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, date, datetime, timedelta
from functools import partial
from pathlib import Path
from typing import Any

from ..core.model import Provenance
from ..core.terms import HOOK_ORIGIN
from ..curation import curate
from ..review import queue
from ..store import PlaybookStore, open_store
from . import content as dc
from . import diary, history
from .writer import run_writer

HISTORY_DAYS = 280
DIARY_NAME = "session-release-flake.md"

# Humans pin a few rules: pinned rules never move. (prefix, reason, days after creation)
PINS: tuple[tuple[str, str, int], ...] = (
    (
        "Ask before running `git reset --hard`",
        "Destroys uncommitted work; this stays a hard rule whatever the feedback says",
        40,
    ),
    (
        "Run `git status` and `git diff --staged` before every commit",
        "Team convention since the leaked-credentials incident",
        75,
    ),
    (
        "Always squash feature branch commits",
        "Release notes are generated from main's history; keep it while we discuss",
        30,
    ),
)
# Rules a human retired by hand (deprecate), days before now.
HUMAN_DEPRECATIONS: tuple[tuple[str, str, int], ...] = (
    ("Use `git log -S 'symbol'`", "Superseded by the code-search tool the team adopted", 35),
)
MERGED_GROUP = 3  # NEAR_DUPLICATES[3] ("Reproduce the bug ...") is merged by a human
MERGE_DAYS_AGO = 18
MERGED_CONTENT = (
    "Reproduce the bug with the smallest command that shows it before changing any code"
)
SESSION_REFS = (
    "session:claude-code/payments-service/2024",
    "session:codex/web-dashboard/0311",
    "session:claude-code/data-monorepo/ci",
    "session:cursor/design-system/storybook",
)


@dataclass(frozen=True)
class DemoPlaybook:
    """What `build_demo` made, for the caller to print or open."""

    path: Path
    diary_path: Path
    rule_ids: list[str]
    bullets: int
    events: int
    proposals: int
    conflicts: int
    blocked: int
    seconds: float


class _Clock:
    def __init__(self, t: datetime) -> None:
        self.t = t

    def __call__(self) -> datetime:
        return self.t


def _find(prefix: str) -> int:
    hits = [i for i, r in enumerate(dc.RULES) if r.content.startswith(prefix)]
    if len(hits) != 1:
        raise ValueError(f"{len(hits)} demo rules start with {prefix!r}")
    return hits[0]


Progress = Callable[[float, str], None]  # (fraction done, what is being done)
REFLECT_AGO = timedelta(minutes=40)  # the diary is reflected this long before "now"
HOOK_AGO = timedelta(minutes=6)  # a hook-driven session ended this long before "now"


def build_demo(
    path: str | Path,
    *,
    now: datetime | None = None,
    seed: int = 7,
    progress: Progress | None = None,
) -> DemoPlaybook:
    """Build the demo playbook in a new file at `path` (and its diary beside it).

    `progress`, when given, is called now and then with the fraction done (0 to 1) and a
    few words on what is being done, from the thread that builds."""
    started = time.perf_counter()
    report = progress or (lambda fraction, what: None)
    path = Path(path)
    if path.exists():
        raise FileExistsError(f"{path} already exists; the demo builds a new file")
    now = (now or datetime.now(UTC)).astimezone(UTC).replace(microsecond=0)
    rng = random.Random(f"playbook-demo-build:{seed}")
    clock = _Clock(now - timedelta(days=HISTORY_DAYS))
    with open_store(path, clock=clock) as store:
        builder = _Builder(store, clock, now, rng)
        ids = builder.replay(seed, report)
        report(0.95, "reflecting a session into the review queue")
        diary_path = path.with_name(DIARY_NAME)
        diary_path.write_text(diary.render_diary(ids), encoding="utf-8")
        clock.t = now - REFLECT_AGO
        proposals = _reflect(store, diary_path)
        clock.t = now - HOOK_AGO
        proposals = _hook_session(store, path.with_name(diary.HOOK_SESSION_NAME), builder, ids)
        clock.t = now
        info = DemoPlaybook(
            path=path,
            diary_path=diary_path,
            rule_ids=ids,
            bullets=store.count_bullets(),
            events=store.event_count(),
            proposals=proposals,
            conflicts=len(store.conflicts()),
            blocked=len(store.blocked()),
            seconds=time.perf_counter() - started,
        )
    return info


def _reflect(store: PlaybookStore, diary_path: Path) -> int:
    """Reflect the demo diary into the review queue (pending proposals, with provenance)."""
    # `python -m playbook.demo.build writer` (the `playbook demo --writer` companion) never
    # reflects: it does not load reflection and rapidfuzz at its start.
    from ..reflection.reflectors import HeuristicReflector  # lazy: the --writer companion
    from ..reflection.session import reflect_session  # lazy: the --writer companion

    reflect_session(store, str(diary_path), diary_path, HeuristicReflector())
    return queue.count_pending(store)


def _hook_session(
    store: PlaybookStore, session_path: Path, builder: _Builder, ids: list[str]
) -> int:
    """Stage what a SessionEnd hook would have staged from a second session (origin
    "hook"): a rewrite, a merge and a new rule, each pointing at its line of the session."""
    session_path.write_text(diary.HOOK_SESSION, encoding="utf-8")

    def live_id_of(prefix: str) -> str | None:
        found = builder.live(ids[_find(prefix)])
        return found[0] if found else None

    staged = diary.hook_session_deltas(live_id_of)
    queue.stage(
        store,
        [delta for delta, _ in staged],
        provenances=[Provenance(session_ref=str(session_path), byte_offset=at) for _, at in staged],
        origin=HOOK_ORIGIN,
    )
    return queue.count_pending(store)


class _Builder:
    """Replays the demo content day by day through `curate`."""

    def __init__(
        self, store: PlaybookStore, clock: _Clock, now: datetime, rng: random.Random
    ) -> None:
        self.store = store
        self.clock = clock
        self.now = now
        self.rng = rng
        self.ids: dict[int, str] = {}  # RULES index -> bullet id (the original)
        self.conflicting: dict[int, str] = {}  # pair index -> the "Never ..." side
        # Nothing in the history may be later than the store's clock at the end (or than
        # the reflection just before it): the API refuses events from the future.
        self.end = now - REFLECT_AGO - timedelta(minutes=5)
        # Feedback of one day goes in batches; anything else flushes the batch first.
        self.batch: list[dict[str, Any]] = []
        self.batch_actor = "agent"
        self.batch_day: date | None = None
        self.voted: set[str] = set()

    def at(self, t: datetime) -> None:
        self.clock.t = max(self.clock.t, min(t, self.end))

    def live(self, bullet_id: str) -> tuple[str, bool] | None:
        """Where feedback on a bullet goes now: itself, or its successor (flipped when the
        successor is an inversion). None when there is nowhere to send it."""
        flipped = False
        seen: set[str] = set()
        while bullet_id not in seen:
            seen.add(bullet_id)
            b = self.store.get_bullet(bullet_id)
            if b is None:
                return None
            if b.state != "retired":
                return bullet_id, flipped
            succ = self.store.lineage(bullet_id).successors
            if not succ:
                return None
            kind, bullet_id = succ[-1]
            flipped ^= kind == "inverts"
        return None

    def replay(self, seed: int, report: Progress) -> list[str]:
        now = self.now
        timeline: list[tuple[datetime, int, Callable[[], None]]] = []

        for i, (pattern, reason) in enumerate(dc.BLOCKED_PATTERNS):
            t = now - timedelta(days=HISTORY_DAYS - 10 - 37 * i, hours=3)
            timeline.append((t, 0, partial(self.block, pattern, reason)))
        for i in range(len(dc.RULES)):
            timeline.append((history.creation_time(i, now), 1, partial(self.add_rule, i)))
        for event in history.generate_history(now, seed=seed):
            timeline.append((event.at, 2, partial(self.feedback, event)))
        for prefix, reason, after in PINS:
            t = history.creation_time(_find(prefix), now) + timedelta(days=after, hours=5)
            timeline.append((t, 3, partial(self.pin, prefix, reason)))
        for prefix, reason, ago in HUMAN_DEPRECATIONS:
            t = now - timedelta(days=ago, hours=2)
            timeline.append((t, 3, partial(self.deprecate, prefix, reason)))
        for g, group in enumerate(dc.NEAR_DUPLICATES):
            base = history.creation_time(dc.index_of(group[0]), now)
            for k, content in enumerate(group[1:]):
                t = base + (now - timedelta(days=30) - base) * self.rng.uniform(0.3, 0.9)
                timeline.append((t, 4, partial(self.add_echo, group_of=g, k=k, content=content)))
        merged_at = now - timedelta(days=MERGE_DAYS_AGO)
        timeline.append((merged_at, 5, partial(self.merge, MERGED_GROUP)))
        for k, (existing, proposal) in enumerate(dc.CONFLICT_PAIRS):
            # Flagged while the original was young; nobody has resolved them since.
            t = history.creation_time(dc.index_of(existing), now)
            t += timedelta(days=self.rng.uniform(4, 12))
            timeline.append((t, 6, partial(self.add_conflicting, proposal, k)))
        # The opposing rules get some votes of their own afterwards: teams disagree. (At
        # least a day ago: the later pairs and votes would otherwise land in the future.)
        for k in range(len(dc.CONFLICT_PAIRS)):
            for j in range(1 + k % 3):
                days_ago = max(1.0, 50 - 7 * k - 9 * j)
                t = now - timedelta(days=days_ago, hours=self.rng.uniform(0, 20))
                timeline.append((t, 7, partial(self.vote_conflicting, k, j)))
        timeline.sort(key=lambda x: (x[0], x[1]))

        step = max(1, len(timeline) // 100)
        for i, (t, _kind, action) in enumerate(timeline):
            if self.batch and (t.date() != self.batch_day):
                self.flush()
            self.at(t)
            action()
            if i % step == 0:
                report(0.9 * i / len(timeline), f"replaying {t:%B %Y}")
        self.flush()
        return [self.ids[i] for i in range(len(dc.RULES))]

    # ---------------------------------------------------------------- actions
    def flush(self) -> None:
        if self.batch:
            curate(self.store, self.batch, actor=self.batch_actor)
        self.batch = []
        self.voted = set()
        self.batch_day = None

    def feedback(self, event: dc.DemoEvent) -> None:
        target = self.live(self.ids[event.rule_index])
        if target is None:
            return
        bid, flipped = target
        kind = event.kind
        if flipped:  # harm on a rule is help for the AVOID: warning that replaced it
            kind = "helpful" if kind == "harmful" else "harmful"
        if bid in self.voted or (self.batch and event.actor != self.batch_actor):
            self.flush()
        delta: dict[str, Any] = {"type": kind, "bullet_id": bid, "context": event.context}
        if kind == "harmful":
            delta["reason"] = event.reason or "other"
        self.batch.append(delta)
        self.batch_actor = event.actor
        self.batch_day = event.at.date()
        self.voted.add(bid)

    def add_rule(self, index: int) -> None:
        self.flush()
        rule = dc.RULES[index]
        prov = None
        if rule.profile in ("candidate", "contested", "harmful") and self.rng.random() < 0.7:
            prov = {"session_ref": self.rng.choice(SESSION_REFS), "byte_offset": None}
        result = curate(self.store, [rule.add_delta()], provenance=prov)
        outcome = result.outcomes[0]
        if outcome.bullet_id is None:
            raise RuntimeError(f"demo rule {index} was not added: {outcome}")
        self.ids[index] = outcome.bullet_id

    def add_echo(self, *, group_of: int, k: int, content: str) -> None:
        self.flush()
        rule = dc.RULES[dc.index_of(dc.NEAR_DUPLICATES[group_of][0])]
        delta = {**rule.add_delta(), "content": content}
        prov = {"session_ref": SESSION_REFS[(group_of + k) % len(SESSION_REFS)]}
        curate(self.store, [delta], provenance=prov)

    def add_conflicting(self, content: str, k: int) -> None:
        self.flush()
        existing = dc.RULES[dc.index_of(dc.CONFLICT_PAIRS[k][0])]
        delta = {**existing.add_delta(), "content": content}
        result = curate(self.store, [delta], provenance={"session_ref": SESSION_REFS[k % 4]})
        self.conflicting[k] = result.added[0]

    def vote_conflicting(self, k: int, j: int) -> None:
        if k not in self.conflicting:  # not added yet at this point of the history
            return
        self.flush()
        task = ("reviewing a pull request", "setting up a new service", "fixing CI")[j % 3]
        delta = {"type": "helpful", "bullet_id": self.conflicting[k], "context": task}
        curate(self.store, [delta], provenance={"session_ref": SESSION_REFS[(k + j) % 4]})

    def block(self, pattern: str, reason: str) -> None:
        self.flush()
        self.store.block(pattern, reason, actor="human")

    def pin(self, prefix: str, reason: str) -> None:
        self.flush()
        target = self.live(self.ids[_find(prefix)])
        if target is not None:
            self.store.pin(target[0], reason, actor="human")

    def deprecate(self, prefix: str, reason: str) -> None:
        self.flush()
        target = self.live(self.ids[_find(prefix)])
        if target is not None:
            delta = {"type": "deprecate", "bullet_id": target[0], "reason": reason}
            curate(self.store, [delta], actor="human")

    def merge(self, group: int) -> None:
        self.flush()
        members = {b.content: b.id for b in self.store.bullets()}
        ids = [members[c] for c in dc.NEAR_DUPLICATES[group] if c in members]
        if len(ids) >= 2:
            delta = {
                "type": "merge",
                "bullet_ids": ids,
                "content": MERGED_CONTENT,
                "reason": "three phrasings of one rule; keep one",
            }
            curate(self.store, [delta], actor="human")


def _main(argv: list[str]) -> int:
    """`python -m playbook.demo.build writer PATH [PARENT_PID]` (for `playbook demo --writer`)."""
    if len(argv) >= 2 and argv[0] == "writer":
        parent = int(argv[2]) if len(argv) > 2 else None
        run_writer(argv[1], parent=parent)
        return 0
    if len(argv) == 2 and argv[0] == "build":
        info = build_demo(argv[1])
        print(f"{info.path}: {info.bullets} bullets, {info.events} events in {info.seconds:.2f}s")
        return 0
    print(
        "usage: python -m playbook.demo.build (build PATH | writer PATH [PARENT_PID])",
        file=sys.stderr,
    )
    return 2


if __name__ == "__main__":  # pragma: no cover
    sys.exit(_main(sys.argv[1:]))
