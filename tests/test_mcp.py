"""`playbook mcp` as a subprocess, driven by the official SDK's stdio client, on both backends.

What an agent sees: the tools and their schemas (every parameter described and bounded,
the six delta shapes typed, an output schema for each tool that its answers validate
against), compact answers, tool errors with `isError: true`, paged long answers, and
idempotent feedback.
"""

from __future__ import annotations

import asyncio
import itertools
import json
import os
import sys
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import pytest

import playbook
from playbook.curation import curate
from playbook.review import queue
from playbook.store import PlaybookStore

from .helpers import store_at
from .helpers.cli import ENTRY, clean_env, run_cli

mcp = pytest.importorskip("mcp")
jsonschema = pytest.importorskip("jsonschema")
from mcp import ClientSession, StdioServerParameters  # noqa: E402
from mcp.client.stdio import stdio_client  # noqa: E402

FORBIDDEN = ("approve", "reject", "pin", "block", "deprecate", "delete", "retire", "import")
SIX = {"add", "helpful", "harmful", "replace", "deprecate", "merge"}  # SPEC §5


def attr(obj: Any, snake: str, camel: str) -> Any:
    """SDK 2.x names fields in snake_case, 1.x in camelCase."""
    return getattr(obj, snake) if hasattr(obj, snake) else getattr(obj, camel)


def is_error(result: Any) -> bool:
    return bool(attr(result, "is_error", "isError"))


def text_of(result: Any) -> str:
    return " ".join(c.text for c in result.content)


Session = Callable[[str, dict[str, Any]], Awaitable[Any]]


def serve(
    db: str | Path, body: Callable[[Any], Awaitable[Any]], cwd: Path | None = None, **env: str
) -> Any:
    """Run `body(session)` against `playbook --db DB mcp` (started in `cwd`), initialized."""
    params = StdioServerParameters(
        command=sys.executable,
        args=["-c", ENTRY, "--db", str(db), "mcp"],
        env=clean_env(**env),
        cwd=cwd,
    )

    async def run() -> Any:
        async with stdio_client(params) as (read, write), ClientSession(read, write) as session:
            init = await session.initialize()
            return await body((session, init))

    return asyncio.run(asyncio.wait_for(run(), timeout=90))


class Calls:
    """Tool calls that check every answer against the tool's output schema and its text
    against the structured content (compact JSON of the same data)."""

    def __init__(self, session: Any, tools: list[Any]) -> None:
        self.session = session
        self.schemas = {t.name: attr(t, "output_schema", "outputSchema") for t in tools}

    async def ok(self, name: str, args: dict[str, Any]) -> dict[str, Any]:
        result = await self.session.call_tool(name, args)
        assert not is_error(result), text_of(result)
        data = attr(result, "structured_content", "structuredContent")
        jsonschema.validate(data, self.schemas[name])
        (block,) = result.content
        assert json.loads(block.text) == data
        assert block.text == json.dumps(data, ensure_ascii=False, separators=(",", ":"))
        return data

    async def error(self, name: str, args: dict[str, Any]) -> str:
        result = await self.session.call_tool(name, args)
        assert is_error(result), result
        return text_of(result)


def seed(store: PlaybookStore) -> dict[str, str]:
    r = curate(store, [
        {"type": "add", "content": "Pin npm to 11 in release jobs", "category": "ci",
         "tags": ["npm"]},
        {"type": "add", "content": "Run pytest with -x in CI", "category": "testing"},
        {"type": "add", "content": "Sleep before retrying deploys", "category": "ci",
         "bullet_type": "anti-pattern"},
    ])  # fmt: skip
    npm, pytest_x, sleep = r.added
    return {"npm": npm, "pytest": pytest_x, "sleep": sleep}


