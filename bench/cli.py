"""Whole-process wall time of the commands agents run most, at 1k, 10k and 100k rules.

    python bench/cli.py [--sizes 1000,10000,100000] [--runs 7]

Runs the real console script as a subprocess on the synthetic playbooks of `synth.py`
(about 10 feedback events per rule; `mark` on a private copy) and reports the median of
several runs and the fastest, taken round-robin so a burst of load elsewhere hits every
case alike, with Python's bytecode cache on as in an installed command:
`playbook --help`, `playbook mark ID helpful`, `playbook recall QUERY --json` (and its
peak memory), and `playbook hook prompt` (Claude Code's UserPromptSubmit JSON on stdin, a
new session each run, so the context is never empty for having been given before); also
`hook session-start` (the protocol and the playbook's best rules) and `hook session-end`
(its foreground half, refusing a transcript outside the agents' session folders, so no
worker starts): each hook event loads only its own branch of `hooks.run`.
The warm-up round renders `--help` once; the timed runs print the kept text
(`playbook.cli.helptext`), as every run after an installation's first does.
Targets (issue 15): --help ≤ 0.1 s; mark ≤ 0.15 s; recall --json and hook prompt
≤ 0.15 s up to 10k and ≤ 0.25 s at 100k; recall ≤ 300 MB at 100k.

`--pg` (on by default when the `postgres` extra is installed) also measures `hook prompt`
at 10k rules on PostgreSQL: the same playbook copied into a schema of the server in
$PLAYBOOK_TEST_PG, or of a throwaway local cluster (`bench/backends.py`'s). Target (issue
26): ≤ 0.25 s whole process, psycopg's import and the connection included.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import synth
from report import environment, figure, median, note, run_measured

QUERY = "npm lockfile release job"
MARK_TARGET = 0.15
HELP_TARGET = 0.1


def recall_target(n: int) -> float:
    return 0.15 if n <= 10_000 else 0.25


def command() -> list[str]:
    script = Path(sys.executable).with_name("playbook")
    if script.exists():
        return [str(script)]
    found = shutil.which("playbook")
    if found:
        return [found]
    return [sys.executable, "-c", "from playbook.launcher import run; run()"]


EVENTS = {
    "prompt": "UserPromptSubmit",
    "session-start": "SessionStart",
    "session-end": "SessionEnd",
}


def hook_input(event: str = "prompt") -> bytes:
    """A hook input (UserPromptSubmit by default) for a session never seen before."""
    doc = {
        "session_id": f"bench-{time.perf_counter_ns()}",
        "transcript_path": "/nonexistent/transcript.jsonl",
        "cwd": os.getcwd(),
        "permission_mode": "default",
        "hook_event_name": EVENTS[event],
        "prompt": f"The {QUERY} step fails, fix it",
    }
    return json.dumps(doc).encode()


def run_case(argv: list[str], env: dict[str, str]) -> tuple[float, float]:
    """(wall seconds, peak MB) of one run; a hook gets its JSON on stdin, and must answer
    but at a session's end."""
    event = argv[-1] if "hook" in argv else None
    wall, peak, size = run_measured(argv, env, hook_input(event) if event else b"")
    if event in ("prompt", "session-start") and not size:
        raise SystemExit(f"{' '.join(argv)} printed nothing")
    return wall, peak


