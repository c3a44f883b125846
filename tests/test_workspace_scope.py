"""One workspace identity (issue 26): a rule scoped to a repository shows in every clone of
it, whatever the clone's folder is called, and never in another repository; the hooks,
`recall --scope workspace:.`, `add --scope workspace` and `playbook workspace` all use
`project.workspace` (the normalised remote URL, else the folder's name)."""

from __future__ import annotations

import json
from pathlib import Path

from .helpers import store_at
from .helpers.cli import clean_env, run_cli
from .helpers.hooks import Agent, context_of, fixture

ORIGIN = '[core]\n\tbare = false\n[remote "origin"]\n\turl = git@github.com:Org/Web.git\n'


def clone(parent: Path, folder: str, config: str = ORIGIN) -> Path:
    """A checkout of the repository in `parent/folder`, the agent working inside it."""
    (parent / folder / ".git").mkdir(parents=True)
    (parent / folder / ".git" / "config").write_text(config, encoding="utf-8")
    (parent / folder / "src").mkdir()
    return parent / folder / "src"


def test_a_repositorys_rules_show_in_every_clone_and_nowhere_else(tmp_path: Path) -> None:
    agent = Agent(db=tmp_path / "pb.sqlite3", state=tmp_path / "state")
    with store_at(agent.db) as store:
        ours = store.insert_bullet(
            "Deploy web from the release branch",
            scope="workspace",
            scope_key="github.com/org/web",
        ).id
        by_name = store.insert_bullet(
            "Deploy web on Fridays", scope="workspace", scope_key="web"
        ).id  # keyed by a folder name, as the hooks did before
        theirs = store.insert_bullet(
            "Deploy api from main", scope="workspace", scope_key="github.com/org/api"
        ).id
    for where in (clone(tmp_path, "web"), clone(tmp_path / "elsewhere", "web-fork")):
        ask = fixture("user_prompt_submit.json", cwd=str(where), prompt="deploy web release")
        context = context_of(agent.hook("prompt", {**ask, "session_id": str(where)}).out)
        assert ours in context
        assert by_name not in context and theirs not in context
    # A repository of another remote, in a folder called "web", is another workspace.
    other = clone(tmp_path / "other", "web", ORIGIN.replace("Org/Web", "someone/web"))
    ask = fixture("user_prompt_submit.json", cwd=str(other), prompt="deploy web release")
    out = agent.hook("prompt", {**ask, "session_id": "other"}).out
    assert ours not in out and theirs not in out


def test_the_command_line_uses_the_same_identity(tmp_path: Path) -> None:
    here = clone(tmp_path, "web")
    env = clean_env(XDG_DATA_HOME=str(tmp_path / "data"))
    db = tmp_path / "pb.sqlite3"

    def cli(*args: str):
        return run_cli("--db", str(db), *args, env=env, cwd=here)

    added = cli("add", "Deploy web from the release branch", "--scope", "workspace", "--json")
    assert added.rc == 0, added.err
    bid = added.data["outcomes"][0]["bullet_id"]
    with store_at(db) as store:
        assert store.get_bullet(bid).scope_key == "github.com/org/web"
        store.insert_bullet("Deploy web on Fridays", scope="workspace", scope_key="web")
    mine = cli("recall", "deploy release", "--scope", "workspace:.", "--json").data
    assert [b["bullet"]["id"] for b in mine["bullets"]] == [bid]
    elsewhere = run_cli(
        "--db", str(db), "recall", "deploy release", "--scope", "workspace:.", "--json",
        env=env, cwd=clone(tmp_path / "o", "api", ORIGIN.replace("Web", "api")),
    )  # fmt: skip
    assert elsewhere.data["bullets"] == []
    shown = cli("workspace", "--json").data
    assert shown == {
        "key": "github.com/org/web",
        "name": "web",
        "source": "remote",
        "rules_keyed_by_folder_name": 1,
    }
    said = cli("workspace").out
    assert said.startswith("github.com/org/web  (from the remote URL)")
    assert "1 rule(s) are scoped to the workspace 'web'" in said


def test_where_says_which_playbook_and_why(tmp_path: Path) -> None:
    here = clone(tmp_path, "web")
    (here.parent / ".playbook.toml").write_text('db = "team.sqlite3"\n', encoding="utf-8")
    env = clean_env(XDG_DATA_HOME=str(tmp_path / "data"))
    found = run_cli("where", "--json", env=env, cwd=here).data
    assert found == {
        "playbook": str((here.parent / "team.sqlite3").resolve()),
        "source": "project",
        "config": str(here.parent / ".playbook.toml"),
        "exists": False,
        "read_db": None,  # no replica named (tests/test_read_replica_mcp.py names one)
        "read_source": None,
    }
    given = run_cli("where", "--json", env={**env, "PLAYBOOK_DB": "/x.db"}, cwd=here).data
    assert (given["playbook"], given["source"]) == ("/x.db", "$PLAYBOOK_DB")
    text = run_cli("where", env=env, cwd=tmp_path).out
    assert text.strip() == f"{tmp_path / 'data' / 'playbook' / 'state.sqlite3'}  (default)"
    assert json.loads(run_cli("--db", "/y.db", "where", "--json", env=env).out)["data"][
        "source"
    ] == ("--db")
