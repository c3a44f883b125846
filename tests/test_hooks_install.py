"""`playbook hooks install|uninstall claude-code|codex`: Playbook's entries in, everything else
kept; a second install changes nothing; uninstall gives the original file back, byte for
byte."""

from __future__ import annotations

import json
import shlex
import tomllib
from pathlib import Path

import pytest

from .helpers.cli import clean_env, run_cli
from .helpers.hooks import ENTRY

# A project's settings as a person wrote them: 4-space indent, other hooks (one of them on an
# event Playbook uses), other settings, non-ASCII text, no newline at the end.
SETTINGS = """{
    "model": "claude-sonnet-4-5",
    "permissions": {
        "allow": ["Bash(npm run lint)", "Read(~/notes/**)"]
    },
    "hooks": {
        "PreToolUse": [
            {
                "matcher": "Bash",
                "hooks": [{"type": "command", "command": "echo 'vérifié' >> ~/.claude/bash.log"}]
            }
        ],
        "UserPromptSubmit": [
            {
                "hooks": [{"type": "command", "command": "git branch --show-current"}]
            }
        ]
    },
    "env": {"NODE_ENV": "test"}
}"""

CONFIG_TOML = """# my Codex settings
model = "gpt-5-codex"

[mcp_servers.docs]
command = "docs-server"
args = ["--port", "0"]
"""


@pytest.fixture
def project(tmp_path: Path) -> Path:
    root = tmp_path / "web"
    (root / ".git").mkdir(parents=True)
    (root / ".claude").mkdir()
    (root / ".claude" / "settings.json").write_text(SETTINGS, encoding="utf-8")
    return root


def env_for(tmp_path: Path, **extra: str) -> dict[str, str]:
    return clean_env(XDG_STATE_HOME=str(tmp_path / "state"), HOME=str(tmp_path / "home"), **extra)


def hooks(tmp_path: Path, cwd: Path, *args: str, **env: str) -> tuple[int, str, str]:
    """`playbook --db … hooks ARGS…` run in `cwd`, as a person would."""
    db = str(tmp_path / "pb.sqlite3")
    r = run_cli("--db", db, "hooks", *args, env=env_for(tmp_path, **env), entry=ENTRY, cwd=cwd)
    return r.rc, r.out, r.err


def commands(settings: dict[str, object], event: str) -> list[str]:
    groups = settings["hooks"][event]  # type: ignore[index]
    return [h["command"] for g in groups for h in g["hooks"]]


def test_claude_code_install_keeps_everything_else_and_uninstall_restores_bytes(
    tmp_path: Path, project: Path
) -> None:
    path = project / ".claude" / "settings.json"
    original = path.read_bytes()
    rc, out, err = hooks(tmp_path, project / ".git", "install", "claude-code")  # from inside
    assert rc == 0, err
    installed = path.read_bytes()
    settings = json.loads(installed)
    before = json.loads(original)
    # Everything that was there is still there, in its order.
    assert settings["model"] == before["model"] and settings["env"] == before["env"]
    assert settings["permissions"] == before["permissions"]
    assert settings["hooks"]["PreToolUse"] == before["hooks"]["PreToolUse"]
    assert list(settings) == ["model", "permissions", "hooks", "env"]
    # The three hooks, each a command on this playbook.
    db = str((tmp_path / "pb.sqlite3").resolve())
    for event, verb in (
        ("SessionStart", "session-start"),
        ("UserPromptSubmit", "prompt"),
        ("SessionEnd", "session-end"),
    ):
        mine = [c for c in commands(settings, event) if " hook " in c]
        assert len(mine) == 1
        assert shlex.split(mine[0])[1:] == ["--db", db, "hook", verb]
    assert commands(settings, "UserPromptSubmit")[0] == "git branch --show-current"
    assert installed.startswith(b'{\n    "model"')  # the file's own indentation
    assert "vérifié" in installed.decode()

    rc, out, _ = hooks(tmp_path, project, "install", "claude-code")
    assert rc == 0 and "nothing changed" in out
    assert path.read_bytes() == installed  # idempotent

    rc, out, _ = hooks(tmp_path, project, "uninstall", "claude-code")
    assert rc == 0 and "byte for byte" in out
    assert path.read_bytes() == original


def test_dry_run_prints_the_change_and_writes_nothing(tmp_path: Path, project: Path) -> None:
    path = project / ".claude" / "settings.json"
    original = path.read_bytes()
    rc, out, _ = hooks(tmp_path, project, "install", "claude-code", "--dry-run")
    assert rc == 0
    assert path.read_bytes() == original
    assert "would change" in out
    added = [ln for ln in out.splitlines() if ln.startswith("+") and " hook " in ln]
    assert len(added) == 3
    assert not (tmp_path / "state" / "playbook" / "installs").exists()


