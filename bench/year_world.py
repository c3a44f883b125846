"""A team's year written into a playbook: the volume in bulk, every consequence by the engine.

    build(target, spec) -> dict of counts        # a SQLite path or a postgresql:// URL

Day by day (`year_plan.Plan` says what happens; one write transaction a day on PostgreSQL,
a week on SQLite):

1. the day's new rules and its marks go in through the store's bulk path
   (`store.tables.append_rows`: `COPY` on PostgreSQL), as the rows a curate batch
   writes for them: a bullet with its postings, tags, vocabulary counts, its maturity-log
   entry and its `add` decision; per turn, one batch id, the feedback events with the
   session's provenance, and a `helpful`/`harmful` decision per vote; an outcome report
   writes its receipt, its events (the policy's weights) and its `outcome` decision (on
   PostgreSQL the turns' decisions go on a connection of their own: `year_decisions.py`);
2. then the engine itself runs, its clock at 23:00 that day: the evidence fold
   (`sync_evidence`), the inversion of harmed rules (`invert_harmed`), the maturity pass
   over every rule cited that day (`run_maturity_pass`), and the day's curation through
   the real API: replaces, merges, deprecations, adds that conflict with a rule or hit a
   blocked pattern (`curate`), proposals staged, approved and rejected (`queue`), blocks,
   pins and conflicts resolved by a human.

So the derived state (evidence cache, maturity, maturity log, edges, due times) is what
the engine computed, from the log as it stood: it is the playbook the engine would hold
had each day's marks come in one batch at the day's end (the real engine runs its pass
after every batch: a rule then changes rung at the mark that moves it, not at 23:00; and
a rule with a negative score drops a rung per pass, so per day here). Ids come from a
seeded generator (the store's `ids.random_hex` is replaced while building), so the same
spec gives the same playbook, id for id, on SQLite and on PostgreSQL.

On PostgreSQL the tables' foreign keys are set aside while the year is written and made
again at its end, each checked over every row then (`store/postgres/loading.py`): per
row, a key costs the server a lookup. The checks stay: the server checks each day's rows
as they arrive, while this process works out the next day. On SQLite, where this process
does the database's work too, the rules' triggers are set aside instead, and every row
checked against the rules at the end (`store/sqlite/loading.py`): a fifth of the time.

The engine's curation steps are `year_ops.py`'s; `year_verify.verify(store)` checks what
`playbook doctor` does not: the evidence cache against the log, folded there
independently, and that no live rule's rung would move.
"""

from __future__ import annotations

import json
import random
import sys
from collections.abc import Callable, Iterator
from contextlib import ExitStack, contextmanager
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from year_decisions import DECISION_COLUMNS, DecisionLog
from year_ops import BLOCKS, CurationSteps
from year_plan import Plan, Spec, Turn

from playbook.core.deltas import delta_dict, parse_delta
from playbook.core.text import content_hash, tokens
from playbook.curation import invert_harmed, run_maturity_pass
from playbook.store import PlaybookStore, new_batch_id, open_store
from playbook.store import ids as store_ids
from playbook.store.postgres import loading
from playbook.store.sqlite import loading as sqlite_loading
from playbook.store.tables import TABLES

BULLET_COLUMNS = (
    "seq", "id", "content", "category", "tags", "scope", "scope_key", "type", "kind",
    "source", "state", "maturity", "pinned", "pinned_reason", "half_life_days",
    "session_ref", "byte_offset", "created_at", "valid_from", "valid_to", "content_hash",
    "batch_id",
)  # fmt: skip
FEEDBACK_COLUMNS = (
    "bullet_id", "kind", "at", "recorded_at", "weight", "reason", "context", "session_ref",
    "byte_offset", "actor", "receipt", "batch_id",
)  # fmt: skip
# SQLite's page cache while the year is written: the log's and the decisions' indexes grow
# at random places (a rule's, a batch's), 1-2 GB of them in a team's year
SQLITE_CACHE_KIB = 3 * 1024 * 1024
# SQLite's page cache while the year is written: the log's and the decisions' indexes grow
# at random places (a rule's, a batch's), 1-2 GB of them in a team's year
SQLITE_CACHE_KIB = 3 * 1024 * 1024
BURST = 20.0  # a bursting rule is cited this many times its usual rate
DEPRECATED = 0.05  # a deprecated rule is still cited, rarely (recall shows it as a warning)


