"""How a bench script reports a figure to `bench/run.py`: one line on stdout per figure,

    figure<TAB>value<TAB>target<TAB>pass|miss|-

(`-` for a figure shown without a target). Anything else a script prints is for people.
"""

from __future__ import annotations

import json
import os
import statistics
import subprocess
import sys


def environment(**extra: str) -> dict[str, str]:
    """The environment a measured command runs in: this one, as an installed command sees
    it. Python's bytecode cache is on (pip writes it at install time): a
    PYTHONDONTWRITEBYTECODE set by the caller is dropped, since with it every run of the
    command compiles every module it imports from source (tens of milliseconds)."""
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    env.update(extra)
    return env


def fmt(value: float, unit: str) -> str:
    """A value with its unit, to a sensible number of digits."""
    if unit == "s":
        return f"{value:.3f} s" if value < 10 else f"{value:.1f} s"
    if unit == "ms":
        return f"{value:.2f} ms" if value < 10 else f"{value:.1f} ms"
    if unit == "MB":
        return f"{value:.0f} MB"
    if unit == "x":
        return f"{value:.2f}x"
    return f"{value:g} {unit}".strip()


def figure(
    name: str,
    value: float,
    unit: str,
    target: float | None = None,
    *,
    at_most: bool = True,
    low: float | None = None,
) -> bool:
    """Print one figure line; returns whether the target is met (True without one).
    `low`, the fastest of several runs whose median is `value`, is shown after it."""
    shown = fmt(value, unit) if low is None else f"{fmt(value, unit)} (min {fmt(low, unit)})"
    if target is None:
        ok, goal, verdict = True, "-", "-"
    else:
        ok = value <= target if at_most else value >= target
        goal = f"{'≤' if at_most else '≥'} {fmt(target, unit)}"
        verdict = "pass" if ok else "miss"
    print(f"{name}\t{shown}\t{goal}\t{verdict}", flush=True)
    return ok


def note(text: str) -> None:
    """Context for people (stderr), not a figure."""
    print(text, file=sys.stderr, flush=True)


def median(values: list[float]) -> float:
    return statistics.median(values)


# Runs a command and reports its wall time and peak memory. A small process of its own, so
# the command's peak is its own: a child forked straight from a big benchmark process
# counts the parent's pages in its maximum resident size until it execs.
_MEASURE = """
import json, os, subprocess, sys, time
data = sys.stdin.buffer.read()
t = time.perf_counter()
p = subprocess.Popen(sys.argv[1:], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                     stderr=subprocess.PIPE)
p.stdin.write(data)
p.stdin.close()
out = p.stdout.read()
err = p.stderr.read()
_, status, usage = os.wait4(p.pid, 0)
wall = time.perf_counter() - t
print(json.dumps([wall, usage.ru_maxrss / 1024, os.waitstatus_to_exitcode(status),
                  len(out), err.decode(errors="replace")[-500:]]))
"""


def run_measured(
    argv: list[str], env: dict[str, str] | None = None, stdin: bytes = b""
) -> tuple[float, float, int]:
    """(wall seconds, peak resident MB, bytes on stdout) of one run of `argv`, given
    `stdin` (in `environment()` unless `env` is given); exits if it fails."""
    out = subprocess.run(
        [sys.executable, "-c", _MEASURE, *argv],
        input=stdin,
        capture_output=True,
        env=environment() if env is None else env,
    )
    if out.returncode != 0:
        raise SystemExit(f"measuring {' '.join(argv)} failed: {out.stderr.decode()[-500:]}")
    wall, peak, rc, size, err = json.loads(out.stdout)
    if rc != 0:
        raise SystemExit(f"{' '.join(argv)} failed (exit {rc}): {err}")
    return wall, peak, size