def test_what_an_agent_sees_and_does(store: PlaybookStore, db_target: str | Path) -> None:
    ids = seed(store)
    npm, pytest_x = ids["npm"], ids["pytest"]
    store.insert_bullet("Use uv for Python installs", maturity="proven")  # in AGENTS.md

    async def body(opened: tuple[Any, Any]) -> dict[str, Any]:
        session, init = opened
        tools = (await session.list_tools()).tools
        calls = Calls(session, tools)
        seen: dict[str, Any] = {"init": init, "tools": tools}
        seen["recall"] = await calls.ok("recall", {"query": "npm release", "limit": 5})
        seen["hidden"] = await calls.ok(
            "recall", {"query": "pytest npm", "limit": 1, "explain_hidden": True}
        )
        seen["by_category"] = await calls.ok("list_rules", {"category": "CI"})
        seen["by_tag"] = await calls.ok("list_rules", {"tag": "npm"})
        seen["page"] = await calls.ok("list_rules", {"limit": 2, "offset": 2})
        seen["mark"] = await calls.ok(
            "mark_feedback",
            {"bullet_id": npm, "kind": "harmful", "context": "npm 12 was fine", "receipt": "k-1"},
        )
        seen["mark_again"] = await calls.ok(
            "mark_feedback",
            {"bullet_id": npm, "kind": "harmful", "context": "npm 12 was fine", "receipt": "k-1"},
        )
        seen["mark_reason"] = await calls.ok(
            "mark_feedback", {"bullet_id": pytest_x, "kind": "harmful", "reason": "outdated"}
        )
        seen["outcome"] = await calls.ok(
            "record_outcome",
            {"outcome": "success", "bullet_ids": [npm, "b-unknown"], "receipt": "r-1"},
        )
        seen["all_rejected"] = await calls.error(
            "propose_deltas",
            {"deltas": [
                {"type": "add", "content": "x", "provenance": {"session_ref": "fake"}},
                {"type": "deprecate", "bullet_id": "b-nope", "reason": "gone"},
            ]},
        )  # fmt: skip
        seen["partly"] = await calls.ok(
            "propose_deltas",
            {
                "deltas": [
                    {"type": "deprecate", "bullet_id": "b-nope", "reason": "gone"},
                    {"type": "add", "content": "Cache pip downloads in CI", "tags": ["ci"]},
                    {"type": "replace", "bullet_id": npm, "content": "Pin npm to 11.4"},
                ],
                "session_ref": "session:mcp",
                "byte_offset": 128,
            },
        )
        seen["again"] = await calls.ok(
            "propose_deltas",
            {
                "deltas": [{"type": "add", "content": "Cache pip downloads in CI", "tags": ["ci"]}],
                "session_ref": "session:mcp",
                "byte_offset": 128,
            },
        )
        seen["pending"] = await calls.ok("pending_proposals", {"session_ref": "session:mcp"})
        seen["pending_other"] = await calls.ok("pending_proposals", {"session_ref": "other"})
        seen["stats"] = await calls.ok("playbook_stats", {})
        seen["show"] = await calls.ok("show_bullet", {"bullet_id": npm})
        seen["missing"] = await calls.error("show_bullet", {"bullet_id": "b-nope"})
        seen["bad_mark"] = await calls.error(
            "mark_feedback", {"bullet_id": "b-nope", "kind": "helpful"}
        )
        seen["too_long"] = await calls.error("recall", {"query": "x" * 2001})
        resources = attr(await session.list_resources(), "resources", "resources")
        seen["resources"] = [(str(r.uri), attr(r, "mime_type", "mimeType")) for r in resources]
        seen["agents_md"] = (await session.read_resource(resources[0].uri)).contents[0].text
        return seen

    seen = serve(db_target, body)

    # serverInfo is Playbook's, whatever the SDK (mcp 1.x said its own version).
    info = attr(seen["init"], "server_info", "serverInfo")
    assert (info.name, info.version) == ("playbook", playbook.__version__)
    assert (
        "RULE:" in seen["init"].instructions and "[playbook: helpful" in seen["init"].instructions
    )

    names = {t.name for t in seen["tools"]}
    assert names == {
        "recall", "list_rules", "playbook_stats", "pending_proposals", "show_bullet",
        "mark_feedback", "record_outcome", "propose_deltas", "reflect_session",
    }  # fmt: skip
    assert not [n for n in names for word in FORBIDDEN if word in n]

    # Recall: compact. Lists by kind; only what is not a default is said.
    (item,) = seen["recall"]["bullets"]
    assert item == {
        "id": npm,
        "content": "Pin npm to 11 in release jobs",
        "maturity": "candidate",
        "score": item["score"],
        "category": "ci",
        "tags": ["npm"],
    }
    assert item["score"] > 0 and "degraded" not in seen["recall"]
    hidden = seen["hidden"]["hidden"]
    assert hidden["total"] >= 1 and hidden["rules"][0]["remedies"]

    # Rules without a query: by category (any case), by tag, a page at a time.
    by_category = {r["id"]: r for r in seen["by_category"]["rules"]}
    assert set(by_category) == {npm, ids["sleep"]}
    assert by_category[ids["sleep"]]["type"] == "anti-pattern" and "type" not in by_category[npm]
    assert [r["id"] for r in seen["by_tag"]["rules"]] == [npm]
    page = seen["page"]
    assert (page["total"], page["offset"], page["next_offset"], len(page["rules"])) == (
        4, 2, None, 2,
    )  # fmt: skip

    # Feedback with a receipt counts once; the answer says what was stored.
    assert seen["mark"]["status"] == "applied" and seen["mark"]["harm_reason"] == "other"
    assert seen["mark_again"]["status"] == "replayed"
    assert seen["mark_again"]["harm_reason"] == "other"
    assert seen["mark_reason"]["harm_reason"] == "outdated"
    assert seen["outcome"]["applied"] == [npm] and seen["outcome"]["skipped"] == ["b-unknown"]
    events = store.timeline(npm)
    assert [(e.kind, e.actor, e.reason) for e in events] == [
        ("harmful", "agent", "other"),
        ("helpful", "agent", None),
    ]
    assert events[1].receipt == "r-1"

    # Every delta rejected: a tool error with each reason. Partly: each delta's fate.
    assert "nothing staged" in seen["all_rejected"]
    assert "[0] a delta cannot carry provenance" in seen["all_rejected"]
    assert "[1] no bullet with id 'b-nope'" in seen["all_rejected"]
    partly = seen["partly"]
    statuses = [(o["index"], o["status"]) for o in partly["outcomes"]]
    assert statuses == [(0, "rejected"), (1, "staged"), (2, "staged")]
    assert partly["outcomes"][0]["reason"] == "no bullet with id 'b-nope'"
    assert (partly["staged"], partly["rejected"]) == (2, 1)
    assert [o["status"] for o in seen["again"]["outcomes"]] == ["already-proposed"]
    pending = {p.id: p for p in queue.pending(store, similar=False)}
    staged = [o["proposal_id"] for o in partly["outcomes"][1:]]
    assert set(pending) == set(staged)
    for pid in staged:
        p = pending[pid]
        assert p.origin == "mcp" and p.provenance.session_ref == "session:mcp"
        assert p.provenance.byte_offset == 128
    assert store.get_bullet(npm).state != "retired"  # type: ignore[union-attr]

    # What is pending review, from this session; the counts.
    assert [p["id"] for p in seen["pending"]["proposals"]] == staged
    assert seen["pending"]["proposals"][1]["delta"]["type"] == "replace"
    assert seen["pending_other"] == {
        "proposals": [], "total": 0, "offset": 0, "next_offset": None,
    }  # fmt: skip
    stats = seen["stats"]
    assert stats["bullets"]["total"] == 4 and stats["pending_proposals"] == 2
    assert stats["feedback"] == {"events": 3, "helpful": 1, "harmful": 2}

    assert seen["show"]["bullet"]["id"] == npm
    assert [e["kind"] for e in seen["show"]["events"]["items"]] == ["helpful", "harmful"]
    assert "no bullet with id 'b-nope'" in seen["missing"]
    assert "b-nope" in seen["bad_mark"]
    assert "2000" in seen["too_long"]

    assert seen["resources"] == [("playbook://agents.md", "text/markdown")]
    assert "Use uv for Python installs" in seen["agents_md"]


