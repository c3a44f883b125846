"""The stdio transport of `playbook mcp`: the SDK's, with every unreadable message answered.

The SDK's stdio reader drops a line it cannot parse or validate, so a client that sent one
would wait forever for its answer. Here stdin is read line by line first, and a line the
server cannot read gets the JSON-RPC 2.0 error its specification gives:

- not JSON, or nested deeper than a parser follows: -32700 Parse error, id null;
- a batch (a JSON array): -32600 Invalid Request, id null. MCP removed JSON-RPC batching
  in protocol revision 2025-06-18; a client sends one message a line;
- JSON that is not a message object (a number, a string, null), or a line over
  `MAX_LINE_BYTES`: -32600, id null;
- a request (it has an id) the server cannot read: deeper than `MAX_DEPTH`, params not an
  object, method not a string, another `jsonrpc` version, or refused by the SDK's own
  validation: -32600 for its id (for an id that is not a string or an integer, id null).

A notification or a response that cannot be read is dropped: JSON-RPC never answers
those. Every other line goes to the SDK unchanged. This reader and the SDK's writer write
through one lock, so no frame is torn.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, cast

if TYPE_CHECKING:
    from anyio import AsyncFile

PARSE_ERROR = -32700
INVALID_REQUEST = -32600
MAX_DEPTH = 64  # nesting of a message; an MCP request needs about ten
MAX_LINE_BYTES = 64 << 20  # one message; a full propose_deltas batch is a few MB

# What `screen` says about a line: pass it to the SDK, or drop it (after any answer).
FORWARD = "forward"
DROP = "drop"


def _error(rid: str | int | None, code: int, message: str) -> str:
    return json.dumps({"jsonrpc": "2.0", "id": rid, "error": {"code": code, "message": message}})


def depth(value: Any) -> int:
    """How deeply `value` nests (a scalar is 0, `[]` is 1), without recursion."""
    deepest = 0
    stack: list[tuple[Any, int]] = [(value, 0)]
    while stack:
        item, level = stack.pop()
        if isinstance(item, dict):
            item = list(item.values())
        if isinstance(item, list):
            level += 1
            deepest = max(deepest, level)
            stack.extend((child, level) for child in item if isinstance(child, dict | list))
    return deepest


def screen(line: str, validate: Callable[[str], object] | None = None) -> tuple[str, str | None]:
    """(FORWARD or DROP, the JSON-RPC error line to answer or None) for one line of input."""
    if not line.strip():
        return DROP, None
    try:
        msg = json.loads(line)
    except RecursionError:
        return DROP, _error(None, PARSE_ERROR, "Parse error: JSON nested too deeply")
    except ValueError as exc:
        detail = getattr(exc, "msg", None) or str(exc)
        return DROP, _error(None, PARSE_ERROR, f"Parse error: {detail}"[:200])
    if isinstance(msg, list):
        return DROP, _error(
            None,
            INVALID_REQUEST,
            "Invalid Request: a JSON-RPC batch (an array); MCP has no batches since "
            "protocol 2025-06-18, send one message a line",
        )
    if not isinstance(msg, dict):
        return DROP, _error(None, INVALID_REQUEST, "Invalid Request: not a JSON-RPC message object")
    is_request = "id" in msg and "result" not in msg and "error" not in msg
    problem = _problem(msg, line, validate)
    if problem is None:
        return FORWARD, None
    if not is_request:
        return DROP, None  # a notification or a response: never answered
    rid = msg["id"]
    if isinstance(rid, bool) or not isinstance(rid, str | int):
        problem, rid = "id must be a string or an integer", None
    return DROP, _error(rid, INVALID_REQUEST, f"Invalid Request: {problem}")


def _problem(
    msg: dict[str, Any], line: str, validate: Callable[[str], object] | None
) -> str | None:
    """Why the server cannot read `msg`, or None."""
    rid = msg.get("id")
    if "id" in msg and (isinstance(rid, bool) or not isinstance(rid, str | int)):
        return "id must be a string or an integer"
    if depth(msg) > MAX_DEPTH:
        return f"the message nests more than {MAX_DEPTH} levels deep"
    if "result" in msg or "error" in msg:
        return None  # a response: the SDK's validation below has it
    if msg.get("jsonrpc") != "2.0":
        return 'jsonrpc must be "2.0"'
    if not isinstance(msg.get("method"), str):
        return "method must be a string"
    if "params" in msg and not isinstance(msg["params"], dict):
        return "params must be an object"
    if validate is not None:
        try:
            validate(line)
        except Exception as exc:  # the SDK's own validation: its message, briefly
            first = str(exc).strip().splitlines()
            return "invalid request" + (f": {first[0][:200]}" if first else "")
    return None


def malformed_reply(line: str, validate: Callable[[str], object] | None = None) -> str | None:
    """The JSON-RPC error line answering `line`, or None when it needs no answer."""
    return screen(line, validate)[1]


def _sdk_validator() -> Callable[[str], object] | None:
    try:
        from mcp_types import jsonrpc_message_adapter  # lazy: the mcp extra, SDK 2.x

        return lambda line: jsonrpc_message_adapter.validate_json(line, by_name=False)
    except ImportError:
        pass
    try:
        from mcp.types import JSONRPCMessage  # lazy: the mcp extra, SDK 1.x

        # a RootModel in SDK 1.x; SDK 2.x, the one type-checked, names a union with it
        validate: Callable[[str], object] = cast(Any, JSONRPCMessage).model_validate_json
        return validate
    except ImportError:  # pragma: no cover
        return None


class _LockedOut:
    """stdout for the transport: each write goes out whole, under one lock."""

    def __init__(self, raw: Any) -> None:
        import anyio  # lazy: the mcp extra (SDK 2.x or 1.x)

        self.raw = raw
        self.lock = anyio.Lock()

    def _put(self, text: str) -> None:
        self.raw.write(text.encode("utf-8"))
        self.raw.flush()

    async def write(self, text: str) -> None:
        import anyio  # lazy: the mcp extra (SDK 2.x or 1.x)

        async with self.lock:
            await anyio.to_thread.run_sync(self._put, text)

    async def flush(self) -> None:
        return None  # every write is flushed


def read_line(raw: Any, limit: int = MAX_LINE_BYTES) -> tuple[bytes, bool]:
    """(the next line, whether it was over `limit` bytes); a line over the limit is read
    to its end and thrown away, never held whole. b"" at the end of input."""
    line = raw.readline(limit + 1)
    if len(line) <= limit or line.endswith(b"\n"):
        return line, False
    while True:  # skip the rest of the oversized line
        more = raw.readline(1 << 20)
        if not more or more.endswith(b"\n"):
            return b" ", True


class _CheckedIn:
    """stdin for the transport: a line the server cannot read is answered here."""

    def __init__(self, raw: Any, out: _LockedOut) -> None:
        self.raw = raw
        self.out = out
        self.validate = _sdk_validator()

    def __aiter__(self) -> _CheckedIn:
        return self

    async def __anext__(self) -> str:
        import anyio  # lazy: the mcp extra (SDK 2.x or 1.x)

        while True:
            line, oversized = await anyio.to_thread.run_sync(
                read_line, self.raw, abandon_on_cancel=True
            )
            if not line:
                raise StopAsyncIteration
            if oversized:
                mib = MAX_LINE_BYTES >> 20
                refusal = _error(None, INVALID_REQUEST, f"Invalid Request: over {mib} MiB")
                await self.out.write(refusal + "\n")
                continue
            text = line.decode("utf-8", "replace")
            verdict, reply = screen(text, self.validate)
            if reply is not None:
                await self.out.write(reply + "\n")
            if verdict == FORWARD:
                return text


async def serve_stdio(server: Any) -> None:
    """Run `server` (the SDK's server object) on this process's stdin and stdout."""
    from mcp.server.stdio import stdio_server  # lazy: the mcp extra (SDK 2.x or 1.x)

    # MCPServer (SDK 2.x) and FastMCP (1.x) keep the protocol server under these names.
    low = getattr(server, "_lowlevel_server", None) or server._mcp_server
    out = _LockedOut(sys.stdout.buffer)
    lines = _CheckedIn(sys.stdin.buffer, out)
    # The SDK types its streams as anyio's AsyncFile but only iterates the one (`async for`)
    # and awaits `write` and `flush` on the other: what these two provide.
    stdin, stdout = cast("AsyncFile[str]", lines), cast("AsyncFile[str]", out)
    transport = stdio_server(stdin=stdin, stdout=stdout)
    async with transport as (read, write):
        await low.run(read, write, low.create_initialization_options())
