"""`playbook hooks install|uninstall claude-code|codex`: Playbook's entries in, everything else
kept byte for byte; what a team commits holds no path of this machine; a second install
changes nothing; uninstall gives each file back, byte for byte."""

from __future__ import annotations

import difflib
import json
import os
import shlex
import stat
import sys
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

# The shape of a committed team settings file (ChrisEdwards/abacus .claude/settings.json: a
# PreToolUse hook run from the project's folder), written compact, on one line.
COMPACT = (
    '{"hooks":{"PreToolUse":[{"matcher":"Bash","hooks":[{"type":"command","command":'
    '"$CLAUDE_PROJECT_DIR/.claude/hooks/trauma_guard.py"}]}]}}'
)

CONFIG_TOML = """# my Codex settings
model = "gpt-5-codex"

[mcp_servers.docs]
command = "docs-server"
args = ["--port", "0"]
"""

BIN = str(Path(sys.executable).parent)  # where this Playbook's `playbook` script is


@pytest.fixture
def project(tmp_path: Path) -> Path:
    root = tmp_path / "web"
    (root / ".git").mkdir(parents=True)
    (root / ".claude").mkdir()
    (root / ".claude" / "settings.json").write_text(SETTINGS, encoding="utf-8")
    return root


def env_for(tmp_path: Path, *, on_path: bool = True, **extra: str) -> dict[str, str]:
    """The person's environment: `playbook` on the PATH (or not), a home of the test's."""
    path = f"{BIN}:/usr/bin:/bin" if on_path else "/usr/bin:/bin"
    return clean_env(
        XDG_STATE_HOME=str(tmp_path / "state"),
        XDG_DATA_HOME=str(tmp_path / "data"),
        HOME=str(tmp_path / "home"),
        PATH=path,
        **extra,
    )


def hooks(
    tmp_path: Path, cwd: Path, *args: str, on_path: bool = True, **env: str
) -> tuple[int, str, str]:
    """`playbook [GLOBAL…] hooks ARGS…` run in `cwd`, as a person would."""
    r = run_cli(*args, env=env_for(tmp_path, on_path=on_path, **env), entry=ENTRY, cwd=cwd)
    return r.rc, r.out, r.err


def commands(settings: dict[str, object], event: str) -> list[str]:
    groups = settings["hooks"][event]  # type: ignore[index]
    return [h["command"] for g in groups for h in g["hooks"]]


def only_added(before: str, after: str) -> list[str]:
    """The lines `after` adds to `before`; fails if it changes or removes any."""
    changed = [
        line
        for line in difflib.ndiff(before.splitlines(), after.splitlines())
        if line.startswith(("- ", "+ "))
    ]
    removed = [line for line in changed if line.startswith("- ")]
    # A line that only gains a comma (the last member before the new one) is the one edit.
    assert all(f"+ {r[2:]}," in changed for r in removed), removed
    return [
        line[2:] for line in changed if line.startswith("+ ") and f"- {line[2:-1]}" not in changed
    ]


# ------------------------------------------------------------------ Claude Code


def test_a_project_install_is_portable_and_keeps_the_files_bytes(
    tmp_path: Path, project: Path
) -> None:
    path = project / ".claude" / "settings.json"
    rc, out, err = hooks(tmp_path, project / ".git", "hooks", "install", "claude-code")
    assert rc == 0, err
    installed = path.read_text(encoding="utf-8")
    settings = json.loads(installed)
    # The team's file holds no path of this machine: `playbook` from the PATH, on the
    # playbook each session's folder finds.
    for event, verb in (
        ("SessionStart", "session-start"),
        ("UserPromptSubmit", "prompt"),
        ("SessionEnd", "session-end"),
    ):
        mine = [c for c in commands(settings, event) if " hook " in c]
        assert mine == [f"playbook hook {verb}"]
    assert str(tmp_path) not in installed
    # Everything else is there, byte for byte: only lines were added.
    added = only_added(SETTINGS, installed)
    assert any("playbook hook prompt" in line for line in added)
    assert list(settings) == ["model", "permissions", "hooks", "env"]
    assert commands(settings, "UserPromptSubmit")[0] == "git branch --show-current"
    assert not (project / ".claude" / "settings.local.json").exists()

    rc, out, _ = hooks(tmp_path, project, "hooks", "install", "claude-code")
    assert rc == 0 and "nothing changed" in out
    assert path.read_text(encoding="utf-8") == installed  # idempotent

    rc, out, _ = hooks(tmp_path, project, "hooks", "uninstall", "claude-code")
    assert rc == 0 and "byte for byte" in out
    assert path.read_text(encoding="utf-8") == SETTINGS


