"""`playbook mcp` answers every request it cannot read: a client never waits forever."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from .helpers.cli import ENTRY, clean_env

pytest.importorskip("mcp")

MALFORMED = [
    ({"jsonrpc": "2.0", "id": 1, "method": "tools/list", "params": [1, 2]}, 1, "params must be"),
    ({"jsonrpc": "2.0", "id": "two", "method": 7}, "two", "method must be a string"),
    ({"jsonrpc": "1.0", "id": 3, "method": "tools/list"}, 3, 'jsonrpc must be "2.0"'),
    ({"jsonrpc": "2.0", "id": 4, "params": {}}, 4, "method must be a string"),
    ({"jsonrpc": "2.0", "id": 4.5, "method": "ping"}, None, "id must be a string or an integer"),
]


def test_malformed_requests_get_a_json_rpc_error_for_their_id(tmp_path: Path) -> None:
    lines = [json.dumps(m) for m, _, _ in MALFORMED]
    lines.insert(2, json.dumps({"jsonrpc": "2.0", "method": 9}))  # a notification: no answer
    lines.insert(3, "not json at all")  # no id to answer
    proc = subprocess.run(
        [sys.executable, "-c", ENTRY, "--db", str(tmp_path / "pb.sqlite3"), "mcp"],
        input=("\n".join(lines) + "\n").encode(),
        capture_output=True,
        env=clean_env(),
        timeout=60,
    )
    replies = [json.loads(line) for line in proc.stdout.decode().splitlines()]
    assert [r["id"] for r in replies] == [rid for _, rid, _ in MALFORMED]
    for reply, (_, _, needle) in zip(replies, MALFORMED, strict=True):
        assert reply["jsonrpc"] == "2.0"
        assert reply["error"]["code"] == -32600
        assert needle in reply["error"]["message"]


def test_malformed_reply_leaves_other_lines_to_the_sdk() -> None:
    from playbook.mcp_stdio import malformed_reply

    ok = {"jsonrpc": "2.0", "id": 1, "method": "tools/list", "params": {}}
    assert malformed_reply(json.dumps(ok)) is None
    assert malformed_reply(json.dumps({"jsonrpc": "2.0", "id": 1, "result": {}})) is None
    assert malformed_reply("[" * 10_000) is None
    assert malformed_reply('{"jsonrpc": "2.0", "method": "x", "params": 1}') is None  # no id
    reply = json.loads(malformed_reply('{"jsonrpc": "2.0", "id": 7, "method": "x", "params": 1}'))
    assert reply == {
        "jsonrpc": "2.0",
        "id": 7,
        "error": {"code": -32600, "message": "Invalid Request: params must be an object"},
    }
