"""The evidence cache: per-bullet decayed sums, folded incrementally from the feedback log.

`evidence` keeps, per bullet, its decayed helpful/harmful sums at a reference time and the
id of the last event folded in; `meta.evidence_watermark` is the last event folded overall.
A feedback write folds its event in the same transaction, so a score never rescans
history. Reads that the cache cannot answer exactly (as-of reads, future events, a changed
half-life, a read-only store whose cache lags) fall back to the raw events. Lineage:
a successor scores its own events plus those of the bullets it supersedes.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping
from contextlib import contextmanager
from datetime import datetime
from typing import TYPE_CHECKING, Any

from ..core import scoring
from ..core.errors import NotFound
from .base import Meta, Now
from .evidence_days import WATERMARK as DAYS_WATERMARK
from .evidence_days import EvidenceDays, Point, points_of
from .evidence_rows import UPSERT, Agg, load_aggs, rebuild_agg
from .evidence_rule import lags, member_answers
from .records import Evidence, event_point, iso, stored_time
from .rulings import EdgeRepo

if TYPE_CHECKING:
    from ..core.policy import Policy
    from .executor import Executor


# The cache's watermark, as SQL (`meta` holds text).
_WATERMARK = (
    "COALESCE((SELECT CAST(value AS BIGINT) FROM meta WHERE key = 'evidence_watermark'), 0)"
)


class EvidenceRepo:
    """The evidence cache and the store's write transaction, which folds into it the events
    appended meanwhile as it commits. `store.evidence(id)` is one bullet's evidence."""

    _fold_at_commit = False  # the outermost store transaction folds new events as it ends
    _unfolded = False  # a feedback write of that transaction left its event to that fold

    def __init__(
        self, sql: Executor, policy: Policy, now: Now, meta: Meta, edges: EdgeRepo
    ) -> None:
        self.sql = sql
        self.policy = policy
        self.now = now
        self.meta = meta
        self.edges = edges
        self.days = EvidenceDays(sql, meta, lambda value: self.half_life(value=value))

    @property
    def read_only(self) -> bool:
        return self.sql.read_only

    def half_life(self, value: float | None = None) -> float:
        """A bullet's own half-life (`value`), or the policy's when it has none."""
        return float(value) if value else self.policy.half_life_days

    @contextmanager
    def transaction(self) -> Iterator[None]:
        """One write transaction (re-entrant: an inner block joins the outer one).

        The feedback events it appends are folded into the evidence cache once, just before
        it commits (a batch of a hundred votes folds once, not a hundred times); a read of
        the cache inside it folds them first (`sync_evidence`), so nothing reads a lagging
        cache, and what commits has them folded."""
        if self.sql.in_transaction:
            with self.sql.transaction():
                yield
            return
        with self.sql.transaction():
            self._fold_at_commit = True
            try:
                yield
                if self._unfolded:
                    self.sync()
            finally:
                self._fold_at_commit = self._unfolded = False

    def fold_at_commit(self) -> None:
        """An event was appended: fold it now, or with the others when the store's
        transaction commits."""
        if self._fold_at_commit:
            self._unfolded = True
        else:
            self.sync()

    def behind(self) -> bool:
        """Events in the log that the cache has not folded yet (only a read-only store, or
        a writer of another version, can leave the cache behind)."""
        mark, last = self._watermarks()
        return last > mark

    def evidence_watermark(self) -> int:
        return int(self.meta.get("evidence_watermark") or 0)

    def log_watermark(self) -> int:
        return int(self.sql.scalar("SELECT MAX(id) FROM feedback", default=0))

    def _watermarks(self) -> tuple[int, int]:
        """(the cache's watermark, the log's last event id), in one statement."""
        mark, last = self.sql.one(f"SELECT {_WATERMARK}, (SELECT MAX(id) FROM feedback)")
        return int(mark), int(last or 0)

    def sync(self) -> int:
        """Fold every event past the cache's watermark into the per-bullet sums.

        Returns how many events were folded. Called when a write transaction that appended
        events commits (`transaction`), and by readers when another writer appended events
        without folding them.
        """
        if self.read_only:
            return 0  # read-only: `evidence_many` reads the unfolded events instead
        if not self.sql.in_transaction:
            mark, last = self._watermarks()
            if last <= mark:
                return 0  # the common case for a reader: one statement
        with self.transaction():
            if self.sql.derived_by_database:  # the database folds them itself (roles.py)
                self._unfolded = False
                return int(self.sql.call("SELECT playbook_fold()")[0][0])
            # Under the write lock. (The watermark is a parameter, not a subquery: the
            # planner then sees how few events are past it, and looks their bullets up
            # rather than hashing every bullet.)
            marks = dict(
                self.sql.all(
                    "SELECT key, value FROM meta WHERE key IN (?, ?)",
                    ("evidence_watermark", DAYS_WATERMARK),
                )
            )
            mark = int(marks.get("evidence_watermark") or 0)
            rows = self._events_after(mark)
            self._unfolded = False
            if not rows:
                return 0
            points = points_of(rows)
            days = marks.get(DAYS_WATERMARK)
            if days is not None:  # the days (schema 4 on): the same events, or their own
                if int(days) == mark:
                    self.days.fold(points, rows[-1][0])
                else:
                    self.days.fold(*self._points_after(int(days)))
            aggs = load_aggs(self.sql, {p[1] for p in points})
            half_life = self.half_life
            for eid, bid, kind, t, w, hl, _ in points:
                h = half_life(value=hl)
                agg = aggs.get(bid)
                if agg is None and mark == 0:
                    # Nothing was folded before (a new playbook, or right after an import):
                    # this is the bullet's first event, so there is nothing to re-read.
                    agg = aggs[bid] = Agg(bid, scoring.DecayAccumulator(h), float("-inf"), 0)
                elif agg is None or agg.acc.half_life != h:
                    agg = rebuild_agg(self.sql, bid, h, upto=eid - 1)
                    aggs[bid] = agg
                agg.acc.fold(kind, t, w)
                if t > agg.last_at:
                    agg.last_at = t
                agg.last_event_id = eid
            self.sql.later(
                UPSERT,
                [
                    (
                        a.bullet_id,
                        a.acc.half_life,
                        a.acc.ref,
                        a.acc.helpful,
                        a.acc.harmful,
                        a.acc.count,
                        a.last_at,
                        a.last_event_id,
                    )
                    for a in aggs.values()
                ],
            )
            self.meta.set("evidence_watermark", str(rows[-1][0]))
            return len(rows)

    def _events_after(self, mark: int) -> list[Any]:
        return self.sql.all(
            "SELECT f.id, f.bullet_id, f.kind, f.at, f.weight, b.half_life_days, "
            "f.recorded_at FROM feedback f JOIN bullets b ON b.id = f.bullet_id "
            "WHERE f.id > ? ORDER BY f.id",
            (mark,),
        )

    def _points_after(self, mark: int) -> tuple[list[Point], int | None]:
        """The events past `mark` as the folds take them, and the last one's id (None when
        there is none)."""
        rows = self._events_after(mark)
        return points_of(rows), rows[-1][0] if rows else None

    def days_answer(self) -> bool:
        """Whether the days (`evidence_days`) hold every event of the log; a writer folds
        into them first what another left (the database's own fold of PostgreSQL's agent
        role folds the evidence cache alone)."""
        last = self.log_watermark()
        if self.days.answers(last):
            return True
        mark = self.days.watermark()
        if mark is None or self.read_only or self.sql.derived_by_database:
            return False
        with self.transaction():
            self.days.fold(*self._points_after(mark))
        return True

    def raw_events(
        self, ids: Iterable[str], *, recorded_by: datetime | None = None
    ) -> dict[str, list[scoring.RawEvent]]:
        out: dict[str, list[scoring.RawEvent]] = {}
        extra = ""
        args_tail: list[Any] = []
        if recorded_by is not None:
            extra = " AND recorded_at <= ?"
            args_tail = [iso(recorded_by)]
        d = self.sql.dialect
        for eid, bid, kind, at, weight, recorded in self.sql.execute(
            "SELECT id, bullet_id, kind, at, weight, recorded_at FROM feedback "
            f"WHERE {d.in_list('bullet_id')}" + extra + " ORDER BY id",
            [d.list_param(ids), *args_tail],
        ):
            point = event_point(eid, at, weight, recorded)
            if point is not None:
                out.setdefault(bid, []).append(scoring.RawEvent(kind, *point))
        return out

    def many(
        self,
        ids: Iterable[str],
        *,
        at: datetime | None = None,
        as_of: datetime | None = None,
    ) -> dict[str, Evidence]:
        """Decayed (H, X) per bullet at `at` (default now), lineage included.

        With `as_of`, only events recorded by then count (the playbook as it stood then);
        decay is then computed at `as_of` unless `at` says otherwise.
        """
        ids = list(dict.fromkeys(ids))
        if not ids:
            return {}
        now = scoring.days(at or as_of or self.now())
        return self._many(dict.fromkeys(ids, now), as_of)

    def many_at(self, moments: Mapping[str, datetime]) -> dict[str, Evidence]:
        """Decayed (H, X) of each bullet at its own moment, lineage included: what
        `many([id], at=moment)` gives each, in one pass (the lineage, the bullets, the cache
        and the raw events read once for all of them, not once per moment)."""
        return self._many({bid: scoring.days(at) for bid, at in moments.items()}, None)

    def _many(self, nows: dict[str, float], as_of: datetime | None) -> dict[str, Evidence]:
        """`many`'s work: each bullet of `nows` at its moment (epoch days)."""
        ids = list(nows)
        smap = self.edges.supersedes_map(as_of=as_of)
        groups = {bid: [bid, *self.edges.ancestors(bid, smap)] if smap else [bid] for bid in ids}
        members = list({m for g in groups.values() for m in g})
        info: dict[str, tuple[float | None, float]] = {}
        d = self.sql.dialect
        for bid, hl, created in self.sql.execute(
            f"SELECT id, half_life_days, created_at FROM bullets WHERE {d.in_list('id')}",
            (d.list_param(members),),
        ):
            created_at = stored_time(created, "bullets", bid)
            info[bid] = (hl, scoring.days(created_at) if created_at else 0.0)
        raw: dict[str, list[scoring.RawEvent]] | None = None
        aggs: dict[str, Agg] = {}
        # The cache answers "now" reads; as-of reads (the playbook as it stood then) and a
        # read-only store whose cache lags the log read the raw events.
        all_raw = as_of is not None or lags(self.read_only, self.behind)
        if all_raw:
            raw = self.raw_events(members, recorded_by=as_of)
        else:
            self.sync()
            aggs = load_aggs(self.sql, members)
        out: dict[str, Evidence] = {}
        # (bullet, member) pairs the cache cannot answer for that bullet's half-life and
        # moment: only those read the raw events (a bullet's sums never depend on which
        # other bullets were asked for with it: the database's own pass asks one at a time)
        need_raw: set[tuple[str, str]] = set()
        for bid, group in groups.items():
            if bid not in info:
                continue
            h = self.half_life(value=info[bid][0])
            if raw is None:
                for m in group:
                    agg = aggs.get(m)
                    if agg and not member_answers(agg.acc.half_life, h, agg.acc.ref, nows[bid]):
                        need_raw.add((bid, m))
        if need_raw:
            raw = self.raw_events({m for _, m in need_raw})
        for bid, group in groups.items():
            if bid not in info:
                continue
            h = self.half_life(value=info[bid][0])
            now = nows[bid]
            total_h = total_x = 0.0
            last = info[bid][1]
            pending: float | None = None
            for m in group:
                if raw is not None and (all_raw or (bid, m) in need_raw):
                    events = raw.get(m, [])
                    eh, ex = scoring.decayed_totals(events, now, h)
                    for e in events:
                        if e.at > now:
                            pending = e.at if pending is None else min(pending, e.at)
                        else:
                            last = max(last, e.at)
                else:
                    agg = aggs.get(m)
                    if agg is None:
                        continue
                    eh, ex = agg.acc.at(now)
                    last = max(last, agg.last_at)
                total_h += eh
                total_x += ex
            out[bid] = Evidence(total_h, total_x, last, pending)
        return out

    def database_maturity_pass(
        self, touched: Iterable[str], batch_id: str | None
    ) -> list[tuple[str, str, str]]:
        """The maturity pass, run by the database itself over `touched` and the bullets due
        (a connection that may not write maturity: the agent role of `roles.py`, whose
        moves use the policy the roles were made with): (id, from, to) of every move."""
        with self.transaction():
            rows = self.sql.call(
                "SELECT bullet_id, was, now_is FROM playbook_maturity_pass(?, ?)",
                (list(dict.fromkeys(touched)), batch_id),
            )
        return [(str(b), str(f), str(t)) for b, f, t in rows]

    def database_should_invert(self, ids: Iterable[str]) -> set[str]:
        """Which of `ids` the database says step 5 inverts now (the agent role, as above)."""
        return set(
            self.sql.column(
                "SELECT i FROM unnest(?::text[]) AS u(i) WHERE playbook_should_invert(i)",
                (list(ids),),
            )
        )

    def __call__(
        self, bullet_id: str, *, at: datetime | None = None, as_of: datetime | None = None
    ) -> Evidence:
        ev = self.many([bullet_id], at=at, as_of=as_of).get(bullet_id)
        if ev is None:
            raise NotFound(f"no bullet with id {bullet_id!r}")
        return ev