def test_a_compact_settings_file_stays_compact(tmp_path: Path, project: Path) -> None:
    path = project / ".claude" / "settings.json"
    path.write_text(COMPACT, encoding="utf-8")
    assert hooks(tmp_path, project, "hooks", "install", "claude-code")[0] == 0
    text = path.read_text(encoding="utf-8")
    assert "\n" not in text and text.startswith(COMPACT[:-2])
    assert json.loads(text)["hooks"]["PreToolUse"] == json.loads(COMPACT)["hooks"]["PreToolUse"]
    # Someone edits the file meanwhile: uninstall takes out only Playbook's, in place.
    edited = text.replace('"matcher":"Bash"', '"matcher":"Bash|Edit"')
    path.write_text(edited, encoding="utf-8")
    rc, out, _ = hooks(tmp_path, project, "hooks", "uninstall", "claude-code")
    assert rc == 0 and "changed since the install" in out
    assert path.read_text(encoding="utf-8") == COMPACT.replace('"Bash"', '"Bash|Edit"')


def test_what_belongs_to_this_machine_goes_to_settings_local(tmp_path: Path, project: Path) -> None:
    db = tmp_path / "pb.sqlite3"
    shared = project / ".claude" / "settings.json"
    local = project / ".claude" / "settings.local.json"
    rc, out, err = hooks(tmp_path, project, "--db", str(db), "hooks", "install", "claude-code")
    assert rc == 0, err
    assert shared.read_text(encoding="utf-8") == SETTINGS  # the team's file: untouched
    assert "this machine's" in out and "--db" in out
    settings = json.loads(local.read_text(encoding="utf-8"))
    (prompt,) = commands(settings, "UserPromptSubmit")
    assert shlex.split(prompt) == ["playbook", "--db", str(db.resolve()), "hook", "prompt"]

    # Not on the PATH: the script by its full path, also this machine's only.
    rc, out, err = hooks(tmp_path, project, "hooks", "install", "claude-code", on_path=False)
    assert rc == 0, err
    (prompt,) = commands(json.loads(local.read_text(encoding="utf-8")), "UserPromptSubmit")
    assert shlex.split(prompt) == [str(Path(BIN) / "playbook"), "hook", "prompt"]
    assert "not on the PATH" in out

    # A portable install afterwards moves them to the team's file: never both.
    rc, out, err = hooks(tmp_path, project, "hooks", "install", "claude-code")
    assert rc == 0, err
    assert commands(json.loads(shared.read_text(encoding="utf-8")), "SessionEnd") == [
        "playbook hook session-end"
    ]
    assert not local.exists()  # the install had made it; nothing else was in it


def test_a_machine_install_over_the_teams_hooks_is_refused(tmp_path: Path, project: Path) -> None:
    assert hooks(tmp_path, project, "hooks", "install", "claude-code")[0] == 0
    rc, _, err = hooks(tmp_path, project, "hooks", "install", "claude-code", "--local")
    assert rc == 1 and "would run each hook twice" in err
    assert not (project / ".claude" / "settings.local.json").exists()


def test_the_model_reflector_is_this_machines_choice_and_says_what_it_costs(
    tmp_path: Path, project: Path
) -> None:
    local = project / ".claude" / "settings.local.json"
    rc, out, err = hooks(
        tmp_path, project, "hooks", "install", "claude-code", "--reflector", "claude"
    )
    assert rc == 0, err
    assert json.loads(local.read_text(encoding="utf-8")) == {
        "env": {"PLAYBOOK_REFLECTOR": "claude"}
    }
    shared = json.loads((project / ".claude" / "settings.json").read_text(encoding="utf-8"))
    assert commands(shared, "SessionEnd") == ["playbook hook session-end"]
    assert "claude -p" in out and "32,000 characters" in out and "up to 3" in out
    rc, _, _ = hooks(tmp_path, project, "hooks", "uninstall", "claude-code")
    assert rc == 0 and not local.exists()
    assert (project / ".claude" / "settings.json").read_text(encoding="utf-8") == SETTINGS
    rc, _, err = hooks(tmp_path, project, "hooks", "install", "claude-code", "--reflector", "gpt")
    assert rc == 2 and "expected one of claude, codex" in err