def timed(
    cases: dict[str, list[str]], runs: int, env: dict[str, str]
) -> dict[str, tuple[list[float], float]]:
    """Per case: (wall times, peak MB), run round-robin after one warm-up round."""
    for argv in cases.values():
        run_case(argv, env)  # warm the OS file cache
    walls: dict[str, list[float]] = {name: [] for name in cases}
    peaks: dict[str, float] = dict.fromkeys(cases, 0.0)
    for _ in range(runs):
        for name, argv in cases.items():
            wall, peak = run_case(argv, env)
            walls[name].append(wall)
            peaks[name] = max(peaks[name], peak)
    return {name: (walls[name], peaks[name]) for name in cases}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sizes", default="1000,10000,100000")
    ap.add_argument("--runs", type=int, default=7)
    ap.add_argument("--pg", action=argparse.BooleanOptionalAction, default=None)
    args = ap.parse_args()
    sizes = [int(s) for s in args.sizes.split(",")]
    base = command()
    env = environment()
    for name in ("PLAYBOOK_DB", "PLAYBOOK_POLICY"):
        env.pop(name, None)
    note(f"{args.runs} runs each (median); load average {os.getloadavg()[0]:.1f}")
    help_walls, _ = timed({"help": [*base, "--help"]}, args.runs, env)["help"]
    figure("playbook --help", median(help_walls), "s", HELP_TARGET, low=min(help_walls))
    with tempfile.TemporaryDirectory() as tmp:
        env["XDG_STATE_HOME"] = str(Path(tmp) / "state")  # the hook's session memory
        for n in sizes:
            db = synth.copy_of(n, Path(tmp) / f"pb-{n}.sqlite3")
            bid = synth.some_id(db)
            cases = {
                "mark": [*base, "--db", str(db), "mark", bid, "helpful"],
                "recall": [*base, "--db", str(db), "recall", QUERY, "--json"],
                "hook": [*base, "--db", str(db), "hook", "prompt"],
                "start": [*base, "--db", str(db), "hook", "session-start"],
            }
            if n == sizes[0]:
                cases["end"] = [*base, "--db", str(db), "hook", "session-end"]
            got = timed(cases, args.runs, env)
            size = f"{n // 1000}k"
            walls, _ = got["mark"]
            figure(
                f"mark at {size} (whole process)", median(walls), "s", MARK_TARGET, low=min(walls)
            )
            walls, peak = got["recall"]
            label = f"recall --json at {size} (whole process)"
            figure(label, median(walls), "s", recall_target(n), low=min(walls))
            figure(
                f"recall --json peak memory at {size}",
                peak,
                "MB",
                300 if n >= 100_000 else None,
            )
            walls, _ = got["hook"]
            label = f"hook prompt at {size} (whole process)"
            figure(label, median(walls), "s", recall_target(n), low=min(walls))
            walls, _ = got["start"]
            label = f"hook session-start at {size} (whole process)"
            figure(label, median(walls), "s", low=min(walls))
            if "end" in got:
                walls, _ = got["end"]
                label = "hook session-end, foreground (whole process)"
                figure(label, median(walls), "s", low=min(walls))
            Path(db).unlink()
        if args.pg if args.pg is not None else _has_psycopg():
            pg_hook(base, env, args.runs, Path(tmp))
    return 0  # misses are rows of the table, not a failure of the script


PG_SIZE = 10_000
PG_TARGET = 0.25


def _has_psycopg() -> bool:
    import importlib.util

    return importlib.util.find_spec("psycopg") is not None


def pg_hook(base: list[str], env: dict[str, str], runs: int, tmp: Path) -> None:
    """`hook prompt` at 10k rules on PostgreSQL, whole process."""
    from backends import drop_schemas, in_schema, server

    from playbook.store import copy_playbook

    schema = f"bench_hook_{os.getpid()}"
    with server() as url:
        import psycopg

        with psycopg.connect(url, autocommit=True) as conn:
            conn.execute(f'CREATE SCHEMA "{schema}"')
        try:
            target = in_schema(url, schema)
            copy_playbook(synth.copy_of(PG_SIZE, tmp / "pg.sqlite3"), target)
            got = timed({"hook": [*base, "--db", target, "hook", "prompt"]}, runs, env)
            walls, _ = got["hook"]
            label = f"hook prompt at {PG_SIZE // 1000}k on PostgreSQL (whole process)"
            figure(label, median(walls), "s", PG_TARGET, low=min(walls))
        finally:
            drop_schemas(url, [schema])


if __name__ == "__main__":
    sys.exit(main())
