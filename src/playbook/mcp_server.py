"""`playbook mcp`: the playbook served to agents over MCP (stdio), with the official SDK.

Tools: `recall`, `mark_feedback`, `record_outcome`, `propose_deltas` (to the review queue,
never applied) and `show_bullet`; one resource, `playbook://agents.md`, the playbook
rendered as AGENTS.md text. No tool approves, pins, blocks, deprecates or deletes: those are
human decisions made in the workbench or at the command line. Feedback recorded here is
written with actor "agent".

The `mcp` package is an optional extra and is imported only when the server starts. Both
SDK generations are supported: `mcp.server.mcpserver.MCPServer` (2.x) and
`mcp.server.fastmcp.FastMCP` (1.x), which share the decorator API used here.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

if TYPE_CHECKING:
    from .policy import Policy
    from .store import PlaybookStore, Target

SERVER_NAME = "playbook"
RESOURCE_URI = "playbook://agents.md"
TOOLS = ("recall", "mark_feedback", "record_outcome", "propose_deltas", "show_bullet")

INSTRUCTIONS = """\
Playbook holds rules learned on this project, scored by how often they helped or hurt.
Before a task, call `recall` with a few words about it and follow what comes back: `bullets`
are rules, `anti_patterns` are things to avoid, `deprecated_warnings` are rules no longer
recommended. After the task, report on the rules you used: `mark_feedback` for one rule,
or `record_outcome` for the task as a whole (success, failure or partial) citing the rule
ids. When you learn something new, `propose_deltas` queues it for a human to review; nothing
you propose is applied until a person approves it."""


class McpUnavailable(RuntimeError):
    """The optional `mcp` package is missing (or too old)."""


class ToolFailure(ValueError):
    """A tool call that cannot be carried out; the message goes back to the agent."""


def _sdk() -> tuple[Callable[..., Any], type[Exception], type[Exception]]:
    """(server class, ToolError, ResourceError) of whichever SDK generation is installed."""
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
        raise McpUnavailable(
            "the MCP server needs the 'mcp' package (1.10 or later), which is not installed"
        ) from None


@contextmanager
def _store(db: Target, policy: Policy | None, *, create: bool) -> Iterator[PlaybookStore]:
    """A fresh connection per call: every call sees other processes' latest writes."""
    from .store import open_store

    if not create and not db.exists():
        raise ToolFailure(f"no playbook at {db} yet; run 'playbook init' first")
    with open_store(db, policy, mode="create" if create else "write") as store:
        yield store


def _item(item: Any) -> dict[str, Any]:
    """A recalled bullet, compactly: what an agent needs in its context, and no more."""
    b = item.bullet
    return {
        "id": b.id,
        "content": b.content,
        "type": b.type,
        "category": b.category,
        "tags": list(b.tags),
        "scope": b.scope if b.scope_key is None else f"{b.scope}:{b.scope_key}",
        "maturity": b.maturity,
        "pinned": b.pinned,
        "relevance": round(item.relevance, 4),
        "effective_score": round(item.effective_score, 4),
        "final_score": round(item.final_score, 4),
    }


def _provenance(session_ref: str | None, byte_offset: int | None = None) -> dict[str, Any]:
    return {"session_ref": session_ref, "byte_offset": byte_offset}


