"""Every argument of every command, and stdin, with the values issue 29 sent (on both
backends): no traceback, no hang, the exit code the error code documents.

The commands and their parameters are read from the command line itself (typer's click
tree), so a command or an option added later is fuzzed too. Each run gives one parameter a
hostile value (the others keep a valid one): NaN and the infinities, huge and negative
numbers, far dates, empty text, control and bidi characters, 100,000 characters, invalid
UTF-8 and a lone surrogate (as a shell passes them), a device, a FIFO with a writer, a
folder; the commands that read stdin get NUL bytes, invalid UTF-8, JSON nested 100,000
deep, NaN, a key twice, random bytes and several megabytes. With --json the one JSON
document's error code maps to the exit code (README, "Error codes").

CI gives each parameter one value class, rotating (a sixth of them on PostgreSQL too);
`pytest -m slow` gives every parameter every class on both backends.
"""

from __future__ import annotations

import contextlib
import json
import os
import random
import stat
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from playbook.cli.common import ERROR_CODES
from playbook.review import queue
from playbook.store import open_store

from .helpers.cli import Result, clean_env, run_cli

# Argument values: text, or bytes (what a shell passes, decoded as Python decodes argv).
ARGV: dict[str, str | bytes] = {
    "nan": "nan", "inf": "inf", "-inf": "-inf", "1e309": "1e309", "huge": "9" * 40,
    "negative": "-1", "zero": "0", "far date": "9999-12-31", "old date": "0001-01-01",
    "empty": "", "control": "\x1b[31m\x07a\rb\x08", "bidi": "\u202eevil\u2066x",
    "long": "x" * 100_000, "invalid UTF-8": b"\xff\xfe ab", "surrogate": b"\xed\xa0\x80x",
    "device": "<device>", "fifo": "<fifo>", "folder": "<folder>",
}  # fmt: skip
# What a FIFO's writer sends, and stdin: hostile bytes.
STDIN: dict[str, bytes] = {
    "nul": b'[{"type": "add", "content": "a\\u0000b"}]\x00\x00',
    "invalid UTF-8": b"\xff\xfe[{\xc3",
    "nested": b"[" * 100_000,
    "NaN": b'[{"type": "add", "content": "x", "weight": NaN}]',
    "key twice": b'[{"type": "add", "content": "a", "content": "b"}]',
    "random": random.Random(29).randbytes(4096),
    "megabytes": b'[{"type": "add", "content": "' + b"x" * (3 << 20) + b'"}]',
    "empty": b"",
}
STDIN_COMMANDS = [["curate", "-"], ["import", "-"], ["reflect", "-", "--session", "s"],
                  ["hook", "prompt"], ["hook", "session-start"]]  # fmt: skip
SKIP = {"tui", "demo", "mcp"}  # interactive: they hold the terminal (or stdin) until told
TIMEOUT = 40.0  # seconds: a run past it hangs


def _commands() -> dict[tuple[str, ...], Any]:
    import typer

    from playbook.cli.typer_app import app

    out: dict[tuple[str, ...], Any] = {}

    def walk(command: Any, path: tuple[str, ...]) -> None:
        subs = getattr(command, "commands", None)
        if subs:
            for name, sub in subs.items():
                walk(sub, (*path, name))
        elif path and path[0] not in SKIP:
            out[path] = command

    root = typer.main.get_command(app)
    walk(root, ())
    out[("--root--",)] = root  # --db and --policy
    return out


COMMANDS = _commands()


def _cases() -> list[tuple[tuple[str, ...], str]]:
    """(command, parameter) for every parameter that takes a value."""
    cases = []
    for path, command in COMMANDS.items():
        for param in command.params:
            if getattr(param, "is_flag", False) or param.name in ("version", "json_out"):
                continue
            cases.append((path, param.name))
    return cases


CASES = _cases()
CLASSES = sorted(ARGV)