@contextmanager
def seeded_ids(seed: int) -> Iterator[random.Random]:
    """The store's random ids (bullets, batches, proposals, blocks) drawn from `seed`."""
    rng = random.Random(seed)
    original = store_ids.random_hex
    store_ids.random_hex = lambda n: rng.randbytes(n).hex()  # type: ignore[assignment]
    try:
        yield rng
    finally:
        store_ids.random_hex = original  # type: ignore[assignment]


def vote_detail(
    index: int, kind: str, bullet_id: str, reason: str | None, context: str | None
) -> str:
    """The decision log's detail of a vote, as `log_decision` writes it (json.dumps of
    {"index", "delta"}), formatted directly (ten million of them); contexts are words of
    the rule, which JSON does not escape (tests/test_team_year.py checks the two agree)."""
    tail = (f', "reason": "{reason}"' if reason else "") + (
        f', "context": "{context}"' if context is not None else ""
    )
    return f'{{"index": {index}, "delta": {{"type": "{kind}", "bullet_id": "{bullet_id}"{tail}}}}}'


class World(CurationSteps):
    """The year being written: the plan, the store, and what the generator knows of each
    rule (indexes into arrays; the engine's own state stays in the store)."""

    def __init__(
        self, store: PlaybookStore, spec: Spec, clock: list[datetime], log: DecisionLog
    ) -> None:
        self.store = store
        self.log = log
        self.spec = spec
        self.plan = Plan(spec)
        self.clock = clock
        self.pick = random.Random(spec.seed + 2)  # the engine steps' choices
        cap = int(spec.rules * 1.2) + 1000
        self.ids: list[str] = []
        self.index: dict[str, int] = {}
        self.words: list[list[str]] = []
        self.pop = np.zeros(cap)
        self.good = np.zeros(cap)
        self.bad_day = np.zeros(cap, dtype=np.int64)
        self.silent_day = np.zeros(cap, dtype=np.int64)
        self.created_day = np.zeros(cap, dtype=np.int64)
        self.alive = np.zeros(cap, dtype=bool)
        self.deprecated = np.zeros(cap, dtype=bool)
        self.is_rule = np.zeros(cap, dtype=bool)
        self.burst_until = np.full(cap, -1, dtype=np.int64)
        self.receipts = 0
        self.ops = self._schedule()
        self.later: dict[int, list[tuple[str, Any]]] = {}
        self.counts: dict[str, int] = {}

    # ----------------------------------------------------------------- bookkeeping
    def _count(self, what: str, n: int = 1) -> None:
        self.counts[what] = self.counts.get(what, 0) + n

    def _schedule(self) -> dict[int, list[str]]:
        s = self.spec
        wanted = {
            "replace": s.per_year(400, 3),
            "merge": s.per_year(150, 2),
            "deprecate": s.per_year(150, 2),
            "conflict": s.per_year(150, 2),
            "propose": s.per_year(600, 6),
            "block": min(len(BLOCKS), s.per_year(6, 2)),
            "pin": s.per_year(50, 1),
        }
        out: dict[int, list[str]] = {}
        for what, n in wanted.items():
            for day in self.pick.choices(range(1, s.days), k=n):
                out.setdefault(day, []).append(what)
        for day in range(7, s.days, 7):
            out.setdefault(day, []).append("resolve")
        return out

    def _new_index(self, bid: str, content: str, day: int, parent: int | None = None) -> int:
        i = len(self.ids)
        if i >= self.pop.size:
            raise RuntimeError("more rules than the world has room for")
        self.ids.append(bid)
        self.index[bid] = i
        self.words.append(sorted(set(tokens(content))))
        if parent is None:
            traits = self.plan.rule_traits(1, day)
            self.pop[i] = traits["pop"][0]
            self.good[i] = traits["good"][0]
            self.bad_day[i] = traits["bad_day"][0]
            self.silent_day[i] = traits["silent_day"][0]
        else:  # a successor is cited as its original was, and is better
            self.pop[i] = self.pop[parent]
            self.good[i] = max(self.good[parent], 0.85)
            self.bad_day[i] = self.spec.days + 1
            self.silent_day[i] = self.silent_day[parent]
        self.created_day[i] = day
        self.alive[i] = True
        self.is_rule[i] = not content.startswith("AVOID:")
        return i

    def _new_id(self) -> str:
        while True:
            bid = store_ids.new_id("b")
            if bid not in self.index:
                return bid

    def _context(self, i: int, u: float) -> str | None:
        """What a mark says happened: two words of the rule (seven marks in ten)."""
        words = self.words[i]
        if u >= 0.7 or not words:
            return None
        k = int(u * 1e6)
        return f"{words[k % len(words)]} {words[(k // 7) % len(words)]}"

    def _session(self, session: int) -> tuple[str, int]:
        return self.plan.session_ids[session], self.plan.offset(session)

    # ----------------------------------------------------------------- one day
    def day(self, d: int) -> None:
        start = self.plan.day_start(d)
        self.clock[0] = start
        self._rules(d)
        weights = self.pop * self.alive * (self.created_day < d) * (self.silent_day > d)
        weights = weights * np.where(self.burst_until >= d, BURST, 1.0)
        weights = weights * np.where(self.deprecated, DEPRECATED, 1.0)
        good = np.where(self.bad_day <= d, 0.3, self.good)
        turns = self.plan.day_turns(d, weights[: len(self.ids)], good)
        cited, harmed = self._turns(turns)
        live = np.flatnonzero(self.alive[: len(self.ids)])
        chosen, lengths = self.plan.bursts(live, max(2, self.spec.rules // 2500))
        self.burst_until[chosen] = d + lengths - 1
        self.clock[0] = start + timedelta(hours=23)
        self.store.sync_evidence()
        inverted = invert_harmed(self.store, harmed, batch_id=new_batch_id(), actor="agent")
        made = self.store.get_bullets([new for _, new in inverted])
        for old, new in inverted:
            self._retired(old)
            i = self._new_index(new, made[new].content, d, self.index[old])
            cited[new] = None
            self.good[i] = 0.9
        self._count("inversions", len(inverted))
        changes = run_maturity_pass(
            self.store, touched=cited, batch_id=new_batch_id(), actor="agent"
        )
        self._maturity(changes)
        for what in self.ops.get(d, []):
            self.clock[0] += timedelta(seconds=1)
            getattr(self, f"_op_{what}")(d)
        for what, arg in self.later.pop(d, []):
            self.clock[0] += timedelta(seconds=1)
            getattr(self, f"_op_{what}")(d, arg)

    def _retired(self, bid: str) -> None:
        i = self.index.get(bid)
        if i is not None:
            self.alive[i] = False

    def _maturity(self, changes: list[tuple[str, str, str]]) -> None:
        for bid, _, to in changes:
            i = self.index.get(bid)
            if i is not None:
                self.deprecated[i] = to == "deprecated"

    def _rules(self, d: int) -> None:
        """The day's new rules, as curate's `add` writes them (one batch each)."""
        new = self.plan.new_rules(d, int(self.plan.arrivals[d]))
        if not new:
            return
        seq = int(self.store.sql.scalar("SELECT COALESCE(MAX(seq), 0) FROM bullets", default=0))
        bullets, postings, tags, mlog, decisions = [], [], [], [], []
        df: dict[str, int] = {}
        for r in new:
            seq += 1
            bid = self._new_id()
            batch = new_batch_id()
            session, offset = self._session(r.session)
            btype = "anti-pattern" if r.content.startswith("AVOID:") else "rule"
            kind = "pitfall" if btype == "anti-pattern" else "workflow_rule"
            bullets.append(
                (seq, bid, r.content, r.category, json.dumps(r.tags), r.scope, r.scope_key,
                 btype, kind, "learned", "active", "candidate", 0, None, None, session,
                 offset, r.at, r.at, None, content_hash(r.content), batch)
            )  # fmt: skip
            for tok in sorted(set(tokens(r.content))):
                postings.append((tok, seq))
                df[tok] = df.get(tok, 0) + 1
            tags.extend((t.lower(), seq) for t in dict.fromkeys(r.tags))
            mlog.append((bid, r.at, "candidate", batch))
            delta = {"type": "add", "content": r.content, "category": r.category, "tags": r.tags}
            if r.scope != "global":
                delta |= {"scope": r.scope, "scope_key": r.scope_key}
            detail = {"index": 0, "delta": delta_dict(parse_delta(delta))}
            decisions.append(
                (r.at, batch, "agent", "add", bid, "added", None,
                 json.dumps(detail, ensure_ascii=False))
            )  # fmt: skip
            self._new_index(bid, r.content, d)
        s = self.store
        s.tables.append_rows("bullets", BULLET_COLUMNS, bullets)
        s.sql.keys_written("bullets", "seq")
        s.tables.append_rows("bullet_tokens", ("token", "seq"), postings)
        s.tables.append_rows("bullet_tags", ("tag", "seq"), tags)
        s.sql.executemany(
            "INSERT INTO vocab (token, df) VALUES (?, ?) "
            "ON CONFLICT(token) DO UPDATE SET df = vocab.df + excluded.df",
            sorted(df.items()),
        )
        s.tables.append_rows("maturity_log", ("bullet_id", "at", "maturity", "batch_id"), mlog)
        s.tables.append_rows("decisions", DECISION_COLUMNS, decisions)
        self._count("rules added in bulk", len(new))

    def _turns(self, turns: list[Turn]) -> tuple[dict[str, None], dict[str, None]]:
        """The day's marks and outcomes, as curate and apply_outcome write them."""
        policy = self.store.policy
        weight = {
            "success": ("helpful", policy.outcome_success_weight),
            "failure": ("harmful", policy.outcome_failure_weight),
            "partial": ("helpful", policy.outcome_partial_weight),
        }
        events: list[tuple[Any, ...]] = []
        decisions: list[tuple[Any, ...]] = []
        receipts: list[tuple[Any, ...]] = []
        cited: dict[str, None] = {}
        harmed: dict[str, None] = {}
        ctx = self.pick
        for t in turns:
            batch = new_batch_id()
            session, offset = self._session(t.session)
            bids = [self.ids[i] for i in t.rules]
            cited.update(dict.fromkeys(bids))
            if t.outcome is None:
                for j, (bid, i) in enumerate(zip(bids, t.rules, strict=True)):
                    kind, reason = t.kinds[j], t.reasons[j]
                    context = self._context(i, ctx.random())
                    events.append(
                        (bid, kind, t.at, t.at, 1.0, reason, context, session, offset, "agent",
                         None, batch)
                    )  # fmt: skip
                    decisions.append(
                        (t.at, batch, "agent", kind, bid, "applied", None,
                         vote_detail(j, kind, bid, reason, context))
                    )  # fmt: skip
                    if kind == "harmful":
                        harmed[bid] = None
                continue
            kind, w = weight[t.outcome]
            self.receipts += 1
            receipt = f"outcome-{session[:8]}-{self.receipts}"
            for bid in bids:
                events.append(
                    (bid, kind, t.at, t.at, w, "other" if kind == "harmful" else None,
                     f"task {t.outcome}", session, offset, "agent", receipt, batch)
                )  # fmt: skip
                if kind == "harmful":
                    harmed[bid] = None
            receipts.append((receipt, t.at, t.outcome, batch, self.receipts))
            detail = {"applied": bids, "skipped": [], "receipt": receipt}
            decisions.append(
                (t.at, batch, "agent", "outcome", None, "applied", t.outcome,
                 json.dumps(detail, ensure_ascii=False))
            )  # fmt: skip
        s = self.store
        s.tables.append_rows("feedback", FEEDBACK_COLUMNS, events)
        s.tables.append_rows(
            "receipts", ("receipt", "recorded_at", "outcome", "batch_id", "seq"), receipts
        )
        self.log.write(decisions)
        self._count("feedback events", len(events))
        self._count("turns", len(turns))
        return cited, harmed

    # ----------------------------------------------------------------- the year's end
    def finish(self) -> None:
        self.clock[0] = self.spec.start + timedelta(days=self.spec.days)
        with self.store.transaction():
            for k in np.flatnonzero(self.plan.byte_offset):
                self.store.set_watermark(self.plan.session_ids[k], int(self.plan.byte_offset[k]))


def _progress(progress: Callable[[str], None] | None, world: World, d: int) -> None:
    if progress is not None and (d % 30 == 29 or d == world.spec.days - 1):
        progress(
            f"day {d + 1}/{world.spec.days}: {len(world.ids):,} rules, "
            f"{world.counts.get('feedback events', 0):,} events"
        )


def build(
    target: str | Path, spec: Spec, *, progress: Callable[[str], None] | None = None
) -> dict[str, int]:
    """Write `spec`'s year into the empty playbook at `target`; returns what it wrote."""
    clock = [spec.start]
    with (
        seeded_ids(spec.seed + 1),
        open_store(target, clock=lambda: clock[0]) as store,
        ExitStack() as stack,
    ):
        if store.event_count() or store.count_bullets():
            raise SystemExit(f"{target} already holds a playbook: the year goes into an empty one")
        log = DecisionLog(store, target)
        stack.callback(log.close)
        world = World(store, spec, clock, log)
        postgres = str(store.sql.dialect) == "postgresql"
        if not postgres:  # a file of our own, checked afterwards: no fsync, no key checks
            store.sql.execute("PRAGMA synchronous = OFF")
            store.sql.execute("PRAGMA foreign_keys = OFF")
        with store.transaction():  # what checks row by row, made again once, at the end
            if postgres:  # the foreign keys (their rows then checked)
                remake = loading.set_aside(store.sql, list(TABLES), indexes=False)
            else:  # the rules' triggers (every row then checked against the rules)
                remake = sqlite_loading.set_aside(store.sql)
        # one transaction a day on PostgreSQL (the server checks and indexes the day's rows
        # as they come); a week on SQLite, which writes the pages a week's days all touch
        # (the indexes' hot pages, the popular rules' evidence) once instead of each day
        span = 1 if postgres else 7
        analyzed = 0  # the log's size when PostgreSQL's statistics were last taken
        with store.sql.bulk() if postgres else store.sql.bulk(kib=SQLITE_CACHE_KIB):  # type: ignore[call-arg]
            for first in range(0, spec.days, span):
                with store.transaction():
                    for d in range(first, min(first + span, spec.days)):
                        world.day(d)
                        _progress(progress, world, d)
                events = world.counts.get("feedback events", 0)
                if postgres and events >= 2 * analyzed:  # the planner's sizes within 2x
                    store.sql.analyze()  # type: ignore[attr-defined]
                    analyzed = events
            world.finish()
            log.wait()
            log.check()
            with store.transaction():
                if postgres:
                    loading.make_again(store.sql, remake)
                else:
                    sqlite_loading.make_again(store.sql, remake)
        if not postgres:
            store.sql.execute("PRAGMA wal_checkpoint(TRUNCATE)")
            store.sql.execute("ANALYZE")
        return dict(sorted(world.counts.items()))
