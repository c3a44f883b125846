"""Agents cannot do more than the API lets them, even at the database (`playbook pg roles`).

Real connections as two login roles, one in the agent group and one in the reviewers':
through the API, the agent records everything an agent records (rules, feedback, outcomes
with receipts, proposals, embeddings, watermarks, an inversion its harm earned, the
maturity its evidence earned); every reviewer's action it attempts, through the API even
claiming `actor="human"` (which the API alone would believe) or in plain SQL as issue 29
found it could (self-promotion, un-retiring, forged evidence, a blocked rule, a forged
decision, a burnt receipt, `meta`, a closed conflict), is refused inside PostgreSQL and
changes nothing; the reviewer's role does the same actions. The agent's own work through
the real surfaces (the CLI, the hooks, the MCP server) runs under its role.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Iterator
from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest

from playbook.core.errors import PermissionDenied
from playbook.core.terms import utcnow
from playbook.core.text import content_hash
from playbook.curation import curate
from playbook.curation.outcomes import apply_outcome
from playbook.retrieval.query import recall
from playbook.retrieval.vectors import HashTrigramEmbedder, MemoryVectors
from playbook.review import queue
from playbook.review.actions import activate, restore
from playbook.store import PlaybookStore, iso, open_store
from playbook.store import testing as raw
from playbook.store.copying import TABLES

from .helpers import Clock
from .helpers.cli import run_cli
from .helpers.hooks import Agent, claude_record, context_of, fixture, wait_for
from .helpers.mcp_agent import agent_session

pytestmark = pytest.mark.postgres

BLOCKED = "Use --no-verify to skip hooks"


def facts(store: PlaybookStore) -> dict[str, list[tuple[Any, ...]]]:
    return {
        t: raw.rows(store, f"SELECT {', '.join(c)} FROM {t} ORDER BY {', '.join(k)}")
        for t, (c, k) in TABLES.items()
        if t not in ("evidence", "meta", "cache_blob")  # caches a read may refresh
    }


def everything(store: PlaybookStore) -> dict[str, list[tuple[Any, ...]]]:
    """Every row of every table, the caches included."""
    return {
        t: raw.rows(store, f"SELECT {', '.join(c)} FROM {t} ORDER BY {', '.join(k)}")
        for t, (c, k) in TABLES.items()
    }


@pytest.fixture
def team(pg_url: str, pg_server: str) -> Iterator[dict[str, Any]]:
    """A playbook with something of everything to review, the two roles, and a login in
    each; yields the URLs to log in with and the ids to act on."""
    clock = Clock()
    schema = pg_url.rsplit("search_path%3D", 1)[1]
    agent_role, human_role = f"{schema}_agent", f"{schema}_human"
    with open_store(pg_url, clock=clock) as owner:
        r = curate(owner, [
            {"type": "add", "content": "Pin npm to 11 in release jobs", "tags": ["ci"]},
            {"type": "add", "content": "Run pytest with -x in CI"},
            {"type": "add", "content": "Sleep before retrying deploys"},
            {"type": "add", "content": "Cache the node_modules folder between jobs"},
            {"type": "add", "content": "Lint YAML files before committing"},
        ])  # fmt: skip
        pinned, plain, bad, old, other = r.added
        owner.pin(pinned, "team policy")
        curate(owner, [{"type": "deprecate", "bullet_id": bad, "reason": "flaky"}], actor="human")
        r = curate(owner, [{"type": "replace", "bullet_id": old,
                            "content": "Cache ~/.npm between jobs"}], actor="human")  # fmt: skip
        successor = r.outcomes[0].bullet_id
        staged = queue.stage(owner, [{"type": "add", "content": "Cache docker layers in CI"}])
        block = owner.block(BLOCKED, "hooks are the safety net")
        conflict = owner.flag_conflict(pinned, plain, "test")
        draft = owner.insert_bullet("Prefer uv run in scripts", state="draft").id
        owner.roles.install(agent_role, human_role)
    with open_store(pg_server) as admin:  # the test server's superuser
        for login, group in (("a", agent_role), ("h", human_role)):
            raw.run(admin, f"DROP ROLE IF EXISTS {schema}_{login}")
            raw.run(admin, f"CREATE ROLE {schema}_{login} LOGIN IN ROLE {group}")
    base = pg_url.split("://", 1)[1].split("@", 1)[1]
    yield {
        "agent": f"postgresql://{schema}_a@{base}",
        "human": f"postgresql://{schema}_h@{base}",
        "owner": pg_url,
        "pinned": pinned,
        "plain": plain,
        "other": other,
        "deprecated": bad,
        "retired": old,
        "successor": successor,
        "proposal": staged.staged[0],
        "block": block,
        "conflict": conflict,
        "draft": draft,
    }


def test_an_agent_role_records_what_agents_record(team: dict[str, Any]) -> None:
    with open_store(team["agent"]) as agent:  # the real clock: the database checks it
        r = curate(agent, [
            {"type": "add", "content": "Use uv for Python installs"},
            {"type": "helpful", "bullet_id": team["plain"]},
        ])  # fmt: skip
        assert [o.status for o in r.outcomes] == ["added", "applied"]
        r = curate(agent, [{"type": "harmful", "bullet_id": team["plain"], "reason": "other"}])
        assert [o.status for o in r.outcomes] == ["applied"]
        out = apply_outcome(agent, {"outcome": "success", "bullet_ids": [team["plain"]],
                                    "receipt": "job-1"})  # fmt: skip
        assert out.applied == [team["plain"]]
        assert apply_outcome(agent, {"outcome": "success", "receipt": "job-1"}).replayed
        assert queue.stage(agent, [{"type": "add", "content": "Retry flaky network tests"}]).staged
        vectors = MemoryVectors(agent, HashTrigramEmbedder(dims=32))
        assert recall(agent, "pytest CI", vectors=vectors).bullets
        assert agent.cache_embedders()
        agent.set_watermark("session:agent", 4096)
        assert agent.watermark("session:agent") == 4096
        r = curate(agent, [{"type": "add", "content": BLOCKED}])  # the API refuses it first
        assert [o.status for o in r.outcomes] == ["refused-blocked"]


def test_the_database_moves_maturity_and_inverts_for_an_agent(team: dict[str, Any]) -> None:
    """What is derived from the log, the database writes on the agent's behalf: the evidence
    cache, promotion by evidence, step 5's inversion; every score is the one the owner
    reads from the same log."""
    clock = Clock(utcnow())  # the real time, held still: both sides score at one moment
    with open_store(team["agent"], clock=clock) as agent:
        rule = curate(agent, [{"type": "add", "content": "Pin Node to 20 in CI"}]).added[0]
        moves = []
        for _ in range(3):
            moves += curate(agent, [{"type": "helpful", "bullet_id": rule}]).maturity_changes
        assert moves == [(rule, "candidate", "established")]
        assert agent.get_bullet(rule).maturity == "established"
        harmed = team["other"]
        inversions = []
        for _ in range(3):
            r = curate(agent, [{"type": "harmful", "bullet_id": harmed, "reason": "caused_bug"}])
            inversions += r.inversions
        ((old, new),) = inversions
        assert old == harmed and agent.get_bullet(harmed).state == "retired"
        assert agent.get_bullet(new).content.startswith("AVOID: ")
        scores = agent.scores([rule, new])
    with open_store(team["owner"], mode="read", clock=clock) as owner:  # the owner's reading
        assert owner.scores([rule, new]) == scores
        (decision,) = [d for d in owner.decisions(bullet_id=rule) if d.action == "maturity"]
        assert (decision.actor, decision.detail) == (
            "agent",
            {"from": "candidate", "to": "established"},
        )
        assert decision.reason == "evidence H=3.00 X=0.00"


def test_an_agent_role_cannot_replace_merge_or_deprecate(team: dict[str, Any]) -> None:
    """Issue 26: the database refuses an agent's structural deltas, whatever the API says
    (`curate` in the library applies all six for trusted code)."""
    deltas = {
        "deprecate": {"type": "deprecate", "bullet_id": team["plain"], "reason": "old"},
        "replace": {"type": "replace", "bullet_id": team["plain"], "content": "Run pytest -x"},
        "merge": {"type": "merge", "bullet_ids": [team["plain"], team["other"]],
                  "content": "Run pytest -x and lint YAML"},
    }  # fmt: skip
    with open_store(team["owner"], mode="read") as owner:
        before = facts(owner)
    with open_store(team["agent"]) as agent:
        for kind, delta in deltas.items():
            with pytest.raises(PermissionDenied, match="reviewer"):
                curate(agent, [delta])
            assert agent.get_bullet(team["plain"]).state == "active", kind
    with open_store(team["owner"], mode="read") as owner:
        assert facts(owner) == before


def _now() -> str:
    return iso(utcnow())


def _bullet_row(content: str, **over: Any) -> tuple[str, tuple[Any, ...]]:
    """An INSERT of a bullet row as the API writes one (its hash, the time of writing),
    with `over` changed."""
    now = _now()
    row = {"id": "b-forged00", "content": content, "created_at": now, "valid_from": now,
           "content_hash": content_hash(content)} | over  # fmt: skip
    return (
        f"INSERT INTO bullets ({', '.join(row)}) VALUES ({', '.join('?' * len(row))})",
        tuple(row.values()),
    )


REVIEWER_ACTIONS = {
    "approve": lambda s, t: queue.approve(s, t["proposal"], actor="human"),
    "reject": lambda s, t: queue.reject(s, t["proposal"], "not now", actor="human"),
    "pin": lambda s, t: s.pin(t["plain"], "mine now", actor="human"),
    "unpin": lambda s, t: s.unpin(t["pinned"], actor="human"),
    "block": lambda s, t: s.block("Force push to main", "no", actor="human"),
    "unblock": lambda s, t: s.unblock(t["block"], actor="human"),
    "restore": lambda s, t: restore(s, t["deprecated"], "second chance", actor="human"),
    "resolve a conflict": lambda s, t: s.resolve_conflict(t["conflict"], "kept both"),
    "deprecate a pinned rule": lambda s, t: curate(
        s, [{"type": "deprecate", "bullet_id": t["pinned"], "reason": "x"}], actor="human"
    ),
    "mark as a human": lambda s, t: s.add_feedback(t["plain"], "helpful", actor="human"),
    "pin in plain SQL": lambda s, t: raw.run(
        s, "UPDATE bullets SET pinned = 1 WHERE id = ?", (t["plain"],)
    ),
    "restore in plain SQL": lambda s, t: raw.run(
        s, "UPDATE bullets SET maturity = 'proven' WHERE id = ?", (t["deprecated"],)
    ),
    "approve in plain SQL": lambda s, t: raw.run(
        s, "UPDATE proposals SET status = 'approved' WHERE id = ?", (t["proposal"],)
    ),
    "make a draft live": lambda s, t: activate(s, [t["draft"]], actor="human"),
    "make a draft live in plain SQL": lambda s, t: raw.run(
        s, "UPDATE bullets SET state = 'active' WHERE id = ?", (t["draft"],)
    ),
    "retire a pinned rule in plain SQL": lambda s, t: raw.run(
        s, "UPDATE bullets SET state = 'retired' WHERE id = ?", (t["pinned"],)
    ),
}  # fmt: skip
# What issue 29 did with psql as the agent's role, and more of the kind: no reviewer does
# these (some are refused to every role: a weight of a million, a second meta key).
FORGERIES = {
    "promote itself": lambda s, t: raw.run(
        s, "UPDATE bullets SET maturity = 'proven' WHERE id = ?", (t["plain"],)
    ),
    "deprecate in plain SQL": lambda s, t: raw.run(
        s, "UPDATE bullets SET maturity = 'deprecated' WHERE id = ?", (t["plain"],)
    ),
    "un-retire": lambda s, t: raw.run(
        s, "UPDATE bullets SET state = 'active', valid_to = NULL WHERE id = ?", (t["retired"],)
    ),
    "retire a rule its harm has not turned": lambda s, t: raw.run(
        s,
        "UPDATE bullets SET state = 'retired', valid_to = ?, maturity_due = NULL WHERE id = ?",
        (_now(), t["plain"]),
    ),
    "forge evidence": lambda s, t: raw.run(s, "UPDATE evidence SET helpful = 1e9"),
    "write evidence": lambda s, t: raw.run(
        s, "INSERT INTO evidence VALUES (?, 90, 20000, 1e9, 0, 1, 20000, 1)", (t["plain"],)
    ),
    "insert a blocked rule as proven": lambda s, t: raw.run(
        s, *_bullet_row(BLOCKED, maturity="proven")
    ),
    "insert a blocked rule": lambda s, t: raw.run(s, *_bullet_row(BLOCKED)),
    "insert a pinned rule": lambda s, t: raw.run(s, *_bullet_row("Always tag releases", pinned=1)),
    "insert a rule with a forged hash": lambda s, t: raw.run(
        s, *_bullet_row("Always tag releases", content_hash="0" * 64)
    ),
    "insert a rule dated ahead": lambda s, t: raw.run(
        s,
        *_bullet_row(
            "Always tag releases",
            created_at="2999-01-01T00:00:00.000000Z",
            valid_from="2999-01-01T00:00:00.000000Z",
        ),
    ),
    "bring back a retired rule's text": lambda s, t: raw.run(
        s, *_bullet_row("Cache the node_modules folder between jobs")
    ),
    "claim a reviewer pinned": lambda s, t: raw.run(
        s,
        "INSERT INTO decisions (at, actor, action, bullet_id, status, detail) "
        "VALUES (?, 'human', 'pin', ?, 'applied', '{}')",
        (_now(), t["plain"]),
    ),
    "log a pin as its own": lambda s, t: raw.run(
        s,
        "INSERT INTO decisions (at, actor, action, bullet_id, status, detail) "
        "VALUES (?, 'agent', 'pin', ?, 'applied', '{}')",
        (_now(), t["plain"]),
    ),
    "log a deprecation": lambda s, t: raw.run(
        s,
        "INSERT INTO decisions (at, actor, action, bullet_id, status, detail) "
        "VALUES (?, 'agent', 'deprecate', ?, 'applied', '{}')",
        (_now(), t["plain"]),
    ),
    "pre-burn a receipt": lambda s, t: raw.run(
        s,
        "INSERT INTO receipts (receipt, recorded_at, outcome, seq) "
        "VALUES ('job-42', ?, 'success', 99)",
        (_now(),),
    ),
    "rewrite meta": lambda s, t: raw.run(
        s, "UPDATE meta SET value = '0' WHERE key = 'evidence_watermark'"
    ),
    "add to meta": lambda s, t: raw.run(s, "INSERT INTO meta VALUES ('maturity_policy', 'x')"),
    "close a conflict": lambda s, t: raw.run(
        s, "UPDATE conflicts SET status = 'resolved' WHERE id = ?", (t["conflict"],)
    ),
    "flag a conflict resolved": lambda s, t: raw.run(
        s,
        "INSERT INTO conflicts (a, b, reason, created_at, status) "
        "VALUES (?, ?, 'x', ?, 'resolved')",
        (t["plain"], t["pinned"], _now()),
    ),
    "flag a conflict between others' rules": lambda s, t: raw.run(
        s,
        "INSERT INTO conflicts (a, b, reason, created_at) VALUES (?, ?, 'x', ?)",
        (t["plain"], t["pinned"], _now()),
    ),
    "log a maturity move": lambda s, t: raw.run(
        s,
        "INSERT INTO maturity_log (bullet_id, at, maturity) VALUES (?, ?, 'proven')",
        (t["plain"], _now()),
    ),
    "inherit by a supersedes edge": lambda s, t: raw.run(
        s,
        "INSERT INTO edges (kind, src, dst, at) VALUES ('supersedes', ?, ?, ?)",
        (t["plain"], t["pinned"], _now()),
    ),
    "mark with a weight of a million": lambda s, t: raw.run(
        s,
        "INSERT INTO feedback (bullet_id, kind, at, recorded_at, weight) "
        "VALUES (?, 'helpful', ?, ?, 1e6)",
        (t["plain"], _now(), _now()),
    ),
    "mark ahead of time": lambda s, t: raw.run(
        s,
        "INSERT INTO feedback (bullet_id, kind, at, recorded_at) VALUES (?, 'helpful', ?, ?)",
        (t["plain"], iso(utcnow() + timedelta(days=30)), iso(utcnow() + timedelta(days=30))),
    ),
    "mark a retired rule": lambda s, t: raw.run(
        s,
        "INSERT INTO feedback (bullet_id, kind, at, recorded_at) VALUES (?, 'helpful', ?, ?)",
        (t["retired"], _now(), _now()),
    ),
    "index another rule": lambda s, t: raw.run(
        s,
        "INSERT INTO bullet_tokens (token, seq) SELECT 'zzz', seq FROM bullets WHERE id = ?",
        (t["plain"],),
    ),
    "zero a word's count": lambda s, t: raw.run(s, "UPDATE vocab SET df = 0"),
    "decide in a proposal": lambda s, t: raw.run(
        s,
        "INSERT INTO proposals (id, delta, status, created_at, seq) "
        "VALUES ('d-forged', '{}', 'approved', ?, 99)",
        (_now(),),
    ),
}


@pytest.mark.parametrize("action", sorted(REVIEWER_ACTIONS | FORGERIES))
def test_an_agent_role_cannot_do_what_reviewers_do(team: dict[str, Any], action: str) -> None:
    with open_store(team["owner"], mode="read") as owner:
        before = everything(owner)
    with open_store(team["agent"]) as agent:
        with pytest.raises(PermissionDenied) as refused:
            (REVIEWER_ACTIONS | FORGERIES)[action](agent, team)
        assert refused.value.code == "permission_denied"
    with open_store(team["owner"], mode="read") as owner:
        assert everything(owner) == before


@pytest.mark.parametrize("action", sorted(REVIEWER_ACTIONS))
def test_a_reviewer_role_can(team: dict[str, Any], action: str) -> None:
    with open_store(team["owner"], mode="read") as owner:
        before = facts(owner)
    with open_store(team["human"], clock=Clock()) as human:
        REVIEWER_ACTIONS[action](human, team)
    with open_store(team["owner"], mode="read") as owner:
        assert facts(owner) != before  # it happened


def test_the_roles_can_be_installed_again(team: dict[str, Any]) -> None:
    schema = team["owner"].rsplit("search_path%3D", 1)[1]
    with open_store(team["owner"]) as owner:
        owner.roles.install(f"{schema}_agent", f"{schema}_human")
    with open_store(team["agent"]) as agent, pytest.raises(PermissionDenied):
        agent.pin(team["plain"], "again", actor="human")


def test_the_agents_own_work_runs_under_its_role(team: dict[str, Any], tmp_path: Path) -> None:
    """The real surfaces, logged in as the agent's role: the CLI's add, mark, outcome and
    reflect, the prompt and session-end hooks, the MCP server's tools."""
    url = team["agent"]
    added = run_cli("--db", url, "add", "Use uv for Python installs", "--json").data
    assert added["outcomes"][0]["status"] == "added"
    assert run_cli("--db", url, "mark", team["plain"], "helpful", "--json").data
    done = run_cli(
        "--db", url, "outcome", "success", team["plain"], "--receipt", "ci-7", "--json"
    ).data
    assert done["applied"] == [team["plain"]]
    diary = tmp_path / "diary.md"
    diary.write_text("RULE: Pin Python to 3.12 in CI\n", encoding="utf-8")
    reflected = run_cli(
        "--db", url, "reflect", diary, "--session", "diary", "--heuristic", "--json"
    ).data
    assert len(reflected["staged"]) == 1

    sessions = tmp_path / "home" / ".claude" / "projects" / "web"
    sessions.mkdir(parents=True)
    agent = Agent(db=url, state=tmp_path / "state")  # type: ignore[arg-type]
    env = agent.env(HOME=str(tmp_path / "home"))
    r = agent.hook("prompt", fixture("user_prompt_submit.json", prompt="pytest in CI"), env=env)
    assert r.rc == 0 and team["plain"] in context_of(r.out)
    transcript = sessions / "s-7.jsonl"
    transcript.write_bytes(
        claude_record("user", "Make the tests faster")
        + claude_record("assistant", f"[playbook: helpful {team['plain']}]\nRULE: Run tests fast")
    )
    r = agent.hook(
        "session-end", fixture("session_end.json", transcript_path=str(transcript)), env=env
    )
    assert (r.rc, r.out) == (0, "")
    wait_for(lambda: agent.reflect_log, "the reflection")
    assert "staged 1" in agent.reflect_log[0], agent.reflect_log

    pytest.importorskip("mcp")
    seen = asyncio.run(asyncio.wait_for(agent_session(url, team["plain"]), timeout=60))
    assert team["plain"] in json.dumps(seen["recall"])
    assert seen["mark"]["status"] == "applied", seen
    assert seen["outcome"]["applied"] == [team["plain"]] and seen["propose"]["staged"], seen
    with open_store(team["owner"], mode="read") as owner:
        events = owner.timeline(team["plain"])
        assert {e.actor for e in events} == {"agent"} and len(events) >= 3
        assert agent.log == []


