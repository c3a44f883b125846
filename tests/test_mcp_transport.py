"""`playbook mcp` answers every message it cannot read: a client never waits forever.

The errors are JSON-RPC 2.0's (https://www.jsonrpc.org/specification#error_object):
-32700 for text that does not parse, -32600 for JSON that is not a request the server can
read. MCP removed batches in protocol revision 2025-06-18, so an array is -32600 too.
"""

from __future__ import annotations

import io
import json
import subprocess
import sys
from pathlib import Path

import pytest

from .helpers.cli import ENTRY, clean_env

pytest.importorskip("mcp")


def deep(levels: int, rid: int) -> str:
    """A tools/call request whose argument nests `levels` arrays deep."""
    nested = "[" * levels + "]" * levels
    return (
        f'{{"jsonrpc": "2.0", "id": {rid}, "method": "tools/call", '
        f'"params": {{"name": "recall", "arguments": {{"query": {nested}}}}}}}'
    )


# (line sent, id of the answer, error code, words in the message); None: no answer at all
LINES: list[tuple[str, object, int, str] | tuple[str, None]] = [
    (json.dumps({"jsonrpc": "2.0", "id": 1, "method": "tools/list", "params": [1, 2]}),
     1, -32600, "params must be"),
    (json.dumps({"jsonrpc": "2.0", "id": "two", "method": 7}), "two", -32600, "method must be"),
    (json.dumps({"jsonrpc": "2.0", "method": 9}), None),  # a notification: never answered
    ("not json at all", None, -32700, "Parse error"),
    ('{"jsonrpc": "2.0", "id": 5, "method": "ping"', None, -32700, "Parse error"),
    (json.dumps({"jsonrpc": "1.0", "id": 3, "method": "tools/list"}), 3, -32600, 'jsonrpc must'),
    (json.dumps({"jsonrpc": "2.0", "id": 4, "params": {}}), 4, -32600, "method must be"),
    (json.dumps({"jsonrpc": "2.0", "id": 4.5, "method": "ping"}), None, -32600, "id must be"),
    (json.dumps([{"jsonrpc": "2.0", "id": 6, "method": "ping"}] * 2), None, -32600, "batch"),
    ("[]", None, -32600, "batch"),
    ("42", None, -32600, "not a JSON-RPC message"),
    ("null", None, -32600, "not a JSON-RPC message"),
    (deep(100, 7), 7, -32600, "nests more than 64 levels"),
    (deep(5000, 8), None, -32700, "nested too deeply"),
    ("", None),  # a blank line: nothing to answer
    (json.dumps({"jsonrpc": "2.0", "id": 9, "method": "ping"}), 9, 0, ""),  # still serving
]  # fmt: skip


def test_every_unreadable_message_gets_its_json_rpc_error(tmp_path: Path) -> None:
    proc = subprocess.run(
        [sys.executable, "-c", ENTRY, "--db", str(tmp_path / "pb.sqlite3"), "mcp"],
        input=("\n".join(line for line, *_ in LINES) + "\n").encode(),
        capture_output=True,
        env=clean_env(),
        timeout=60,
    )
    replies = [json.loads(line) for line in proc.stdout.decode().splitlines()]
    expected = [e for e in LINES if len(e) == 4]
    assert len(replies) == len(expected), replies
    for reply, (_, rid, code, needle) in zip(replies, expected, strict=True):
        assert reply["jsonrpc"] == "2.0" and reply["id"] == rid, reply
        if code == 0:
            assert reply["result"] == {}
            continue
        assert reply["error"]["code"] == code, reply
        assert needle in reply["error"]["message"], reply
    assert "Traceback" not in proc.stderr.decode()


def test_malformed_reply_leaves_readable_lines_to_the_sdk() -> None:
    from playbook.mcp.stdio import malformed_reply

    ok = {"jsonrpc": "2.0", "id": 1, "method": "tools/list", "params": {}}
    assert malformed_reply(json.dumps(ok)) is None
    assert malformed_reply(json.dumps({"jsonrpc": "2.0", "id": 1, "result": {}})) is None
    assert malformed_reply('{"jsonrpc": "2.0", "method": "x", "params": 1}') is None  # no id
    reply = json.loads(malformed_reply('{"jsonrpc": "2.0", "id": 7, "method": "x", "params": 1}'))
    assert reply == {
        "jsonrpc": "2.0",
        "id": 7,
        "error": {"code": -32600, "message": "Invalid Request: params must be an object"},
    }


def test_a_line_over_the_limit_is_skipped_without_being_held() -> None:
    from playbook.mcp.stdio import read_line

    raw = io.BytesIO(b"x" * 5000 + b"\n" + b'{"id": 1}\n')
    assert read_line(raw, limit=100)[1]  # over the limit
    assert read_line(raw, limit=100) == (b'{"id": 1}\n', False)
    assert read_line(raw, limit=100) == (b"", False)


def test_depth_counts_nesting_without_recursion() -> None:
    from playbook.mcp.stdio import depth

    assert depth(1) == 0 and depth([]) == 1 and depth({"a": [{"b": []}]}) == 4
    value: list[object] = []
    for _ in range(10_000):
        value = [value]
    assert depth(value) == 10_001
