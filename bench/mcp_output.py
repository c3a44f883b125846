"""What `playbook mcp` costs an agent in context: the size of its answers, through the
official SDK's stdio client.

    python bench/mcp_output.py

A playbook of 300 rules as long as real ones (100-220 characters, the length of the rules
in public cass-memory playbooks), a fifth of them scoped to a workspace, some tagged. An
answer is measured as the compact JSON of its structured content: what Claude Code hands
the model when a tool has an output schema (the text block holds the same JSON).

- `recall` (limit 10) over 20 queries: answer bytes / bytes of the rule text it carries,
  median. Target ≤ 2.0x (issue 26: about 5x before, indented JSON twice);
- `show_bullet` of a rule with 27 feedback events (each with a context and a session):
  its first page, and every event at once (events_limit=100). Target for a page: ≤ 10 KB,
  a quarter of the 10,000 tokens at which Claude Code warns (26 KB of structured content
  and 34 KB of text before, all events at once);
- `tools/list`: what of the tool definitions a model reads (name, description, input
  schema) and the output schemas a client keeps, shown without a target.
"""

from __future__ import annotations

import asyncio
import json
import os
import random
import sys
import tempfile
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
from report import figure, median, note

WORDS = (
    "npm pnpm node python pytest ruff docker compose kubernetes helm terraform release deploy "
    "ci cache lockfile migration postgres redis queue worker retry timeout logging secret "
    "token branch rebase commit hook lint format test fixture build bundle typescript cargo "
    "clippy schema index query transaction lock pool connection session header upload stream"
).split()
VERBS = "Always pin Run Prefer Check Keep Cache Split Retry Log Lock Never Use".split()
FILLER = "the a before after when in every with to of for on job step locally first".split()


def rule_text(rng: random.Random) -> str:
    words = [rng.choice(VERBS)]
    while len(" ".join(words)) < rng.randint(100, 220):
        words.append(rng.choice(WORDS) if rng.random() < 0.5 else rng.choice(FILLER))
    return " ".join(words) + f" (case {rng.randint(0, 99999)})"


def build(path: Path) -> str:
    """The playbook; returns the id of the rule given 27 feedback events."""
    from playbook.curation import curate
    from playbook.store import open_store

    rng = random.Random(7)
    deltas: list[dict[str, Any]] = []
    for _ in range(300):
        d: dict[str, Any] = {"type": "add", "content": rule_text(rng)}
        d["category"] = rng.choice(["ci", "testing", "git", "release", "general"])
        if rng.random() < 0.4:
            d["tags"] = rng.sample(WORDS, rng.randint(1, 2))
        if rng.random() < 0.2:
            d["scope"], d["scope_key"] = "workspace", "github.com/acme/platform"
        deltas.append(d)
    with open_store(path, mode="create") as store:
        added = curate(store, deltas).added
        target = added[0]
        for i in range(27):
            kind = "harmful" if i % 5 == 4 else "helpful"
            d = {"type": kind, "bullet_id": target,
                 "context": f"release job {i}: pinned it, the lockfile stayed the same and the "
                 "publish step passed on the first try"}  # fmt: skip
            prov = {"session_ref": f"/home/dev/.claude/projects/app/{i:04d}-5b2c9e4e.jsonl"}
            curate(store, [d], provenance=prov)
    return target


async def measure(db: Path, target: str) -> dict[str, Any]:
    from mcp import ClientSession, StdioServerParameters
    from mcp.client.stdio import stdio_client

    params = StdioServerParameters(
        command=sys.executable,
        args=["-c", "from playbook.cli import run; run()", "--db", str(db), "mcp"],
        env=dict(os.environ),
    )
    rng = random.Random(3)
    out: dict[str, Any] = {"ratios": []}
    async with stdio_client(params) as (read, write), ClientSession(read, write) as session:
        await session.initialize()
        tools = (await session.list_tools()).tools
        dumped = [t.model_dump(mode="json", by_alias=True, exclude_none=True) for t in tools]
        read = [{k: t.get(k) for k in ("name", "description", "inputSchema")} for t in dumped]
        out["tools"] = len(json.dumps(read, separators=(",", ":")))
        out["outputs"] = len(json.dumps([t.get("outputSchema") for t in dumped]))
        for _ in range(20):
            query = " ".join(rng.sample(WORDS, 3))
            data = await structured(session, "recall", {"query": query, "limit": 10})
            rules = [r for key in ("bullets", "anti_patterns", "deprecated_warnings")
                     for r in data[key]]  # fmt: skip
            text = sum(len(r["content"].encode()) for r in rules)
            if text:
                out["ratios"].append(size(data) / text)
        out["page"] = size(await structured(session, "show_bullet", {"bullet_id": target}))
        out["all"] = size(
            await structured(session, "show_bullet", {"bullet_id": target, "events_limit": 100})
        )
    return out


async def structured(session: Any, name: str, args: dict[str, Any]) -> dict[str, Any]:
    result = await session.call_tool(name, args)
    data = getattr(result, "structured_content", None)
    return data if data is not None else result.structuredContent


def size(data: dict[str, Any]) -> int:
    return len(json.dumps(data, ensure_ascii=False, separators=(",", ":")).encode())


def main() -> int:
    with tempfile.TemporaryDirectory(prefix="pb-mcp-bench-") as tmp:
        db = Path(tmp) / "pb.sqlite3"
        target = build(db)
        seen = asyncio.run(measure(db, target))
    ratio = median(seen["ratios"])
    note(f"recall: {len(seen['ratios'])} queries with results")
    ok = figure("MCP recall answer / its rule text (median)", ratio, "x", 2.0)
    ok &= figure("MCP show_bullet, first page (27 events)", seen["page"] / 1000, "KB", 10.0)
    figure("MCP show_bullet, all 27 events", seen["all"] / 1000, "KB")
    figure("MCP tools/list: names, descriptions, input schemas", seen["tools"] / 1000, "KB")
    figure("MCP tools/list: output schemas", seen["outputs"] / 1000, "KB")
    return 0 if ok else 1


if __name__ == "__main__":
    raise SystemExit(main())
