"""Curation as an agent (SPEC §5 "Who may apply what"): `curate_as_agent` applies an
agent's evidence and new candidates and stages its replace, merge and deprecate for a
person; the command line does that under an agent's login to a team's PostgreSQL
playbook, and `curate` itself still applies all six."""

from __future__ import annotations

import asyncio
import json
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from playbook.curation import curate
from playbook.review import queue
from playbook.review.agent import agent_login, curate_as_agent
from playbook.store import PlaybookStore, open_store
from playbook.store import testing as raw

from .helpers import Clock, dump
from .helpers.cli import clean_env, run_cli


def seeded(store: PlaybookStore) -> tuple[str, str, str]:
    r = curate(store, [
        {"type": "add", "content": "Pin npm to 11 in release jobs"},
        {"type": "add", "content": "Run pytest with -x in CI"},
        {"type": "add", "content": "Sleep before retrying deploys"},
    ])  # fmt: skip
    a, b, c = r.added
    return a, b, c


def batch(a: str, b: str, c: str) -> list[dict[str, Any]]:
    return [
        {"type": "add", "content": "Cache pip downloads in CI"},
        {"type": "replace", "bullet_id": a, "content": "Pin npm to 11.4 in release jobs"},
        {"type": "helpful", "bullet_id": b},
        {"type": "merge", "bullet_ids": [a, b], "content": "Pin npm and run pytest -x"},
        {"type": "deprecate", "bullet_id": c, "reason": "retries hide flakes"},
        {"type": "harmful", "bullet_id": c, "reason": "wasted_time"},
        {"type": "deprecate", "bullet_id": "b-nope", "reason": "gone"},
        {"type": "approve", "bullet_id": a},
    ]


def test_an_agent_applies_evidence_and_candidates_and_stages_the_rest(
    store: PlaybookStore,
) -> None:
    a, b, c = seeded(store)
    prov = {"session_ref": "session:agent-7", "byte_offset": 99}

    r = curate_as_agent(store, batch(a, b, c), prov, origin="mcp")

    assert [(o.index, o.status) for o in r.outcomes] == [
        (0, "added"),
        (1, "staged"),
        (2, "applied"),
        (3, "staged"),
        (4, "staged"),
        (5, "applied"),
        (6, "rejected-invalid"),
        (7, "rejected-invalid"),
    ]
    assert "no bullet with id 'b-nope'" in (r.outcomes[6].reason or "")
    assert "unknown delta type" in (r.outcomes[7].reason or "")
    # Nothing structural happened to the rules: all three live, none deprecated.
    states = {x.id: (x.state, x.maturity) for x in store.bullets(state="all")}
    assert states[a][0] != "retired" and states[b][0] != "retired"
    assert states[c][1] != "deprecated"
    assert [e.kind for e in store.timeline(b)] == ["helpful"]
    assert [(e.kind, e.reason, e.actor) for e in store.timeline(c)] == [
        ("harmful", "wasted_time", "agent")
    ]
    # The three structural deltas wait for a person, with the session's provenance.
    pending = {p.id: p for p in queue.pending(store, similar=False)}
    assert set(pending) == {r.proposals[1], r.proposals[3], r.proposals[4]}
    for index, kind in ((1, "replace"), (3, "merge"), (4, "deprecate")):
        p = pending[r.proposals[index]]
        assert p.delta["type"] == kind and p.origin == "mcp"
        assert (p.provenance.session_ref, p.provenance.byte_offset) == ("session:agent-7", 99)
    assert (r.applied_count, r.staged_count, r.nothing_done) == (3, 3, False)
    data = r.to_dict()
    assert data["staged"] == [{"index": i, "proposal_id": r.proposals[i]} for i in (1, 3, 4)]
    assert data["outcomes"][1]["proposal_id"] == r.proposals[1]

    # Proposed again: the queue holds them already, nothing is staged twice.
    again = curate_as_agent(store, batch(a, b, c)[1:2], prov, origin="mcp")
    assert [o.status for o in again.outcomes] == ["already-proposed"]
    assert len(queue.pending(store, similar=False)) == 3


def test_curate_itself_still_applies_all_six(store: PlaybookStore) -> None:
    c = seeded(store)[2]
    r = curate(store, [{"type": "deprecate", "bullet_id": c, "reason": "flaky"}])
    assert [o.status for o in r.outcomes] == ["applied"]
    assert store.get_bullet(c).maturity == "deprecated"  # type: ignore[union-attr]
    assert not queue.pending(store, similar=False)


