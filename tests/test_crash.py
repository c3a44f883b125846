"""SIGKILL in the middle of a batch: afterwards the file is intact and every batch is whole.

A worker process runs tagged curate batches and task outcomes (tests/workers/crash.py) and
is killed, again and again, each time by SIGKILL: either from inside, just before a random
SQL statement of a batch (always mid-transaction), or from outside at a random moment while
it runs batches back to back. After every kill the next worker opens the same file.

Then: `PRAGMA integrity_check` is ok, and every batch is wholly present or wholly absent:

- per tag (what the worker journalled before starting a batch), the decision log holds all
  of the batch's deltas or none, and no row of any table mentions a tag whose batch left
  no decisions;
- per batch id, the rows in bullets, feedback, edges, receipts, conflicts and maturity_log
  are exactly what that batch's decisions say it did (and no row carries a batch id the
  decision log does not know).

The same for reflection: a worker appends RULE paragraphs to a diary and reflects (staging
or applying), killed inside `reflect_session`'s transaction; the watermark never runs ahead
of what was stored, and nothing is stored past it.
"""

from __future__ import annotations

import json
import os
import random
import signal
import sqlite3
import time
from collections import Counter, defaultdict
from pathlib import Path
from typing import Any

import pytest

from playbook.store import PlaybookStore, connect

from .workers.crash import SESSION, marker, run_batches, run_reflections
from .workers.processes import context

# SQLite only, on purpose: SIGKILL mid-transaction and PRAGMA integrity_check on a file (a killed
# client's transaction on PostgreSQL is the server's to roll back).
pytestmark = pytest.mark.sqlite_only

CURATE_ACTIONS = ("add", "helpful", "harmful", "replace", "deprecate", "merge")


# ------------------------------------------------------------------ running and killing
def crash_writer(
    tmp_path: Path, *, inner_kills: int, outer_kills: int, seed: int
) -> tuple[Path, Path, dict[str, int]]:
    """Kill a batch-running worker `inner_kills` times from inside (before a random SQL
    statement of a random batch) and `outer_kills` times from outside (at a random moment)."""
    db, journal = tmp_path / "crash.sqlite3", tmp_path / "journal.txt"
    ctx = context()
    rng = random.Random(seed)
    stats = {"inner": 0, "outer": 0, "outer_mid_batch": 0, "completed_runs": 0}
    run = 0
    while stats["inner"] < inner_kills or stats["outer"] < outer_kills:
        run += 1
        outer = stats["inner"] >= inner_kills or (
            stats["outer"] < outer_kills and rng.random() < 0.3
        )
        if outer:
            args = (str(db), str(journal), run, 10**6, -1, None)
        else:
            armed = rng.randint(0, 4)  # (up to 20 batches: the count reaches the kill point)
            args = (str(db), str(journal), run, armed + 20, armed, rng.randint(1, 160))
        p = ctx.Process(target=run_batches, args=args)
        p.start()
        if outer:
            _wait_for_line(journal, f"begin r{run}k", p)
            time.sleep(rng.uniform(0.0, 0.2))
            os.kill(p.pid or 0, signal.SIGKILL)
        p.join(60)
        assert p.exitcode is not None, "worker hung"
        if p.exitcode == -signal.SIGKILL:
            stats["outer" if outer else "inner"] += 1
            last = journal.read_text().splitlines()[-1]
            stats["outer_mid_batch"] += outer and last.startswith("begin")
        else:
            assert p.exitcode == 0 and not outer, f"worker exit code {p.exitcode}"
            stats["completed_runs"] += 1  # the kill point lay past the end of its batch
        conn = connect(db)  # recovers the WAL the killed worker left behind
        assert conn.execute("PRAGMA quick_check").fetchall() == [("ok",)]
        conn.close()
    return db, journal, stats


