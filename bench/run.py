"""Run every bench script and print one table: figure, value, target, pass/miss.

    python bench/run.py [SCRIPT ...]        # `just bench`; default: every script
    python bench/run.py --markdown [SCRIPT ...]   # the same table in Markdown (the README)

The convention (every bench script follows it): a script prints one line on stdout per
figure it measures,

    figure<TAB>value<TAB>target<TAB>pass|miss|-

where value and target carry their units ("0.132 s", "≤ 0.15 s") and `-` marks a figure
shown without a target (`bench/report.py` prints such lines). Everything else a script
writes (progress, context, its own tables) goes to the terminal as it runs. A script is
any `bench/*.py` with a `__main__` block, except this runner; helpers without one
(`synth.py`, `report.py`) are not run. A script whose source has the line
`# bench: only when named` (optionally `, limit N s`: its own time limit) runs only when
named: `team_year.py` (`just bench team-year`; a hyphen stands for an underscore) takes
an hour or more and builds worlds of gigabytes.

Every script runs, in name order, whatever the others did: a target missed is a `miss`
row, and a script that fails (non-zero exit, a crash, or the time limit) is a row that
says so, with the last line it wrote to stderr. Exit status: 0 when every row passes,
1 otherwise. Figures on a shared machine move by tens of percent from run to run.
"""

from __future__ import annotations

import argparse
import os
import re
import subprocess
import sys
import threading
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
from report import environment  # noqa: E402

LIMIT_S = 3600  # per script, unless it says otherwise
NAMED = re.compile(r"^# bench: only when named(?:, limit (\d+) s)?$", re.MULTILINE)


def limit_of(path: Path) -> int:
    found = NAMED.search(path.read_text())
    return int(found.group(1)) if found and found.group(1) else LIMIT_S


def scripts(names: list[str]) -> list[Path]:
    found = sorted(
        p
        for p in HERE.glob("*.py")
        if p.name != "run.py" and 'if __name__ == "__main__"' in p.read_text()
    )
    if not names:
        return [p for p in found if not NAMED.search(p.read_text())]
    wanted = {Path(n).stem.replace("-", "_") for n in names}
    unknown = wanted - {p.stem for p in found}
    if unknown:
        raise SystemExit(f"no such bench script: {', '.join(sorted(unknown))}")
    return [p for p in found if p.stem in wanted]


def run_one(path: Path) -> tuple[list[list[str]], str | None, float]:
    """(figure rows, failure or None, seconds) of one script; its other output is shown."""
    started = time.monotonic()
    env = environment(PYTHONUNBUFFERED="1")  # with the bytecode cache, as installed
    src = str(HERE.parent / "src")
    env["PYTHONPATH"] = src + (os.pathsep + env["PYTHONPATH"] if env.get("PYTHONPATH") else "")
    proc = subprocess.Popen(
        [sys.executable, str(path)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=env,
        cwd=HERE.parent,
    )
    rows: list[list[str]] = []
    last_err: list[str] = []

    def pump_err() -> None:
        assert proc.stderr is not None
        for line in proc.stderr:
            sys.stderr.write(f"  {line}")
            if line.strip():
                last_err[:] = [line.strip()]

    reader = threading.Thread(target=pump_err, daemon=True)
    reader.start()
    limit = limit_of(path)
    timer = threading.Timer(limit, proc.kill)
    timer.start()
    assert proc.stdout is not None
    for line in proc.stdout:
        fields = line.rstrip("\n").split("\t")
        if len(fields) == 4 and fields[3] in ("pass", "miss", "-"):
            rows.append(fields)
            sys.stderr.write(f"  {fields[0]}: {fields[1]} ({fields[3]})\n")
        else:
            sys.stderr.write(f"  {line}")
    rc = proc.wait()
    timer.cancel()
    reader.join(5)
    seconds = time.monotonic() - started
    failure = None
    if rc != 0:
        why = f"killed after {limit} s" if rc < 0 and seconds >= limit else f"exit {rc}"
        failure = f"FAILED ({why}): {last_err[0] if last_err else 'no message'}"
    elif not rows:
        failure = "FAILED: printed no figure lines (figure<TAB>value<TAB>target<TAB>verdict)"
    return rows, failure, seconds


def table(
    results: list[tuple[str, list[list[str]], str | None]], markdown: bool = False
) -> tuple[str, int]:
    """The table, and how many rows are not a pass."""
    lines: list[list[str]] = []
    bad = 0
    for name, rows, failure in results:
        for r in rows:
            lines.append([name, *r])
            bad += r[3] == "miss"
        if failure is not None:
            lines.append([name, failure, "", "", "fail"])
            bad += 1
    head = ["script", "figure", "value", "target", "result"]
    if markdown:
        cells = [[c.replace("|", "\\|") for c in r] for r in [head, *lines]]
        md = ["| " + " | ".join(r) + " |" for r in cells]
        md.insert(1, "|" + "---|" * len(head))
        return "\n".join(md), bad
    widths = [max(len(r[i]) for r in [head, *lines]) for i in range(4)]
    out = []
    for r in [head, *lines]:
        cells = [r[i].ljust(widths[i]) for i in range(4)]
        out.append("  ".join([*cells, r[4]]).rstrip())
    out.insert(1, "  ".join("-" * w for w in [*widths, 6]))
    return "\n".join(out), bad


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("scripts", nargs="*", help="script names (default: all), e.g. cli recall")
    ap.add_argument("--markdown", action="store_true", help="print the table in Markdown")
    args = ap.parse_args()
    results = []
    load = os.getloadavg()[0] if hasattr(os, "getloadavg") else float("nan")
    for path in scripts(args.scripts):
        sys.stderr.write(f"== bench/{path.name}\n")
        sys.stderr.flush()
        rows, failure, seconds = run_one(path)
        sys.stderr.write(f"   ({seconds:.0f} s)\n")
        results.append((path.stem, rows, failure))
    text, bad = table(results, markdown=args.markdown)
    after = os.getloadavg()[0] if hasattr(os, "getloadavg") else float("nan")
    print(text)
    print(
        f"\n{bad} of {sum(len(r) + (f is not None) for _, r, f in results)} rows not a pass; "
        f"load average {load:.1f} before, {after:.1f} after, on {os.cpu_count()} CPUs"
    )
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
