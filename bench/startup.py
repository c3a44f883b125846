"""Where a one-shot command's start-up goes: `python -X importtime` for `playbook mark` and
`playbook recall --json` on a 10k-rule playbook, next to Python's own start-up.

    python bench/startup.py [--runs 5]

Prints, per command, the five imports with the largest cumulative time and the five with
the largest own time (from the least disturbed of several runs), and reports the total
import time as figures (no target: the whole-process targets are in bench/cli.py).
`--help` after its first run prints the help typer rendered then (`playbook.cli.helptext`).
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import synth
from report import environment, figure, note

ENTRY = "from playbook.launcher import run; run()"  # the installed console script


def importtime(args: list[str]) -> list[tuple[int, int, str]]:
    """(own µs, cumulative µs, module with its nesting) of every import of one run."""
    proc = subprocess.run(
        [sys.executable, "-X", "importtime", "-c", ENTRY, *args],
        capture_output=True,
        text=True,
        check=True,
        env=environment(),
    )
    rows = []
    for line in proc.stderr.splitlines():
        if not line.startswith("import time:") or "imported package" in line:
            continue
        own, cumulative, name = line.removeprefix("import time:").split("|", 2)
        rows.append((int(own), int(cumulative), name.rstrip()))
    return rows


def python_alone(runs: int) -> float:
    walls = []
    for _ in range(runs):
        t = time.perf_counter()
        subprocess.run([sys.executable, "-c", "pass"], check=True, env=environment())
        walls.append(time.perf_counter() - t)
    return min(walls)


def show(label: str, rows: list[tuple[int, int, str]]) -> None:
    note(f"{label}: imports {sum(r[0] for r in rows) / 1000:.0f} ms in all")
    note("  largest cumulative:")
    for own, cum, name in sorted(rows, key=lambda r: -r[1])[:5]:
        note(f"    {cum / 1000:7.1f} ms  {name.strip()}  (own {own / 1000:.1f})")
    note("  largest own:")
    for own, _, name in sorted(rows, key=lambda r: -r[0])[:5]:
        note(f"    {own / 1000:7.1f} ms  {name.strip()}")


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--runs", type=int, default=5)
    args = ap.parse_args()
    figure("python -c pass (fastest run)", python_alone(args.runs), "s")
    with tempfile.TemporaryDirectory() as tmp:
        db = synth.copy_of(10_000, Path(tmp) / "pb.sqlite3")
        bid = synth.some_id(db)
        commands = {
            "mark": ["--db", str(db), "mark", bid, "helpful"],
            "recall --json": ["--db", str(db), "recall", "npm lockfile release job", "--json"],
            "--help": ["--help"],
        }
        for label, argv in commands.items():
            runs = [importtime(argv) for _ in range(args.runs)]
            best = min(runs, key=lambda rows: sum(r[0] for r in rows))
            show(f"playbook {label}", best)
            total = sum(r[0] for r in best) / 1000
            figure(f"imports of playbook {label} (-X importtime)", total, "ms")
    return 0


if __name__ == "__main__":
    sys.exit(main())
