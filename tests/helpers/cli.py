"""Run the real `playbook` console entry point in a process of its own, as users and agents
do: forked from a zygote that has already imported the command line (`cli_zygote.py`), or,
for a test that looks at what a fresh interpreter imports (it passes `python_prelude`), a
new interpreter."""

from __future__ import annotations

import atexit
import json
import os
import select
import signal
import subprocess
import sys
import tempfile
import threading
from dataclasses import dataclass
from pathlib import Path
from typing import Any

SRC = str(Path(__file__).resolve().parents[2] / "src")  # this tree, not an installed copy
ENTRY = "from playbook.cli import run; run()"
ZYGOTE = str(Path(__file__).with_name("cli_zygote.py"))
TIMEOUT = 60.0


@dataclass
class Result:
    rc: int
    out: str
    err: str

    @classmethod
    def of(cls, rc: int, out: bytes, err: bytes) -> Result:
        return cls(rc, out.decode("utf-8", "replace"), err.decode("utf-8", "replace"))

    @property
    def json(self) -> Any:
        """stdout as exactly one JSON document (fails the test otherwise)."""
        return json.loads(self.out)

    @property
    def data(self) -> Any:
        doc = self.json
        assert doc["ok"] is True, doc
        return doc["data"]

    @property
    def error(self) -> dict[str, Any]:
        doc = self.json
        assert doc["ok"] is False, doc
        assert set(doc["error"]) == {"code", "message", "hint"}
        return doc["error"]


def clean_env(**extra: str) -> dict[str, str]:
    env = {
        k: v
        for k, v in os.environ.items()
        if k not in ("PLAYBOOK_DB", "PLAYBOOK_POLICY", "XDG_DATA_HOME")
    }
    env["PYTHONPATH"] = SRC
    env.update(extra)
    return env


def run_cli(
    *args: str | Path,
    db: Path | None = None,
    env: dict[str, str] | None = None,
    stdin: bytes | None = None,
    python_prelude: str = "",
    entry: str = ENTRY,
    cwd: Path | None = None,
) -> Result:
    """`python -c ENTRY ARGS` (the CLI's entry point, or `entry`), in `cwd`."""
    argv = [str(a) for a in args]
    if db is not None:
        argv = ["--db", str(db), *argv]
    env = env if env is not None else clean_env()
    if python_prelude or not hasattr(os, "fork"):
        proc = subprocess.run(
            [sys.executable, "-c", python_prelude + entry, *argv],
            input=stdin,
            capture_output=True,
            env=env,
            cwd=cwd,
            timeout=TIMEOUT,
        )
        return Result.of(proc.returncode, proc.stdout, proc.stderr)
    return _zygote().run(entry, argv, env, stdin, cwd or Path.cwd())


class _Zygote:
    """The zygote process of this test process, and one command at a time through it."""

    def __init__(self) -> None:
        self.proc = subprocess.Popen(
            [sys.executable, ZYGOTE], stdin=subprocess.PIPE, stdout=subprocess.PIPE, env=clean_env()
        )
        self.pending = b""
        self.lock = threading.Lock()

    def alive(self) -> bool:
        return self.proc.poll() is None

    def close(self) -> None:
        if self.alive():
            assert self.proc.stdin is not None
            self.proc.stdin.close()  # the zygote ends at the end of its input
            try:
                self.proc.wait(5)
            except subprocess.TimeoutExpired:
                self.proc.kill()

    def run(
        self, code: str, argv: list[str], env: dict[str, str], stdin: bytes | None, cwd: Path
    ) -> Result:
        with self.lock, tempfile.TemporaryDirectory(prefix="pb-cli-") as tmp:
            files = {name: os.path.join(tmp, name) for name in ("stdin", "stdout", "stderr")}
            Path(files["stdin"]).write_bytes(stdin or b"")
            request = {"code": code, "argv": argv, "env": env, "cwd": str(cwd), **files}
            assert self.proc.stdin is not None
            self.proc.stdin.write((json.dumps(request) + "\n").encode())
            self.proc.stdin.flush()
            pid = self._reply(TIMEOUT)["pid"]
            try:
                rc = self._reply(TIMEOUT)["rc"]
            except subprocess.TimeoutExpired:
                os.kill(pid, signal.SIGKILL)
                self._reply(TIMEOUT)
                raise
            out, err = (Path(files[name]).read_bytes() for name in ("stdout", "stderr"))
            return Result.of(rc, out, err)

    def _reply(self, timeout: float) -> dict[str, Any]:
        assert self.proc.stdout is not None
        fd = self.proc.stdout.fileno()
        while b"\n" not in self.pending:
            ready, _, _ = select.select([fd], [], [], timeout)
            if not ready:
                raise subprocess.TimeoutExpired(["playbook"], timeout)
            chunk = os.read(fd, 4096)
            if not chunk:
                raise RuntimeError(f"the CLI zygote ended (exit code {self.proc.wait()})")
            self.pending += chunk
        line, _, self.pending = self.pending.partition(b"\n")
        return json.loads(line)


_ZYGOTE: _Zygote | None = None


def _zygote() -> _Zygote:
    global _ZYGOTE
    if _ZYGOTE is None or not _ZYGOTE.alive():
        _ZYGOTE = _Zygote()
        atexit.register(_ZYGOTE.close)
    return _ZYGOTE


def assert_user_error(r: Result, code: str, exit_code: int = 1) -> dict[str, Any]:
    """A --json failure: one JSON error on stdout, one plain line on stderr, no traceback."""
    assert r.rc == exit_code, (r.rc, r.out, r.err)
    assert "Traceback" not in r.err
    err = r.error
    assert err["code"] == code, err
    lines = r.err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("playbook: error: "), r.err
    return err
