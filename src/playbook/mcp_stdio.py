"""The stdio transport of `playbook mcp`: the SDK's, with malformed requests answered.

The SDK's stdio reader drops a line it cannot validate, so a client that sent a malformed
request (params not an object, method not a string, another jsonrpc version) would wait
forever. Here stdin is read line by line first: a request with an id that the server
cannot read is answered with a JSON-RPC error for that id; every other line goes to the
SDK unchanged. Both this reader and the SDK's writer write through one lock.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

INVALID_REQUEST = -32600


def malformed_reply(line: str, validate: Callable[[str], object] | None = None) -> str | None:
    """The JSON-RPC error line answering `line`, if it is a request (it has an id and is
    not a response) that the server cannot read; None for any other line (well-formed
    messages, notifications, responses, text that is not JSON: the SDK has them)."""
    import json

    try:
        msg = json.loads(line)
    except (ValueError, RecursionError):
        return None
    if not isinstance(msg, dict) or "id" not in msg or "result" in msg or "error" in msg:
        return None
    rid = msg["id"]
    problem = None
    if isinstance(rid, bool) or not isinstance(rid, str | int):
        problem, rid = "id must be a string or an integer", None
    elif msg.get("jsonrpc") != "2.0":
        problem = 'jsonrpc must be "2.0"'
    elif not isinstance(msg.get("method"), str):
        problem = "method must be a string"
    elif "params" in msg and not isinstance(msg["params"], dict):
        problem = "params must be an object"
    elif validate is not None:
        try:
            validate(line)
        except Exception as exc:  # the SDK's own validation: its message, briefly
            first = str(exc).strip().splitlines()
            problem = "invalid request" + (f": {first[0][:200]}" if first else "")
    if problem is None:
        return None
    error = {"code": INVALID_REQUEST, "message": f"Invalid Request: {problem}"}
    return json.dumps({"jsonrpc": "2.0", "id": rid, "error": error})


def _sdk_validator() -> Callable[[str], object] | None:
    try:
        from mcp_types import jsonrpc_message_adapter  # SDK 2.x

        return lambda line: jsonrpc_message_adapter.validate_json(line, by_name=False)
    except ImportError:
        pass
    try:
        from mcp.types import JSONRPCMessage  # SDK 1.x

        return JSONRPCMessage.model_validate_json
    except ImportError:  # pragma: no cover
        return None


class _LockedOut:
    """stdout for the transport: each write goes out whole, under one lock."""

    def __init__(self, raw: Any) -> None:
        import anyio

        self.raw = raw
        self.lock = anyio.Lock()

    def _put(self, text: str) -> None:
        self.raw.write(text.encode("utf-8"))
        self.raw.flush()

    async def write(self, text: str) -> None:
        import anyio

        async with self.lock:
            await anyio.to_thread.run_sync(self._put, text)

    async def flush(self) -> None:
        return None  # every write is flushed


class _CheckedIn:
    """stdin for the transport: the lines of a malformed request are answered here."""

    def __init__(self, raw: Any, out: _LockedOut) -> None:
        self.raw = raw
        self.out = out
        self.validate = _sdk_validator()

    def __aiter__(self) -> _CheckedIn:
        return self

    async def __anext__(self) -> str:
        import anyio

        while True:
            line = await anyio.to_thread.run_sync(self.raw.readline, abandon_on_cancel=True)
            if not line:
                raise StopAsyncIteration
            text = line.decode("utf-8", "replace")
            reply = malformed_reply(text, self.validate)
            if reply is None:
                return text
            await self.out.write(reply + "\n")


async def serve_stdio(server: Any) -> None:
    """Run `server` (the SDK's server object) on this process's stdin and stdout."""
    import sys

    from mcp.server.stdio import stdio_server

    # MCPServer (SDK 2.x) and FastMCP (1.x) keep the protocol server under these names.
    low = getattr(server, "_lowlevel_server", None) or server._mcp_server
    out = _LockedOut(sys.stdout.buffer)
    lines = _CheckedIn(sys.stdin.buffer, out)
    async with stdio_server(stdin=lines, stdout=out) as (read, write):  # type: ignore[arg-type]
        await low.run(read, write, low.create_initialization_options())