class PlaybookTools:
    """The tool implementations, callable without MCP (the server wraps each one)."""

    def __init__(self, db: str | Path, policy: Policy | None = None) -> None:
        from .store import resolve_target

        self.db = resolve_target(db)  # a file or a postgresql:// URL
        self.policy = policy

    def recall(
        self,
        query: str,
        limit: int = 10,
        scope: list[str] | None = None,
        explain_hidden: bool = False,
    ) -> dict[str, Any]:
        from .retrieval import recall

        if not 0 <= limit <= 100:
            raise ToolFailure("limit must be between 0 and 100")
        if explain_hidden and limit < 1:
            raise ToolFailure("explain_hidden needs a limit of at least 1")
        self._bounded(("query", query, "query"), ("scope", scope or [], "label"))
        with _store(self.db, self.policy, create=False) as store:
            r = recall(store, query, limit=limit, scope=scope or None)
            hidden = None
            if explain_hidden:
                from .review import explain_hidden as explain

                report = explain(store, query, limit=limit, scope=scope or None, most=10)
                hidden = report.to_dict()
        out = {
            "bullets": [_item(i) for i in r.bullets],
            "anti_patterns": [_item(i) for i in r.anti_patterns],
            "deprecated_warnings": [_item(i) for i in r.deprecated_warnings],
            "degraded": list(r.degraded),
        }
        if hidden is not None:
            out["hidden"] = hidden
        return out

    def _bounded(self, *fields: tuple[str, Any, str]) -> None:
        """Refuse a parameter over its bound in the policy (never cut it)."""
        from .limits import TooLong, check
        from .policy import DEFAULT_POLICY

        try:
            check(self.policy or DEFAULT_POLICY, fields)
        except TooLong as exc:
            raise ToolFailure(str(exc)) from None

    def mark_feedback(
        self,
        bullet_id: str,
        kind: Literal["helpful", "harmful"],
        reason: str | None = None,
        context: str | None = None,
        session_ref: str | None = None,
    ) -> dict[str, Any]:
        from .review import NotApplied, mark

        if kind not in ("helpful", "harmful"):
            raise ToolFailure("kind must be 'helpful' or 'harmful'")
        if reason and kind != "harmful":
            raise ToolFailure("reason goes with harmful feedback only")
        self._bounded(
            ("bullet_id", bullet_id, "id"),
            ("context", context, "text"),
            ("session_ref", session_ref, "ref"),
        )
        with _store(self.db, self.policy, create=False) as store:
            try:
                result = mark(
                    store,
                    bullet_id,
                    kind,
                    reason=reason,
                    context=context,
                    provenance=_provenance(session_ref),
                    actor="agent",
                )
            except NotApplied as exc:
                raise ToolFailure(exc.reason or exc.status) from None
        outcome = result.outcomes[0]
        data = result.to_dict()
        return {
            "status": outcome.status,
            "bullet_id": outcome.bullet_id,
            "reason": outcome.reason,
            "inversions": data["inversions"],
            "maturity_changes": data["maturity_changes"],
        }

    def record_outcome(
        self,
        outcome: Literal["success", "failure", "partial"],
        bullet_ids: list[str],
        receipt: str | None = None,
        context: str | None = None,
        session_ref: str | None = None,
    ) -> dict[str, Any]:
        from .outcomes import InvalidOutcome, apply_outcome

        self._bounded(("session_ref", session_ref, "ref"))
        report = {
            "outcome": outcome,
            "bullet_ids": bullet_ids,
            "receipt": receipt,
            "context": context,
        }
        with _store(self.db, self.policy, create=False) as store:
            try:
                result = apply_outcome(
                    store, report, provenance=_provenance(session_ref), actor="agent"
                )
            except InvalidOutcome as exc:
                raise ToolFailure(str(exc)) from None
        return result.to_dict()

    def propose_deltas(
        self,
        deltas: list[dict[str, Any]],
        session_ref: str | None = None,
        byte_offset: int | None = None,
    ) -> dict[str, Any]:
        from .queue import stage

        if byte_offset is not None and byte_offset < 0:
            raise ToolFailure("byte_offset must be >= 0")
        self._bounded(("session_ref", session_ref, "ref"))
        with _store(self.db, self.policy, create=True) as store:
            result = stage(
                store, deltas, provenance=_provenance(session_ref, byte_offset), origin="mcp"
            )
        data = result.to_dict()
        data["note"] = "queued for human review; nothing is applied until a person approves it"
        return data

    def show_bullet(self, bullet_id: str) -> dict[str, Any]:
        from .review import bullet_detail

        self._bounded(("bullet_id", bullet_id, "id"))
        with _store(self.db, self.policy, create=False) as store:
            return bullet_detail(store, bullet_id).to_dict()

    def agents_md(self) -> str:
        from .interop.agents_md import render_store

        if not self.db.exists():
            from .interop.agents_md import render

            return render([], {})
        with _store(self.db, self.policy, create=False) as store:
            return render_store(store)


def _guard(fn: Callable[..., Any], error: type[Exception]) -> Callable[..., Any]:
    """Report user errors (bad id, bad input, unusable database) to the agent as `error`
    with a plain message; the SDK hides any other exception's text as a crash."""
    from .errors import PlaybookError

    @functools.wraps(fn)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        try:
            return fn(*args, **kwargs)
        except (ToolFailure, PlaybookError) as exc:
            raise error(str(exc)) from None

    return wrapper


