"""The demo's history, drawn deterministically: when each rule of `content.RULES` was written
down (`creation_time`) and the helpful and harmful feedback it got since, by its profile
(`generate_history`; the profiles are described in `demo/content.py`).

Plain Python: no database, no Textual, no numpy.
"""

import random
from datetime import UTC, datetime, timedelta
from typing import Final

from .content import CATEGORIES, RULES
from .vocabulary import Category, DemoEvent, HarmReason, Profile

__all__ = ["creation_time", "generate_history"]

_DAY: Final = timedelta(days=1)

#: Age range, in days before ``now``, at which each profile's rules were created.
_CREATED_AGE_DAYS: Final[dict[Profile, tuple[float, float]]] = {
    "proven": (160, 270),
    "established": (90, 240),
    "candidate": (2, 28),
    "fading": (215, 270),
    "contested": (60, 200),
    "harmful": (50, 150),
    "stale": (230, 275),
}

_PY_REPOS: Final = ("payments-service", "billing-api", "data-monorepo", "analytics-etl")
_TS_REPOS: Final = ("web-dashboard", "design-system", "api-gateway")
_ANY_REPOS: Final = (*_PY_REPOS, *_TS_REPOS, "infra-terraform")
#: Repositories a task of each category plausibly happened in (for event contexts).
_REPOS: Final[dict[Category, tuple[str, ...]]] = dict.fromkeys(CATEGORIES, _ANY_REPOS) | {
    "python": _PY_REPOS,
    "typescript": _TS_REPOS,
    "frontend": ("web-dashboard", "design-system"),
    "rust": ("ledger-cli", "log-shipper"),
    "go": ("webhook-worker", "infra-terraform"),
    "databases": ("payments-service", "billing-api", "api-gateway"),
    "docker": ("payments-service", "api-gateway", "infra-terraform"),
}

_TASKS: Final[dict[Category, tuple[str, ...]]] = {
    "git": (
        "rebasing a feature branch onto main",
        "splitting a large change into reviewable commits",
        "tracking down when a regression landed",
        "untangling a messy merge before review",
    ),
    "ci": (
        "fixing a red release pipeline",
        "speeding up the pull-request workflow",
        "debugging a job that only fails on CI",
        "adding a Python 3.12 leg to the test matrix",
    ),
    "testing": (
        "stabilising a flaky integration test",
        "adding regression tests for a bug report",
        "making the suite pass under pytest -n auto",
        "writing tests for the CSV export",
    ),
    "python": (
        "packaging the CLI for PyPI",
        "upgrading the service to Python 3.12",
        "adding type hints to the settlement module",
        "fixing an import error in the worker",
    ),
    "typescript": (
        "migrating a JavaScript module to TypeScript",
        "fixing a type error after a dependency bump",
        "setting up the pnpm workspace",
        "adding a field to the API client",
    ),
    "rust": (
        "adding a subcommand to the Rust CLI",
        "fixing a borrow checker error in the parser",
        "making the crate build without default features",
    ),
    "go": (
        "adding retries to the Go webhook worker",
        "fixing a goroutine leak in the poller",
        "bumping Go modules after a CVE notice",
    ),
    "frontend": (
        "building the new settings page",
        "fixing a hydration warning on the dashboard",
        "making the checkout form accessible",
    ),
    "databases": (
        "writing the migration for the invoices table",
        "speeding up the monthly report query",
        "fixing database is locked errors",
        "adding an index to a large table",
    ),
    "docker": (
        "shrinking the API image",
        "fixing the dev compose stack",
        "moving the build to a multi-stage Dockerfile",
    ),
    "security": (
        "responding to a leaked token alert",
        "hardening the file upload endpoint",
        "triaging dependency audit findings",
    ),
    "review": (
        "preparing a pull request for review",
        "refactoring the billing module",
        "addressing review comments",
    ),
    "performance": (
        "profiling a slow API endpoint",
        "cutting CLI startup time",
        "reducing memory use of the nightly import",
    ),
    "debugging": (
        "chasing an intermittent 500 in staging",
        "debugging a crash that only happens on one laptop",
        "finding why a config change was ignored",
    ),
    "docs": (
        "documenting the new CLI flags",
        "writing the release notes",
        "updating AGENTS.md for the repository",
    ),
    "workflow": (
        "picking up an unfamiliar repository",
        "implementing a small feature end to end",
        "finishing a task before handoff",
        "fixing a bug reported by support",
    ),
}

_HARM_NOTES: Final[dict[HarmReason, tuple[str, ...]]] = {
    "caused_bug": (
        "following it shipped a regression",
        "it broke the build on main",
        "the change it suggested had to be reverted",
    ),
    "wasted_time": (
        "cost about 40 minutes chasing the wrong cause",
        "sent the session down a dead end",
        "made the job slower without fixing anything",
    ),
    "contradicted_requirements": (
        "the task said the opposite",
        "conflicted with the repository's AGENTS.md",
    ),
    "wrong_context": (
        "does not apply to this repository's layout",
        "right for libraries, wrong for this service",
    ),
    "outdated": (
        "the tool changed and the advice no longer holds",
        "the flag was removed upstream",
    ),
    "other": ("reviewer disagreed with it", "made the diff harder to review"),
}

_HARMFUL_REASONS: Final[tuple[tuple[HarmReason, float], ...]] = (
    ("caused_bug", 0.35),
    ("wasted_time", 0.35),
    ("outdated", 0.1),
    ("wrong_context", 0.1),
    ("contradicted_requirements", 0.05),
    ("other", 0.05),
)
_CONTESTED_REASONS: Final[tuple[tuple[HarmReason, float], ...]] = (
    ("wrong_context", 0.4),
    ("contradicted_requirements", 0.25),
    ("wasted_time", 0.2),
    ("other", 0.15),
)
_MINOR_REASONS: Final[tuple[tuple[HarmReason, float], ...]] = (
    ("wrong_context", 0.5),
    ("wasted_time", 0.3),
    ("other", 0.2),
)
_STALE_REASONS: Final[tuple[tuple[HarmReason, float], ...]] = (("outdated", 1.0),)