def test_the_agents_md_resource_is_the_workspaces_live_rules(tmp_path: Path) -> None:
    """Regression: the resource gave every workspace's rules wherever the server ran, and
    its description said "proven and established rules" (since issue 27 it is the
    export's block: the live rules, candidates too, within a budget)."""
    import subprocess

    shop = tmp_path / "shop"
    subprocess.run(["git", "init", "-q", str(shop)], check=True)
    subprocess.run(
        ["git", "-C", str(shop), "remote", "add", "origin", "git@github.com:Acme/Shop.git"],
        check=True,
    )
    db = tmp_path / "pb.sqlite3"
    with store_at(db) as store:
        store.insert_bullet("Run the linters before pushing")  # global, a candidate
        store.insert_bullet(
            "Use the shop's sandbox keys", scope="workspace", scope_key="github.com/acme/shop"
        )
        store.insert_bullet(
            "Bump the blog theme", scope="workspace", scope_key="github.com/acme/blog"
        )

    async def body(opened: tuple[Any, Any]) -> tuple[str, str]:
        session = opened[0]
        (resource,) = attr(await session.list_resources(), "resources", "resources")
        text = (await session.read_resource(resource.uri)).contents[0].text
        return resource.description, text

    description, text = serve(db, body, cwd=shop)
    assert "proven and established" not in description
    assert "live rules" in description and "github.com/acme/shop" in description
    assert "Run the linters before pushing" in text and "sandbox keys" in text
    assert "Bump the blog theme" not in text  # another repository's rule
    assert "[playbook: helpful <id>]" in text  # the protocol comes first


