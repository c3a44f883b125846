"""`just bench` (bench/run.py): every script runs whatever the others did, and each becomes
rows of one table (issue 15)."""

from __future__ import annotations

import importlib.util
from pathlib import Path
from types import ModuleType

BENCH = Path(__file__).resolve().parents[1] / "bench"


def _runner() -> ModuleType:
    spec = importlib.util.spec_from_file_location("bench_run", BENCH / "run.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_every_bench_script_is_run_and_only_scripts() -> None:
    run = _runner()
    names = {p.stem for p in run.scripts([])}
    assert {"cli", "curate", "import", "recall", "startup", "topics"} <= names
    assert not names & {"run", "synth", "report", "cass_yaml"}  # helpers, or the runner


def test_a_failing_script_is_a_row_and_the_next_one_still_runs(tmp_path: Path) -> None:
    run = _runner()
    crash = tmp_path / "crash.py"
    crash.write_text("import sys\nprint('half done', file=sys.stderr)\nraise SystemExit(3)\n")
    silent = tmp_path / "silent.py"
    silent.write_text("print('a table for people, no figure lines')\n")
    fine = tmp_path / "fine.py"
    fine.write_text(
        "print('x at 1k\\t0.100 s\\t≤ 0.150 s\\tpass')\n"
        "print('y at 1k\\t0.300 s\\t≤ 0.150 s\\tmiss')\n"
        "print('z at 1k\\t5 MB\\t-\\t-')\n"
    )
    results = []
    for script in (crash, silent, fine):
        rows, failure, _ = run.run_one(script)
        results.append((script.stem, rows, failure))
    assert results[0][1] == [] and results[0][2] == "FAILED (exit 3): half done"
    assert results[1][1] == [] and results[1][2].startswith("FAILED: printed no figure lines")
    assert results[2][2] is None and [r[3] for r in results[2][1]] == ["pass", "miss", "-"]
    text, bad = run.table(results)
    assert bad == 3  # two failures and one miss; a figure without a target is not counted
    lines = text.splitlines()
    assert len(lines) == 2 + 2 + 3  # header, rule, a row per failure, a row per figure
    assert lines[-2].split() == ["fine", "y", "at", "1k", "0.300", "s", "≤", "0.150", "s", "miss"]
    markdown, _ = run.table(results, markdown=True)
    assert markdown.splitlines()[0] == "| script | figure | value | target | result |"
