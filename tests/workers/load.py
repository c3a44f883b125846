"""Writers and a reader for the concurrency test (tests/test_concurrency.py).

A writer runs curate batches (adds, helpful and harmful votes on anyone's bullets) and task
outcomes with receipts against one playbook (a SQLite file or a PostgreSQL URL, opened
through `open_store`), and reports everything it committed: the
batch ids, the bullets it added, every feedback event it caused (each with a context unique
to it), the receipts, and any error it saw. The test then checks the file holds exactly
that. A reader recalls and scores in a loop until told to stop, and reports its errors.
"""

from __future__ import annotations

import json
import random
import traceback
from multiprocessing.synchronize import Barrier, Event
from pathlib import Path
from typing import Any

from playbook.curation import curate
from playbook.curation.outcomes import apply_outcome
from playbook.retrieval.query import recall
from playbook.store import PlaybookStore, open_store
from playbook.store import testing as raw

WORDS = (
    "pytest cache lockfile release npm docker image retry timeout migration schema index "
    "branch rebase review lint format coverage fixture mock seed flaky deploy rollback "
    "secret token queue worker thread pool memory profile trace log metric alert"
).split()
VERBS = ("Run", "Pin", "Check", "Prefer", "Keep", "Split", "Cache", "Verify")
UNKNOWN_ID = "b-ffffffff"  # cited by some outcomes: must be counted as a skip, never stored


def _content(rng: random.Random, tag: str, n: int) -> str:
    a, b, c = rng.sample(WORDS, 3)
    return f"{rng.choice(VERBS)} the {a} {b} before {c} ({tag}x{n})"


def _active_ids(store: PlaybookStore, rng: random.Random, k: int) -> list[str]:
    ids = [r[0] for r in raw.rows(store, "SELECT id FROM bullets WHERE state != 'retired'")]
    return rng.sample(ids, min(k, len(ids)))


def run_writer(
    db: str, index: int, batches: int, seed: int, out: str, reader_ready: Event | None = None
) -> None:
    """Run `batches` batches as writer `index`; write the report to `out` (JSON).
    With `reader_ready`, open the file at once but start the batches only once the reader
    is recalling, so that it recalls while they write whatever the scheduler does."""
    report: dict[str, Any] = {
        "writer": index,
        "batches": [],  # [batch_id, kind, logged delta decisions]
        "bullets": [],  # [bullet_id, content, batch_id]
        "events": [],  # [bullet_id, kind, context, weight]
        "receipts": [],  # [receipt, events]
        "unspent": [],  # receipts of reports that applied nothing: not stored
        "inversions": [],  # [old, new]
        "replays": 0,
        "rejected": [],  # reasons (votes on a bullet another writer retired meanwhile)
        "errors": [],
    }
    rng = random.Random(seed)
    try:
        store = open_store(db)
        policy = store.policy
        if reader_ready is not None and not reader_ready.wait(120):
            raise RuntimeError("the reader never started recalling")
        last_receipt: str | None = None
        for n in range(batches):
            tag = f"w{index}b{n}"
            if n % 4 == 3:
                if last_receipt is not None and n % 12 == 11:
                    # A retry of a report already applied: the receipt makes it a no-op.
                    r = apply_outcome(
                        store, {"outcome": "success", "bullet_ids": [], "receipt": last_receipt}
                    )
                    if not r.replayed or r.applied:
                        report["errors"].append(f"{tag}: receipt {last_receipt} applied twice")
                    report["replays"] += 1
                    continue
                outcome = rng.choice(["success", "failure", "partial"])
                cited = _active_ids(store, rng, rng.randint(1, 3))
                if rng.random() < 0.3:
                    cited.append(UNKNOWN_ID)
                receipt = f"{tag}-receipt"
                r = apply_outcome(
                    store,
                    {
                        "outcome": outcome,
                        "bullet_ids": cited,
                        "receipt": receipt,
                        "context": f"{tag}-outcome",
                    },
                )
                weight = {
                    "success": policy.outcome_success_weight,
                    "failure": policy.outcome_failure_weight,
                    "partial": policy.outcome_partial_weight,
                }[outcome]
                kind = "harmful" if outcome == "failure" else "helpful"
                for bid in r.applied:
                    report["events"].append([bid, kind, f"{tag}-outcome", weight])
                if r.applied:  # a receipt is spent only by a report that applied something
                    report["receipts"].append([receipt, len(r.applied)])
                    last_receipt = receipt
                else:  # (every bullet it cited was retired meanwhile by another writer)
                    report["unspent"].append(receipt)
                report["inversions"] += [list(p) for p in r.inversions]
                report["batches"].append([r.batch_id, "outcome", 1])
                continue
            deltas: list[dict[str, Any]] = []
            contents = [_content(rng, tag, i) for i in range(rng.randint(1, 3))]
            deltas += [{"type": "add", "content": c, "tags": [f"w{index}"]} for c in contents]
            for i, bid in enumerate(_active_ids(store, rng, rng.randint(1, 4))):
                vote: dict[str, Any] = {"bullet_id": bid, "context": f"{tag}-v{i}"}
                if rng.random() < 0.25:
                    vote |= {"type": "harmful", "reason": "wasted_time"}
                else:
                    vote |= {"type": "helpful"}
                deltas.append(vote)
            result = curate(store, deltas)
            logged = 0
            for o in result.outcomes:
                delta = deltas[o.index]
                if o.status == "rejected-invalid":
                    report["rejected"].append(o.reason)
                    continue
                logged += 1
                if o.status in ("added", "conflict"):
                    report["bullets"].append([o.bullet_id, delta["content"], result.batch_id])
                elif o.status == "folded":
                    context = f"folded duplicate add: {delta['content']}"
                    report["events"].append([o.bullet_id, "helpful", context, 1.0])
                elif o.status == "applied" and delta["type"] in ("helpful", "harmful"):
                    report["events"].append([o.bullet_id, delta["type"], delta["context"], 1.0])
                else:
                    report["errors"].append(f"{tag}: unexpected outcome {o}")
            report["inversions"] += [list(p) for p in result.inversions]
            report["batches"].append([result.batch_id, "curate", logged])
        store.close()
    except BaseException:
        report["errors"].append(traceback.format_exc())
    Path(out).write_text(json.dumps(report))


