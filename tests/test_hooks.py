"""`playbook hook prompt | session-start` as Claude Code runs them: hook JSON on stdin (the
fixtures follow its documented input), stdout checked exactly; and every way a hook can
fail, each ending in exit 0, nothing printed, one line in the hook log."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from playbook.curation import curate

from .helpers import store_at
from .helpers.hooks import Agent, context_of, fixture

HEAD = (
    "Playbook rules for this prompt. Cite the ones you use: [playbook: helpful b-…], or "
    "[playbook: harmful b-… reason] when one misled you."
)


@pytest.fixture
def web(tmp_path: Path) -> Path:
    """A repository checkout named "web", the agent working in a folder inside it."""
    inner = tmp_path / "web" / "services" / "ci"
    inner.mkdir(parents=True)
    (tmp_path / "web" / ".git").mkdir()
    return inner


@pytest.fixture
def agent(tmp_path: Path) -> Agent:
    return Agent(db=tmp_path / "state.sqlite3", state=tmp_path / "state")


@pytest.fixture
def ids(agent: Agent) -> dict[str, str]:
    """A rule (established by three helpful votes), an anti-pattern (one vote), a deprecated
    rule, all about the release job; and rules that must not surface."""
    with store_at(agent.db) as store:
        rule = store.insert_bullet("Pin npm to 11 in release jobs", tags=["ci"]).id
        avoid = store.insert_bullet("AVOID: running npm ci as root", type="anti-pattern").id
        old = store.insert_bullet("Use yarn 1 for the release job", maturity="deprecated").id
        mine = store.insert_bullet(
            "Terraform plans of web run in the deploy stage", scope="workspace", scope_key="web"
        ).id
        store.insert_bullet(
            "Terraform plans of api run nightly", scope="workspace", scope_key="api"
        )
        store.insert_bullet("Prefer ruff over flake8")
        for _ in range(3):
            curate(store, [{"type": "helpful", "bullet_id": rule}])
        curate(store, [{"type": "helpful", "bullet_id": avoid}])
    return {"rule": rule, "avoid": avoid, "old": old, "mine": mine}


def prompt(web: Path, text: str, session: str = "s-1") -> dict[str, object]:
    return fixture("user_prompt_submit.json", cwd=str(web), prompt=text, session_id=session)


RELEASE = "The release job fails on npm ci, can you fix it?"


def expected(ids: dict[str, str], *keys: str) -> str:
    lines = {
        "rule": ("Rules:", f"- [{ids['rule']}] Pin npm to 11 in release jobs (established)"),
        "avoid": ("Avoid:", f"- [{ids['avoid']}] running npm ci as root (candidate)"),
        "old": (
            "Deprecated, do not follow any more:",
            f"- [{ids['old']}] Use yarn 1 for the release job",
        ),
    }
    return "\n".join([HEAD, *(line for k in keys for line in lines[k])])


# ------------------------------------------------------------------ prompt


def test_prompt_gives_rules_anti_patterns_and_deprecated_with_ids(
    agent: Agent, ids: dict[str, str], web: Path
) -> None:
    r = agent.hook("prompt", prompt(web, RELEASE))
    assert r.rc == 0 and r.err == ""
    assert r.out.endswith("\n") and r.out.count("\n") == 1
    assert json.loads(r.out) == {
        "hookSpecificOutput": {
            "hookEventName": "UserPromptSubmit",
            "additionalContext": expected(ids, "rule", "avoid", "old"),
        }
    }
    assert agent.log == []


def test_prompt_scope_is_the_repository_of_cwd(
    agent: Agent, ids: dict[str, str], web: Path, tmp_path: Path
) -> None:
    r = agent.hook("prompt", prompt(web, "terraform plans?"))
    assert context_of(r.out) == "\n".join(
        [
            HEAD,
            "Rules:",
            f"- [{ids['mine']}] Terraform plans of web run in the deploy stage (candidate)",
        ]
    )
    elsewhere = tmp_path / "api"
    (elsewhere / ".git").mkdir(parents=True)
    other = agent.hook("prompt", prompt(elsewhere, "terraform plans?", "s-2"))
    assert "Terraform plans of api run nightly" in context_of(other.out)
    assert "of web" not in context_of(other.out)


def test_nothing_relevant_prints_nothing(agent: Agent, ids: dict[str, str], web: Path) -> None:
    r = agent.hook("prompt", prompt(web, "Write a haiku about autumn leaves"))
    assert (r.rc, r.out, r.err) == (0, "", "")
    assert agent.log == []


def test_the_budget_cuts_the_list_at_the_first_item_that_does_not_fit(
    agent: Agent, ids: dict[str, str], web: Path, tmp_path: Path
) -> None:
    two = expected(ids, "rule", "avoid")
    policy = tmp_path / "playbook.toml"
    policy.write_text(f"[policy]\nhook_context_chars = {len(two)}\n", encoding="utf-8")
    r = agent.hook("prompt", prompt(web, RELEASE), "--policy", str(policy))
    assert context_of(r.out) == two  # the deprecated warning did not fit
    # One character less and the anti-pattern does not fit either.
    policy.write_text(f"[policy]\nhook_context_chars = {len(two) - 1}\n", encoding="utf-8")
    r = agent.hook("prompt", prompt(web, RELEASE, "s-2"), "--policy", str(policy))
    assert context_of(r.out) == expected(ids, "rule")
    # Too small for anything: nothing at all.
    policy.write_text("[policy]\nhook_context_chars = 50\n", encoding="utf-8")
    r = agent.hook("prompt", prompt(web, RELEASE, "s-3"), "--policy", str(policy))
    assert (r.rc, r.out) == (0, "")


def test_a_rule_is_not_repeated_within_a_session(
    agent: Agent, ids: dict[str, str], web: Path
) -> None:
    first = agent.hook("prompt", prompt(web, RELEASE))
    assert context_of(first.out) == expected(ids, "rule", "avoid", "old")
    again = agent.hook("prompt", prompt(web, RELEASE))
    assert (again.rc, again.out) == (0, "")
    with store_at(agent.db) as store:
        new = store.insert_bullet("Cache the npm folder in the release job").id
    third = agent.hook("prompt", prompt(web, RELEASE))
    assert context_of(third.out) == "\n".join(
        [HEAD, "Rules:", f"- [{new}] Cache the npm folder in the release job (candidate)"]
    )
    other = agent.hook("prompt", prompt(web, RELEASE, session="s-other"))
    assert ids["rule"] in context_of(other.out)  # another session is told again
    assert agent.log == []


# ------------------------------------------------------------------ session start


def test_session_start_gives_the_proven_rules_of_the_workspace(
    agent: Agent, ids: dict[str, str], web: Path
) -> None:
    with store_at(agent.db) as store:
        proven = store.insert_bullet("Run the test suite before pushing", maturity="proven").id
        ours = store.insert_bullet(
            "Deploy web from the main branch only",
            maturity="proven",
            scope="workspace",
            scope_key="web",
        ).id
        store.insert_bullet(
            "Deploy api on Fridays", maturity="proven", scope="workspace", scope_key="api"
        )
        for bid, votes in ((proven, 12), (ours, 11)):
            for _ in range(votes):
                curate(store, [{"type": "helpful", "bullet_id": bid}])
    start = fixture("session_start.json", cwd=str(web), session_id="s-start")
    r = agent.hook("session-start", start)
    assert r.rc == 0
    protocol, _, rules = context_of(r.out, "SessionStart").partition("\nProven rules")
    assert rules == "\n".join(
        [
            " for web:",
            "Rules:",
            f"- [{proven}] Run the test suite before pushing (proven)",
            f"- [{ours}] Deploy web from the main branch only (proven)",
        ]
    )
    # The protocol comes first: how to cite, how to write a lesson down, how to recall
    # (from this playbook, named as the hook was given it).
    assert "[playbook: helpful <id>]" in protocol and "starts with RULE:" in protocol
    assert f"--db {agent.db} recall" in protocol
    # Given at the start, so not repeated by a prompt about it in the same session...
    repeat = agent.hook("prompt", prompt(web, "run the test suite before pushing", "s-start"))
    assert proven not in repeat.out
    # ...until the context that held it is compacted away: then the start gives it again.
    compacted = agent.hook("session-start", {**start, "source": "compact"})
    assert proven in context_of(compacted.out, "SessionStart")
    resumed = agent.hook("session-start", {**start, "source": "resume"})
    assert context_of(resumed.out, "SessionStart") == protocol  # no rule is new since


# ------------------------------------------------------------------ failures


def assert_failed_quietly(agent: Agent, r: object, before: int, needle: str) -> None:
    assert (r.rc, r.out) == (0, ""), r  # type: ignore[attr-defined]
    new = agent.log[before:]
    assert len(new) == 1, new
    assert needle in new[0], new[0]


def test_a_missing_playbook_is_one_log_line_and_is_not_created(
    agent: Agent, web: Path, tmp_path: Path
) -> None:
    missing = tmp_path / "nowhere" / "state.sqlite3"
    r = agent.hook("prompt", prompt(web, RELEASE), db=missing)
    assert_failed_quietly(agent, r, 0, f"no playbook at {missing}")
    assert not missing.exists() and not missing.parent.exists()


@pytest.mark.parametrize(
    ("payload", "needle"),
    [
        (b"this is not json", "not JSON"),
        (b'["a", "list"]', "JSON list, not an object"),
        (b'{"prompt": "npm", "cwd": "/tmp"}', "no session_id"),
        (b'{"session_id": "s", "prompt": 42}', "prompt is a int"),
        (b'{"session_id": "s"}', "no prompt"),
        (b"", "not an object"),
        (b"[" * 100_000, "not JSON"),
    ],
)
def test_malformed_hook_input_is_one_log_line(
    agent: Agent, ids: dict[str, str], payload: bytes, needle: str
) -> None:
    r = agent.hook("prompt", payload)
    assert_failed_quietly(agent, r, 0, needle)
    assert "Traceback" not in r.err


def test_an_unknown_event_is_one_log_line(agent: Agent, ids: dict[str, str], web: Path) -> None:
    r = agent.hook("pre-tool-use", prompt(web, RELEASE))
    assert_failed_quietly(agent, r, 0, "unknown hook event 'pre-tool-use'")


def test_a_locked_playbook_gives_up_at_the_deadline(
    agent: Agent, ids: dict[str, str], web: Path
) -> None:
    holder = subprocess.Popen(
        [
            sys.executable,
            "-c",
            "import sqlite3, sys\n"
            "c = sqlite3.connect(sys.argv[1], isolation_level=None)\n"
            "c.execute('PRAGMA locking_mode=EXCLUSIVE')\n"
            "c.execute('BEGIN EXCLUSIVE')\n"
            "c.execute('CREATE TABLE hold_the_lock (x)')\n"
            "print('locked', flush=True)\n"
            "sys.stdin.read()\n",
            str(agent.db),
        ],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert holder.stdout is not None and holder.stdout.readline() == "locked\n"
        r = agent.hook("prompt", prompt(web, RELEASE), env=agent.env(PLAYBOOK_HOOK_DEADLINE="1"))
        assert_failed_quietly(agent, r, 0, "gave up after 1 s")
    finally:
        holder.communicate("", timeout=30)
    # Once the lock is gone the same prompt works.
    assert ids["rule"] in context_of(agent.hook("prompt", prompt(web, RELEASE)).out)


def test_a_broken_policy_file_is_one_log_line(
    agent: Agent, ids: dict[str, str], web: Path, tmp_path: Path
) -> None:
    bad = tmp_path / "playbook.toml"
    bad.write_text("[policy]\nhook_context_chars = 'lots'\n", encoding="utf-8")
    r = agent.hook("prompt", prompt(web, RELEASE), "--policy", str(bad))
    assert_failed_quietly(agent, r, 0, "hook_context_chars")


def test_hooks_switched_off_do_nothing(agent: Agent, ids: dict[str, str], web: Path) -> None:
    r = agent.hook("prompt", prompt(web, RELEASE), env=agent.env(PLAYBOOK_HOOKS="off"))
    assert (r.rc, r.out) == (0, "") and agent.log == []
