"""The CLI's messages: one plain line per error, documented codes, plain English."""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

from playbook.cli.common import ERROR_CODES
from playbook.curation import curate
from playbook.review.queue import stage
from playbook.store import open_store

from .helpers.cli import run_cli
from .helpers.imports import syntax_tree

ROOT = Path(__file__).resolve().parents[1]
CLI = ROOT / "src" / "playbook" / "cli"


def emitted_codes() -> set[str]:
    """Every error code the CLI can emit, read from the code: the literal first argument of
    each CliError(...) (or cls(...) inside CliError), and every registered code."""
    codes = set(ERROR_CODES)
    for path in CLI.rglob("*.py"):
        for node in ast.walk(syntax_tree(path)):
            if not isinstance(node, ast.Call) or not node.args:
                continue
            func = node.func
            name = func.id if isinstance(func, ast.Name) else getattr(func, "attr", None)
            first = node.args[0]
            if name in ("CliError", "cls") and isinstance(first, ast.Constant):
                codes.add(str(first.value))
            if name in ("CliError", "cls") and isinstance(first, ast.IfExp):
                codes.update(str(c.value) for c in (first.body, first.orelse)
                             if isinstance(c, ast.Constant))  # fmt: skip
            if isinstance(node.func, ast.Name) and node.func.id == "_not_applied":
                codes.update({"not_found", "invalid_input", "nothing_applied"})
    return codes


def readme_codes() -> set[str]:
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    table = text.split("### Error codes", 1)[1].split("\n#", 1)[0]
    found = set()
    for line in table.splitlines():
        if line.startswith("| `"):
            found.update(re.findall(r"`([a-z_]+)`", line.split("|")[1]))
    return found


def test_every_error_code_the_cli_emits_is_in_the_readme() -> None:
    emitted = emitted_codes()
    assert {"nothing_applied", "not_pending", "reflector_failed", "stale_proposal"} <= emitted
    assert emitted <= set(ERROR_CODES), emitted - set(ERROR_CODES)  # each has its exit code
    assert emitted - readme_codes() == set()


def test_the_readme_table_gives_each_code_its_exit() -> None:
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    table = text.split("### Error codes", 1)[1].split("\n#", 1)[0]
    for line in table.splitlines():
        if line.startswith("| `"):
            cells = [c.strip() for c in line.strip("|").split("|")]
            for code in re.findall(r"`([a-z_]+)`", cells[0]):
                assert str(ERROR_CODES[code]) == cells[1], (code, cells)


@pytest.mark.parametrize(
    ("args", "needle"),
    [
        (["frobnicate"], "No such command 'frobnicate' (see 'playbook --help')"),
        (["mark"], "Missing argument 'ID' (see 'playbook mark --help')"),
        (["recall", "x", "--limit", "zero"], "'zero' is not a valid int"),
        (["stats", "--bogus"], "No such option: --bogus"),
    ],
)
def test_usage_errors_are_one_plain_line_and_exit_2(
    tmp_path: Path, args: list[str], needle: str
) -> None:
    r = run_cli(*args, db=tmp_path / "pb.sqlite3")
    assert r.rc == 2 and r.out == ""
    lines = r.err.splitlines()
    assert len(lines) == 1 and lines[0].startswith("playbook: error: "), r.err
    assert needle in lines[0]


def test_reject_takes_r_for_reason(tmp_path: Path) -> None:
    db = tmp_path / "pb.sqlite3"
    with open_store(db) as store:
        (pid,) = stage(store, [{"type": "add", "content": "Pin npm"}]).staged
    r = run_cli("reject", pid, "-r", "too specific", "--json", db=db)
    assert r.data["status"] == "rejected"


def test_one_is_singular(tmp_path: Path) -> None:
    db = tmp_path / "pb.sqlite3"
    with open_store(db) as store:
        bid = curate(store, [{"type": "add", "content": "Pin npm"}]).added[0]
        curate(store, [{"type": "helpful", "bullet_id": bid}])
        store.block("sudo npm", "no")
    stats = run_cli("stats", db=db).out
    assert "(1 bullet)" in stats and "feedback   1 event (" in stats
    assert "1 blocked pattern\n" in stats and "0 proposals pending" in stats
    assert "timeline (1 event):" in run_cli("show", bid, db=db).out
    assert "(1 bullet)" in run_cli("init", db=db).out
    assert "1 events" not in stats and "1 bullets" not in stats
