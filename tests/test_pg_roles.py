"""Agents cannot approve, even at the database (`playbook pg roles`).

Real connections as two login roles, one in the agent group and one in the reviewers':
through the API, the agent records everything an agent records (rules, feedback,
outcomes with receipts, proposals, embeddings, watermarks), and every reviewer's action it
attempts, even claiming `actor="human"` (which the API alone would believe), is refused
inside PostgreSQL and changes nothing; the reviewer's role does the same actions.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from playbook import queue
from playbook.curation import curate
from playbook.errors import PermissionDenied
from playbook.outcomes import apply_outcome
from playbook.retrieval import recall
from playbook.review.actions import activate, restore
from playbook.store import PlaybookStore, open_store
from playbook.store import testing as raw
from playbook.store.copying import TABLES
from playbook.store.postgres.roles import install_roles
from playbook.vectors import HashTrigramEmbedder, MemoryVectors

from .helpers import Clock

pytestmark = pytest.mark.postgres


def facts(store: PlaybookStore) -> dict[str, list[tuple[Any, ...]]]:
    return {
        t: raw.rows(store, f"SELECT {', '.join(c)} FROM {t} ORDER BY {', '.join(k)}")
        for t, (c, k) in TABLES.items()
        if t not in ("evidence", "meta", "cache_blob")  # caches a read may refresh
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
        ])  # fmt: skip
        pinned, plain, bad = r.added
        owner.pin(pinned, "team policy")
        curate(owner, [{"type": "deprecate", "bullet_id": bad, "reason": "flaky"}], actor="human")
        staged = queue.stage(owner, [{"type": "add", "content": "Cache docker layers in CI"}])
        block = owner.block("Use --no-verify to skip hooks", "hooks are the safety net")
        conflict = owner.flag_conflict(pinned, plain, "test")
        draft = owner.insert_bullet("Prefer uv run in scripts", state="draft").id
        install_roles(owner, agent_role, human_role)
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
        "deprecated": bad,
        "proposal": staged.staged[0],
        "block": block,
        "conflict": conflict,
        "draft": draft,
    }


def test_an_agent_role_records_what_agents_record(team: dict[str, Any]) -> None:
    with open_store(team["agent"], clock=Clock()) as agent:
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
}


@pytest.mark.parametrize("action", sorted(REVIEWER_ACTIONS))
def test_an_agent_role_cannot_do_what_reviewers_do(team: dict[str, Any], action: str) -> None:
    with open_store(team["owner"], mode="read") as owner:
        before = facts(owner)
    with open_store(team["agent"], clock=Clock()) as agent:
        with pytest.raises(PermissionDenied) as refused:
            REVIEWER_ACTIONS[action](agent, team)
        assert refused.value.code == "permission_denied"
    with open_store(team["owner"], mode="read") as owner:
        assert facts(owner) == before


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
        install_roles(owner, f"{schema}_agent", f"{schema}_human")
    with open_store(team["agent"], clock=Clock()) as agent, pytest.raises(PermissionDenied):
        agent.pin(team["plain"], "again", actor="human")
