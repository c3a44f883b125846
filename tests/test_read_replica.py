"""Reads from a replica (`--read-db`, `$PLAYBOOK_READ_DB`; README "Reading from a replica").

The "replica" here is a second playbook on the test server with different content, so that
every answer says which database it came from: recall, stats, exports and the prompt hook
must answer from it; mark must write the primary; show (the read after a write) must read
the primary. A replica that cannot be reached is read around (one line on stderr; for a
hook, one line in its log); a read URL that cannot be a replica is a usage error. A real
streaming replica, and its lag under 32 agents, is `bench/year_replica.py`.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from playbook.curation import curate
from playbook.store import PlaybookStore
from playbook.store.replica import check_read_target, open_replica
from playbook.tui.data import Source, Watcher
from playbook.tui.reading import load_snapshot

from .helpers.cli import Result, assert_user_error, clean_env, run_cli
from .helpers.hooks import ENTRY, Agent, context_of, fixture
from .helpers.replica import PRIMARY_RULE, REPLICA_RULE, make_pair
from .helpers.replica import closed_url as _closed_url
from .helpers.replica import helpful_marks as _helpful
from .helpers.replica import playbook_with as _playbook

pytestmark = pytest.mark.postgres


@pytest.fixture
def pair(pg_server: str, worker_id: str) -> tuple[str, str, str]:
    """(primary URL, "replica" URL, the primary's rule id): two playbooks, one rule each."""
    return make_pair(pg_server, worker_id)


def _cli(*args: str, entry: str = ENTRY, **env: str) -> Result:
    return run_cli(*args, entry=entry, env=clean_env(**env))


def _contents(r: Result) -> list[str]:
    assert r.rc == 0, r.err
    return [b["bullet"]["content"] for b in r.data["bullets"]]


def _rules(store: PlaybookStore) -> list[str]:
    return sorted(r.content for r in store.bullet_records(store.active_ids()).values())


@pytest.mark.parametrize("entry", [ENTRY, "from playbook.cli import run; run()"])
def test_recall_reads_the_replica_mark_writes_the_primary_and_show_sees_it(
    pair: tuple[str, str, str], entry: str
) -> None:
    """Through the fast path (the `playbook` script) and the full command line alike."""
    primary, replica, bid = pair
    where = ("--db", primary, "--read-db", replica)
    assert _contents(_cli(*where, "recall", "npm release", "--json", entry=entry)) == [REPLICA_RULE]
    marked = _cli(*where, "mark", bid, "helpful", "--json", entry=entry)
    assert marked.rc == 0, marked.err
    assert _helpful(primary, bid) == 1
    shown = _cli(*where, "show", bid, "--json", entry=entry)
    assert shown.rc == 0, shown.err
    assert [e["kind"] for e in shown.data["timeline"]] == ["helpful"]  # its own write, at once
    # the replica's playbook was never written
    assert _contents(_cli("--db", replica, "recall", "npm release", "--json")) == [REPLICA_RULE]


def test_the_environment_names_the_replica_too(pair: tuple[str, str, str]) -> None:
    primary, replica, _ = pair
    r = _cli("--db", primary, "recall", "npm release", "--json", PLAYBOOK_READ_DB=replica)
    assert _contents(r) == [REPLICA_RULE]
    env = {"PLAYBOOK_DB": primary, "PLAYBOOK_READ_DB": replica}
    r = _cli("recall", "npm release", "--json", entry="from playbook.cli import run; run()", **env)
    assert _contents(r) == [REPLICA_RULE]


def test_stats_and_exports_read_the_replica(pair: tuple[str, str, str]) -> None:
    primary, replica, _ = pair
    _playbook(replica, "A second rule, on the replica only")  # its stats differ
    where = ("--db", primary, "--read-db", replica)
    exported = _cli(*where, "export", "--format", "json")
    assert exported.rc == 0, exported.err
    text = exported.out
    assert REPLICA_RULE in text and PRIMARY_RULE not in text
    stats = _cli(*where, "stats", "--json").data
    on_replica = _cli("--db", replica, "stats", "--json").data
    on_primary = _cli("--db", primary, "stats", "--json").data
    del stats["path"], on_replica["path"], on_primary["path"]  # names --db
    assert stats == on_replica != on_primary


def test_an_unreachable_replica_is_said_once_and_the_primary_read(
    pair: tuple[str, str, str],
) -> None:
    primary, _, _ = pair
    r = _cli("--db", primary, "--read-db", _closed_url(), "recall", "npm release", "--json")
    assert r.rc == 0, r.err
    assert _contents(r) == [PRIMARY_RULE]
    lines = r.err.strip().splitlines()
    assert len(lines) == 1 and "read replica is unreachable" in lines[0], r.err
    assert "reading the primary" in lines[0]


def _agent(tmp_path: Path, primary: str) -> Agent:
    return Agent(db=primary, state=tmp_path / "state")  # type: ignore[arg-type]  # a URL


def test_the_prompt_hook_reads_the_replica(pair: tuple[str, str, str], tmp_path: Path) -> None:
    primary, replica, _ = pair
    agent = _agent(tmp_path, primary)
    done = agent.hook("prompt", fixture("user_prompt_submit.json"), "--read-db", replica)
    assert done.rc == 0
    context = context_of(done.out)
    assert REPLICA_RULE in context and PRIMARY_RULE not in context
    assert agent.log == []


@pytest.mark.parametrize("bad", ["closed", "file"])
def test_a_hook_never_fails_on_the_replica_it_reads_the_primary(
    pair: tuple[str, str, str], tmp_path: Path, bad: str
) -> None:
    primary, _, _ = pair
    read = _closed_url() if bad == "closed" else str(tmp_path / "replica.sqlite3")
    agent = _agent(tmp_path, primary)
    env = agent.env(PLAYBOOK_READ_DB=read)
    done = agent.hook("prompt", fixture("user_prompt_submit.json"), env=env)
    assert done.rc == 0 and done.err == ""
    assert PRIMARY_RULE in context_of(done.out)
    [line] = agent.log
    assert ("unreachable" if bad == "closed" else "not a file") in line
    assert line.endswith("read the primary")


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (("--read-db", "REPLICA_FILE", "recall", "npm"), "not a file"),
        (("--read-db", "", "recall", "npm"), "empty"),
        (("--read-db", "mysql://db/x", "recall", "npm"), "unknown database URL scheme"),
    ],
)
def test_a_read_url_that_cannot_be_a_replica_is_a_usage_error(
    pair: tuple[str, str, str], tmp_path: Path, args: tuple[str, ...], message: str
) -> None:
    primary, _, _ = pair
    given = [str(tmp_path / "r.sqlite3") if a == "REPLICA_FILE" else a for a in args]
    r = _cli("--db", primary, *given, "--json")
    error = assert_user_error(r, "usage", 2)
    assert message in error["message"]
    assert not (tmp_path / "r.sqlite3").exists()