def test_a_receipt_makes_the_batch_idempotent_and_is_spent_only_by_work(
    store: PlaybookStore,
) -> None:
    b = seeded(store)[1]
    nothing = curate_as_agent(store, [{"type": "helpful", "bullet_id": "b-nope"}], receipt="r-1")
    assert nothing.nothing_done and not store.has_receipt("r-1")  # not spent on a failure

    delta = [{"type": "helpful", "bullet_id": b}]
    first = curate_as_agent(store, delta, receipt="r-1")
    assert first.applied_count == 1 and store.has_receipt("r-1")
    before = dump(store)
    retried = curate_as_agent(store, delta, receipt="r-1")
    assert retried.replayed and not retried.outcomes and not retried.nothing_done
    assert dump(store) == before
    assert [e.kind for e in store.timeline(b)] == ["helpful"]
    for bad, why in (("  ", "must not be blank"), ("r" * 129, "receipt is 129 characters")):
        refused = curate_as_agent(store, delta, receipt=bad)
        assert refused.nothing_done and why in (refused.outcomes[0].reason or "")
    assert dump(store) == before


def test_a_whole_batch_refused_writes_nothing(store: PlaybookStore) -> None:
    seeded(store)
    before = dump(store)
    r = curate_as_agent(store, {"type": "add", "content": "not a list"})  # type: ignore[arg-type]
    assert [(o.index, o.status) for o in r.outcomes] == [(0, "rejected-invalid")]
    assert r.nothing_done and dump(store) == before


def test_a_file_or_the_schema_owner_is_no_agent_login(store: PlaybookStore) -> None:
    assert agent_login(store) is False


# ------------------------------------------------------------- a team's PostgreSQL playbook


@pytest.fixture
def logins(pg_url: str, pg_server: str) -> Iterator[dict[str, str]]:
    """A seeded team playbook with the two roles (named per schema: roles are global to
    the server) and a login in each."""
    schema = pg_url.rsplit("search_path%3D", 1)[1]
    with open_store(pg_url, clock=Clock()) as owner:
        ids = seeded(owner)
        owner.roles.install(f"{schema}_agent", f"{schema}_human")
    with open_store(pg_server) as admin:
        for login, group in (("a", "agent"), ("h", "human")):
            raw.run(admin, f"DROP ROLE IF EXISTS {schema}_{login}")
            raw.run(admin, f"CREATE ROLE {schema}_{login} LOGIN IN ROLE {schema}_{group}")
    base = pg_url.split("://", 1)[1].split("@", 1)[1]
    yield {
        "owner": pg_url,
        "agent": f"postgresql://{schema}_a@{base}",
        "human": f"postgresql://{schema}_h@{base}",
        **dict(zip("abc", ids, strict=True)),
    }


@pytest.mark.postgres
def test_postgresql_tells_an_agent_login_from_a_reviewer_and_the_owner(
    logins: dict[str, str],
) -> None:
    seen = {}
    for who in ("owner", "agent", "human"):
        with open_store(logins[who], mode="read") as store:
            seen[who] = agent_login(store)
    assert seen == {"owner": False, "agent": True, "human": False}


@pytest.mark.postgres
def test_the_cli_under_an_agent_login_stages_replace_merge_and_deprecate(
    logins: dict[str, str],
) -> None:
    a, b, c = logins["a"], logins["b"], logins["c"]
    deltas = json.dumps(batch(a, b, c)[:6]).encode()
    r = run_cli("--db", logins["agent"], "curate", "-", "--session", "s-1", stdin=deltas)
    assert r.rc == 0, r.err
    lines = r.out.splitlines()
    assert lines[0].startswith("[0] added ")
    assert lines[1].startswith("[1] staged d-") and f"(replace {a})" in lines[1]
    assert "waits for a person's review" in lines[1]
    assert lines[4].startswith("[4] staged d-") and f"(deprecate {c})" in lines[4]
    assert "this login is an agent's" in r.out
    assert r.out.rstrip().endswith("6 deltas: 3 applied, 3 staged for a person's review")

    with open_store(logins["owner"], mode="read") as owner:
        pending = queue.pending(owner, similar=False)
        assert sorted(p.delta["type"] for p in pending) == ["deprecate", "merge", "replace"]
        assert {(p.origin, p.provenance.session_ref) for p in pending} == {("cli", "s-1")}
        assert owner.get_bullet(c).maturity != "deprecated"  # type: ignore[union-attr]

    # --json: every delta's outcome, the staged ones with their proposal ids.
    again = json.dumps([{"type": "deprecate", "bullet_id": a, "reason": "old"}]).encode()
    r = run_cli("--db", logins["agent"], "curate", "-", "--json", stdin=again)
    assert r.rc == 0, r.err
    (o,) = r.data["outcomes"]
    assert o["status"] == "staged" and o["proposal_id"].startswith("d-")


