"""The README's shell blocks run as written, in order (the way sqlite-utils checks its docs).

A block is runnable when the line before its ```sh fence is an HTML comment naming its
group, and `installs` when it installs something:

    <!-- runnable: cli -->
    <!-- runnable: team installs -->

The blocks of the groups a test runs are joined, in README order, into one bash script
(`set -eo pipefail`, so the first failing command fails it), which runs in a fresh home
folder with nothing of this machine's Playbook settings. Variables carry from one block
to the next, as in the reader's terminal.

- The bounded suite runs the `cli` group then `team`, as one script, against a PostgreSQL
  server of its own (the server binaries the suite's PostgreSQL half uses; it makes its own
  roles, so it never touches a developer's server; without them, `cli` alone), with
  `localhost:5432` in the blocks read as that server's address. The folder holds `.venv`,
  a link to the venv running the tests, so `source .venv/bin/activate` puts this tree's
  `playbook` on the PATH; blocks marked `installs` are left out (the tests' venv is not
  theirs to change).
- `-m slow` copies this tree to a new folder and runs every group from the quick start on:
  a new venv, `pip install`, `playbook demo` on a terminal of 80x24 (quit with `q` once it
  shows rules), then everything else.

- The `claude-code` group ("Use it with Claude Code" and its Codex part) runs in a
  repository of the user's: `STAGES` sets it up before the group's first block (a new
  terminal: the venv activated, no `$PLAYBOOK_DB`, in a git repository with a remote). Its
  blocks are what a person runs with Playbook (the project's playbook, `hooks install`, the
  hooks fed the JSON Claude Code sends them, the Codex install and the AGENTS.md export);
  `claude` itself is not on a test machine and is never marked.

A new group is added to `GROUPS`; a group the README marks that no test knows of fails
`test_every_marked_group_is_run`.
"""

from __future__ import annotations

import os
import re
import select
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from .helpers import pg as pg_support

ROOT = Path(__file__).resolve().parents[1]
README = (ROOT / "README.md").read_text(encoding="utf-8")
MARKED = re.compile(r"^<!-- runnable: ([\w-]+)((?: [\w-]+)*) -->\n```sh\n(.*?)^```", re.M | re.S)
FLAGS = {"installs"}

# Every marked group, in the order a reader meets them; the bounded suite runs the ones
# that install nothing.
GROUPS = ("quickstart", "cli", "team", "claude-code")
LOCAL_SERVER = "localhost:5432"  # the address the team section's blocks name
# What the reader has before a group's first block, and the README does not run for them.
STAGES = {
    "claude-code": (
        "unset PLAYBOOK_DB  # a new terminal, in a repository of the user's\n"
        'source "$HOME/playbook/.venv/bin/activate"\n'
        "git init -q ~/web && git -C ~/web remote add origin git@github.com:acme/web.git\n"
        "cd ~/web\n"
    ),
}


@dataclass(frozen=True)
class Block:
    group: str
    flags: frozenset[str]
    text: str
    line: int  # of the fence, 1-based


def blocks() -> list[Block]:
    found = []
    for m in MARKED.finditer(README):
        flags = frozenset(m.group(2).split())
        assert flags <= FLAGS, f"unknown flag in {m.group(0).splitlines()[0]}"
        found.append(Block(m.group(1), flags, m.group(3), README.count("\n", 0, m.start()) + 2))
    return found


def script(groups: tuple[str, ...], *, installs: bool, server: str | None = None) -> str:
    parts = ["set -eo pipefail"]
    staged: set[str] = set()
    for b in blocks():
        if b.group not in groups or ("installs" in b.flags and not installs):
            continue
        if b.group in STAGES and b.group not in staged:
            staged.add(b.group)
            parts.append(f"echo '# the stage of {b.group}' >&2\n{STAGES[b.group]}")
        text = b.text if server is None else b.text.replace(LOCAL_SERVER, server)
        parts.append(f"echo '# README.md:{b.line} ({b.group})' >&2\n{text}")
    return "\n".join(parts) + "\n"