def _wait_for_line(journal: Path, prefix: str, p: Any) -> None:
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        if journal.exists() and prefix in journal.read_text():
            return
        assert p.is_alive(), f"worker died early (exit code {p.exitcode})"
        time.sleep(0.005)
    raise AssertionError("worker never started a batch")


# ------------------------------------------------------------------ checking
def parse_journal(journal: Path) -> tuple[dict[str, tuple[int, int]], dict[str, str]]:
    """(tag -> (deltas, outcome citations)) of every batch begun, (tag -> batch id) of every
    batch done. A journalled error (an unexpected outcome) fails the test."""
    begun: dict[str, tuple[int, int]] = {}
    done: dict[str, str] = {}
    for line in journal.read_text().splitlines():
        word, tag, *rest = line.split()
        assert word != "error", line
        if word == "begin":
            begun[tag] = (int(rest[0]), int(rest[1]))
        else:
            done[tag] = rest[0]
    return begun, done


def check_tags(conn: sqlite3.Connection, journal: Path) -> dict[str, int]:
    """All or nothing per tag: the batch's decisions, rows and receipt."""
    begun, done = parse_journal(journal)
    present = absent = 0
    for tag, (deltas, citations) in begun.items():
        like = f"%{marker(tag)}%"
        if citations:
            receipt = f"receipt-{tag}"
            batch = conn.execute(
                "SELECT batch_id FROM receipts WHERE receipt = ?", (receipt,)
            ).fetchall()
            events = conn.execute(
                "SELECT batch_id FROM feedback WHERE context LIKE ?", (like,)
            ).fetchall()
            if batch:
                assert events == [batch[0]] * citations, f"{tag}: outcome partly stored"
                logged = conn.execute(
                    "SELECT COUNT(*) FROM decisions WHERE batch_id = ? AND action = 'outcome'",
                    batch[0],
                ).fetchone()[0]
                assert logged == 1
            else:
                assert events == [], f"{tag}: events stored without their receipt"
        else:
            batches = conn.execute(
                "SELECT DISTINCT batch_id FROM decisions WHERE detail LIKE ? AND action IN "
                f"({','.join('?' * len(CURATE_ACTIONS))})",
                (like, *CURATE_ACTIONS),
            ).fetchall()
            assert len(batches) <= 1, f"{tag}: deltas of one call in two batches"
            logged = 0
            if batches:
                logged = conn.execute(
                    "SELECT COUNT(*) FROM decisions WHERE batch_id = ? AND action IN "
                    f"({','.join('?' * len(CURATE_ACTIONS))})",
                    (batches[0][0], *CURATE_ACTIONS),
                ).fetchone()[0]
            assert logged in (0, deltas), f"{tag}: {logged} of {deltas} deltas stored"
            # Rows that mention the tag belong to its batch (inverted twins keep the
            # original's words but come from the later batch that inverted them).
            rows = conn.execute(
                "SELECT batch_id FROM bullets WHERE content LIKE ? AND source != 'inverted' "
                "UNION ALL SELECT batch_id FROM feedback WHERE context LIKE ?",
                (like, like),
            ).fetchall()
            expect = {batches[0][0]} if logged else set()
            assert {r[0] for r in rows} <= expect, f"{tag}: rows outside its batch"
            assert bool(rows) == bool(logged), f"{tag}: decisions without rows or rows without"
        stored = bool(batch) if citations else bool(logged)
        if tag in done:
            assert stored, f"{tag}: reported committed but absent"
        present += stored
        absent += not stored
    return {"begun": len(begun), "present": present, "absent": absent}


