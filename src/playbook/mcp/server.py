"""`playbook mcp`: the playbook served to agents over MCP (stdio), with the official SDK.

Tools (`TOOLS`): read the playbook (`recall`, `list_rules`, `playbook_stats`,
`pending_proposals`, `show_bullet`), report on it (`mark_feedback`, `record_outcome`) and
teach it (`propose_deltas`, `reflect_session`, both to the review queue). One resource,
`playbook://agents.md`: what `playbook export --format agents-md` writes, for the workspace
the server runs in (the project's: Claude Code starts it in the folder it was started in).
No tool approves, pins, blocks, deprecates or deletes: those are a person's decisions. What
an agent writes here is recorded with actor "agent", through `curate_as_agent` or the
review queue.

Every parameter's schema carries its description, bounds (the policy's limits) and enums;
every tool has an output schema (`schemas`), and the SDK checks each answer against it.
An answer is compact JSON, as text and as structured content. A failure (every delta
rejected, an unknown id, a refused path) is a tool error, `isError: true`, with the reason.

The `mcp` package is an optional extra, imported only when the server starts. Both SDK
generations are supported (1.19 or later): `mcp.server.mcpserver.MCPServer` (2.x) and
`mcp.server.fastmcp.FastMCP` (1.x), which share the decorator API used here.

This module has no `from __future__ import annotations`: the SDK reads the tools'
signatures, whose annotations carry the bounds of the policy the server was started with.
"""

from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any, Literal

from pydantic import Field, WithJsonSchema

from ..core.errors import install_hint
from ..core.inert import inert
from ..core.policy import DEFAULT_POLICY, Policy
from ..core.terms import BulletTypeName, DeltaTypeName, HarmReasonName, MaturityName
from ..core.version import __version__
from ..curation.outcomes import Outcome
from ..interop.agents_md import DEFAULT_MAX_BYTES
from ..project.protocol import protocol_lines
from . import schemas as out
from .sdk import McpUnavailable, answer, guarded, sdk
from .stdio import serve_stdio
from .tools import PlaybookTools, ToolFailure

if TYPE_CHECKING:
    from ..store import Target

__all__ = ["TOOLS", "McpUnavailable", "PlaybookTools", "ToolFailure", "build_server", "serve"]

SERVER_NAME = "playbook"
RESOURCE_URI = "playbook://agents.md"
TOOLS = (
    "recall",
    "list_rules",
    "playbook_stats",
    "pending_proposals",
    "show_bullet",
    "mark_feedback",
    "record_outcome",
    "propose_deltas",
    "reflect_session",
)
INSTALL = install_hint("mcp")


def instructions() -> str:
    """What the server tells an agent: the agent's protocol (`project.protocol`, the same
    text as SessionStart and AGENTS.md), then this server's tools for it."""
    return "\n".join(
        [
            "Playbook holds the rules learned on this project, scored by how often they "
            "helped or hurt.",
            *protocol_lines(recall_hint="recall"),
            "- Over MCP: `mark_feedback` records one rule's help or harm, `record_outcome` a "
            "task's result on the rules it used, `propose_deltas` and `reflect_session` put "
            "what you learned in the review queue. A person approves changes; no tool here "
            "applies a replace, merge or deprecate.",
        ]
    )


