"""`playbook policy eval` on a log of 100k marks over 10k rules, 15-candidate default grid.

Target (issue 18): <= 60 s on the 2-core machine. Prints one line per figure as
`figure<TAB>value<TAB>target<TAB>pass|miss`, then a line for people. The log (built once
per machine, cached beside the other synthetic playbooks) spans a year: marks come in
sessions of 2-6, each names what the agent was working on (words of the rule), and each
rule's usefulness drifts, so the evaluation has something to find.
"""

from __future__ import annotations

import itertools
import json
import random
import subprocess
import sys
import tempfile
import time
from datetime import timedelta
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import synth

from playbook.policy_eval import evaluate
from playbook.store import PlaybookStore, connect, iso
from playbook.text import content_hash, tokens

RULES = 10_000
EVENTS = 100_000
DAYS = 365
TARGET_S = 60.0


def build(path: Path, seed: int = 18) -> Path:
    rng = random.Random(seed)
    conn = connect(path)
    store = PlaybookStore(conn, clock=lambda: synth.NOW)
    start = synth.NOW - timedelta(days=DAYS)
    bullets, btok, tags, words = [], [], [], []
    vocab: dict[str, int] = {}
    for i in range(RULES):
        content = synth._sentence(rng)
        created = start + timedelta(days=rng.uniform(0, DAYS * 0.3))
        t = [rng.choice(synth.TERMS)] if rng.random() < 0.5 else []
        bullets.append(
            (i + 1, f"b-{i:08x}", content, "general", json.dumps(t), "global", None,
             "rule", "workflow_rule", "learned", "active", "candidate", 0, None, None, None,
             None, iso(created), iso(created), None, content_hash(content))
        )  # fmt: skip
        toks = set(tokens(content))
        for tok in toks:
            btok.append((tok, i + 1))
            vocab[tok] = vocab.get(tok, 0) + 1
        tags.extend((x, i + 1) for x in t)
        words.append([w for w in toks if w in set(synth.TERMS)] or list(toks))
    # each rule's usefulness cycles: useful for 12 weeks, then harmful for 8, phase by rule
    # some rules are marked far more often than others (heavy-tailed popularity)
    cum = list(itertools.accumulate(rng.paretovariate(1.2) for _ in range(RULES)))
    population = range(RULES)
    events = []
    day = 0.0
    session = 0
    while len(events) < EVENTS:
        day += rng.expovariate(EVENTS / 4 / DAYS)
        session += 1
        for _ in range(rng.randint(2, 6)):
            i = rng.choices(population, cum_weights=cum)[0]
            created = synth.NOW - timedelta(days=DAYS) + timedelta(days=day)
            if bullets[i][17] > iso(created):
                continue
            phase = (day / 7 + i) % 20
            p = 0.85 if phase < 12 else 0.3
            kind = "helpful" if rng.random() < p else "harmful"
            ctx = " ".join(rng.sample(words[i], min(2, len(words[i]))))
            at = iso(created + timedelta(minutes=rng.uniform(0, 30)))
            reason = None if kind == "helpful" else "other"
            events.append((f"b-{i:08x}", kind, at, at, 1.0, reason, ctx, f"s-{session}"))
    events = events[:EVENTS]
    with store.transaction():
        conn.executemany(
            "INSERT INTO bullets (seq, id, content, category, tags, scope, scope_key, type, kind, "
            "source, state, maturity, pinned, pinned_reason, half_life_days, session_ref, "
            "byte_offset, created_at, valid_from, valid_to, content_hash) "
            "VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)",
            bullets,
        )
        conn.executemany("INSERT INTO bullet_tokens VALUES (?, ?)", btok)
        conn.executemany("INSERT INTO vocab VALUES (?, ?)", list(vocab.items()))
        conn.executemany("INSERT INTO bullet_tags VALUES (?, ?)", tags)
        conn.executemany(
            "INSERT INTO maturity_log (bullet_id, at, maturity) VALUES (?, ?, 'candidate')",
            [(b[1], b[17]) for b in bullets],
        )
        events.sort(key=lambda e: e[2])
        conn.executemany(
            "INSERT INTO feedback (bullet_id, kind, at, recorded_at, weight, reason, context, "
            "session_ref) VALUES (?,?,?,?,?,?,?,?)",
            events,
        )
    store.sync_evidence()
    conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    conn.close()
    return path


def playbook() -> Path:
    folder = Path(tempfile.gettempdir()) / "playbook-bench"
    folder.mkdir(exist_ok=True)
    path = folder / f"policy-eval-{RULES}-{EVENTS}.sqlite3"
    if not path.exists():
        t = time.perf_counter()
        tmp = path.with_suffix(".building")
        for p in (tmp, Path(f"{tmp}-wal"), Path(f"{tmp}-shm")):
            p.unlink(missing_ok=True)
        build(tmp)
        tmp.rename(path)
        print(f"(built {path.name} in {time.perf_counter() - t:.1f} s)", file=sys.stderr)
    return path


def line(figure: str, value: float, target: float) -> str:
    verdict = "pass" if value <= target else "miss"
    return f"{figure}\t{value:.1f}\t{target:g}\t{verdict}"


def main() -> None:
    path = playbook()
    store = PlaybookStore(connect(path), clock=lambda: synth.NOW)
    t = time.perf_counter()
    report = evaluate(store)
    in_process = time.perf_counter() - t
    store.conn.close()
    t = time.perf_counter()
    cli = [sys.executable, "-c", "from playbook.cli import run; run()"]
    done = subprocess.run(
        [*cli, "--db", str(path), "policy", "eval", "--json"], capture_output=True, check=True
    )
    whole = time.perf_counter() - t
    verdict = json.loads(done.stdout)["data"]["verdict"]["line"]
    print(line("policy_eval_100k_events_10k_rules_15_candidates_s", whole, TARGET_S))
    print(line("policy_eval_100k_events_10k_rules_15_candidates_in_process_s", in_process,
               TARGET_S))  # fmt: skip
    print(
        f"policy eval, {EVENTS:,} marks over {RULES:,} rules, {len(report.rows)} policies "
        f"(15-candidate grid, the current one included): {whole:.1f} s whole process, "
        f"{in_process:.1f} s in process (target <= {TARGET_S:g} s; shared machine, noisy)."
        f"\nverdict: {verdict}"
    )


if __name__ == "__main__":
    main()
