"""`playbook mcp` as a subprocess, driven by the official SDK's stdio client."""

from __future__ import annotations

import asyncio
import json
import sys
from pathlib import Path
from typing import Any

import pytest

from playbook import queue

from .helpers import store_at
from .helpers.cli import ENTRY, clean_env

mcp = pytest.importorskip("mcp")
from mcp import ClientSession, StdioServerParameters  # noqa: E402
from mcp.client.stdio import stdio_client  # noqa: E402

TOOLS = {"recall", "mark_feedback", "record_outcome", "propose_deltas", "show_bullet"}
FORBIDDEN = ("approve", "reject", "pin", "block", "deprecate", "delete", "retire", "import")


def attr(obj: Any, snake: str, camel: str) -> Any:
    """SDK 2.x names fields in snake_case, 1.x in camelCase."""
    return getattr(obj, snake) if hasattr(obj, snake) else getattr(obj, camel)


def payload(result: Any) -> Any:
    """A tool result's data (structured content, else its JSON text)."""
    assert not attr(result, "is_error", "isError"), result
    structured = attr(result, "structured_content", "structuredContent")
    if structured is not None:
        return structured.get("result", structured) if set(structured) == {"result"} else structured
    return json.loads(result.content[0].text)


def error_text(result: Any) -> str:
    assert attr(result, "is_error", "isError"), result
    return " ".join(c.text for c in result.content)


async def session_run(db: Path) -> dict[str, Any]:
    params = StdioServerParameters(
        command=sys.executable,
        args=["-c", ENTRY, "--db", str(db), "mcp"],
        env=clean_env(),
    )
    seen: dict[str, Any] = {}
    async with stdio_client(params) as (read, write), ClientSession(read, write) as session:
        init = await session.initialize()
        seen["server"] = attr(init, "server_info", "serverInfo").name
        seen["tools"] = (await session.list_tools()).tools
        seen["recall"] = payload(
            await session.call_tool("recall", {"query": "npm release", "limit": 5})
        )
        seen["propose"] = payload(
            await session.call_tool(
                "propose_deltas",
                {
                    "deltas": [
                        {"type": "add", "content": "Cache pip downloads in CI", "tags": ["ci"]},
                        {"type": "add", "content": "x", "provenance": {"session_ref": "fake"}},
                    ],
                    "session_ref": "session:mcp",
                    "byte_offset": 128,
                },
            )
        )
        bid = seen["recall"]["bullets"][0]["id"]
        resources = attr(await session.list_resources(), "resources", "resources")
        seen["resources"] = [(str(r.uri), attr(r, "mime_type", "mimeType")) for r in resources]
        read_result = await session.read_resource(resources[0].uri)
        seen["agents_md"] = read_result.contents[0].text
        seen["mark"] = payload(
            await session.call_tool(
                "mark_feedback", {"bullet_id": bid, "kind": "helpful", "context": "worked"}
            )
        )
        seen["outcome"] = payload(
            await session.call_tool(
                "record_outcome",
                {"outcome": "success", "bullet_ids": [bid, "b-unknown"], "receipt": "r-1"},
            )
        )
        seen["show"] = payload(await session.call_tool("show_bullet", {"bullet_id": bid}))
        seen["missing"] = error_text(
            await session.call_tool("show_bullet", {"bullet_id": "b-nope"})
        )
        seen["bad_mark"] = error_text(
            await session.call_tool("mark_feedback", {"bullet_id": "b-nope", "kind": "helpful"})
        )
    return seen


def test_mcp_server_over_stdio(tmp_path: Path) -> None:
    db = tmp_path / "pb.sqlite3"
    store = store_at(db)
    bid = store.insert_bullet(
        "Pin npm to 11 in release jobs", category="ci", tags=["npm"], maturity="proven"
    ).id

    seen = asyncio.run(asyncio.wait_for(session_run(db), timeout=60))

    assert seen["server"] == "playbook"
    names = {t.name for t in seen["tools"]}
    assert names == TOOLS
    assert not [n for n in names for word in FORBIDDEN if word in n]
    schemas = {t.name: attr(t, "input_schema", "inputSchema") for t in seen["tools"]}
    assert schemas["mark_feedback"]["properties"]["kind"]["enum"] == ["helpful", "harmful"]

    (item,) = seen["recall"]["bullets"]
    assert item["id"] == bid and item["maturity"] == "proven" and item["final_score"] > 0

    # Proposals land in the review queue as pending, with the call's provenance; a delta
    # that claims its own provenance is rejected.
    assert len(seen["propose"]["staged"]) == 1
    assert seen["propose"]["rejected"][0]["index"] == 1
    (pending,) = queue.pending(store)
    assert pending.id == seen["propose"]["staged"][0]
    assert pending.status == "pending" and pending.origin == "mcp"
    assert pending.delta["content"] == "Cache pip downloads in CI"
    assert pending.provenance.session_ref == "session:mcp"
    assert pending.provenance.byte_offset == 128
    assert [b.content for b in store.bullets()] == ["Pin npm to 11 in release jobs"]

    assert seen["mark"]["status"] == "applied"
    assert seen["outcome"]["applied"] == [bid] and seen["outcome"]["skipped"] == ["b-unknown"]
    events = store.timeline(bid)
    assert [(e.kind, e.actor) for e in events] == [("helpful", "agent"), ("helpful", "agent")]
    assert events[1].receipt == "r-1"
    assert seen["show"]["bullet"]["id"] == bid and len(seen["show"]["timeline"]) == 2

    assert "no bullet with id 'b-nope'" in seen["missing"]
    assert "b-nope" in seen["bad_mark"]

    assert seen["resources"] == [("playbook://agents.md", "text/markdown")]
    assert f"- Pin npm to 11 in release jobs `{bid}`" in seen["agents_md"]