def _ci_cases() -> list[Any]:
    """One value class per parameter, rotating; every third case also on PostgreSQL."""
    out = []
    for i, (path, name) in enumerate(CASES):
        klass = CLASSES[i % len(CLASSES)]
        out.append(pytest.param(path, name, klass, "sqlite", id=f"{' '.join(path)}-{name}-{klass}"))
        if i % 6 == 0:
            out.append(
                pytest.param(
                    path,
                    name,
                    klass,
                    "postgresql",
                    marks=pytest.mark.postgres,
                    id=f"{' '.join(path)}-{name}-{klass}-pg",
                )
            )
    return out


def _all_cases() -> list[Any]:
    return [
        pytest.param(
            path,
            name,
            klass,
            backend,
            marks=[pytest.mark.slow] + ([pytest.mark.postgres] if backend != "sqlite" else []),
            id=f"{' '.join(path)}-{name}-{klass}-{backend}",
        )
        for path, name in CASES
        for klass in CLASSES
        for backend in ("sqlite", "postgresql")
    ]


@pytest.fixture(scope="module")
def world(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    """Files every run may name: a batch, a diary, an export, a folder, a device."""
    root = tmp_path_factory.mktemp("fuzz")
    files = {
        "deltas": root / "deltas.json",
        "diary": root / "diary.md",
        "export": root / "export.json",
        "folder": root / "folder",
        "home": root / "home",
    }
    files["deltas"].write_text('[{"type": "add", "content": "Cache pip downloads"}]')
    files["diary"].write_text("RULE: Pin Python to 3.12 in CI\n")
    files["folder"].mkdir()
    files["home"].mkdir()
    seed = root / "seed.sqlite3"
    assert run_cli("add", "Pin npm to 11 in release jobs", db=seed).rc == 0
    files["export"].write_text(run_cli("export", db=seed).out)
    if os.geteuid() == 0:  # a null device of our own: a write through must leave it one
        device = root / "null"
        os.mknod(device, 0o666 | stat.S_IFCHR, os.makedev(1, 3))
        files["device"] = device
    else:
        files["device"] = Path("/dev/zero")
    return files


_PLAYBOOKS: dict[str, dict[str, Any]] = {}  # one per backend and worker, made once


@pytest.fixture
def playbook(
    backend_name: str, tmp_path_factory: pytest.TempPathFactory, request: pytest.FixtureRequest
) -> dict[str, Any]:
    """A playbook with a rule, a proposal, a block and a conflict to act on (made once per
    backend: the runs may change it, and assert nothing about its rows)."""
    if backend_name in _PLAYBOOKS:
        return _PLAYBOOKS[backend_name]
    if backend_name == "sqlite":
        target: str | Path = tmp_path_factory.mktemp("fuzz-pb") / "pb.sqlite3"
    else:
        target = str(request.getfixturevalue("pg_url"))
    with open_store(target) as store:
        a = store.insert_bullet("Pin npm to 11 in release jobs", tags=["ci"]).id
        b = store.insert_bullet("Never pin npm in release jobs").id
        proposal = queue.stage(store, [{"type": "add", "content": "Cache docker layers"}])
        block = store.block("Use --no-verify", "hooks matter")
        conflict = store.flag_conflict(a, b, "fuzz")
    _PLAYBOOKS[backend_name] = {
        "db": target, "id": a, "proposal": proposal.staged[0], "block": block,
        "conflict": str(conflict),
    }  # fmt: skip
    return _PLAYBOOKS[backend_name]


@pytest.fixture
def backend_name(request: pytest.FixtureRequest) -> str:
    return str(request.param)


def _base(path: tuple[str, ...], pb: dict[str, Any], files: dict[str, Any], tmp: Path) -> list[Any]:
    """A valid command line for `path` (its required arguments filled in)."""
    ids = pb["id"]
    table: dict[tuple[str, ...], list[Any]] = {
        ("add",): ["Cache pip downloads in CI"], ("mark",): [ids, "helpful"],
        ("curate",): [files["deltas"]], ("show",): [ids], ("recall",): ["npm release"],
        ("reflect",): [files["diary"], "--session", "fuzz"], ("outcome",): ["success", ids],
        ("approve",): [pb["proposal"]], ("reject",): [pb["proposal"], "--reason", "no"],
        ("pin",): [ids, "--reason", "team"], ("unpin",): [ids],
        ("block",): ["Force push to main", "--reason", "no"], ("unblock",): [pb["block"]],
        ("restore",): [ids], ("resolve",): [pb["conflict"], "keep-both"],
        ("diff",): ["--since", "7d"], ("import",): [files["export"]],
        ("copy",): [pb["db"], tmp / "copy.sqlite3"], ("hook",): ["prompt"],
        ("hooks", "install"): ["claude-code", "--dry-run"],
        ("hooks", "uninstall"): ["claude-code", "--dry-run"], ("--root--",): ["stats"],
    }  # fmt: skip
    if path in table:
        return list(table[path])
    command = COMMANDS[path]
    return ["x" for p in command.params if p.param_type_name == "argument" and p.required]


OUTPUTS = {"output", "write", "destination"}  # parameters naming a file to write


@contextlib.contextmanager
def _fifo(folder: Path, data: bytes, *, read: bool) -> Iterator[Path]:
    """A FIFO with someone at its other end, never blocking the test: a writer that sends
    `data` to whoever opens it, or (`read`) a reader that takes whatever is written."""
    path = folder / f"in-{time.monotonic_ns()}.fifo"
    os.mkfifo(path)
    done = threading.Event()

    def write() -> None:
        while not done.is_set():
            try:
                fd = os.open(path, os.O_WRONLY | os.O_NONBLOCK)
            except OSError:  # nobody reading yet
                time.sleep(0.01)
                continue
            with contextlib.suppress(OSError):
                os.set_blocking(fd, True)
                os.write(fd, data)
            os.close(fd)
            return

    def drain() -> None:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK)
        try:
            while not done.is_set():
                with contextlib.suppress(BlockingIOError):
                    os.read(fd, 1 << 16)
                time.sleep(0.01)
        finally:
            os.close(fd)

    thread = threading.Thread(target=drain if read else write, daemon=True)
    thread.start()
    try:
        yield path
    finally:
        done.set()
        thread.join(2)