def test_every_parameter_is_described_bounded_and_typed(tmp_path: Path) -> None:
    async def body(opened: tuple[Any, Any]) -> list[Any]:
        return (await opened[0].list_tools()).tools

    tools = {t.name: t for t in serve(tmp_path / "pb.sqlite3", body)}
    for name, tool in tools.items():
        schema = attr(tool, "input_schema", "inputSchema")
        for param, prop in schema.get("properties", {}).items():
            assert prop.get("description"), (name, param)
        assert attr(tool, "output_schema", "outputSchema")["type"] == "object", name
        assert tool.description, name
    props = {n: attr(t, "input_schema", "inputSchema")["properties"] for n, t in tools.items()}
    assert props["recall"]["query"]["maxLength"] == 2000  # Policy.max_query_length
    assert (props["recall"]["limit"]["minimum"], props["recall"]["limit"]["maximum"]) == (0, 100)
    assert props["mark_feedback"]["kind"]["enum"] == ["helpful", "harmful"]
    reason = props["mark_feedback"]["reason"]["anyOf"][0]
    assert set(reason["enum"]) == {
        "caused_bug", "wasted_time", "contradicted_requirements", "wrong_context", "outdated",
        "other",
    }  # fmt: skip
    assert props["record_outcome"]["outcome"]["enum"] == ["success", "failure", "partial"]
    assert props["record_outcome"]["bullet_ids"]["maxItems"] == 1000  # Policy.max_batch
    assert props["list_rules"]["maturity"]["anyOf"][0]["items"]["enum"] == [
        "candidate", "established", "proven", "deprecated",
    ]  # fmt: skip

    # The six delta shapes, told apart by `type`, each field bounded by the policy.
    deltas = props["propose_deltas"]["deltas"]
    assert (deltas["minItems"], deltas["maxItems"]) == (1, 1000)
    shapes = {s["properties"]["type"]["const"]: s for s in deltas["items"]["oneOf"]}
    assert set(shapes) == SIX
    assert all(s["additionalProperties"] is False for s in shapes.values())
    assert shapes["add"]["properties"]["content"]["maxLength"] == 8000
    assert shapes["add"]["properties"]["tags"]["maxItems"] == 32
    assert shapes["merge"]["properties"]["bullet_ids"]["minItems"] == 2
    assert shapes["deprecate"]["required"] == ["type", "bullet_id", "reason"]
    assert "$ref" not in json.dumps(deltas)  # self-contained: no dangling references


def test_a_policy_file_sets_the_bounds_the_schema_says(tmp_path: Path) -> None:
    policy = tmp_path / "playbook.toml"
    policy.write_text("max_query_length = 300\nmax_batch = 20\n")

    async def body(opened: tuple[Any, Any]) -> list[Any]:
        return (await opened[0].list_tools()).tools

    params = {"PLAYBOOK_POLICY": str(policy)}
    tools = {t.name: t for t in serve(tmp_path / "pb.sqlite3", body, **params)}
    props = {n: attr(t, "input_schema", "inputSchema")["properties"] for n, t in tools.items()}
    assert props["recall"]["query"]["maxLength"] == 300
    assert props["propose_deltas"]["deltas"]["maxItems"] == 20


def test_show_bullet_pages_its_feedback(store: PlaybookStore, db_target: str | Path) -> None:
    npm = seed(store)["npm"]
    for i in range(27):
        curate(store, [{"type": "helpful", "bullet_id": npm, "context": f"release {i}"}])

    async def body(opened: tuple[Any, Any]) -> list[dict[str, Any]]:
        session = opened[0]
        calls = Calls(session, (await session.list_tools()).tools)
        pages = [await calls.ok("show_bullet", {"bullet_id": npm})]
        while pages[-1]["events"]["next_offset"] is not None:
            nxt = pages[-1]["events"]["next_offset"]
            pages.append(await calls.ok("show_bullet", {"bullet_id": npm, "events_offset": nxt}))
        return pages

    pages = serve(db_target, body)
    assert [len(p["events"]["items"]) for p in pages] == [10, 10, 7]
    assert {p["events"]["total"] for p in pages} == {27}
    contexts = [e["context"] for p in pages for e in p["events"]["items"]]
    assert contexts == [f"release {i}" for i in reversed(range(27))]  # newest first