def test_user_settings_created_and_removed_whole(tmp_path: Path, project: Path) -> None:
    user = tmp_path / "home" / ".claude" / "settings.json"
    rc, _, err = hooks(tmp_path, project, "hooks", "install", "claude-code", "--user")
    assert rc == 0, err
    assert set(json.loads(user.read_text(encoding="utf-8"))) == {"hooks"}
    assert (project / ".claude" / "settings.json").read_text(encoding="utf-8") == SETTINGS
    rc, _, _ = hooks(tmp_path, project, "hooks", "uninstall", "claude-code", "--user")
    assert rc == 0
    assert not user.exists() and not user.parent.exists()  # it made the folder; it went


def test_settings_that_are_not_json_are_refused_untouched(tmp_path: Path, project: Path) -> None:
    path = project / ".claude" / "settings.json"
    path.write_text('{"model": "x",}', encoding="utf-8")
    rc, _, err = hooks(tmp_path, project, "hooks", "install", "claude-code")
    assert rc == 1 and err.startswith("playbook: error: ") and "not valid JSON" in err
    assert path.read_text(encoding="utf-8") == '{"model": "x",}'


def test_dry_run_prints_the_change_and_writes_nothing(tmp_path: Path, project: Path) -> None:
    path = project / ".claude" / "settings.json"
    rc, out, _ = hooks(tmp_path, project, "hooks", "install", "claude-code", "--dry-run")
    assert rc == 0
    assert path.read_text(encoding="utf-8") == SETTINGS
    assert "would change" in out
    added = [ln for ln in out.splitlines() if ln.startswith("+") and " hook " in ln]
    assert len(added) == 3
    assert not (tmp_path / "state" / "playbook" / "installs").exists()


# ------------------------------------------------------------------ Codex


def codex_home(tmp_path: Path, config_text: str) -> tuple[Path, Path]:
    """$CODEX_HOME with a config.toml of `config_text`; (the folder, the config)."""
    home = tmp_path / "codex"
    home.mkdir()
    config = home / "config.toml"
    config.write_text(config_text, encoding="utf-8")
    return home, config


def test_codex_install_adds_hooks_and_mcp_and_uninstall_restores_bytes(
    tmp_path: Path, project: Path
) -> None:
    home, config = codex_home(tmp_path, CONFIG_TOML)
    rc, out, err = hooks(tmp_path, project, "hooks", "install", "codex", CODEX_HOME=str(home))
    assert rc == 0, err
    parsed = tomllib.loads(config.read_text(encoding="utf-8"))
    assert parsed["model"] == "gpt-5-codex"
    assert parsed["mcp_servers"]["docs"] == {"command": "docs-server", "args": ["--port", "0"]}
    assert parsed["mcp_servers"]["playbook"] == {"command": "playbook", "args": ["mcp"]}
    assert "notify" not in parsed  # Codex has hooks: its Stop hook reflects each turn
    installed_hooks = json.loads((home / "hooks.json").read_text(encoding="utf-8"))
    assert set(installed_hooks) == {"hooks"}  # Codex refuses other top-level keys
    assert {e: commands(installed_hooks, e) for e in installed_hooks["hooks"]} == {
        "SessionStart": ["playbook hook session-start"],
        "UserPromptSubmit": ["playbook hook prompt"],
        "Stop": ["playbook hook session-end"],
    }
    assert "/hooks" in out and "trust" in out
    # AGENTS.md: the install names the export that writes the protocol and the live rules
    # there (issue 27), rather than a paragraph of the protocol alone to paste.
    assert "playbook export --format agents-md -o AGENTS.md" in out
    assert "Add this to" not in out
    before = (config.read_bytes(), (home / "hooks.json").read_bytes())
    assert hooks(tmp_path, project, "hooks", "install", "codex", CODEX_HOME=str(home))[0] == 0
    assert (config.read_bytes(), (home / "hooks.json").read_bytes()) == before
    rc, _, _ = hooks(tmp_path, project, "hooks", "uninstall", "codex", CODEX_HOME=str(home))
    assert rc == 0 and config.read_text(encoding="utf-8") == CONFIG_TOML
    assert not (home / "hooks.json").exists()


def test_codex_with_hooks_off_gets_notify_and_loses_it_when_they_are_on(
    tmp_path: Path, project: Path
) -> None:
    home, config = codex_home(tmp_path, "[features]\nhooks = false\n")
    env = {"CODEX_HOME": str(home)}
    rc, out, err = hooks(tmp_path, project, "hooks", "install", "codex", **env)
    assert rc == 0, err
    parsed = tomllib.loads(config.read_text(encoding="utf-8"))
    assert parsed["notify"] == ["playbook", "hook", "codex-notify"]
    assert not (home / "hooks.json").exists() and "hooks are off" in out
    assert "the only way Codex learns the protocol" in out
    assert "playbook export --format agents-md -o AGENTS.md" in out
    # The person turns hooks on: the next install trades notify for the hooks.
    config.write_text(config.read_text(encoding="utf-8").replace("false", "true"), "utf-8")
    assert hooks(tmp_path, project, "hooks", "install", "codex", **env)[0] == 0
    assert "notify" not in tomllib.loads(config.read_text(encoding="utf-8"))
    assert (home / "hooks.json").exists()


