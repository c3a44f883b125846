"""How a bench script reports a figure to `bench/run.py`: one line on stdout per figure,

    figure<TAB>value<TAB>target<TAB>pass|miss|-

(`-` for a figure shown without a target). Anything else a script prints is for people.
"""

from __future__ import annotations

import statistics
import sys


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
    name: str, value: float, unit: str, target: float | None = None, *, at_most: bool = True
) -> bool:
    """Print one figure line; returns whether the target is met (True without one)."""
    if target is None:
        ok, goal, verdict = True, "-", "-"
    else:
        ok = value <= target if at_most else value >= target
        goal = f"{'≤' if at_most else '≥'} {fmt(target, unit)}"
        verdict = "pass" if ok else "miss"
    print(f"{name}\t{fmt(value, unit)}\t{goal}\t{verdict}", flush=True)
    return ok


def note(text: str) -> None:
    """Context for people (stderr), not a figure."""
    print(text, file=sys.stderr, flush=True)


def median(values: list[float]) -> float:
    return statistics.median(values)