def test_reflect_session_reads_only_an_agents_own_transcripts(
    store: PlaybookStore, db_target: str | Path, tmp_path: Path
) -> None:
    seed(store)
    config = tmp_path / "claude"
    folder = config / "projects" / "-home-dev-app"
    folder.mkdir(parents=True)
    transcript = folder / "5b2c9e4e.jsonl"
    records = [
        {"type": "user", "message": {"role": "user", "content": "release the package"}},
        {"type": "assistant", "message": {"role": "assistant", "content": [
            {"type": "text", "text": "Done.\nRULE: Run npm ci before npm publish in release jobs"}
        ]}},
    ]  # fmt: skip
    transcript.write_text("".join(json.dumps(r) + "\n" for r in records))
    outside = tmp_path / "elsewhere.jsonl"
    outside.write_text(transcript.read_text())

    async def body(opened: tuple[Any, Any]) -> dict[str, Any]:
        session = opened[0]
        calls = Calls(session, (await session.list_tools()).tools)
        return {
            "first": await calls.ok("reflect_session", {"transcript_path": str(transcript)}),
            "again": await calls.ok("reflect_session", {"transcript_path": str(transcript)}),
            "outside": await calls.error("reflect_session", {"transcript_path": str(outside)}),
        }

    seen = serve(db_target, body, CLAUDE_CONFIG_DIR=str(config))
    first = seen["first"]
    assert first["session_ref"] == os.path.realpath(transcript)
    assert (first["watermark_before"], first["more"]) == (0, False)
    assert first["watermark_after"] == transcript.stat().st_size
    (pid,) = first["staged"]
    p = queue.get(store, pid)
    assert p is not None and p.origin == "mcp"
    assert p.delta["content"] == "Run npm ci before npm publish in release jobs"
    assert seen["again"]["staged"] == [] and seen["again"]["watermark_before"] > 0
    assert "not under an agent's session folder" in seen["outside"]


def test_reflect_session_reads_a_bounded_share_per_call(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from playbook.mcp import tools as mcp_tools

    folder = tmp_path / "sessions"
    folder.mkdir()
    transcript = folder / "long.jsonl"
    lines = [
        json.dumps({"type": "assistant", "message": {"role": "assistant", "content": [
            {"type": "text", "text": f"RULE: Lesson number {i} about release job {i}"}]}})
        for i in range(40)
    ]  # fmt: skip
    transcript.write_text("".join(line + "\n" for line in lines))
    monkeypatch.setenv("PLAYBOOK_SESSION_DIRS", str(folder))
    monkeypatch.setattr(mcp_tools, "REFLECT_BYTES", len(lines[0]) * 10 + 5)
    tools = mcp_tools.PlaybookTools(tmp_path / "pb.sqlite3")
    staged, calls = [], []
    while not calls or calls[-1]["more"]:
        calls.append(tools.reflect_session(str(transcript)))
        staged += calls[-1]["staged"]
        assert len(calls) < 20
    assert len(calls) >= 4  # the cap cut it: 40 lines, about 10 a call
    assert calls[-1]["watermark_after"] == transcript.stat().st_size
    for before, after in itertools.pairwise(calls):
        assert after["watermark_before"] == before["watermark_after"]
    assert len(staged) == 40


def test_without_the_mcp_extra_one_line_says_how_to_install_it(tmp_path: Path) -> None:
    blocked = "import sys; sys.modules['mcp'] = None; sys.modules['anyio'] = None; "
    r = run_cli("--db", tmp_path / "pb.sqlite3", "mcp", python_prelude=blocked)
    assert r.rc == 1, (r.rc, r.err)
    assert "Traceback" not in r.err
    (line,) = r.err.strip().splitlines()
    assert line.startswith("playbook: error: the MCP server needs the 'mcp' package")
    assert "Playbook's clone" in line and "pip install -e '.[mcp]'" in line
