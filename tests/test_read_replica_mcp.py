"""The MCP server and `playbook where` with a read replica (`--read-db`, `$PLAYBOOK_READ_DB`).

As in tests/test_read_replica.py, the "replica" is a second playbook with other content, so
every answer says which database it came from. It is no standby: it never counts as having
replayed a write of the primary (`store.replication`), so once the server has written, its
reads stay on the primary, as they do on a real replica until it has caught up.
"""

from __future__ import annotations

import json
import select
import subprocess
import sys
import time

import pytest

from playbook.mcp import sources
from playbook.mcp.tools import PlaybookTools
from playbook.store.replica import check_read_target

from .helpers.cli import ENTRY, assert_user_error, clean_env, run_cli
from .helpers.replica import PRIMARY_RULE, REPLICA_RULE, make_pair
from .helpers.replica import closed_url as _closed_url
from .helpers.replica import helpful_marks as _helpful
from .helpers.replica import playbook_with as _playbook

pytestmark = pytest.mark.postgres


@pytest.fixture
def pair(pg_server: str, worker_id: str) -> tuple[str, str, str]:
    """(primary URL, "replica" URL, the primary's rule id): two playbooks, one rule each."""
    return make_pair(pg_server, worker_id)


def _tools(primary: str, replica: str) -> PlaybookTools:
    return PlaybookTools(primary, read_db=check_read_target(primary, replica))


def _recalled(tools: PlaybookTools) -> list[str]:
    return [r["content"] for r in tools.recall("npm release")["bullets"]]


def test_the_servers_reads_go_to_the_replica_its_writes_to_the_primary(
    pair: tuple[str, str, str],
) -> None:
    primary, replica, bid = pair
    tools = _tools(primary, replica)
    assert _recalled(tools) == [REPLICA_RULE]
    assert [r["content"] for r in tools.list_rules(tag="npm")["rules"]] == [REPLICA_RULE]
    _playbook(replica, "A second rule, on the replica only")  # its counts differ
    assert tools.stats()["bullets"]["total"] == 2
    assert REPLICA_RULE in tools.agents_md() and PRIMARY_RULE not in tools.agents_md()
    # show_bullet looks at what was just done: the primary, as the CLI's show does
    assert tools.show_bullet(bid)["bullet"]["content"] == PRIMARY_RULE
    marked = tools.mark_feedback(bid, "helpful")
    assert marked["status"] == "applied"
    assert _helpful(primary, bid) == 1
    # its own write: the replica has not replayed it, so the reads go to the primary
    assert _recalled(tools) == [PRIMARY_RULE]
    assert [e["kind"] for e in tools.show_bullet(bid)["events"]["items"]] == ["helpful"]


def test_a_replica_that_has_the_write_is_read_again(
    pair: tuple[str, str, str], monkeypatch: pytest.MonkeyPatch
) -> None:
    primary, replica, bid = pair
    tools = _tools(primary, replica)
    tools.mark_feedback(bid, "helpful")
    assert _recalled(tools) == [PRIMARY_RULE]
    from playbook.store.replication import Replication

    monkeypatch.setattr(Replication, "replayed", lambda self, position: True)
    assert _recalled(tools) == [REPLICA_RULE]


def test_an_unreachable_replica_is_said_once_and_not_tried_again_at_once(
    pair: tuple[str, str, str],
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    primary, _, _ = pair
    tools = _tools(primary, _closed_url())
    tried: list[object] = []
    real = sources.open_replica

    def counted(*args: object) -> object:
        tried.append(args)
        return real(*args)  # type: ignore[arg-type]  # the arguments as given

    monkeypatch.setattr(sources, "open_replica", counted)
    assert _recalled(tools) == [PRIMARY_RULE]
    assert _recalled(tools) == [PRIMARY_RULE]
    assert len(tried) == 1  # the second call did not wait on it again
    lines = capsys.readouterr().err.strip().splitlines()
    assert len(lines) == 1 and "read replica is unreachable" in lines[0], lines


def _mcp(primary: str, replica: str, *calls: dict[str, object]) -> list[dict[str, object]]:
    """`playbook --db primary mcp` with $PLAYBOOK_READ_DB, the calls sent over stdio."""
    hello = {
        "jsonrpc": "2.0",
        "id": 0,
        "method": "initialize",
        "params": {
            "protocolVersion": "2025-06-18",
            "capabilities": {},
            "clientInfo": {"name": "test", "version": "0"},
        },
    }
    lines = [hello, {"jsonrpc": "2.0", "method": "notifications/initialized"}]
    lines += [
        {"jsonrpc": "2.0", "id": i, "method": "tools/call", "params": call}
        for i, call in enumerate(calls, 1)
    ]
    proc = subprocess.Popen(
        [sys.executable, "-c", ENTRY, "--db", primary, "mcp"],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env=clean_env(PLAYBOOK_READ_DB=replica),
    )
    assert proc.stdin is not None and proc.stdout is not None
    try:
        proc.stdin.write("".join(json.dumps(line) + "\n" for line in lines).encode())
        proc.stdin.flush()
        answers: list[dict[str, object]] = []
        deadline = time.monotonic() + 60
        while len(answers) < len(calls) and time.monotonic() < deadline:
            if select.select([proc.stdout], [], [], 1.0)[0]:
                line = proc.stdout.readline()
                if not line:
                    break  # the server ended
                got = json.loads(line)
                if got.get("id") not in (0, None):
                    answers.append(got)
    finally:
        proc.stdin.close()
        proc.wait(timeout=30)
        proc.stdout.close()
        if proc.stderr is not None:
            proc.stderr.close()
    return answers


def test_playbook_mcp_reads_the_replica_named_by_the_environment(
    pair: tuple[str, str, str],
) -> None:
    pytest.importorskip("mcp")
    primary, replica, _ = pair
    (answer,) = _mcp(primary, replica, {"name": "recall", "arguments": {"query": "npm release"}})
    text = json.dumps(answer)
    assert REPLICA_RULE in text and PRIMARY_RULE not in text


def test_playbook_mcp_refuses_a_read_url_that_cannot_be_a_replica(
    pair: tuple[str, str, str],
) -> None:
    primary, _, _ = pair
    r = run_cli("--db", primary, "--read-db", "x.sqlite3", "mcp", env=clean_env())
    assert r.rc == 2, r.err
    assert "--read-db" in r.err


# ------------------------------------------------------------------ where
def test_where_names_the_replica_without_its_password(pair: tuple[str, str, str]) -> None:
    primary, _, _ = pair
    replica = "postgresql://reader:s3cret-Pw@replica.example:5432/team"
    env = clean_env(PLAYBOOK_READ_DB=replica)
    found = run_cli("--db", primary, "where", "--json", env=env).data
    assert found["read_db"] == "postgresql://reader:***@replica.example:5432/team"
    assert found["read_source"] == "$PLAYBOOK_READ_DB"
    given = run_cli("--db", primary, "--read-db", replica, "where", env=clean_env())
    assert given.rc == 0, given.err
    assert "s3cret" not in given.out + given.err
    assert "reads from the replica postgresql://reader:***@replica.example:5432/team" in given.out
    assert "(from --read-db)" in given.out
    alone = run_cli("--db", primary, "where", "--json", env=clean_env()).data
    assert alone["read_db"] is None and alone["read_source"] is None


def test_where_refuses_a_replica_beside_a_sqlite_playbook() -> None:
    r = run_cli(
        "--db", "pb.sqlite3", "--read-db", "postgresql://u@h/db", "where", "--json", env=clean_env()
    )
    assert_user_error(r, "usage", 2)