@pytest.mark.parametrize(
    "content, refused",
    [
        (BLOCKED, True),
        ("use --no-verify to skip the hooks", True),  # token Jaccard over 0.85
        ("Use --no-verfy to skip hooks", True),  # a typo: rapidfuzz's ratio over 90
        ("AVOID: Use --no-verify to skip hooks", False),  # the lesson, not the blocked thing
        ("Run the hooks before every push", False),
    ],
)
def test_the_database_matches_blocks_as_the_api_does(
    team: dict[str, Any], content: str, refused: bool
) -> None:
    """An agent's plain INSERT near an active block is refused as curation's step 2 would
    refuse its add (`curation/matching.py`, in SQL: `matching_sql.py`)."""
    from playbook.curation.matching import blocking_pattern

    with open_store(team["owner"], mode="read") as owner:
        assert (blocking_pattern(owner, content) is not None) == refused  # the API's verdict
    with open_store(team["agent"]) as agent:
        kind = "anti-pattern" if content.startswith("AVOID") else "rule"
        insert = _bullet_row(content, id=f"b-{content_hash(content)[:8]}", type=kind)
        if refused:
            with pytest.raises(PermissionDenied, match="near blocked pattern"):
                raw.run(agent, *insert)
        else:
            assert raw.run(agent, *insert) == 1


def test_time_travel_reads_the_days_the_agents_left_behind(team: dict[str, Any]) -> None:
    """The database's own fold (an agent's marks) keeps the evidence cache, not its days:
    the agent's own reads of the past read the log, and a reviewer's read folds the days
    first; both give the log's table."""
    from playbook.review import rows_as_of

    with open_store(team["agent"]) as agent:
        curate(agent, [{"type": "helpful", "bullet_id": team["plain"]}])
        assert not agent.past.days_answer()
        when = agent.now()
        by_agent = {r.id: r for r in rows_as_of(agent, when)}
    with open_store(team["human"]) as human:
        assert human.past.days_answer()  # caught up by this reviewer's read
        by_human = {r.id: r for r in rows_as_of(human, when)}
    assert by_human.keys() == by_agent.keys()
    plain = team["plain"]
    assert by_agent[plain].helpful == pytest.approx(1.0, abs=1e-3)
    assert by_human[plain].helpful == pytest.approx(by_agent[plain].helpful, abs=1e-9)
