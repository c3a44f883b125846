"""The MCP SDK as the server uses it: which generation is installed (`mcp.server.mcpserver`
2.x or `mcp.server.fastmcp` 1.x, 1.19 or later), a user error reported as the SDK's tool
error, and a tool's answer as structured content with the same JSON as text."""

from __future__ import annotations

import functools
import importlib
import json
from collections.abc import Callable
from importlib.metadata import PackageNotFoundError, version
from typing import TYPE_CHECKING, Any, ParamSpec, TypeVar

from ..core.errors import PlaybookError
from .tools import ToolFailure

if TYPE_CHECKING:
    from mcp.server.mcpserver import MCPServer
    from mcp.types import CallToolResult


class McpUnavailable(RuntimeError):
    """The optional `mcp` package is missing (or too old)."""


P = ParamSpec("P")
R = TypeVar("R")
MIN_SDK = (1, 19)  # tools returning CallToolResult checked against an output model


def sdk() -> tuple[type[MCPServer], type[Exception], type[Exception]]:
    """(server class, ToolError, ResourceError) of whichever SDK generation is installed
    (typed as 2.x's: 1.x's FastMCP has the same constructor and decorators)."""
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
        from mcp.server.mcpserver import MCPServer  # lazy: the mcp extra, SDK 2.x
        from mcp.server.mcpserver.exceptions import (  # lazy: the mcp extra, SDK 2.x
            ResourceError,
            ToolError,
        )

        return MCPServer, ToolError, ResourceError
    except ImportError:
        pass
    try:
        # By name: the type checker sees the SDK installed, 2.x, which has no `fastmcp`.
        fast = importlib.import_module("mcp.server.fastmcp")
        errors = importlib.import_module("mcp.server.fastmcp.exceptions")
    except ImportError:
        raise missing from None
    return fast.FastMCP, errors.ToolError, errors.ResourceError


def guard(fn: Callable[P, R], error: type[Exception]) -> Callable[P, R]:
    """Report user errors (bad id, bad input, unusable database) to the agent as `error`
    with a plain message; the SDK hides any other exception's text as a crash."""

    @functools.wraps(fn)
    def wrapper(*args: P.args, **kwargs: P.kwargs) -> R:
        try:
            return fn(*args, **kwargs)
        except (ToolFailure, PlaybookError) as exc:
            raise error(str(exc)) from None

    return wrapper


def guarded(error: type[Exception]) -> Callable[[Callable[P, R]], Callable[P, R]]:
    """`guard` with `error`, as a decorator."""

    def decorate(fn: Callable[P, R]) -> Callable[P, R]:
        return guard(fn, error)

    return decorate


def answer(data: dict[str, Any]) -> CallToolResult:
    """A tool's result: `data` as structured content and, for clients that read text
    only, the same as compact JSON (MCP's advice for structured output)."""
    from mcp.types import CallToolResult  # lazy: the mcp extra (SDK 2.x or 1.x)

    text = json.dumps(data, ensure_ascii=False, separators=(",", ":"))
    content = [{"type": "text", "text": text}]
    return CallToolResult.model_validate({"content": content, "structuredContent": data})
