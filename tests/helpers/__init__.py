"""Helpers shared by the tests (fixtures and hooks are in conftest.py, which imports these).

- here: the pinned `Clock`, `dump` (every row, for "nothing changed"), `store_at` (the one
  way a test opens a playbook file of its own), `add` and `mark` (a rule through curation,
  a vote through the review API), and writers of events dated ahead of the clock;
- `cli`: the real `playbook` entry point in a subprocess (`run_cli`, `assert_user_error`);
- `tui`: a small real playbook and ways to wait on the workbench;
- `hooks`: running `playbook hook ...` as an agent does;
- `pg`: the run's PostgreSQL server;
- `hostile`: hostile strings and the check that output is inert;
- `histories`, `varied`, `policy_eval_worlds`: generated playbooks and logs.
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from pathlib import Path

from playbook import review
from playbook.core.policy import Policy
from playbook.curation import curate
from playbook.store import PlaybookStore, open_store
from playbook.store import testing as raw

T0 = datetime(2026, 3, 1, 12, 0, tzinfo=UTC)


class Clock:
    """A pinned clock that tests move by hand."""

    def __init__(self, t: datetime = T0) -> None:
        self.t = t

    def __call__(self) -> datetime:
        return self.t

    def advance(self, **kw: float) -> datetime:
        self.t += timedelta(**kw)
        return self.t


def feedback_from_ahead(
    store: PlaybookStore, clock: Clock, bullet_id: str, kind: str, at: datetime, **kw: object
) -> int:
    """An event logged by a writer whose clock runs ahead of ours (clock skew between the
    processes sharing a playbook): the way a future-dated event still reaches the log, now
    that `add_feedback` refuses an `at` later than its own clock."""
    ours = clock.t
    clock.t = at
    try:
        return store.add_feedback(bullet_id, kind, **kw)  # type: ignore[arg-type]
    finally:
        clock.t = ours


def log_mark_dated_ahead(
    store: PlaybookStore,
    bullet_id: str,
    kind: str,
    at: datetime,
    *,
    weight: float = 1.0,
    context: str | None = None,
) -> None:
    """A mark observed after it was recorded (`at` later than the store's clock), as older
    logs hold them: the store refuses to write one now, so it goes in as raw SQL."""
    from playbook.store import iso

    raw.run(
        store,
        "INSERT INTO feedback (bullet_id, kind, at, recorded_at, weight, context) "
        "VALUES (?, ?, ?, ?, ?, ?)",
        (bullet_id, kind, iso(at), iso(store.now()), weight, context),
    )


def dump(store: PlaybookStore) -> dict[str, list[tuple[object, ...]]]:
    """Every row of every table, for 'nothing changed' assertions."""
    return raw.dump(store)


def store_at(
    path: str | Path,
    *,
    clock: Callable[[], datetime] | None = None,
    policy: Policy | None = None,
) -> PlaybookStore:
    """The playbook at `path` (created if needed), opened the one way every surface opens
    it; use it in a `with` block, or leave it to be closed when collected."""
    return open_store(path, clock=clock, policy=policy)


def add(store: PlaybookStore, content: str, *, conflict_ok: bool = False, **kw: object) -> str:
    """Add a rule through curation; it must be added (or, with `conflict_ok`, added and
    flagged as a conflict). Returns its id."""
    r = curate(store, [{"type": "add", "content": content, **kw}])
    allowed = ("added", "conflict") if conflict_ok else ("added",)
    assert r.outcomes[0].status in allowed, r.outcomes
    return r.added[0]


def mark(store: PlaybookStore, bid: str, kind: str = "helpful", n: int = 1) -> None:
    """`n` agent votes through the review API."""
    for _ in range(n):
        review.mark(store, bid, kind, actor="agent")