def _value(klass: str, files: dict[str, Any], fifo: Path) -> str:
    raw = ARGV[klass]
    if isinstance(raw, bytes):
        return os.fsdecode(raw)  # what Python makes of those bytes in argv
    return {"<device>": str(files["device"]), "<fifo>": str(fifo),
            "<folder>": str(files["folder"])}.get(raw, raw)  # fmt: skip


def _command_line(path: tuple[str, ...], name: str, value: str, base: list[Any]) -> list[str]:
    command = COMMANDS[path]
    param = next(p for p in command.params if p.name == name)
    words = [str(w) for w in base]
    prefix = [] if path == ("--root--",) else list(path)
    if param.param_type_name == "argument":
        arguments = [p for p in command.params if p.param_type_name == "argument"]
        position = arguments.index(param)
        words = (
            [*words[:position], value, *words[position + 1 :]]
            if position < len(words)
            else [*words, value]
        )
    else:
        words = [*words, param.opts[0], value]
    if path == ("--root--",):
        return [param.opts[0], value, *words]
    return [*prefix, *words]


def _takes_json(path: tuple[str, ...]) -> bool:
    return path != ("--root--",) and any(p.name == "json_out" for p in COMMANDS[path].params)


def check(r: Result, argv: list[str], *, json_out: bool, hook: bool = False) -> None:
    """What every run must give: one of the documented exit codes, never a traceback, the
    JSON document's error code matching the exit code."""
    shown = [a[:60] for a in argv]
    assert "Traceback" not in r.err, (shown, r.err[-2000:])
    assert r.rc in (0, 1, 2, 3), (shown, r.rc, r.err[-500:])
    if hook:  # a hook never breaks the agent (a command line no agent writes: usage)
        assert r.rc == 0 or (r.rc == 2 and "playbook: error:" in r.err), (shown, r.err[-500:])
        return
    if r.rc:
        last = r.err.strip().splitlines()[-1] if r.err.strip() else ""
        assert last.startswith("playbook: error: "), (shown, r.err[-500:])
    if json_out and r.out.strip():
        doc = json.loads(r.out, parse_constant=lambda c: pytest.fail(f"{c} in --json"))
        assert isinstance(doc, dict) and isinstance(doc.get("ok"), bool), (shown, r.out[:300])
        if not doc["ok"]:
            assert ERROR_CODES[doc["error"]["code"]] == r.rc, (shown, doc["error"], r.rc)


