"""Workers for the crash test (tests/test_crash.py): batches and reflections that get killed.

A worker journals each batch before it starts (`begin <tag> <deltas> <outcome citations>`)
and after it commits (`done <tag> <batch id>`), then runs it. Everything a batch writes
carries its tag, `(t-<tag>)`, in content or context, so the test can find every row of a
batch the worker never got to report, and check that it is all there or not there at all.

The kill comes from outside (the test SIGKILLs the process at a random moment) or from
inside: `KillSwitch` wraps the store's connection and SIGKILLs its own process just before
the N-th SQL statement counted from the start of the armed batch, over it and the batches
after it (never a statement between two batches), so always in the middle of a transaction.
Counting on past the armed batch makes every such run end in a kill: a point past the end
of its batch lands in a later one, as it would have landed in a longer batch.
"""

from __future__ import annotations

import os
import random
import signal
import sqlite3
from typing import Any

from playbook.curation import curate
from playbook.curation.outcomes import apply_outcome
from playbook.reflection.reflectors import HeuristicReflector
from playbook.reflection.session import reflect_session
from playbook.store import PlaybookStore, connect
from playbook.store import testing as raw

from .load import VERBS, WORDS

SESSION = "session:crash"
# Statuses a crash batch may produce; anything else (a vote refused, say) would make the
# batch's expected size unknowable, so the worker journals it as an error.
EXPECTED = {"added", "conflict", "folded", "applied"}


class KillSwitch:
    """Stands in for a sqlite3 connection; SIGKILLs this process before statement `at`."""

    def __init__(self, conn: sqlite3.Connection, at: int | None = None) -> None:
        self._conn = conn
        self.at = at
        self.count = 0
        self.armed = False

    def _tick(self) -> None:
        if self.armed:
            self.count += 1
            if self.at is not None and self.count >= self.at:
                os.kill(os.getpid(), signal.SIGKILL)

    def execute(self, sql: str, *args: Any) -> sqlite3.Cursor:
        self._tick()
        return self._conn.execute(sql, *args)

    def executemany(self, sql: str, *args: Any) -> sqlite3.Cursor:
        self._tick()
        return self._conn.executemany(sql, *args)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._conn, name)


def marker(tag: str) -> str:
    return f"(t-{tag})"


def _journal(path: str, line: str) -> None:
    # One write(2) per line, straight to the kernel: SIGKILL cannot lose what was written.
    fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
    try:
        os.write(fd, (line + "\n").encode())
    finally:
        os.close(fd)


def _open(db: str, kill_at: int | None) -> tuple[PlaybookStore, KillSwitch]:
    conn = connect(db)
    store = PlaybookStore(conn)
    switch = KillSwitch(conn, kill_at)
    raw.wrap_connection(store, lambda _conn: switch)
    return store, switch


def _active(store: PlaybookStore, rng: random.Random, k: int) -> list[str]:
    ids = [r[0] for r in raw.rows(store, "SELECT id FROM bullets WHERE state != 'retired'")]
    return rng.sample(ids, min(k, len(ids)))


def run_batches(
    db: str, journal: str, run: int, batches: int, armed_batch: int, kill_at: int | None
) -> None:
    """Run `batches` tagged batches; arm the kill switch from batch `armed_batch` on."""
    store, switch = _open(db, kill_at)
    rng = random.Random(run)
    for k in range(batches):
        tag = f"r{run}k{k}"
        mark = marker(tag)
        if k % 3 == 2:
            cited = _active(store, rng, 3)
            _journal(journal, f"begin {tag} 0 {len(cited)}")
            switch.armed = k >= armed_batch
            r = apply_outcome(
                store,
                {
                    "outcome": rng.choice(["success", "failure", "partial"]),
                    "bullet_ids": cited,
                    "receipt": f"receipt-{tag}",
                    "context": f"outcome {mark}",
                },
            )
            switch.armed = False
            if r.applied != cited:
                _journal(journal, f"error {tag} outcome applied {r.applied} of {cited}")
            _journal(journal, f"done {tag} {r.batch_id}")
            continue
        deltas: list[dict[str, Any]] = []
        for i in range(rng.randint(4, 8)):
            a, b, c = rng.sample(WORDS, 3)
            content = f"{rng.choice(VERBS)} the {a} {b} before {c} {mark}a{i}"
            deltas.append({"type": "add", "content": content, "tags": ["crash"]})
        own = _active(store, rng, 6)
        for i, bid in enumerate(own[:4]):
            kind = "harmful" if rng.random() < 0.3 else "helpful"
            deltas.append({"type": kind, "bullet_id": bid, "context": f"vote {mark}v{i}"})
        if len(own) > 4 and k % 4 == 1:
            deltas.append(
                {"type": "replace", "bullet_id": own[4], "content": f"Reworded rule {mark}rep"}
            )
        if len(own) > 5 and k % 4 == 3:
            deltas.append({"type": "deprecate", "bullet_id": own[5], "reason": f"old {mark}dep"})
        _journal(journal, f"begin {tag} {len(deltas)} 0")
        switch.armed = k >= armed_batch
        result = curate(store, deltas)
        switch.armed = False
        odd = [o for o in result.outcomes if o.status not in EXPECTED]
        if odd:
            _journal(journal, f"error {tag} {odd[0].status}: {odd[0].reason}")
        _journal(journal, f"done {tag} {result.batch_id}")


def diary_paragraph(run: int, n: int, rng: random.Random) -> str:
    a, b, c = rng.sample(WORDS, 3)
    return f"Notes.\nRULE: {rng.choice(VERBS)} the {a} {b} before {c} (u-r{run}p{n})\n\n"


def run_reflections(
    db: str, diary: str, run: int, rounds: int, armed_round: int, kill_at: int | None
) -> None:
    """Append a few RULE paragraphs to the diary, reflect on it; `rounds` times (the kill
    switch armed from round `armed_round` on)."""
    store, switch = _open(db, kill_at)
    rng = random.Random(run)
    for n in range(rounds):
        with open(diary, "a", encoding="utf-8") as fh:
            fh.write("".join(diary_paragraph(run, n * 10 + j, rng) for j in range(6)))
        switch.armed = n >= armed_round
        reflect_session(store, SESSION, diary, HeuristicReflector(), apply=n % 2 == 1)
        switch.armed = False