@pytest.mark.parametrize("command", [("recall", "npm"), ("mark", "b-1", "helpful")])
def test_a_replica_beside_a_sqlite_playbook_is_a_usage_error(
    pg_url: str, tmp_path: Path, command: tuple[str, ...]
) -> None:
    db = tmp_path / "state.sqlite3"
    r = _cli("--db", str(db), "--read-db", pg_url, *command, "--json")
    error = assert_user_error(r, "usage", 2)
    assert "needs a PostgreSQL playbook" in error["message"]
    assert not db.exists()


# ------------------------------------------------------------------ the store's side


def test_the_store_checks_the_pair_and_opens_the_replica_read_only(
    pair: tuple[str, str, str], tmp_path: Path
) -> None:
    from playbook.core.errors import UsageError

    primary, replica, _ = pair
    with pytest.raises(UsageError):
        check_read_target(tmp_path / "a.sqlite3", replica)
    with pytest.raises(UsageError):
        check_read_target(primary, tmp_path / "a.sqlite3")
    with open_replica(check_read_target(primary, replica)) as store:
        assert store.read_only
        assert _rules(store) == [REPLICA_RULE]
        assert not store.replication.replayed("0/0")  # no standby: never known to have a write


def test_the_workbench_reads_the_replica_until_it_writes(pair: tuple[str, str, str]) -> None:
    """Its snapshots read the replica; its writes go to the primary, and the reads after
    one go there too while the replica has not replayed it (a playbook that is no standby
    never has: the workbench keeps reading the primary)."""
    primary, replica, bid = pair
    source = Source(primary, read_path=replica)

    def shown() -> list[str]:
        with source.open(migrate=False) as store, source.open(reads=True) as snapshot:
            assert _rules(snapshot) == _rules(store)  # the snapshot's reads (`reading.py`)
            return _rules(store)

    assert shown() == [REPLICA_RULE]
    assert [r.content for r in load_snapshot(source).rows] == [REPLICA_RULE]
    with source.open() as store:
        curate(store, [{"type": "helpful", "bullet_id": bid}])
        assert store.replication.write_position()
    assert shown() == [PRIMARY_RULE]
    assert _helpful(primary, bid) == 1
    watcher = Watcher(primary, replica)  # on the replica: polls its commit counter
    try:
        before = watcher.version()
        _playbook(replica, "Another rule on the replica")
        assert watcher.version() != before
    finally:
        watcher.close()


def test_the_workbench_falls_back_to_the_primary(pair: tuple[str, str, str]) -> None:
    primary, _, _ = pair
    source = Source(primary, read_path=_closed_url())
    with source.open(migrate=False) as store:
        assert _rules(store) == [PRIMARY_RULE]
    watcher = Watcher(primary, _closed_url())
    try:
        assert watcher.version() is not None
    finally:
        watcher.close()