@pytest.mark.postgres
def test_the_cli_under_a_reviewer_login_applies_all_six(logins: dict[str, str]) -> None:
    c = logins["c"]
    deltas = json.dumps([{"type": "deprecate", "bullet_id": c, "reason": "flaky"}]).encode()
    r = run_cli("--db", logins["human"], "curate", "-", stdin=deltas, env=clean_env())
    assert r.rc == 0, r.err
    assert r.out.startswith("[0] applied ")
    with open_store(logins["owner"], mode="read") as owner:
        assert owner.get_bullet(c).maturity == "deprecated"  # type: ignore[union-attr]
        assert not queue.pending(owner, similar=False)


@pytest.mark.postgres
def test_reflect_apply_under_an_agent_login_stages_what_it_may_not_apply(
    logins: dict[str, str], tmp_path: Path
) -> None:
    c = logins["c"]
    model = tmp_path / "model.py"  # a reflector that proposes an add and a deprecate
    deltas = [
        {"type": "add", "content": "Retry deploys with backoff, never sleep"},
        {"type": "deprecate", "bullet_id": c, "reason": "sleeping hides flakes"},
    ]
    model.write_text(f"import sys; sys.stdin.read(); print({json.dumps(json.dumps(deltas))})\n")
    notes = tmp_path / "notes.md"
    notes.write_text("We slept before retrying deploys and it hid a flaky health check.\n")
    r = run_cli(
        "--db", logins["agent"], "reflect", notes, "--session", "s-9", "--apply",
        "--reflector", f"{sys.executable} {model}",
    )  # fmt: skip
    assert r.rc == 0, r.err
    assert "added b-" in r.out
    assert "this login is an agent's: 1 proposal (replace, merge, deprecate) staged" in r.out
    with open_store(logins["owner"], mode="read") as owner:
        (p,) = queue.pending(owner, similar=False)
        assert p.delta["type"] == "deprecate" and p.provenance.session_ref == "s-9"
        assert owner.get_bullet(c).maturity != "deprecated"  # type: ignore[union-attr]


@pytest.mark.postgres
def test_the_mcp_server_under_an_agent_login(logins: dict[str, str]) -> None:
    pytest.importorskip("mcp")
    from mcp import ClientSession, StdioServerParameters
    from mcp.client.stdio import stdio_client

    from .helpers.cli import ENTRY

    a, b = logins["a"], logins["b"]
    params = StdioServerParameters(
        command=sys.executable, args=["-c", ENTRY, "--db", logins["agent"], "mcp"],
        env=clean_env(),
    )  # fmt: skip

    async def run() -> list[Any]:
        async with stdio_client(params) as (read, write), ClientSession(read, write) as s:
            await s.initialize()
            return [
                await s.call_tool("mark_feedback", {"bullet_id": b, "kind": "helpful"}),
                await s.call_tool(
                    "propose_deltas",
                    {"deltas": [{"type": "replace", "bullet_id": a, "content": "Pin npm 11.4"}]},
                ),
                await s.call_tool("playbook_stats", {}),
            ]

    results = asyncio.run(asyncio.wait_for(run(), timeout=90))
    assert [getattr(r, "is_error", getattr(r, "isError", None)) for r in results] == [
        False, False, False,
    ]  # fmt: skip
    with open_store(logins["owner"], mode="read") as owner:
        assert [(e.kind, e.actor) for e in owner.timeline(b)] == [("helpful", "agent")]
        (p,) = queue.pending(owner, similar=False)
        assert (p.delta["type"], p.origin) == ("replace", "mcp")
