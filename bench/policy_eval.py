"""`playbook policy eval` on a log of 100k marks over 10k rules, 15-candidate default grid.

Target (issue 18): <= 60 s on the 2-core machine. Prints one line per figure (the
convention of `bench/run.py`), then a line for people on stderr. The log (built once
per machine, cached beside the other synthetic playbooks) spans a year: marks come in
sessions of 2-6, each names what the agent was working on (words of the rule), and each
rule's usefulness drifts, so the evaluation has something to find.
"""

from __future__ import annotations

import itertools
import json
import os
import random
import subprocess
import sys
import tempfile
import time
from datetime import timedelta
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import synth
from report import figure, note

from playbook.core.text import tokens
from playbook.policy_eval import evaluate
from playbook.store import PlaybookStore, connect, iso

RULES = 10_000
EVENTS = 100_000
DAYS = 365
TARGET_S = 60.0


def build(path: Path, seed: int = 18) -> Path:
    """synth's 10k rules (no marks of their own), then a year of marks in sessions."""
    synth.build(path, RULES, events_per_bullet=0, seed=seed)
    rng = random.Random(seed)
    conn = connect(path)
    store = PlaybookStore(conn, clock=lambda: synth.NOW)
    rules = store.bullets()
    terms = set(synth.TERMS)
    words = [[w for w in tokens(b.content) if w in terms] or tokens(b.content) for b in rules]
    created = [iso(b.created_at) for b in rules]
    # some rules are marked far more often than others (heavy-tailed popularity)
    cum = list(itertools.accumulate(rng.paretovariate(1.2) for _ in rules))
    population = range(len(rules))
    start = synth.NOW - timedelta(days=DAYS)
    events: list[tuple[str, str, str, str, float, str | None, str, str]] = []
    day = 0.0
    session = 0
    while len(events) < EVENTS:
        day += rng.expovariate(EVENTS / 4 / DAYS)
        session += 1
        for _ in range(rng.randint(2, 6)):
            i = rng.choices(population, cum_weights=cum)[0]
            at = iso(start + timedelta(days=day, minutes=rng.uniform(0, 30)))
            if created[i] > at:
                continue
            # each rule's usefulness cycles: useful for 12 weeks, then harmful for 8
            p = 0.85 if (day / 7 + i) % 20 < 12 else 0.3
            kind = "helpful" if rng.random() < p else "harmful"
            reason = None if kind == "helpful" else "other"
            ctx = " ".join(rng.sample(words[i], min(2, len(words[i]))))
            events.append((rules[i].id, kind, at, at, 1.0, reason, ctx, f"s-{session}"))
    with store.transaction():
        conn.executemany(
            "INSERT INTO feedback (bullet_id, kind, at, recorded_at, weight, reason, context, "
            "session_ref) VALUES (?,?,?,?,?,?,?,?)",
            sorted(events[:EVENTS], key=lambda e: e[2]),
        )
    store.sync_evidence()
    conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    conn.close()
    return path


def playbook() -> Path:
    folder = Path(tempfile.gettempdir()) / "playbook-bench"
    folder.mkdir(exist_ok=True)
    path = folder / f"policy-eval-{RULES}-{EVENTS}-v2.sqlite3"
    if not path.exists():
        t = time.perf_counter()
        tmp = path.with_suffix(".building")
        for p in (tmp, Path(f"{tmp}-wal"), Path(f"{tmp}-shm")):
            p.unlink(missing_ok=True)
        build(tmp)
        tmp.rename(path)
        print(f"(built {path.name} in {time.perf_counter() - t:.1f} s)", file=sys.stderr)
    return path


def main() -> None:
    path = playbook()
    store = PlaybookStore(connect(path), clock=lambda: synth.NOW)
    t, cpu = time.perf_counter(), time.process_time()
    report = evaluate(store)
    in_process, cpu = time.perf_counter() - t, time.process_time() - cpu
    store.close()
    t = time.perf_counter()
    cli = [sys.executable, "-c", "from playbook.cli import run; run()"]
    done = subprocess.run(
        [*cli, "--db", str(path), "policy", "eval", "--json"], capture_output=True, check=True
    )
    whole = time.perf_counter() - t
    verdict = json.loads(done.stdout)["data"]["verdict"]["line"]
    what = "policy eval, 100k events, 10k rules, 15 candidates"
    figure(f"{what} (whole process)", whole, "s", TARGET_S)
    figure(f"{what} (in-process)", in_process, "s", TARGET_S)
    # CPU seconds: what the wall time would be on an idle machine (the replay is one thread)
    figure(f"{what} (CPU)", cpu, "s", TARGET_S)
    note(
        f"policy eval, {EVENTS:,} marks over {RULES:,} rules, {len(report.rows)} policies "
        f"(15-candidate grid, the current one included): {whole:.1f} s whole process, "
        f"{in_process:.1f} s in process, {cpu:.1f} s of CPU (target <= {TARGET_S:g} s; "
        f"load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores: noisy)."
        f"\nverdict: {verdict}"
    )


if __name__ == "__main__":
    main()