def test_uninstall_after_other_edits_removes_only_playbooks_hooks(
    tmp_path: Path, project: Path
) -> None:
    path = project / ".claude" / "settings.json"
    hooks(tmp_path, project, "install", "claude-code")
    edited = json.loads(path.read_text(encoding="utf-8"))
    edited["model"] = "claude-opus-4-1"  # the person changed something meanwhile
    path.write_text(json.dumps(edited, indent=4), encoding="utf-8")
    rc, out, _ = hooks(tmp_path, project, "uninstall", "claude-code")
    assert rc == 0 and "changed since the install" in out
    after = json.loads(path.read_text(encoding="utf-8"))
    expected = json.loads(SETTINGS)
    expected["model"] = "claude-opus-4-1"
    assert after == expected


def test_user_settings_created_and_removed_whole(tmp_path: Path, project: Path) -> None:
    user = tmp_path / "home" / ".claude" / "settings.json"
    rc, _, err = hooks(tmp_path, project, "install", "claude-code", "--user")
    assert rc == 0, err
    assert set(json.loads(user.read_text(encoding="utf-8"))) == {"hooks"}
    assert (project / ".claude" / "settings.json").read_text(encoding="utf-8") == SETTINGS
    rc, _, _ = hooks(tmp_path, project, "uninstall", "claude-code", "--user")
    assert rc == 0
    assert not user.exists() and not user.parent.exists()  # it made the folder; it went


def test_settings_that_are_not_json_are_refused_untouched(tmp_path: Path, project: Path) -> None:
    path = project / ".claude" / "settings.json"
    path.write_text('{"model": "x",}', encoding="utf-8")
    rc, _, err = hooks(tmp_path, project, "install", "claude-code")
    assert rc == 1 and err.startswith("playbook: error: ") and "not valid JSON" in err
    assert path.read_text(encoding="utf-8") == '{"model": "x",}'


def test_codex_install_adds_mcp_and_notify_and_uninstall_restores_bytes(
    tmp_path: Path, project: Path
) -> None:
    home = tmp_path / "codex"
    home.mkdir()
    config = home / "config.toml"
    config.write_text(CONFIG_TOML, encoding="utf-8")
    rc, out, err = hooks(tmp_path, project, "install", "codex", CODEX_HOME=str(home))
    assert rc == 0, err
    parsed = tomllib.loads(config.read_text(encoding="utf-8"))
    db = str((tmp_path / "pb.sqlite3").resolve())
    assert parsed["model"] == "gpt-5-codex"
    assert parsed["mcp_servers"]["docs"] == {"command": "docs-server", "args": ["--port", "0"]}
    server = parsed["mcp_servers"]["playbook"]
    assert server["args"] == ["--db", db, "mcp"]
    assert parsed["notify"][1:] == ["--db", db, "hook", "codex-notify"]
    assert server["command"] == parsed["notify"][0]
    assert "## Playbook" in out and "playbook recall" in out  # the AGENTS.md paragraph
    installed = config.read_bytes()
    assert hooks(tmp_path, project, "install", "codex", CODEX_HOME=str(home))[0] == 0
    assert config.read_bytes() == installed
    rc, _, _ = hooks(tmp_path, project, "uninstall", "codex", CODEX_HOME=str(home))
    assert rc == 0 and config.read_text(encoding="utf-8") == CONFIG_TOML


def test_codex_notify_of_someone_else_is_left_alone(tmp_path: Path, project: Path) -> None:
    home = tmp_path / "codex"
    home.mkdir()
    config = home / "config.toml"
    mine = 'notify = ["/usr/local/bin/my-notifier"]\n' + CONFIG_TOML
    config.write_text(mine, encoding="utf-8")
    rc, out, _ = hooks(tmp_path, project, "install", "codex", CODEX_HOME=str(home))
    assert rc == 0 and "already runs a notify program" in out
    parsed = tomllib.loads(config.read_text(encoding="utf-8"))
    assert parsed["notify"] == ["/usr/local/bin/my-notifier"]
    assert "playbook" in parsed["mcp_servers"]
    hooks(tmp_path, project, "uninstall", "codex", CODEX_HOME=str(home))
    assert config.read_text(encoding="utf-8") == mine


def test_bad_options_are_usage_errors(tmp_path: Path, project: Path) -> None:
    rc, _, err = hooks(tmp_path, project, "install", "claude-code", "--user", "--project")
    assert rc == 2 and "choose one of --user and --project" in err
    r = run_cli("hooks", "install", "cursor", env=env_for(tmp_path))
    assert r.rc == 2