def clean_env(home: Path, path: str) -> dict[str, str]:
    """The environment of a new user: a home folder and a PATH, no Playbook or libpq
    settings, no active venv."""
    keep = ("LANG", "LC_ALL", "TERM", "TMPDIR", "USER", "LOGNAME", "SHELL")
    env = {k: v for k, v in os.environ.items() if k in keep}
    env.update(HOME=str(home), PATH=path, PIP_DISABLE_PIP_VERSION_CHECK="1")
    return env


def system_path() -> str:
    """PATH without the venv running the tests."""
    venv_bin = str(Path(sys.prefix) / "bin")
    return os.pathsep.join(p for p in os.environ.get("PATH", "").split(os.pathsep)
                           if p and p != venv_bin)  # fmt: skip


def run(text: str, cwd: Path, env: dict[str, str], timeout: float = 120) -> str:
    (cwd / "readme.sh").write_text(text)
    proc = subprocess.run(["bash", "readme.sh"], cwd=cwd, env=env, capture_output=True,
                          text=True, timeout=timeout)  # fmt: skip
    assert proc.returncode == 0, (
        f"the README's blocks failed (exit {proc.returncode}):\n{proc.stderr[-3000:]}\n"
        f"--- stdout ---\n{proc.stdout[-2000:]}"
    )
    return proc.stdout


@pytest.fixture
def project(tmp_path: Path) -> tuple[Path, dict[str, str]]:
    """A user's folder holding the quick start's `.venv` (the tests' own), and a home."""
    home = tmp_path / "home"
    work = home / "playbook"
    work.mkdir(parents=True)
    (work / ".venv").symlink_to(sys.prefix)
    return work, clean_env(home, system_path())


@pytest.fixture
def team_server() -> Iterator[str]:
    """host:port of a PostgreSQL server of this test's own, without a `playbook` database
    (the team section makes it)."""
    from playbook.store.postgres.cluster import Cluster, ClusterError, binaries

    if binaries() is None or shutil.which("psql") is None:
        reason = "no PostgreSQL server binaries or psql"
        if os.environ.get(pg_support.ENV_REQUIRE):
            pytest.fail(f"PostgreSQL is required but: {reason}")
        pytest.skip(reason)
    # The server's socket lives in its folder: a short path (a socket's is limited to about
    # 100 bytes), outside the home folder the README writes to.
    cluster = Cluster(Path(tempfile.mkdtemp(prefix="pb-readme-pg-")))
    try:
        url = cluster.start(owner_pid=os.getpid())
    except ClusterError as exc:
        pytest.fail(str(exc))
    try:
        import psycopg

        with psycopg.connect(url.rsplit("/", 1)[0] + "/postgres", autocommit=True) as conn:
            conn.execute("DROP DATABASE playbook")
        yield f"127.0.0.1:{cluster.port}"
    finally:
        cluster.stop()


def test_every_marked_group_is_run() -> None:
    marked = {b.group for b in blocks()}
    assert marked == set(GROUPS), f"marked groups {sorted(marked)}, known {GROUPS}"
    assert {"quickstart", "cli", "team", "claude-code"} <= marked  # what issue 30 asked for


def test_cli_tour_then_the_team_section_run(
    project: tuple[Path, dict[str, str]], request: pytest.FixtureRequest
) -> None:
    """The team section goes on from the tour's playbook, so one script runs both (the
    tour ran twice when each had a test of its own); without a PostgreSQL server the tour
    runs alone, and the team section's skip (or, under $PLAYBOOK_REQUIRE_PG, its failure)
    is reported as before."""
    work, env = project
    try:
        server: str | None = request.getfixturevalue("team_server")
    except pytest.skip.Exception:
        server = None
    groups = ("cli", "team") if server else ("cli",)
    out = run(script(groups, installs=False, server=server), work, env)
    assert "playbook ready at" in out
    assert re.search(r"restored b-[0-9a-f]{8}: deprecated -> ", out)
    # The tour wrote to the default playbook of its home folder, and nowhere else.
    assert (Path(env["HOME"]) / ".local/share/playbook/state.sqlite3").is_file()
    if server is None:
        pytest.skip("the tour ran; the team section needs PostgreSQL server binaries and psql")
    # `playbook copy` moved the tour's playbook in; the roles were made.
    assert re.search(r"^copied .*\b3 bullets\b", out, re.M), out
    assert "playbook_agent" in out and "playbook_human" in out


