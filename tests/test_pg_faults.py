"""A PostgreSQL playbook through a server that goes away (issue 29).

A long-lived store (the MCP server, a reflection worker, the workbench's watcher) whose
connection is cut, by `pg_terminate_backend` or a server stopped as a crash stops it:
the batch under way fails whole with `connection_lost` (never half-applied, never
retried behind the caller's back), the next one connects again and applies (an outcome's
receipt makes repeating it safe: it applies once), a read on its own is asked again at
once. The workbench says it lost the playbook, keeps what it showed, and catches up with
what was written meanwhile when it answers again.
"""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

import pytest

from playbook.core.errors import CannotOpen, ConnectionLost
from playbook.curation import curate
from playbook.curation.outcomes import apply_outcome
from playbook.store import PlaybookStore, open_store
from playbook.store import testing as raw

from .helpers.tui import async_test, loaded, make_app, screen_text, wait_for

pytestmark = pytest.mark.postgres


def _cut(store: PlaybookStore, admin_url: str) -> None:
    """Terminate `store`'s backend, as an administrator or a failover does."""
    pid = raw.value(store, "SELECT pg_backend_pid()")
    with open_store(admin_url) as admin:
        raw.run(admin, "SELECT pg_terminate_backend(?)", (pid,))
    deadline = time.monotonic() + 10
    with open_store(admin_url) as admin:
        while raw.value(admin, "SELECT count(*) FROM pg_stat_activity WHERE pid = ?", (pid,)):
            assert time.monotonic() < deadline
            time.sleep(0.02)


def _events(url: str, bid: str) -> int:
    with open_store(url, mode="read") as other:
        return len(other.timeline(bid))


def test_a_cut_connection_fails_the_batch_whole_and_the_next_one_applies(
    pg_url: str, pg_server: str
) -> None:
    with open_store(pg_url) as store:
        bid = curate(store, [{"type": "add", "content": "Pin npm to 11"}]).added[0]
        _cut(store, pg_server)
        report = {"outcome": "success", "bullet_ids": [bid], "receipt": "ci-1"}
        with pytest.raises(ConnectionLost, match="not applied"):
            apply_outcome(store, report)
        assert _events(pg_url, bid) == 0
        assert apply_outcome(store, report).applied == [bid]
        assert apply_outcome(store, report).replayed
        assert _events(pg_url, bid) == 1
        _cut(store, pg_server)
        assert store.get_bullet(bid) is not None  # a read on its own: asked again at once
        store.listen()
        _cut(store, pg_server)
        with pytest.raises(ConnectionLost):
            store.change_token()
        token = store.change_token()  # connected and listening again
        with open_store(pg_url) as other:
            other.insert_bullet("Write the failing test first")
        deadline = time.monotonic() + 10
        while store.change_token() == token:
            assert time.monotonic() < deadline, "no notification after the reconnection"
            time.sleep(0.02)


def test_the_cli_says_connection_lost_with_its_exit_code() -> None:
    from playbook.cli.common import ERROR_CODES, EXIT_DATABASE

    assert ERROR_CODES[ConnectionLost.code] == EXIT_DATABASE


@pytest.mark.slow
def test_a_server_stopped_as_a_crash_and_started_again() -> None:
    """The server itself goes (`pg_ctl stop -m immediate`) and comes back on its port: a
    long-lived store reports the batch meanwhile, then works again. (A server of its own:
    the run's is shared.)"""
    import tempfile

    from playbook.store.postgres.cluster import Cluster, ClusterError

    cluster = Cluster(Path(tempfile.mkdtemp(prefix="playbook-pg-restart-")))
    try:
        url = cluster.start()
    except ClusterError as exc:
        pytest.skip(str(exc))
    try:
        with open_store(url) as store:
            bid = curate(store, [{"type": "add", "content": "Pin npm to 11"}]).added[0]
            raw.run(store, "CHECKPOINT")  # the test server does not sync its commits
            cluster.halt()
            with pytest.raises((ConnectionLost, CannotOpen)):
                curate(store, [{"type": "helpful", "bullet_id": bid}])
            with pytest.raises(CannotOpen):  # still down: the reconnection says so
                curate(store, [{"type": "helpful", "bullet_id": bid}])
            cluster.resume()
            r = curate(store, [{"type": "helpful", "bullet_id": bid}])
            assert [o.status for o in r.outcomes] == ["applied"]
            assert len(store.timeline(bid)) == 1
    finally:
        cluster.stop()


@pytest.fixture
def reviewer(pg_url: str, pg_server: str) -> dict[str, Any]:
    """A reviewer's login on a playbook, and how to refuse it logins for a while."""
    schema = pg_url.rsplit("search_path%3D", 1)[1]
    with open_store(pg_url) as owner:
        owner.insert_bullet("Read the first error in the CI log")
        owner.roles.install(f"{schema}_agent", f"{schema}_human")
    login = f"{schema}_tui"
    with open_store(pg_server) as admin:
        raw.run(admin, f"DROP ROLE IF EXISTS {login}")
        raw.run(admin, f"CREATE ROLE {login} LOGIN IN ROLE {schema}_human")
    rest = pg_url.split("://", 1)[1].split("@", 1)[1]
    return {"url": f"postgresql://{login}@{rest}", "login": login, "owner": pg_url}


def _logins(admin_url: str, login: str, *, allowed: bool) -> None:
    with open_store(admin_url) as admin:
        raw.run(admin, f"ALTER ROLE {login} {'LOGIN' if allowed else 'NOLOGIN'}")
        if not allowed:
            raw.run(
                admin,
                "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE usename = ?",
                (login,),
            )


def _notes(app: Any) -> str:
    return " ".join(str(n.message) for n in app._notifications)


@async_test
async def test_the_workbench_says_it_lost_the_playbook_and_catches_up(
    reviewer: dict[str, Any], pg_server: str, tmp_path: Path
) -> None:
    app = make_app(reviewer["url"], folder=tmp_path)
    async with app.run_test(size=(120, 36)) as pilot:
        await loaded(pilot, app)
        await wait_for(pilot, lambda: "Read the first error" in screen_text(app))
        _logins(pg_server, reviewer["login"], allowed=False)
        await wait_for(pilot, lambda: app.live.lost and "lost the playbook" in _notes(app))
        with open_store(reviewer["owner"]) as other:  # written while the workbench is out
            other.insert_bullet("Write the failing test first")
        await pilot.pause(0.5)
        assert app.live.lost and "Read the first error" in screen_text(app)  # what it had
        _logins(pg_server, reviewer["login"], allowed=True)
        await wait_for(pilot, lambda: not app.live.lost, timeout=15)
        await wait_for(pilot, lambda: "Write the failing test first" in screen_text(app))
        assert "caught up" in _notes(app)
