"""The MCP SDK as the server uses it: which generation is installed (`mcp.server.mcpserver`
2.x or `mcp.server.fastmcp` 1.x, 1.19 or later), a user error reported as the SDK's tool
error, and a tool's answer as structured content with the same JSON as text."""

import functools
import json
from collections.abc import Callable
from typing import Any

from .tools import ToolFailure


class McpUnavailable(RuntimeError):
    """The optional `mcp` package is missing (or too old)."""


MIN_SDK = (1, 19)  # tools returning CallToolResult checked against an output model


def _sdk() -> tuple[Callable[..., Any], type[Exception], type[Exception]]:
    """(server class, ToolError, ResourceError) of whichever SDK generation is installed."""
    from importlib.metadata import PackageNotFoundError, version

    missing = McpUnavailable(
        "the MCP server needs the 'mcp' package, 1.19 or later, which is not installed"
    )
    try:
        found = tuple(int(n) for n in version("mcp").split(".")[:2] if n.isdigit())
    except PackageNotFoundError:
        raise missing from None
    if found < MIN_SDK:
        raise McpUnavailable(
            f"the MCP server needs the 'mcp' package 1.19 or later; {version('mcp')} is installed"
        )
    try:
        from mcp.server.mcpserver import MCPServer
        from mcp.server.mcpserver.exceptions import ResourceError, ToolError

        return MCPServer, ToolError, ResourceError
    except ImportError:
        pass
    try:
        from mcp.server.fastmcp import FastMCP
        from mcp.server.fastmcp.exceptions import ResourceError, ToolError

        return FastMCP, ToolError, ResourceError
    except ImportError:
        raise missing from None


def _guard(fn: Callable[..., Any], error: type[Exception]) -> Callable[..., Any]:
    """Report user errors (bad id, bad input, unusable database) to the agent as `error`
    with a plain message; the SDK hides any other exception's text as a crash."""
    from ..core.errors import PlaybookError

    @functools.wraps(fn)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        try:
            return fn(*args, **kwargs)
        except (ToolFailure, PlaybookError) as exc:
            raise error(str(exc)) from None

    return wrapper


def answer(data: dict[str, Any]) -> Any:
    """A tool's result: `data` as structured content and, for clients that read text
    only, the same as compact JSON (MCP's advice for structured output)."""
    from mcp.types import CallToolResult

    text = json.dumps(data, ensure_ascii=False, separators=(",", ":"))
    content = [{"type": "text", "text": text}]
    return CallToolResult.model_validate({"content": content, "structuredContent": data})
