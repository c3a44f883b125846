"""Whole-process wall time of the commands agents run most, on a 10k-bullet playbook.

    python bench/cli.py [--bullets 10000] [--runs 7]

Builds the playbook with direct store inserts in one transaction (a few seconds), then runs
the real console script as a subprocess and prints the median of several runs of
`playbook --help`, `playbook mark ID helpful`, `playbook recall QUERY --json` and `playbook
hook prompt` (Claude Code's UserPromptSubmit JSON on stdin, a new session each run, so the
context is never empty for having been given before), next to the targets (0.15 s, 0.2 s,
0.3 s, 0.25 s). Exit status 1 if a target is missed.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path

TARGETS = {"--help": 0.15, "mark": 0.2, "recall --json": 0.3, "hook prompt": 0.25}

# Real words take Zipf ranks 20-110 of a 3000-word vocabulary; the rest are made-up words.
# A rule has 8 words and 2 tags drawn by rank frequency, so a specific query ("release npm
# lockfile cache") matches a few hundred rules, and a broad one (the four most common
# words) matches about half the playbook: that one is reported too, without a target.
REAL = (
    "npm pnpm yarn node python pytest ruff mypy docker compose kubernetes helm terraform "
    "release deploy ci cache lockfile migration django flask fastapi sqlalchemy postgres "
    "sqlite redis queue worker retry timeout logging tracing metrics secret token auth "
    "branch rebase merge squash commit hook lint format test fixture mock snapshot build "
    "bundle webpack vite esbuild typescript eslint prettier go rust cargo clippy java maven"
).split()
VERBS = "Pin Run Use Prefer Check Keep Cache Split Retry Log Document Lock Avoid Never".split()
SPECIFIC = "release npm lockfile cache"


def vocabulary(rng: random.Random, size: int = 3000) -> list[str]:
    syllables = "ka lo mi re su ta ne vo pi gu be da fo ji lu ma no ri se ti".split()
    made: dict[str, None] = {}
    while len(made) < size - len(REAL):
        made.setdefault("".join(rng.choice(syllables) for _ in range(rng.randint(2, 4))))
    words = list(made)
    for i, w in enumerate(REAL):
        words.insert(20 + i, w)
    return words


def build(path: Path, n: int, seed: int = 7) -> tuple[list[str], str]:
    """A playbook of `n` bullets with some feedback, written in one transaction.
    Returns the bullet ids and the broad query."""
    sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "src"))
    from playbook.curation import run_maturity_pass
    from playbook.store import PlaybookStore, connect

    rng = random.Random(seed)
    words = vocabulary(rng)
    weights = [1 / (r + 1) for r in range(len(words))]
    conn = connect(path)
    store = PlaybookStore(conn)
    now = datetime.now(UTC)
    ids: list[str] = []
    with store.transaction():
        for i in range(n):
            picked = list(dict.fromkeys(rng.choices(words, weights, k=8)))
            tags = list(dict.fromkeys(rng.choices(words, weights, k=2)))
            b = store.insert_bullet(
                f"{rng.choice(VERBS)} {' '.join(picked)}",
                category=rng.choice(("ci", "testing", "release", "database", "tooling")),
                tags=tags,
                type="anti-pattern" if i % 10 == 0 else "rule",
                created_at=now - timedelta(days=rng.uniform(0, 400)),
            )
            ids.append(b.id)
            for _ in range(rng.randint(0, 3)):
                store.add_feedback(
                    b.id,
                    "helpful" if rng.random() < 0.8 else "harmful",
                    at=now - timedelta(days=rng.uniform(0, 300)),
                )
        run_maturity_pass(store, touched=ids)
    conn.close()
    return ids, " ".join(words[:4])


def command() -> list[str]:
    script = Path(sys.executable).with_name("playbook")
    if script.exists():
        return [str(script)]
    found = shutil.which("playbook")
    if found:
        return [found]
    return [sys.executable, "-c", "from playbook.launcher import run; run()"]


def hook_input() -> bytes:
    """A UserPromptSubmit hook input for a session never seen before."""
    doc = {
        "session_id": f"bench-{time.perf_counter_ns()}",
        "transcript_path": "/nonexistent/transcript.jsonl",
        "cwd": os.getcwd(),
        "permission_mode": "default",
        "hook_event_name": "UserPromptSubmit",
        "prompt": f"The {SPECIFIC} step of the release job fails, fix it",
    }
    return json.dumps(doc).encode()


def run_once(argv: list[str], env: dict[str, str]) -> tuple[float, float]:
    """(wall, CPU) seconds of one run of `argv`."""
    stdin = hook_input() if "hook" in argv else None
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.perf_counter()
    proc = subprocess.run(argv, env=env, capture_output=True, input=stdin)
    wall = time.perf_counter() - t0
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if proc.returncode != 0 or ("hook" in argv and not proc.stdout):
        raise SystemExit(f"{' '.join(argv)} failed: {proc.stderr.decode()[-500:]}")
    return wall, after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime


def timed(
    cases: dict[str, list[str]], runs: int, env: dict[str, str]
) -> dict[str, tuple[float, float, float]]:
    """Per case: (median wall, min wall, median CPU). Runs go round-robin over the cases,
    so a burst of load from elsewhere on the machine hits every case alike."""
    walls: dict[str, list[float]] = {name: [] for name in cases}
    cpus: dict[str, list[float]] = {name: [] for name in cases}
    for _ in range(runs):
        for name, argv in cases.items():
            wall, cpu = run_once(argv, env)
            walls[name].append(wall)
            cpus[name].append(cpu)
    return {
        name: (statistics.median(walls[name]), min(walls[name]), statistics.median(cpus[name]))
        for name in cases
    }


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--bullets", type=int, default=10_000)
    ap.add_argument("--runs", type=int, default=7)
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        db = Path(tmp) / "bench.sqlite3"
        t0 = time.perf_counter()
        ids, broad = build(db, args.bullets)
        print(f"built {args.bullets} bullets in {time.perf_counter() - t0:.1f} s")
        env = {**os.environ, "PLAYBOOK_DB": str(db), "XDG_STATE_HOME": str(Path(tmp) / "state")}
        base = command()
        cases = {
            "--help": [*base, "--help"],
            "mark": [*base, "mark", ids[len(ids) // 2], "helpful"],
            "recall --json": [*base, "recall", SPECIFIC, "--json"],
        }
        cases["hook prompt"] = [*base, "hook", "prompt"]
        cases["recall (broad)"] = [*base, "recall", broad, "--json"]
        timed(cases, 1, env)  # warm the OS file cache
        missed = 0
        load = os.getloadavg()[0] if hasattr(os, "getloadavg") else float("nan")
        print(f"{args.runs} runs each; load average {load:.2f} on {os.cpu_count()} CPUs")
        print(f"{'command':<16}{'median':>9}{'min':>9}{'cpu':>9}{'target':>9}")
        for name, (med, low, cpu) in timed(cases, args.runs, env).items():
            target = TARGETS.get(name)
            verdict = f"query {broad!r}, no target"
            if target is not None:
                ok = med <= target
                missed += not ok
                verdict = "ok" if ok else "MISSED"
            shown = f"{target:.2f}s" if target is not None else "-"
            print(f"{name:<16}{med:>8.3f}s{low:>8.3f}s{cpu:>8.3f}s{shown:>9}  {verdict}")
    return 1 if missed else 0


if __name__ == "__main__":
    sys.exit(main())