def test_claude_code_section_runs(project: tuple[Path, dict[str, str]]) -> None:
    import json

    work, env = project
    out = run(script(("claude-code",), installs=False), work, env)
    repo = Path(env["HOME"]) / "web"
    # The team's settings run `playbook` from the PATH, on the project's playbook.
    settings = json.loads((repo / ".claude" / "settings.json").read_text(encoding="utf-8"))
    prompt = settings["hooks"]["UserPromptSubmit"][0]["hooks"][0]["command"]
    assert prompt == "playbook hook prompt"
    assert (repo / ".playbook" / "playbook.sqlite3").is_file()
    assert "would change" in out and "(after)" in out  # the dry run's diff
    # The hooks answered as Claude Code reads them: the protocol, then the rules.
    answers = [json.loads(line) for line in out.splitlines() if line.startswith("{")]
    start, prompt_answer = (a["hookSpecificOutput"] for a in answers)
    assert start["hookEventName"] == "SessionStart"
    assert "starts with RULE:" in start["additionalContext"]
    rules = prompt_answer["additionalContext"]
    assert "Pin npm to 11 in release jobs" in rules and "Deploy web from" in rules
    # Codex: its hooks and MCP server in the (test's) home, the AGENTS.md block written.
    codex = Path(env["HOME"]) / ".codex"
    assert "playbook hook prompt" in (codex / "hooks.json").read_text(encoding="utf-8")
    assert "[mcp_servers.playbook]" in (codex / "config.toml").read_text(encoding="utf-8")
    assert "playbook export --format agents-md -o AGENTS.md" in out
    agents = (repo / "AGENTS.md").read_text(encoding="utf-8")
    assert "<!-- playbook:begin" in agents and "Deploy web from the release branch" in agents


@pytest.mark.slow
def test_readme_from_a_fresh_clone(tmp_path: Path, team_server: str) -> None:
    """Everything, as a new user: this tree copied to a new folder, a new venv, pip
    install, the demo on a terminal (quit with q once it shows rules), then the rest."""
    import pty

    home = tmp_path / "home"
    work = home / "playbook"
    files = subprocess.run(["git", "ls-files", "-z"], cwd=ROOT, capture_output=True,
                           check=True).stdout.decode().split("\0")  # fmt: skip
    for name in filter(None, files):
        if (ROOT / name).is_file():
            (work / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(ROOT / name, work / name)
    env = clean_env(home, system_path())
    env.update(TERM="xterm-256color", COLUMNS="80", LINES="24")
    (work / "readme.sh").write_text(script(GROUPS, installs=True, server=team_server))
    master, slave = pty.openpty()
    _set_size(slave, 24, 80)
    proc = subprocess.Popen(["bash", "readme.sh"], cwd=work, env=env, stdin=slave,
                            stdout=slave, stderr=slave, start_new_session=True)  # fmt: skip
    os.close(slave)
    seen, quit_sent, deadline = b"", False, time.monotonic() + 900
    try:
        while time.monotonic() < deadline:
            ready, _, _ = select.select([master], [], [], 0.5)
            if ready:
                try:
                    chunk = os.read(master, 65536)
                except OSError:  # the terminal closed: everything has exited
                    break
                seen = (seen + chunk)[-400_000:]
            if not quit_sent and b"Bullets" in seen and re.search(rb"b-[0-9a-f]{8}", seen):
                time.sleep(1.0)
                os.write(master, b"q")
                quit_sent = True
            if proc.poll() is not None and not ready:
                break
        rc = proc.wait(timeout=30)
    finally:
        if proc.poll() is None:
            proc.kill()
        os.close(master)
    tail = re.sub(rb"\x1b\[[0-9;?]*[A-Za-z]", b"", seen)[-4000:].decode("utf-8", "replace")
    assert quit_sent, f"the demo never showed its rules:\n{tail}"
    assert rc == 0, f"the README failed on a fresh clone (exit {rc}):\n{tail}"


def _set_size(fd: int, rows: int, cols: int) -> None:
    import fcntl
    import struct
    import termios

    fcntl.ioctl(fd, termios.TIOCSWINSZ, struct.pack("HHHH", rows, cols, 0, 0))