def _utc(now: datetime) -> datetime:
    if now.tzinfo is None or now.utcoffset() is None:
        raise ValueError("now must be an aware datetime")
    return now.astimezone(UTC)


def creation_time(rule_index: int, now: datetime) -> datetime:
    """When ``RULES[rule_index]`` was written down: long ago for stale and fading rules, in the
    last month for candidates. Deterministic for an index and ``now``; does not depend on the
    history seed. ``now`` must be aware; the result is UTC, to the second."""
    now = _utc(now)
    low, high = _CREATED_AGE_DAYS[RULES[rule_index].profile]
    rng = random.Random(f"playbook-demo-created:{rule_index}")
    return (now - timedelta(days=rng.uniform(low, high))).replace(microsecond=0)


class _RuleHistory:
    """Draws the events of one rule from its own seeded generator."""

    def __init__(self, rng: random.Random, index: int, created: datetime, now: datetime) -> None:
        self.rng = rng
        self.index = index
        self.rule = RULES[index]
        self.first = created + timedelta(hours=1)  # feedback comes after the rule exists
        self.now = now - timedelta(minutes=5)
        self.events: list[DemoEvent] = []

    def when(self, start: datetime, end: datetime) -> datetime:
        start = max(start, self.first)
        end = min(end, self.now)
        span = max(0.0, (end - start).total_seconds())
        return (start + timedelta(seconds=self.rng.uniform(0, span))).replace(microsecond=0)

    def since(self, days: float) -> datetime:
        return self.now - days * _DAY

    def repo(self) -> str:
        if self.rule.scope == "workspace" and self.rule.scope_key:
            return self.rule.scope_key
        return self.rng.choice(_REPOS[self.rule.category])

    def helpful(self, start: datetime, end: datetime) -> None:
        human = self.rng.random() < 0.1
        task = self.rng.choice(_TASKS[self.rule.category])
        context = f"review: applied while {task}" if human else f"{task} in {self.repo()}"
        self.events.append(
            DemoEvent(
                rule_index=self.index,
                kind="helpful",
                at=self.when(start, end),
                reason=None,
                context=context,
                actor="human" if human else "agent",
            )
        )

    def harmful(
        self, start: datetime, end: datetime, reasons: tuple[tuple[HarmReason, float], ...]
    ) -> None:
        human = self.rng.random() < 0.25
        reason = self.rng.choices([r for r, _ in reasons], weights=[w for _, w in reasons])[0]
        task = self.rng.choice(_TASKS[self.rule.category])
        note = self.rng.choice(_HARM_NOTES[reason])
        prefix = "review: " if human else ""
        self.events.append(
            DemoEvent(
                rule_index=self.index,
                kind="harmful",
                at=self.when(start, end),
                reason=reason,
                context=f"{prefix}{task} in {self.repo()}: {note}",
                actor="human" if human else "agent",
            )
        )

    def draw(self) -> list[DemoEvent]:
        rng, first, now = self.rng, self.first, self.now
        match self.rule.profile:
            case "proven":
                for _ in range(rng.randint(18, 26)):
                    recent = rng.random() < 0.7
                    self.helpful(self.since(45) if recent else first, now)
                if rng.random() < 0.35:
                    self.harmful(first, now, _MINOR_REASONS)
            case "established":
                for _ in range(rng.randint(6, 11)):
                    recent = rng.random() < 0.6
                    self.helpful(self.since(90) if recent else first, now)
                if rng.random() < 0.35:
                    self.harmful(first, now, _MINOR_REASONS)
            case "candidate":
                for _ in range(rng.randint(0, 2)):
                    self.helpful(first, now)
            case "fading":
                for _ in range(rng.randint(5, 10)):
                    self.helpful(first, self.since(110))
                self.helpful(self.since(165), self.since(110))
            case "contested":
                for _ in range(rng.randint(7, 12)):
                    self.helpful(first, now)
                for _ in range(rng.randint(2, 4)):
                    self.harmful(first, now, _CONTESTED_REASONS)
            case "harmful":
                first_third = first + (now - first) / 3
                for _ in range(rng.randint(1, 2)):
                    self.helpful(first, first_third)
                for _ in range(rng.randint(7, 10)):
                    self.harmful(self.since(45), now, _HARMFUL_REASONS)
            case "stale":
                for _ in range(rng.randint(1, 3)):
                    self.helpful(first, self.since(205))
                if rng.random() < 0.25:
                    self.harmful(first, self.since(205), _STALE_REASONS)
        return self.events


def generate_history(now: datetime, seed: int = 7) -> list[DemoEvent]:
    """Feedback events for every rule of :data:`RULES`, over the ~9 months before ``now``,
    shaped by each rule's profile, oldest first.

    Deterministic: the same ``now`` and ``seed`` always give the same list (each rule draws
    from its own ``random.Random`` keyed by seed and index; no global random state). Every event
    is after its rule's :func:`creation_time` and before ``now`` (aware UTC)."""
    now = _utc(now)
    events: list[DemoEvent] = []
    for index in range(len(RULES)):
        rng = random.Random(f"playbook-demo-history:{seed}:{index}")
        events.extend(_RuleHistory(rng, index, creation_time(index, now), now).draw())
    events.sort(key=lambda event: (event.at, event.rule_index, event.kind))
    return events