def test_codex_notify_of_someone_else_is_left_alone(tmp_path: Path, project: Path) -> None:
    mine = 'notify = ["/usr/local/bin/my-notifier"]\n[features]\ncodex_hooks = false\n'
    home, config = codex_home(tmp_path, mine)
    rc, out, _ = hooks(tmp_path, project, "hooks", "install", "codex", CODEX_HOME=str(home))
    assert rc == 0 and "already runs a notify program" in out
    parsed = tomllib.loads(config.read_text(encoding="utf-8"))
    assert parsed["notify"] == ["/usr/local/bin/my-notifier"]
    assert "playbook" in parsed["mcp_servers"]
    hooks(tmp_path, project, "hooks", "uninstall", "codex", CODEX_HOME=str(home))
    assert config.read_text(encoding="utf-8") == mine


def test_codex_reflector_and_project_hooks(tmp_path: Path, project: Path) -> None:
    home = tmp_path / "codex"
    env = {"CODEX_HOME": str(home)}
    rc, out, err = hooks(
        tmp_path, project, "hooks", "install", "codex", "--reflector", "codex", **env
    )
    assert rc == 0, err
    installed = json.loads((home / "hooks.json").read_text(encoding="utf-8"))
    assert commands(installed, "Stop") == ["playbook hook session-end --reflector codex"]
    assert "codex exec" in out and "each turn" in out
    # The repository's .codex/hooks.json is committed: portable commands only.
    rc, _, err = hooks(tmp_path, project, "hooks", "install", "codex", "--project", **env)
    assert rc == 0, err
    team = json.loads((project / ".codex" / "hooks.json").read_text(encoding="utf-8"))
    assert commands(team, "UserPromptSubmit") == ["playbook hook prompt"]
    db = str(tmp_path / "pb.sqlite3")
    rc, _, err = hooks(tmp_path, project, "--db", db, "hooks", "install", "codex", "--project")
    assert rc == 1 and "committed" in err


def test_bad_options_are_usage_errors(tmp_path: Path, project: Path) -> None:
    rc, _, err = hooks(tmp_path, project, "hooks", "install", "claude-code", "--user", "--project")
    assert rc == 2 and "choose one of --user, --project and --local" in err
    rc, _, err = hooks(tmp_path, project, "hooks", "install", "codex", "--local")
    assert rc == 2 and "--local is for claude-code" in err
    r = run_cli("hooks", "install", "cursor", env=env_for(tmp_path))
    assert r.rc == 2


# ------------------------------------------------------------------ a URL's password


@pytest.mark.postgres
def test_no_settings_file_or_output_holds_the_database_password(
    tmp_path: Path, project: Path, pg_url: str
) -> None:
    """Issue 29: a `--db` URL's password is never written into an agent's settings, nor
    printed (the notes, the --dry-run diff, --json); the hooks find it in ~/.pgpass."""
    secret = "Hunter2-pw.29"
    user, rest = pg_url.split("://", 1)[1].split("@", 1)
    url = f"postgresql://{user}:{secret}@{rest}"  # the test server trusts: the password is unused
    home = tmp_path / "codex"
    env = {"CODEX_HOME": str(home)}
    runs = [
        hooks(tmp_path, project, "--db", url, "hooks", "install", "claude-code", "--dry-run"),
        hooks(tmp_path, project, "--db", url, "hooks", "install", "claude-code", "--json"),
        hooks(tmp_path, project, "--db", url, "hooks", "install", "codex", "--dry-run", **env),
        hooks(tmp_path, project, "--db", url, "hooks", "install", "codex", "--json", **env),
    ]
    assert all(rc == 0 for rc, _, _ in runs), runs
    for _, out, err in runs:
        assert secret not in out + err
    assert "~/.pgpass" in runs[0][1] and "password is not written" in runs[0][1]
    written = [
        project / ".claude" / "settings.local.json",
        home / "hooks.json",
        home / "config.toml",
    ]
    for path in written:
        text = path.read_text(encoding="utf-8")
        assert secret not in text, path
        assert f"postgresql://{user}@{rest}" in text, path  # the URL, without its password
    local = json.loads(written[0].read_text(encoding="utf-8"))
    command = shlex.split(commands(local, "UserPromptSubmit")[0])
    assert command[1:3] == ["--db", f"postgresql://{user}@{rest}"]
    saved = [p.read_text(encoding="utf-8") for p in (tmp_path / "state").rglob("*.json")]
    assert saved and not any(secret in s for s in saved)  # the install's backups neither


