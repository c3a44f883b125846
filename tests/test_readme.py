"""The README's promises: its Python example runs, and CI runs its test command."""

from __future__ import annotations

import os
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
README = (ROOT / "README.md").read_text(encoding="utf-8")


def test_python_api_example_runs(tmp_path: Path) -> None:
    code = re.search(r"```python\n(.*?)```", README, re.S)
    assert code is not None
    namespace: dict[str, object] = {}
    cwd = os.getcwd()
    os.chdir(tmp_path)
    try:
        exec(compile(code.group(1), "README.md", "exec"), namespace)
    finally:
        os.chdir(cwd)
    result, r = namespace["result"], namespace["r"]
    assert [o.status for o in result.outcomes] == ["added"]
    (item,) = r.bullets
    assert item.bullet.content == "Pin npm to 11 in release jobs"
    assert item.bullet.provenance.byte_offset == 4096
    # "release" 3 + "job" (substring of "jobs") 1 + "npm" 3
    assert item.keyword_score == 7
    assert (tmp_path / "state.sqlite3").exists()


def test_ci_runs_the_readme_test_command() -> None:
    commands = re.findall(r"```sh\n(.*?)```", README, re.S)
    test_command = next(c for c in commands if "pytest" in c).strip()
    ci = (ROOT / ".ci" / "run").read_text(encoding="utf-8")
    # CI performs the same steps as the README's one-liner, on a fresh clone.
    for step in ("python3 -m venv .venv", "pip install", "-e '.[dev,mcp]'", "-m pytest"):
        assert step in test_command and step in ci


def test_the_policy_eval_walkthrough_is_what_the_demo_says(tmp_path: Path) -> None:
    """The README's `playbook policy eval` on the demo: its table and its verdict are what
    the demo gives (only the dates of its first line depend on the day it ran)."""
    from playbook.demo.cache import make_demo
    from playbook.policy_eval import evaluate
    from playbook.policy_eval.report import table
    from playbook.store import open_store

    block = README.split("$ playbook policy eval\n", 1)[1].split("```", 1)[0]
    shown = [line.rstrip() for line in block.splitlines()]
    demo = make_demo(tmp_path / "demo.sqlite3")
    with open_store(demo.path, mode="read") as store:
        report = evaluate(store)
    rows = table(report)
    assert rows[1:] == shown[shown.index(rows[0]) + 1 :][: len(rows) - 1]
    assert report.line() in shown
    assert report.line() in README.split("--write playbook.toml | tail -1", 1)[1]


def test_every_install_hint_is_the_readmes_install_command() -> None:
    """Regression: errors said pip install 'playbook-workbench[postgres]' (or [mcp]), which
    fails outside the clone: the package is not on PyPI. Each hint's command is a line of
    one of the README's shell blocks (the team section's runs in `-m slow`), and the README
    names no other."""
    from playbook.core.errors import SchemaTooNewError, install_hint
    from playbook.mcp.server import INSTALL

    blocks = re.findall(r"```sh\n(.*?)```", README, re.S)
    readme_installs = {line.strip() for b in blocks for line in b.splitlines() if "pip" in line}
    for extra in ("postgres", "mcp"):
        command = install_hint(extra).rsplit(": ", 1)[1]
        assert command in readme_installs, (command, readme_installs)
    assert install_hint("mcp") == INSTALL
    assert "pip install -e ." in SchemaTooNewError.hint
    assert "playbook-workbench[" not in README
    source = "".join(p.read_text(encoding="utf-8") for p in (ROOT / "src").rglob("*.py"))
    assert "playbook-workbench[" not in source and "upgrade playbook-workbench" not in source