def _run(
    path: tuple[str, ...], name: str, klass: str, pb: dict[str, Any], files: dict[str, Any],
    tmp_path: Path,
) -> None:  # fmt: skip
    with _fifo(tmp_path, STDIN["random"], read=name in OUTPUTS) as fifo:
        value = _value(klass, files, fifo)
        argv = _command_line(path, name, value, _base(path, pb, files, tmp_path))
        json_out = _takes_json(path)
        if json_out:
            argv.append("--json")
        if name != "db":
            argv = ["--db", str(pb["db"]), *argv]
        env = clean_env(HOME=str(files["home"]), XDG_STATE_HOME=str(tmp_path / "state"))
        started = time.monotonic()
        r = run_cli(*argv, env=env, stdin=b"", cwd=tmp_path)  # a value may name a file
        assert time.monotonic() - started < TIMEOUT, (
            f"{argv[:4]} ran {time.monotonic() - started:.0f} s"
        )
    check(r, argv, json_out=json_out, hook=path == ("hook",) and name != "db")
    if "device" in files and stat.S_ISCHR(files["device"].lstat().st_mode) is False:
        pytest.fail(f"{argv[:6]} replaced a device with a regular file")


@pytest.mark.parametrize("path, name, klass, backend_name", _ci_cases(), indirect=["backend_name"])
def test_every_argument_with_a_hostile_value(
    path: tuple[str, ...], name: str, klass: str, playbook: dict[str, Any],
    world: dict[str, Any], tmp_path: Path,
) -> None:  # fmt: skip
    _run(path, name, klass, playbook, world, tmp_path)


@pytest.mark.parametrize("path, name, klass, backend_name", _all_cases(), indirect=["backend_name"])
def test_every_argument_with_every_hostile_value(
    path: tuple[str, ...], name: str, klass: str, playbook: dict[str, Any],
    world: dict[str, Any], tmp_path: Path,
) -> None:  # fmt: skip
    _run(path, name, klass, playbook, world, tmp_path)


BACKENDS = ["sqlite", pytest.param("postgresql", marks=pytest.mark.postgres)]


@pytest.mark.parametrize("stdin", sorted(STDIN))
@pytest.mark.parametrize("command", STDIN_COMMANDS, ids=lambda c: " ".join(c[:2]))
@pytest.mark.parametrize("backend_name", BACKENDS, indirect=True)
def test_stdin_with_hostile_bytes(
    command: list[str], stdin: str, playbook: dict[str, Any], world: dict[str, Any],
    tmp_path: Path, backend_name: str,
) -> None:  # fmt: skip
    if backend_name == "postgresql" and stdin != "nul":
        pytest.skip("the parser meets these before the database: SQLite's run covers them")
    hook = command[0] == "hook"
    argv = ["--db", str(playbook["db"]), *command] + ([] if hook else ["--json"])
    env = clean_env(HOME=str(world["home"]), XDG_STATE_HOME=str(tmp_path / "state"))
    started = time.monotonic()
    r = run_cli(*argv, env=env, stdin=STDIN[stdin], cwd=tmp_path)
    assert time.monotonic() - started < TIMEOUT
    check(r, argv, json_out=not hook, hook=hook)


def test_the_fuzz_reaches_every_command() -> None:
    """A command added to the command line is fuzzed without being listed here."""
    names = {" ".join(path) for path in COMMANDS}
    assert {"add", "curate", "import", "export", "policy eval", "pg roles", "copy"} <= names
    assert len(CASES) > 60