# ------------------------------------------------------------------ how the files are written


def test_a_settings_file_replaced_keeps_its_mode_and_owner(tmp_path: Path, project: Path) -> None:
    # Regression: the install wrote a temporary file of its own and renamed it over the
    # settings: a group-writable file came back 0644, a teammate's file came back root's.
    path = project / ".claude" / "settings.json"
    path.chmod(0o664)
    owner = (4321, 4321) if os.geteuid() == 0 else (os.getuid(), os.getgid())
    os.chown(path, *owner)
    assert hooks(tmp_path, project, "hooks", "install", "claude-code")[0] == 0
    after = path.stat()
    assert stat.S_IMODE(after.st_mode) == 0o664 and (after.st_uid, after.st_gid) == owner
    assert '"playbook hook prompt"' in path.read_text(encoding="utf-8")
    backups = list((tmp_path / "state").rglob("installs/*.json"))
    assert len(backups) == 1 and stat.S_IMODE(backups[0].stat().st_mode) == 0o600


def test_a_settings_file_linked_in_its_folder_is_written_through(
    tmp_path: Path, project: Path
) -> None:
    # Regression: the link was replaced by a regular file (the target kept the old text).
    folder = project / ".claude"
    (folder / "settings.json").rename(folder / "team-settings.json")
    (folder / "settings.json").symlink_to("team-settings.json")
    assert hooks(tmp_path, project, "hooks", "install", "claude-code")[0] == 0
    assert (folder / "settings.json").is_symlink()
    assert '"playbook hook prompt"' in (folder / "team-settings.json").read_text("utf-8")
    assert hooks(tmp_path, project, "hooks", "uninstall", "claude-code")[0] == 0
    assert (folder / "settings.json").is_symlink()
    assert (folder / "team-settings.json").read_text(encoding="utf-8") == SETTINGS


def test_a_settings_file_linked_out_of_its_folder_is_refused_in_one_line(
    tmp_path: Path, project: Path
) -> None:
    # A dotfile manager's layout (GNU Stow, chezmoi's symlink mode): ~/.claude/settings.json
    # is a link into ~/dotfiles. Regression: the install replaced the link with a file.
    dotfiles = tmp_path / "home" / "dotfiles" / "claude"
    dotfiles.mkdir(parents=True)
    (dotfiles / "settings.json").write_text(SETTINGS, encoding="utf-8")
    user = tmp_path / "home" / ".claude"
    user.mkdir()
    (user / "settings.json").symlink_to(dotfiles / "settings.json")
    rc, out, err = hooks(tmp_path, project, "hooks", "install", "claude-code", "--user")
    assert rc == 1 and "Traceback" not in err and len(err.strip().splitlines()) == 1
    assert "outside its folder" in err and "nothing was changed" in err and "--dry-run" in err
    assert (user / "settings.json").is_symlink()
    assert (dotfiles / "settings.json").read_text(encoding="utf-8") == SETTINGS
    rc, out, _ = hooks(tmp_path, project, "hooks", "install", "claude-code", "--user", "--dry-run")
    assert rc == 0 and "+" in out and "playbook hook prompt" in out
    # Codex: two files; the second one refused means the first is not written either.
    home, config = codex_home(tmp_path, CONFIG_TOML)
    (home / "hooks.json").symlink_to(dotfiles / "hooks.json")
    rc, _, err = hooks(tmp_path, project, "hooks", "install", "codex", CODEX_HOME=str(home))
    assert rc == 1 and "nothing was changed" in err
    assert config.read_text(encoding="utf-8") == CONFIG_TOML
    assert not (dotfiles / "hooks.json").exists()


def test_a_settings_file_that_is_a_fifo_is_refused_not_waited_on(
    tmp_path: Path, project: Path
) -> None:
    # Regression: reading the settings waited for a writer to the FIFO for ever.
    path = project / ".claude" / "settings.json"
    path.unlink()
    os.mkfifo(path)
    rc, _, err = hooks(tmp_path, project, "hooks", "install", "claude-code")
    assert rc == 1 and "not a regular file" in err
    assert stat.S_ISFIFO(path.lstat().st_mode)
