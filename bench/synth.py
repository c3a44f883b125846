"""Synthetic playbooks for the benchmarks, built fast but through the real store code.

Rows go in with bulk inserts (the same tables and index the store maintains); then the
store's own `sync_evidence()` folds the whole log and the real maturity pass runs, so the
result is exactly what the API would have produced for that history.
"""

from __future__ import annotations

import json
import os
import random
import sys
import tempfile
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "src"))

from playbook.core.text import content_hash, tokens
from playbook.curation import run_maturity_pass
from playbook.store import PlaybookStore, connect, iso

NOW = datetime(2026, 12, 1, tzinfo=UTC)
TERMS = [
    "npm",
    "pnpm",
    "yarn",
    "pytest",
    "ruff",
    "mypy",
    "docker",
    "compose",
    "ci",
    "release",
    "job",
    "lockfile",
    "cache",
    "migrations",
    "postgres",
    "sqlite",
    "alembic",
    "git",
    "rebase",
    "merge",
    "squash",
    "branch",
    "hooks",
    "pre-commit",
    "typescript",
    "eslint",
    "vitest",
    "jest",
    "cargo",
    "clippy",
    "rustfmt",
    "go",
    "vet",
    "lint",
    "format",
    "tests",
    "flaky",
    "fixture",
    "mock",
    "coverage",
    "secrets",
    "env",
    "vault",
    "terraform",
    "kubernetes",
    "helm",
    "deploy",
    "rollback",
    "canary",
    "logging",
    "tracing",
    "metrics",
    "profiling",
    "benchmark",
    "memory",
    "leak",
    "timeout",
    "retry",
    "backoff",
    "queue",
    "worker",
    "cron",
    "api",
    "schema",
    "openapi",
    "graphql",
    "react",
    "vite",
    "webpack",
    "bundle",
    "css",
    "accessibility",
    "i18n",
    "docs",
    "readme",
    "changelog",
    "semver",
    "tag",
    "publish",
    "registry",
    "wheel",
    "sdist",
    "venv",
    "uv",
    "pip",
    "poetry",
    "makefile",
    "justfile",
    "bash",
    "shell",
    "quoting",
    "injection",
    "sanitize",
    "review",
    "diff",
    "refactor",
    "rename",
    "dead",
    "code",
    "types",
    "generics",
    "async",
    "threads",
    "locks",
    "deadlock",
    "transaction",
    "index",
    "query",
    "n+1",
    "orm",
    "pagination",
    "cursor",
    "utf-8",
    "timezone",
]
VERBS = [
    "run",
    "pin",
    "use",
    "avoid",
    "prefer",
    "check",
    "keep",
    "write",
    "read",
    "add",
    "remove",
    "cache",
    "split",
    "test",
    "bump",
]
FILLER = [
    "the",
    "a",
    "in",
    "for",
    "with",
    "before",
    "after",
    "when",
    "on",
    "every",
    "each",
    "of",
    "to",
    "from",
]


def _sentence(rng: random.Random) -> str:
    words = [rng.choice(VERBS)]
    for _ in range(rng.randint(5, 12)):
        words.append(rng.choice(TERMS) if rng.random() < 0.6 else rng.choice(FILLER))
    words.append(f"w{rng.randint(0, 20000)}")  # a rare word keeps contents distinct
    return " ".join(words).capitalize()


def build(path: Path, n: int, events_per_bullet: int = 10, seed: int = 1) -> Path:
    rng = random.Random(seed)
    conn = connect(path)
    store = PlaybookStore(conn, clock=lambda: NOW)
    bullets, btok, tags, events = [], [], [], []
    vocab: dict[str, int] = {}
    for i in range(n):
        bid = f"b-{i:08x}"
        content = _sentence(rng)
        if rng.random() < 0.15:
            content = f"AVOID: {content}"
        created = NOW - timedelta(days=rng.uniform(1, 400))
        t = [rng.choice(TERMS)] if rng.random() < 0.5 else []
        bullets.append(
            (i + 1, bid, content, rng.choice(["ci", "testing", "git", "python"]), json.dumps(t),
             "global", None, "anti-pattern" if content.startswith("AVOID") else "rule",
             "workflow_rule", "learned", "active", "candidate", 0, None, None, None, None,
             iso(created), iso(created), None, content_hash(content))
        )  # fmt: skip
        for tok in set(tokens(content)):
            btok.append((tok, i + 1))
            vocab[tok] = vocab.get(tok, 0) + 1
        tags.extend((x, i + 1) for x in t)
        helpful_bias = rng.betavariate(5, 1.2)  # mostly helpful, a harmful tail
        for _ in range(rng.randint(0, 2 * events_per_bullet)):
            at = created + timedelta(days=rng.uniform(0, (NOW - created).days))
            kind = "helpful" if rng.random() < helpful_bias else "harmful"
            events.append(
                (bid, kind, iso(at), iso(at), 1.0, "other" if kind == "harmful" else None)
            )
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
            "INSERT INTO feedback (bullet_id, kind, at, recorded_at, weight, reason) "
            "VALUES (?,?,?,?,?,?)",
            events,
        )
    store.sync_evidence()
    run_maturity_pass(store)
    conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    conn.execute("ANALYZE")
    conn.close()
    return path


def _code_version() -> str:
    """What a cached playbook was built by: the schema's version and the maturity pass's
    rules and policy. A file built by older code would be upgraded, or re-rated whole, by
    the first command that writes to it, and that command's time would not be its own."""
    from playbook.core import scoring
    from playbook.core.policy import DEFAULT_POLICY
    from playbook.store.schema import MEMORY_LATEST

    rules = repr(sorted(DEFAULT_POLICY.values().items())) + scoring.PASS_RULES
    return f"s{MEMORY_LATEST}-{content_hash(rules)[:8]}"


def playbook(n: int, events_per_bullet: int = 10) -> Path:
    """A cached synthetic playbook of n bullets (built once per machine by this code)."""
    folder = Path(tempfile.gettempdir()) / "playbook-bench"
    folder.mkdir(exist_ok=True)
    path = folder / f"synthetic-{n}-{events_per_bullet}-{_code_version()}.sqlite3"
    if not path.exists():
        t = time.perf_counter()
        tmp = path.with_suffix(f".building-{os.getpid()}")  # another bench may build too
        for p in (tmp, Path(f"{tmp}-wal"), Path(f"{tmp}-shm")):
            p.unlink(missing_ok=True)
        build(tmp, n, events_per_bullet)
        tmp.rename(path)
        print(f"(built {path.name} in {time.perf_counter() - t:.1f} s)", file=sys.stderr)
    return path


def copy_of(n: int, dest: Path, events_per_bullet: int = 10) -> Path:
    """A private copy, for benchmarks that write."""
    import shutil

    shutil.copyfile(playbook(n, events_per_bullet), dest)
    return dest


def some_id(path: Path) -> str:
    """An active rule's id, from the middle of the playbook."""
    import sqlite3

    conn = sqlite3.connect(path)
    try:
        (n,) = conn.execute("SELECT COUNT(*) FROM bullets WHERE state = 'active'").fetchone()
        row = conn.execute(
            "SELECT id FROM bullets WHERE state = 'active' ORDER BY seq LIMIT 1 OFFSET ?",
            (n // 2,),
        ).fetchone()
    finally:
        conn.close()
    return row[0]