def build_server(db: str | Path, policy: Policy | None = None) -> Any:
    """The MCP server object (not yet running) for the playbook at `db`."""
    server_cls, tool_error, resource_error = _sdk()
    from mcp.types import ToolAnnotations

    from . import __version__
    from .model import HARM_REASONS

    tools = PlaybookTools(db, policy)
    # Only warnings on stderr: an MCP client shows a server's stderr as its log.
    try:
        server = server_cls(
            SERVER_NAME, instructions=INSTRUCTIONS, version=__version__, log_level="WARNING"
        )
    except TypeError:  # mcp 1.x: no version argument
        server = server_cls(SERVER_NAME, instructions=INSTRUCTIONS, log_level="WARNING")

    def guard(fn: Callable[..., Any]) -> Callable[..., Any]:
        return _guard(fn, tool_error)

    read_only = ToolAnnotations(readOnlyHint=True, destructiveHint=False, openWorldHint=False)
    writes = ToolAnnotations(readOnlyHint=False, destructiveHint=False, openWorldHint=False)

    @server.tool(
        name="recall",
        description="Rules, anti-patterns and deprecation warnings relevant to a task, best "
        "first. `query`: the task in a few words. `scope`: e.g. ['language:python']. "
        "`explain_hidden`: also return `hidden`, the rules that matched but are not shown "
        "(outranked, deprecated, retired, out of scope), each with the numbers and what "
        "would bring it back.",
        annotations=read_only,
    )
    @guard
    def recall(
        query: str, limit: int = 10, scope: list[str] | None = None, explain_hidden: bool = False
    ) -> dict[str, Any]:
        return tools.recall(query, limit, scope, explain_hidden)

    @server.tool(
        name="mark_feedback",
        description="Record that a rule helped or hurt. For harmful, `reason` is one of "
        f"{', '.join(HARM_REASONS)}.",
        annotations=writes,
    )
    @guard
    def mark_feedback(
        bullet_id: str,
        kind: Literal["helpful", "harmful"],
        reason: str | None = None,
        context: str | None = None,
        session_ref: str | None = None,
    ) -> dict[str, Any]:
        return tools.mark_feedback(bullet_id, kind, reason, context, session_ref)

    @server.tool(
        name="record_outcome",
        description="Record a task's outcome (success, failure or partial) as feedback on the "
        "rules it relied on. A `receipt` makes the report idempotent.",
        annotations=writes,
    )
    @guard
    def record_outcome(
        outcome: Literal["success", "failure", "partial"],
        bullet_ids: list[str],
        receipt: str | None = None,
        context: str | None = None,
        session_ref: str | None = None,
    ) -> dict[str, Any]:
        return tools.record_outcome(outcome, bullet_ids, receipt, context, session_ref)

    @server.tool(
        name="propose_deltas",
        description="Propose playbook changes for human review (never applied directly). Each "
        "delta has a `type`: add {content, category?, tags?, bullet_type?}, helpful "
        "{bullet_id}, harmful {bullet_id, reason?}, replace {bullet_id, content}, deprecate "
        "{bullet_id, reason}, merge {bullet_ids, content}.",
        annotations=writes,
    )
    @guard
    def propose_deltas(
        deltas: list[dict[str, Any]],
        session_ref: str | None = None,
        byte_offset: int | None = None,
    ) -> dict[str, Any]:
        return tools.propose_deltas(deltas, session_ref, byte_offset)

    @server.tool(
        name="show_bullet",
        description="One rule in full: content, score, provenance, lineage and its feedback "
        "timeline.",
        annotations=read_only,
    )
    @guard
    def show_bullet(bullet_id: str) -> dict[str, Any]:
        return tools.show_bullet(bullet_id)

    @server.resource(
        RESOURCE_URI,
        name="playbook",
        description="The playbook as AGENTS.md text: proven and established rules by category.",
        mime_type="text/markdown",
    )
    @functools.partial(_guard, error=resource_error)
    def agents_md() -> str:
        return tools.agents_md()

    return server


def serve(db: str | Path, *, policy: Policy | None = None) -> None:
    """Run the server on stdin/stdout until the client disconnects.

    The SDK's stdio reader drops a line it cannot validate, so a client that sent a
    malformed request (params not an object, method not a string, another jsonrpc
    version) would wait forever for its answer. The transport here reads stdin itself and
    answers each such request with a JSON-RPC error for its id; every other line goes to
    the SDK unchanged, and both write through one lock, so no frame is torn.
    """
    import anyio

    from .mcp_stdio import serve_stdio

    anyio.run(serve_stdio, build_server(db, policy))
