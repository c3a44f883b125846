"""What a one-shot command sends a PostgreSQL playbook: statements and round trips.

    python bench/round_trips.py --db URL [--mark]

Runs `recall QUERY --json`, `hook prompt` and (with `--mark`, which writes: only on a
playbook of your own) `mark ID helpful` as whole processes, each with psycopg's
`Connection.execute` and `pipeline` counted: a statement outside a pipeline is one round
trip, a pipeline is one whatever it holds; the connection itself is not counted (its
session settings travel in the connection request). Counts, not times: they do not move
with the machine's load (issue 31, D1/D3).
"""

# bench: only when named

from __future__ import annotations

import argparse
import json
import subprocess
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from cli import hook_input
from report import environment, figure

QUERY = "npm lockfile release job"

# Run in the measured process: count, run the console script, print the counts last.
COUNTING = """
import contextlib, json, sys, psycopg
counts = {"statements": 0, "round_trips": 0}
depth = [0]
execute, pipeline = psycopg.Connection.execute, psycopg.Connection.pipeline
def counted(self, query, params=None, **kw):
    counts["statements"] += 1
    counts["round_trips"] += not depth[0]
    return execute(self, query, params, **kw)
@contextlib.contextmanager
def piped(self):
    depth[0] += 1
    counts["round_trips"] += 1
    try:
        with pipeline(self) as p:
            yield p
    finally:
        depth[0] -= 1
psycopg.Connection.execute, psycopg.Connection.pipeline = counted, piped
from playbook.launcher import run
sys.argv = ["playbook", *sys.argv[1:]]
try:
    run()
finally:
    sys.stderr.write("\\nCOUNTS " + json.dumps(counts) + "\\n")
"""


def counts(argv: list[str], stdin: bytes = b"") -> dict[str, int]:
    out = subprocess.run(
        [sys.executable, "-c", COUNTING, *argv],
        input=stdin,
        capture_output=True,
        env=environment(),
        check=False,
    )
    line = out.stderr.decode().rsplit("COUNTS ", 1)
    if out.returncode != 0 or len(line) < 2:
        raise SystemExit(f"{' '.join(argv)} failed: {out.stderr.decode()[-500:]}")
    return dict(json.loads(line[1]))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--db", required=True, help="a PostgreSQL playbook's URL")
    parser.add_argument("--mark", action="store_true", help="also `mark` (writes)")
    args = parser.parse_args()
    cases = {
        "recall --json": (["--db", args.db, "recall", QUERY, "--json"], b""),
        "hook prompt": (["--db", args.db, "hook", "prompt"], hook_input()),
    }
    if args.mark:
        from playbook.store import open_store

        with open_store(args.db, mode="read") as store:
            bid = store.sql.scalar(
                "SELECT id FROM bullets WHERE state = 'active' ORDER BY seq LIMIT 1"
            )
        cases["mark"] = (["--db", args.db, "mark", str(bid), "helpful"], b"")
    for name, (argv, stdin) in cases.items():
        got = counts(argv, stdin)
        figure(f"{name}: statements", got["statements"], "")
        figure(f"{name}: round trips (after the connection)", got["round_trips"], "")


if __name__ == "__main__":
    main()
