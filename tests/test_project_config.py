"""The project's playbook (issue 26): a command run in a repository finds the playbook its
committed `.playbook.toml` (or `[tool.playbook]`) names; never a URL or a secret in the
file; --db, then $PLAYBOOK_DB, then the project, then the default file."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from playbook.project.config import (
    ProjectConfigError,
    default_playbook_path,
    find_project_config,
    locate_playbook,
)

from .helpers import store_at
from .helpers.cli import clean_env, run_cli
from .helpers.hooks import ENTRY, Agent, context_of, fixture


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    root = tmp_path / "web"
    (root / ".git").mkdir(parents=True)
    (root / "services" / "ci").mkdir(parents=True)
    return root


def write(path: Path, text: str) -> Path:
    path.write_text(text, encoding="utf-8")
    return path


def test_found_from_a_subfolder_relative_to_the_repository(repo: Path) -> None:
    write(repo / ".playbook.toml", 'db = ".playbook/team.sqlite3"\n')
    found = find_project_config(repo / "services" / "ci", {})
    assert found is not None
    assert found.target == str((repo / ".playbook" / "team.sqlite3").resolve())
    assert found.path == repo / ".playbook.toml"


def test_pyproject_tool_playbook_and_the_nearest_config_wins(repo: Path) -> None:
    write(repo / "pyproject.toml", '[project]\nname = "web"\n\n[tool.playbook]\ndb = "pb.db"\n')
    assert find_project_config(repo / "services", {}).target == str((repo / "pb.db").resolve())
    write(repo / "pyproject.toml", '[project]\nname = "web"\n')  # no table: not a config
    assert find_project_config(repo / "services", {}) is None
    write(repo / "services" / ".playbook.toml", 'db = "inner.db"\n')
    assert find_project_config(repo / "services" / "ci", {}).target.endswith("inner.db")


def test_the_search_stops_at_the_repository_top(tmp_path: Path, repo: Path) -> None:
    write(tmp_path / ".playbook.toml", 'db = "outside.db"\n')  # above the repository
    assert find_project_config(repo / "services", {}) is None


def test_a_server_comes_from_the_environment(repo: Path) -> None:
    write(repo / ".playbook.toml", 'db_env = "TEAM_PLAYBOOK_URL"\n')
    url = "postgresql://dev:s3cret@db.internal/team"
    assert find_project_config(repo, {"TEAM_PLAYBOOK_URL": url}).target == url
    with pytest.raises(ProjectConfigError, match=r"\$TEAM_PLAYBOOK_URL, which is not set"):
        find_project_config(repo, {})
    with pytest.raises(ProjectConfigError, match="not a postgresql:// URL"):
        find_project_config(repo, {"TEAM_PLAYBOOK_URL": "/etc/passwd"})


@pytest.mark.parametrize(
    ("text", "why"),
    [
        ('db = "postgresql://dev:s3cret@db.internal/team"\n', "not a URL"),
        ('db = "sqlite:///x.db"\n', "not a URL"),
        ('db = "/home/dev/pb.sqlite3"\n', "relative to"),
        ('db = "~/pb.sqlite3"\n', "relative to"),
        ('db = "../elsewhere/pb.sqlite3"\n', "leads out of"),
        ('db = "pb.db"\ndb_env = "X"\n', "exactly one of"),
        ("db = 3\n", "non-empty string"),
        ('dbb = "pb.db"\n', "unknown setting 'dbb'"),
        ('db_env = "NOT A NAME"\n', "must name an environment variable"),
        ("db = [", "not valid TOML"),
        ('[tool]\nplaybook = "x"\n', None),  # not .playbook.toml's shape: tested below
    ],
)
def test_what_a_config_must_not_say_is_refused(repo: Path, text: str, why: str | None) -> None:
    if why is None:
        write(repo / "pyproject.toml", text)
        with pytest.raises(ProjectConfigError, match="must be a table"):
            find_project_config(repo, {})
        return
    write(repo / ".playbook.toml", text)
    with pytest.raises(ProjectConfigError, match=why):
        find_project_config(repo, {"X": "postgresql://h/d"})


def test_a_link_out_of_the_repository_is_refused(tmp_path: Path, repo: Path) -> None:
    (repo / ".playbook").symlink_to(tmp_path)
    write(repo / ".playbook.toml", 'db = ".playbook/pb.sqlite3"\n')
    with pytest.raises(ProjectConfigError, match="leads out of"):
        find_project_config(repo, {})


def test_an_oversized_config_is_refused(repo: Path) -> None:
    write(repo / ".playbook.toml", 'db = "pb.db"\n' + "# pad\n" * 20_000)
    with pytest.raises(ProjectConfigError, match="over 65,536 bytes"):
        find_project_config(repo, {})


def test_the_order_db_env_project_default(repo: Path) -> None:
    write(repo / ".playbook.toml", 'db = "pb.db"\n')
    env = {"XDG_DATA_HOME": "/data"}
    assert locate_playbook("/x.db", repo, {**env, "PLAYBOOK_DB": "/y.db"}).source == "--db"
    assert locate_playbook(None, repo, {**env, "PLAYBOOK_DB": "/y.db"}).target == "/y.db"
    project = locate_playbook(None, repo, env)
    assert (project.source, project.target) == ("project", str((repo / "pb.db").resolve()))
    assert project.describe() == f"{repo / '.playbook.toml'}: db = pb.db"
    default = locate_playbook(None, repo.parent, env)
    assert (default.source, default.target) == ("default", str(default_playbook_path(env)))
    assert default.target == "/data/playbook/state.sqlite3"


# ------------------------------------------------------------------ the command line


def cli(tmp_path: Path, cwd: Path, *args: str):
    env = clean_env(XDG_DATA_HOME=str(tmp_path / "data"), XDG_STATE_HOME=str(tmp_path / "st"))
    return run_cli(*args, env=env, cwd=cwd)


def test_commands_in_a_repository_use_its_playbook(tmp_path: Path, repo: Path) -> None:
    write(repo / ".playbook.toml", 'db = ".playbook/team.sqlite3"\n')
    r = cli(tmp_path, repo / "services", "add", "Pin npm to 11 in release jobs", "--json")
    assert r.rc == 0, r.err
    bid = r.data["outcomes"][0]["bullet_id"]
    assert (repo / ".playbook" / "team.sqlite3").exists()
    r = cli(tmp_path, repo / "services" / "ci", "mark", bid, "helpful", "--json")
    assert r.rc == 0, r.err
    recalled = cli(tmp_path, repo, "recall", "npm release", "--json").data
    assert [b["bullet"]["id"] for b in recalled["bullets"]] == [bid]
    assert not default_playbook_path({"XDG_DATA_HOME": str(tmp_path / "data")}).exists()


def test_mark_without_a_playbook_creates_none(tmp_path: Path, repo: Path) -> None:
    """Before: `playbook mark` run in a repository (by an agent following the AGENTS.md
    paragraph) made an empty default playbook and then failed on the unknown id."""
    r = cli(tmp_path, repo, "mark", "b-0a111753", "helpful", "--json")
    assert r.rc == 1 and r.error["code"] == "no_database"
    assert not (tmp_path / "data" / "playbook").exists()


def test_a_bad_project_config_is_one_plain_error(tmp_path: Path, repo: Path) -> None:
    write(repo / ".playbook.toml", 'db = "postgresql://dev:s3cret@db/team"\n')
    r = cli(tmp_path, repo, "recall", "npm", "--json")
    assert r.rc == 1 and r.error["code"] == "invalid_input"
    assert "not a URL" in r.error["message"] and "s3cret" not in r.err.split("URL")[1]


def test_a_hook_finds_the_playbook_from_the_sessions_folder(tmp_path: Path, repo: Path) -> None:
    write(repo / ".playbook.toml", 'db = ".playbook/team.sqlite3"\n')
    agent = Agent(db=repo / ".playbook" / "team.sqlite3", state=tmp_path / "state")
    with store_at(agent.db) as store:
        bid = store.insert_bullet("Pin npm to 11 in release jobs", tags=["ci"]).id
    ask = fixture("user_prompt_submit.json", cwd=str(repo / "services"), prompt="npm release")
    r = run_cli(
        "hook", "prompt", stdin=json.dumps(ask).encode(), env=agent.env(), entry=ENTRY, cwd=tmp_path
    )  # run from elsewhere: the payload's cwd decides
    assert r.rc == 0 and bid in context_of(r.out), agent.log
    outside = fixture("user_prompt_submit.json", cwd=str(tmp_path), prompt="npm release")
    r = run_cli("hook", "prompt", stdin=json.dumps(outside).encode(), env=agent.env(), entry=ENTRY)
    assert (r.rc, r.out) == (0, "")  # the default playbook, which is not there: nothing
