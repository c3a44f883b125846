"""Run the real `playbook` console entry point in a subprocess, as users and agents do."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

SRC = str(Path(__file__).resolve().parents[2] / "src")  # this tree, not an installed copy
ENTRY = "from playbook.cli import run; run()"


@dataclass
class Result:
    rc: int
    out: str
    err: str

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
) -> Result:
    argv = [str(a) for a in args]
    if db is not None:
        argv = ["--db", str(db), *argv]
    proc = subprocess.run(
        [sys.executable, "-c", python_prelude + ENTRY, *argv],
        input=stdin,
        capture_output=True,
        env=env if env is not None else clean_env(),
        timeout=60,
    )
    return Result(
        proc.returncode,
        proc.stdout.decode("utf-8", "replace"),
        proc.stderr.decode("utf-8", "replace"),
    )


def assert_user_error(r: Result, code: str, exit_code: int = 1) -> dict[str, Any]:
    """A --json failure: one JSON error on stdout, one plain line on stderr, no traceback."""
    assert r.rc == exit_code, (r.rc, r.out, r.err)
    assert "Traceback" not in r.err
    err = r.error
    assert err["code"] == code, err
    lines = r.err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("playbook: error: "), r.err
    return err
