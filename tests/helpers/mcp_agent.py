"""An agent's session with `playbook mcp`, through the official MCP SDK's stdio client: the
tools an agent calls in its normal work (for tests that run it under a database role)."""

from __future__ import annotations

import json
import sys
from typing import Any

from .cli import ENTRY, clean_env


def _data(result: Any) -> Any:
    """A tool result's data (its structured content, else its JSON text); the error text
    of a failed call, as {"error": ...}."""
    if getattr(result, "is_error", getattr(result, "isError", False)):
        return {"error": " ".join(c.text for c in result.content)}
    structured = getattr(result, "structured_content", getattr(result, "structuredContent", None))
    if structured is not None:
        return structured.get("result", structured) if set(structured) == {"result"} else structured
    return json.loads(result.content[0].text)


async def agent_session(db: str, bullet_id: str) -> dict[str, Any]:
    """Recall, mark, record an outcome and propose a rule, as an agent does, on `db`."""
    from mcp import ClientSession, StdioServerParameters
    from mcp.client.stdio import stdio_client

    params = StdioServerParameters(
        command=sys.executable, args=["-c", ENTRY, "--db", db, "mcp"], env=clean_env()
    )
    seen: dict[str, Any] = {}
    async with stdio_client(params) as (read, write), ClientSession(read, write) as session:
        await session.initialize()
        call = session.call_tool
        seen["recall"] = _data(await call("recall", {"query": "pytest CI", "limit": 5}))
        seen["mark"] = _data(
            await call("mark_feedback", {"bullet_id": bullet_id, "kind": "helpful"})
        )
        seen["outcome"] = _data(
            await call(
                "record_outcome",
                {"outcome": "success", "bullet_ids": [bullet_id], "receipt": "mcp-1"},
            )
        )
        seen["propose"] = _data(
            await call(
                "propose_deltas",
                {
                    "deltas": [{"type": "add", "content": "Cache pip downloads in CI"}],
                    "session_ref": "session:mcp",
                },
            )
        )
    return seen
