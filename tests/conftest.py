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
