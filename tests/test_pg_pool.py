"""Through a pooler in transaction mode (`?pool=transaction`, `store/postgres/pooling.py`).

Each test runs two ways: straight to the test server with `pool=transaction` (the settings
then travel in every transaction, which is what a pool needs; this half runs wherever the
PostgreSQL half does), and through a real PgBouncer in transaction mode with its default
configuration (`tests/helpers/bouncer.py`; skipped without the `pgbouncer` binary, which
CI does not install). PgBouncer's pool holds 2 server connections, so one client's
transactions land on both and a later client meets what an earlier one left on them.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator

import pytest

from playbook.core import errors
from playbook.curation import curate
from playbook.store import open_store
from playbook.store.postgres import opening
from playbook.store.postgres.pooling import option_settings, pool_mode, settings_statement

from .helpers.bouncer import bouncer
from .helpers.cli import clean_env, run_cli
from .helpers.hooks import ENTRY
from .helpers.pg import fresh_schema_name, with_schema

pytestmark = pytest.mark.postgres

RULE = "Pin npm to 11 in release jobs"


@pytest.fixture(scope="module", params=["straight", pytest.param("pgbouncer")])
def base(request: pytest.FixtureRequest, pg_server: str) -> Iterator[str]:
    """The URL to reach the test server by (no schema yet)."""
    if request.param == "straight":
        yield pg_server
        return
    with bouncer(pg_server) as url:
        yield url


@pytest.fixture
def pooled(base: str, worker_id: str) -> str:
    """A pooled URL of a playbook of its own, holding one rule."""
    url = with_schema(base, fresh_schema_name(worker_id)) + "&pool=transaction"
    with open_store(url) as store:
        curate(store, [{"type": "add", "content": RULE, "tags": ["npm"]}])
    return url


def _rule(url: str) -> str:
    with open_store(url, mode="read") as store:
        return next(iter(store.active_ids()))


def test_recall_and_mark_from_the_command_line(pooled: str) -> None:
    env = clean_env()
    found = run_cli("--db", pooled, "recall", "npm release", "--json", entry=ENTRY, env=env)
    assert found.rc == 0, found.err
    assert [b["bullet"]["content"] for b in found.data["bullets"]] == [RULE]
    bid = _rule(pooled)
    marked = run_cli("--db", pooled, "mark", bid, "helpful", "--json", entry=ENTRY, env=env)
    assert marked.rc == 0, marked.err
    with open_store(pooled, mode="read") as store:
        assert [e.kind for e in store.timeline(bid)] == ["helpful"]


def test_a_read_only_opening_refuses_a_write_in_every_transaction(pooled: str) -> None:
    """The database refuses it (not only the store's own check): a statement that writes
    but reads as a SELECT to the store, on its own, in a pipeline, in a snapshot, and on
    each of the pool's server connections in turn."""
    sneaky = "WITH gone AS (DELETE FROM bullets RETURNING 1) SELECT count(*) FROM gone"
    with open_store(pooled, mode="read") as store:
        for _ in range(3):
            assert store.sql.scalar("SHOW transaction_read_only") == "on"
            with pytest.raises(errors.ReadOnlyPlaybook):
                store.sql.all(sneaky)
            with pytest.raises(errors.ReadOnlyPlaybook):
                store.sql.all_of([("SELECT 1", ()), (sneaky, ())])
            with pytest.raises(errors.ReadOnlyPlaybook), store.sql.snapshot():
                store.sql.all(sneaky)
    assert _rule(pooled)  # still there


def test_the_session_settings_hold_in_every_transaction(pooled: str) -> None:
    with open_store(pooled, mode="write") as store:
        for _ in range(3):
            shown = store.sql.all_of([(f"SHOW {name}", ()) for name in ("lock_timeout", "jit")])
            assert [row[0][0] for row in shown] == [opening.BUSY_TIMEOUT, "off"]
            assert store.sql.scalar("SHOW transaction_read_only") == "off"
            assert store.sql.scalar("SELECT current_schema()") == store.sql.schema


def test_a_writer_waits_for_the_lock_no_longer_than_lock_timeout(
    pooled: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Another writer holds the playbook's write lock: a mark through the pool gives up
    after `lock_timeout` (without it, a pooled writer waited for ever)."""
    monkeypatch.setattr(opening, "BUSY_TIMEOUT", "300ms")
    bid = _rule(pooled)
    with open_store(pooled, mode="write") as holder, open_store(pooled, mode="write") as marker:
        with holder.sql.transaction():  # takes the lock, holds it
            holder.sql.scalar("SELECT 1")
            with pytest.raises(errors.DatabaseBusy, match="lock timeout"):
                curate(marker, [{"type": "helpful", "bullet_id": bid}])
        curate(marker, [{"type": "helpful", "bullet_id": bid}])  # the lock is free again
    with open_store(pooled, mode="read") as store:
        assert [e.kind for e in store.timeline(bid)] == ["helpful"]


def test_two_rounds_of_long_lived_writers(pooled: str) -> None:
    """psycopg prepares a statement run 5 times on a connection; through a pool the next
    client's server connection holds the last one's (`prepared statement "_pg3_0" already
    exists`) or lacks its own. Two rounds of 3 writers marking 12 times each: every mark
    applied once."""
    bid = _rule(pooled)
    failed: list[str] = []

    def writer() -> None:
        with open_store(pooled, mode="write") as store:
            for _ in range(12):
                try:
                    outcome = curate(store, [{"type": "helpful", "bullet_id": bid}]).outcomes[0]
                except errors.PlaybookError as exc:
                    failed.append(str(exc))
                else:
                    if outcome.status != "applied":
                        failed.append(f"{outcome.status}: {outcome.reason}")

    for _ in range(2):
        threads = [threading.Thread(target=writer) for _ in range(3)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
    assert failed == []
    with open_store(pooled, mode="read") as store:
        assert sum(1 for e in store.timeline(bid) if e.kind == "helpful") == 72


def test_a_watcher_through_the_pool_sees_commits_without_listening(pooled: str) -> None:
    """A pool in transaction mode cannot keep a LISTEN: the watcher's token reads the
    commit counter instead, and still moves with every commit."""
    bid = _rule(pooled)
    with open_store(pooled, mode="read") as watcher, open_store(pooled) as writer:
        watcher.listen()
        before = watcher.change_token()
        assert watcher.change_token() == before
        curate(writer, [{"type": "helpful", "bullet_id": bid}])
        assert watcher.change_token() != before


# ------------------------------------------------------------ the URL and its options
def test_the_pool_parameter_is_taken_out_of_the_url() -> None:
    url = "postgresql://u@h:6432/team?pool=transaction&connect_timeout=3"
    assert pool_mode(url) == ("postgresql://u@h:6432/team?connect_timeout=3", "transaction")
    assert pool_mode("postgresql://u@h/team") == ("postgresql://u@h/team", None)
    for bad in ("session", "", "transaction&pool=transaction"):
        with pytest.raises(errors.UsageError, match="pool=transaction"):
            pool_mode(f"postgresql://u@h/team?pool={bad}")


def test_the_urls_options_become_settings() -> None:
    given = r"-c search_path=team -cwork_mem=8MB --statement-timeout=5s -c x=a\ b"
    assert option_settings(given) == [
        ("search_path", "team"),
        ("work_mem", "8MB"),
        ("statement_timeout", "5s"),
        ("x", "a b"),
    ]
    for bad in ("-d 5", "search_path=team", "-c", "-c =x"):
        with pytest.raises(ValueError):
            option_settings(bad)
    assert settings_statement([("search_path", "it's")]) == (
        "SELECT set_config('search_path', 'it''s', true)"
    )


def test_a_pooled_url_whose_options_are_no_settings_is_a_usage_error(pg_server: str) -> None:
    url = f"{pg_server}?options=-d%205&pool=transaction"
    with pytest.raises(errors.UsageError, match="-c name=value"):
        open_store(url, mode="read")


def test_straight_to_the_server_nothing_changes(pg_url: str) -> None:
    """Without `pool=`, the settings go with the connection and statements are prepared."""
    url, options, per_transaction = opening.session(pg_url, "test", read_only=True)
    assert url == pg_url and per_transaction == ""
    assert "default_transaction_read_only=on" in options["options"]
    assert "prepare_threshold" not in options