def check_batches(conn: sqlite3.Connection) -> int:
    """Per batch id, the rows of every table are exactly what its decisions say."""
    want: dict[str, dict[str, Counter[tuple[Any, ...]]]] = defaultdict(lambda: defaultdict(Counter))
    known: set[str] = set()
    for batch, action, bid, status, reason, detail in conn.execute(
        "SELECT batch_id, action, bullet_id, status, reason, detail FROM decisions "
        "WHERE batch_id IS NOT NULL"
    ):
        d = json.loads(detail)
        w = want[batch]
        known.add(batch)
        if action == "add" and status in ("added", "conflict"):
            w["bullets"][(bid,)] += 1
            w["maturity_log"][(bid, "candidate")] += 1
            w["conflicts"][(bid,)] += status == "conflict"
        elif action == "add" and status == "folded":
            w["feedback"][(bid, "helpful")] += 1
        elif action in ("helpful", "harmful") and status == "applied":
            w["feedback"][(bid, action)] += 1
        elif action == "replace" and status == "applied":
            w["bullets"][(bid,)] += 1
            w["maturity_log"][(bid, "candidate")] += 1
            w["edges"][("supersedes", bid, d["delta"]["bullet_id"])] += 1
        elif action == "invert":
            w["bullets"][(d["anti_pattern"],)] += 1
            w["maturity_log"][(d["anti_pattern"], "candidate")] += 1
            w["edges"][("inverts", d["anti_pattern"], bid)] += 1
        elif action == "maturity":
            w["maturity_log"][(bid, d["to"])] += 1
        elif action == "outcome":
            kind = "harmful" if reason == "failure" else "helpful"
            for applied in d["applied"]:
                w["feedback"][(applied, kind)] += 1
            if d.get("receipt"):
                w["receipts"][(d["receipt"],)] += 1
    got: dict[str, dict[str, Counter[tuple[Any, ...]]]] = defaultdict(lambda: defaultdict(Counter))
    queries = {
        "bullets": "SELECT batch_id, id FROM bullets",
        "maturity_log": "SELECT batch_id, bullet_id, maturity FROM maturity_log",
        "conflicts": "SELECT batch_id, a FROM conflicts",
        "edges": "SELECT batch_id, kind, src, dst FROM edges",
        "receipts": "SELECT batch_id, receipt FROM receipts",
        "feedback": "SELECT batch_id, bullet_id, kind FROM feedback",
    }
    for table, sql in queries.items():
        for batch, *row in conn.execute(sql):
            assert batch is not None, f"{table} row without a batch id: {row}"
            assert batch in known, f"{table} row of batch {batch}, which has no decisions"
            got[batch][table][tuple(row)] += 1
    for batch in known:
        for table in queries:
            expected = +want[batch][table]  # drop zero counts
            assert +got[batch][table] == expected, f"batch {batch}: {table} differs"
    return len(known)


def check_evidence(store: PlaybookStore) -> None:
    """The evidence cache, folded incrementally, equals a rescan of the log."""
    from playbook.core import scoring

    now = store.now()
    ids = [b.id for b in store.bullets(state="all")]
    ev = store.evidence_many(ids, at=now)
    for bid in ids:
        group = [bid, *store.ancestors(bid)]
        raw = store.raw_events(group)
        h = x = 0.0
        for m in group:
            eh, ex = scoring.decayed_totals(raw.get(m, []), scoring.days(now), store.half_life())
            h, x = h + eh, x + ex
        assert ev[bid].helpful == pytest.approx(h, rel=1e-9, abs=1e-12)
        assert ev[bid].harmful == pytest.approx(x, rel=1e-9, abs=1e-12)


def check_file(db: Path, journal: Path) -> dict[str, int]:
    conn = connect(db)
    assert conn.execute("PRAGMA integrity_check").fetchall() == [("ok",)]
    assert conn.execute("PRAGMA foreign_key_check").fetchall() == []
    tags = check_tags(conn, journal)
    batches = check_batches(conn)
    check_evidence(PlaybookStore(conn))
    conn.close()
    return {**tags, "batches": batches}


