from __future__ import annotations

from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

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


@pytest.fixture
def clock() -> Clock:
    return Clock()


@pytest.fixture
def db_path(tmp_path: Path) -> Path:
    return tmp_path / "state.sqlite3"


@pytest.fixture
def store(db_path: Path, clock: Clock) -> Iterator[PlaybookStore]:
    with open_store(db_path, clock=clock) as opened:
        yield opened


def dump(store: PlaybookStore) -> dict[str, list[tuple[object, ...]]]:
    """Every row of every table, for 'nothing changed' assertions."""
    return raw.dump(store)


# ---------------------------------------------------------------- parallel workers (xdist)
# The suite runs on parallel workers (`-n auto` in pyproject.toml). A test may share nothing
# with another worker: every file lives under its own `tmp_path`, no fixed port or global
# path is used, and the processes a test starts are its own. Module-scoped fixtures (the
# demo playbook, for instance) are built once per worker that runs their module.
#
# PostgreSQL (issue 16) goes here: ONE throwaway cluster per run, started by a
# session-scoped fixture on the controller side (or by `.ci/run`, passing its URL in an
# environment variable), and ONE schema per worker, named after xdist's `worker_id`
# fixture ("gw0", "gw1", ... or "master" without workers), created at session start and
# dropped at the end, so workers never see each other's rows.
