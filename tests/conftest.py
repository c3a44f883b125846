from __future__ import annotations

import shutil
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from playbook.store import PlaybookStore, open_store

from .helpers import Clock
from .helpers import pg as pg_support
from .helpers.pg_pool import LEASE, POOL

# pytest keeps each test module it rewrites (for its assertion messages) in __pycache__, as
# Python keeps compiled modules, unless told not to. This machine says so for every process
# (PYTHONDONTWRITEBYTECODE), and then each worker rewrote every test module on every run
# (about 3 s before its first test). The test modules imported after this line are cached.
sys.dont_write_bytecode = False


@pytest.fixture
def clock() -> Clock:
    return Clock()


@pytest.fixture
def db_path(tmp_path: Path) -> Path:
    return tmp_path / "state.sqlite3"


@pytest.fixture(params=["sqlite", pytest.param("postgresql", marks=pytest.mark.postgres)])
def backend(request: pytest.FixtureRequest) -> str:
    """Each test that takes a playbook runs on both backends: parity, test by test."""
    return str(request.param)


@pytest.fixture
def db_target(backend: str, db_path: Path, request: pytest.FixtureRequest) -> Iterator[str | Path]:
    """Where the test's playbook is: a file, or a schema of its own on the test server.

    A test that takes `store` gets its playbook made, so its schema may be one an earlier
    test used and left empty (tests/helpers/pg_pool.py); any other gets a new name."""
    if backend == "sqlite":
        yield db_path
    elif "store" not in request.fixturenames:
        yield str(request.getfixturevalue("pg_url"))
    else:
        schema = POOL.lease(
            request.getfixturevalue("pg_server"), request.getfixturevalue("worker_id")
        )
        request.node.stash[LEASE] = schema
        yield schema.url
        POOL.give_back(schema)  # after `store` has closed


@pytest.fixture(scope="session")
def empty_playbook_file(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A new SQLite playbook, closed: made once a process and copied for each test that
    takes `store` (a copy opens in 4 ms, making one runs every migration: about 30 ms,
    some 370 times a run). Only the migrations' own timestamps tell the two apart; the
    tests of making a file (tests/test_store_open.py, the concurrency tests) make theirs."""
    path = tmp_path_factory.mktemp("empty-playbook") / "empty.sqlite3"
    open_store(path).close()
    assert not path.with_name(path.name + "-wal").exists()  # all of it in the one file
    return path


@pytest.fixture
def store(
    db_target: str | Path, clock: Clock, request: pytest.FixtureRequest
) -> Iterator[PlaybookStore]:
    if isinstance(db_target, Path) and not db_target.exists():
        shutil.copyfile(request.getfixturevalue("empty_playbook_file"), db_target)
    with open_store(db_target, clock=clock) as opened:
        if (schema := request.node.stash.get(LEASE, None)) is not None:
            POOL.made(schema)
        yield opened


# ---------------------------------------------------------------- parallel workers (xdist)
# The suite runs on parallel workers (`-n auto` in pyproject.toml). A test may share nothing
# with another worker: every file lives under its own `tmp_path`, no fixed port or global
# path is used, and the processes a test starts are its own. Module-scoped fixtures (the
# demo playbook, for instance) are built once per worker that runs their module.
#
# PostgreSQL: ONE server per run (tests/helpers/pg.py), started by the controller process
# (or given by `.ci/run` / a developer in $PLAYBOOK_TEST_PG), shared by every worker; each
# test that asks for `pg_url` gets a schema of its own on it, named after the worker
# ("gw0", "gw1", ... or "master") and a counter, so no two tests see each other's rows.
# Without a server (no PostgreSQL installed) the PostgreSQL half is skipped with the reason,
# unless $PLAYBOOK_REQUIRE_PG is set (CI), where it fails.


def pytest_configure(config: pytest.Config) -> None:
    pg_support.configure(config)


def pytest_unconfigure(config: pytest.Config) -> None:
    pg_support.unconfigure(config)


def pytest_terminal_summary(terminalreporter: pytest.TerminalReporter) -> None:
    terminalreporter.write_line(pg_support.summary_line())


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    pg_support.deselect_sqlite_only(config, items)


@pytest.fixture(scope="session")
def pg_server() -> str:
    """The base URL of the run's PostgreSQL server (skips, or fails under
    $PLAYBOOK_REQUIRE_PG, when there is none)."""
    return pg_support.server_url()


@pytest.fixture
def pg_url(pg_server: str, worker_id: str) -> str:
    """A URL whose playbook is a schema of its own (created by the first open)."""
    return pg_support.fresh_target(pg_server, worker_id)