def run_reader(db: str, stop: Event, seed: int, out: str, ready: Event | None = None) -> None:
    """Recall and score in a loop until `stop` is set; write the report to `out` (JSON).
    Every third recall is semantic, which writes missing embeddings to the cache: a reader
    that writes too, as an agent's recall does. `ready` is set after the first recall.

    The loop ends only once it has done what the test checks, however the scheduler ran
    the processes: a round that began after `stop`, and a semantic recall that stored
    vectors (so a reader started late, or starved while the writers ran, still reports
    recalls and embeddings)."""
    from playbook.retrieval.vectors import HashTrigramEmbedder, MemoryVectors

    rng = random.Random(seed)
    report: dict[str, Any] = {
        "recalls": 0,
        "nonempty": 0,
        "scored": 0,
        "embedded": 0,
        "errors": [],
    }
    try:
        store = open_store(db)
        embedder = HashTrigramEmbedder()
        while True:
            last_round = stop.is_set()
            try:
                vectors = MemoryVectors(store, embedder) if report["recalls"] % 3 == 0 else None
                query = " ".join(rng.sample(WORDS, 2))
                r = recall(store, query, limit=5, vectors=vectors)
                report["recalls"] += 1
                if ready is not None:
                    ready.set()
                if vectors is not None:
                    report["embedded"] = store.cache_embedders().get(embedder.id, 0)
                report["nonempty"] += bool(r.bullets or r.anti_patterns)
                ids = [it.bullet.id for it in r.bullets + r.anti_patterns + r.deprecated_warnings]
                if ids:
                    store.scores(ids)
                    store.timeline(ids[0])
                    report["scored"] += len(ids)
            except Exception:
                report["errors"].append(traceback.format_exc())
                if len(report["errors"]) > 20:
                    break
            if last_round and report["embedded"] > 0:
                break
        store.close()
    except BaseException:
        report["errors"].append(traceback.format_exc())
    Path(out).write_text(json.dumps(report))


def open_together(db: str, barrier: Barrier, out: str) -> None:
    """Wait for the others, then open (and migrate) `db` at the same moment as they do."""
    try:
        barrier.wait(30)
        open_store(db).close()
        Path(out).write_text("ok")
    except BaseException:
        Path(out).write_text(traceback.format_exc())