def build_server(
    db: str | Path,
    policy: "Policy | None" = None,
    workspace: str | None = None,
    read_db: "Target | None" = None,
) -> Any:
    """The MCP server object (not yet running) for the playbook at `db`; `workspace` (a
    workspace key) scopes the AGENTS.md resource; `read_db`, a streaming replica of `db`
    (checked by the caller), serves the reads (`sources`)."""
    server_cls, tool_error, resource_error = sdk()
    from mcp.types import CallToolResult, ToolAnnotations  # lazy: the mcp extra (SDK 2.x or 1.x)

    p = policy or DEFAULT_POLICY
    tools = PlaybookTools(db, policy, workspace, read_db)
    # Only warnings on stderr: an MCP client shows a server's stderr as its log.
    server = server_cls(SERVER_NAME, instructions=instructions(), log_level="WARNING")
    # The protocol server says this version in serverInfo (the 1.x SDK says its own).
    low = vars(server).get("_lowlevel_server") or vars(server)["_mcp_server"]  # 2.x, 1.x
    low.version = __version__

    guard = guarded(tool_error)

    read_only = ToolAnnotations(readOnlyHint=True, destructiveHint=False, openWorldHint=False)
    writes = ToolAnnotations(
        readOnlyHint=False, destructiveHint=False, idempotentHint=False, openWorldHint=False
    )

    # Parameters: the policy's bounds and the vocabularies' enums, in the schema itself.
    def text(desc: str, setting: str, **kw: Any) -> Any:
        return Field(description=desc, max_length=int(getattr(p, setting)), **kw)

    BulletId = Annotated[str, text("A rule's id, e.g. b-1a2b3c4d.", "max_id_length", min_length=1)]
    SessionRef = Annotated[
        str | None,
        text("Your session (e.g. its transcript path): recorded as provenance.", "max_ref_length"),
    ]
    Context = Annotated[str | None, text("What happened, briefly.", "max_text_length")]
    Receipt = Annotated[
        str | None,
        text(
            "An idempotency key, unique to this report (e.g. a UUID): a retry with the same "
            "key after a lost answer counts once.",
            "max_id_length",
            min_length=1,
        ),
    ]
    Limit = Annotated[int, Field(ge=1, le=100, description="At most this many per page.")]
    Offset = Annotated[int, Field(ge=0, description="Skip this many (next_offset of a page).")]

    @server.tool(
        name="recall",
        description="Rules, anti-patterns and deprecation warnings relevant to a task, best "
        "first. Call it before a task with a few words about it; follow `bullets`, avoid "
        "`anti_patterns`, and do not follow `deprecated_warnings` any more.",
        annotations=read_only,
    )
    @guard
    def recall(
        query: Annotated[
            str,
            text("The task in a few words.", "max_query_length", min_length=1),
        ],
        limit: Annotated[int, Field(ge=0, le=100, description="Rules per list.")] = 10,
        scope: Annotated[
            list[Annotated[str, text("kind or kind:key", "max_label_length")]] | None,
            Field(
                max_length=16,
                description="Where you are working, e.g. ['language:python', "
                "'workspace:github.com/org/repo']; rules scoped elsewhere are left out.",
            ),
        ] = None,
        explain_hidden: Annotated[
            bool,
            Field(
                description="Also return `hidden`: the rules that matched but are not "
                "shown (outranked, deprecated, retired, out of scope), each with the "
                "numbers and what would bring it back. Needs limit >= 1."
            ),
        ] = False,
    ) -> Annotated[CallToolResult, out.RecallOut]:
        return answer(tools.recall(query, limit, scope, explain_hidden))

    @server.tool(
        name="list_rules",
        description="Rules without a query: by category, tag, maturity or type, highest "
        "effective score first, a page at a time.",
        annotations=read_only,
    )
    @guard
    def list_rules(
        category: Annotated[str | None, text("e.g. ci, testing.", "max_label_length")] = None,
        tag: Annotated[str | None, text("One tag.", "max_label_length")] = None,
        maturity: Annotated[
            list[MaturityName] | None,
            Field(max_length=4, description="Only these rungs (default: all)."),
        ] = None,
        type: Annotated[
            BulletTypeName | None, Field(description="rule or anti-pattern (default both).")
        ] = None,
        limit: Limit = 50,
        offset: Offset = 0,
    ) -> Annotated[CallToolResult, out.RulesOut]:
        return answer(tools.list_rules(category, tag, maturity, type, limit, offset))

    @server.tool(
        name="playbook_stats",
        description="The playbook in counts: rules by state, maturity and type, score "
        "buckets, stale rules, feedback, blocked patterns, conflicts and pending proposals.",
        annotations=read_only,
    )
    @guard
    def playbook_stats() -> Annotated[CallToolResult, out.StatsOut]:
        return answer(tools.stats())

    @server.tool(
        name="pending_proposals",
        description="Proposals waiting for a person's review, oldest first; with "
        "`session_ref`, only those from that session (yours, as you gave it when proposing).",
        annotations=read_only,
    )
    @guard
    def pending_proposals(
        session_ref: Annotated[
            str | None, text("Only proposals from this session.", "max_ref_length")
        ] = None,
        type: Annotated[DeltaTypeName | None, Field(description="Only this delta type.")] = None,
        limit: Limit = 20,
        offset: Offset = 0,
    ) -> Annotated[CallToolResult, out.PendingOut]:
        return answer(tools.pending_proposals(session_ref, type, limit, offset))

    @server.tool(
        name="show_bullet",
        description="One rule in full: score, provenance, lineage, maturity history, "
        "conflicts, latest decisions, and its feedback newest first, a page at a time.",
        annotations=read_only,
    )
    @guard
    def show_bullet(
        bullet_id: BulletId,
        events_limit: Annotated[
            int, Field(ge=0, le=100, description="Feedback events per page.")
        ] = 10,
        events_offset: Offset = 0,
    ) -> Annotated[CallToolResult, out.ShowOut]:
        return answer(tools.show_bullet(bullet_id, events_limit, events_offset))

    @server.tool(
        name="mark_feedback",
        description="Record that a rule helped or hurt you. Give a `receipt` so that a "
        "retry after a lost answer counts once. The answer shows what was stored.",
        annotations=writes,
    )
    @guard
    def mark_feedback(
        bullet_id: BulletId,
        kind: Annotated[Literal["helpful", "harmful"], Field(description="Helped or hurt.")],
        reason: Annotated[
            HarmReasonName | None,
            Field(description="With harmful: why it hurt (default other)."),
        ] = None,
        context: Context = None,
        session_ref: SessionRef = None,
        receipt: Receipt = None,
    ) -> Annotated[CallToolResult, out.MarkOut]:
        return answer(tools.mark_feedback(bullet_id, kind, reason, context, session_ref, receipt))

    @server.tool(
        name="record_outcome",
        description="Record a task's outcome (success, failure or partial) as feedback on "
        "the rules it relied on. Give a `receipt` so that a retry counts once.",
        annotations=writes,
    )
    @guard
    def record_outcome(
        outcome: Annotated[Outcome, Field(description="How the task went.")],
        bullet_ids: Annotated[
            list[Annotated[str, text("A rule's id.", "max_id_length")]],
            Field(min_length=1, max_length=p.max_batch, description="The rules it relied on."),
        ],
        receipt: Receipt = None,
        context: Context = None,
        session_ref: SessionRef = None,
    ) -> Annotated[CallToolResult, out.OutcomeOut]:
        return answer(tools.record_outcome(outcome, bullet_ids, receipt, context, session_ref))

    deltas_schema = out.delta_list_schema(
        p,
        "The changes, each one of six shapes told apart by `type`: add (a new rule), "
        "helpful / harmful (evidence on a rule), replace (a better wording), deprecate, "
        "merge (two or more rules into one).",
    )

    @server.tool(
        name="propose_deltas",
        description="Propose changes to the playbook for a person's review; nothing is "
        "applied until a person approves it. Each delta is staged or rejected on its own; "
        "the answer says which, with the reasons. A call whose every delta is rejected "
        "is an error.",
        annotations=writes,
    )
    @guard
    def propose_deltas(
        deltas: Annotated[list[dict[str, Any]], WithJsonSchema(deltas_schema)],
        session_ref: SessionRef = None,
        byte_offset: Annotated[
            int | None,
            Field(ge=0, description="Where in your session's transcript you learned it."),
        ] = None,
    ) -> Annotated[CallToolResult, out.ProposeOut]:
        return answer(tools.propose_deltas(deltas, session_ref, byte_offset))

    @server.tool(
        name="reflect_session",
        description="Read your session's transcript (a Claude Code or Codex .jsonl file "
        "under the agent's own session folder) and stage what it teaches for review: "
        "RULE: / AVOID: lines and [playbook: helpful|harmful <id>] citations. Reads from "
        "where the last reflection of the same transcript stopped, a bounded share per "
        "call; `more` says to call again.",
        annotations=writes,
    )
    @guard
    def reflect_session(
        transcript_path: Annotated[
            str, text("The transcript file's path.", "max_ref_length", min_length=1)
        ],
    ) -> Annotated[CallToolResult, out.ReflectOut]:
        return answer(tools.reflect_session(transcript_path))

    @server.resource(
        RESOURCE_URI,
        name="playbook",
        description=resource_description(workspace),
        mime_type="text/markdown",
    )
    @guarded(resource_error)
    def agents_md() -> str:
        return tools.agents_md()

    return server


def resource_description(workspace: str | None) -> str:
    """What the AGENTS.md resource holds (as `interop.agents_md` builds it)."""
    scope = f"global and {inert(workspace, one_line=True)}'s" if workspace else "every workspace's"
    return (
        "The playbook as an AGENTS.md block: the agent's protocol, then the live rules "
        f"({scope}: active, not outweighed by harm) best first by category, within "
        f"{DEFAULT_MAX_BYTES:,} bytes; recall finds the rest."
    )


def serve(
    db: str | Path,
    *,
    policy: "Policy | None" = None,
    workspace: str | None = None,
    read_db: "Target | None" = None,
) -> None:
    """Run the server on stdin/stdout until the client disconnects (`stdio` answers
    what the SDK's reader would drop). McpUnavailable, before the server is built, when
    the optional SDK is not installed."""
    server = build_server(db, policy, workspace, read_db)
    import anyio  # lazy: the mcp extra (SDK 2.x or 1.x)

    anyio.run(serve_stdio, server)