# ------------------------------------------------------------------ reflection
def crash_reflections(tmp_path: Path, kills: int, seed: int) -> tuple[Path, Path, int]:
    db, diary = tmp_path / "reflect.sqlite3", tmp_path / "diary.md"
    ctx = context()
    rng = random.Random(seed)
    done = run = 0
    while done < kills:
        run += 1
        armed = rng.randint(0, 2)
        args = (str(db), str(diary), run, armed + 10, armed, rng.randint(1, 140))
        p = ctx.Process(target=run_reflections, args=args)
        p.start()
        p.join(60)
        assert p.exitcode in (0, -signal.SIGKILL), f"worker exit code {p.exitcode}"
        done += p.exitcode == -signal.SIGKILL
    return db, diary, run


def check_reflection(db: Path, diary: Path) -> dict[str, int]:
    """Every RULE paragraph before the watermark is stored once (staged or added, with the
    offset of its RULE line); none at or after it is stored at all."""
    data = diary.read_bytes()
    paragraphs: list[tuple[int, str]] = []
    pos = 0
    while (at := data.find(b"Notes.\nRULE:", pos)) != -1:
        end = data.index(b"\n\n", at)
        uid = data[at:end].decode().rsplit("(", 1)[1].rstrip(")")
        paragraphs.append((at + len(b"Notes.\n"), f"({uid})"))  # where its RULE line starts
        pos = end
    conn = connect(db)
    assert conn.execute("PRAGMA integrity_check").fetchall() == [("ok",)]
    row = conn.execute("SELECT byte_offset FROM watermarks WHERE session_ref = ?", (SESSION,))
    mark = (row.fetchone() or (0,))[0]
    assert mark <= len(data)
    stored: Counter[str] = Counter()
    offsets: dict[str, set[int]] = defaultdict(set)
    for text, offset in conn.execute(
        "SELECT delta, byte_offset FROM proposals WHERE session_ref = ? "
        "UNION ALL SELECT content, byte_offset FROM bullets WHERE session_ref = ?",
        (SESSION, SESSION),
    ):
        uid = "(" + text.rsplit("(", 1)[1].split(")")[0] + ")"
        stored[uid] += 1
        offsets[uid].add(offset)
    before = [(o, u) for o, u in paragraphs if o < mark]
    assert set(stored) <= {u for _, u in paragraphs}, "stored something not in the diary"
    for o, uid in paragraphs:
        if o < mark:
            assert stored[uid] == 1, f"{uid} at {o} is before the watermark {mark} but not stored"
            assert offsets[uid] == {o}
        else:
            assert stored[uid] == 0, f"{uid} at {o} stored but the watermark is {mark}"
    conn.close()
    return {"paragraphs": len(paragraphs), "stored": len(before)}


# ------------------------------------------------------------------ tests
def test_killed_writers_leave_whole_batches(tmp_path: Path) -> None:
    db, journal, stats = crash_writer(tmp_path, inner_kills=30, outer_kills=15, seed=7)
    totals = check_file(db, journal)
    assert stats["inner"] + stats["outer"] == 45
    assert totals["absent"] >= stats["inner"]  # each inner kill lost its batch, wholly
    assert totals["present"] > 30


@pytest.mark.slow
def test_killed_writers_leave_whole_batches_long(tmp_path: Path) -> None:
    db, journal, stats = crash_writer(tmp_path, inner_kills=200, outer_kills=100, seed=8)
    totals = check_file(db, journal)
    assert totals["absent"] >= stats["inner"]


def test_killed_reflections_never_advance_the_watermark_past_what_was_stored(
    tmp_path: Path,
) -> None:
    db, diary, _ = crash_reflections(tmp_path, kills=15, seed=3)
    totals = check_reflection(db, diary)
    assert 0 < totals["stored"] < totals["paragraphs"]


@pytest.mark.slow
def test_killed_reflections_never_advance_the_watermark_past_what_was_stored_long(
    tmp_path: Path,
) -> None:
    db, diary, _ = crash_reflections(tmp_path, kills=120, seed=4)
    check_reflection(db, diary)
