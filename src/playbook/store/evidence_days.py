"""The evidence cache's days (`evidence_days`): per bullet and per UTC day on which feedback
about it was *recorded*, the bullet's `DecayAccumulator` after every one of its events
recorded by the end of that day (knowledge time, SPEC §8), with the latest `at` seen.

An as-of read at `when` (day D) then takes each bullet's latest checkpoint before D and
folds on top only the events recorded on D up to `when` (at most a day of the log), instead
of reading the whole log (`review.history`). The log stays the source of truth: the days
are a cache rebuilt from it (the migration that adds them, `rebuild`), kept in the write
transaction that folds the evidence cache (`EvidenceRepo.sync`), and checked against the
log by `doctor`. `meta.days_watermark` is the last event folded into them; a reader whose
days lag the log (a read-only store, or the database's own fold of PostgreSQL's agent role,
which leaves them to the next writer) reads the raw events instead.

A checkpoint cannot answer exactly, and the reader goes to the raw events, when its
half-life is not the one the bullet is read with, or its `ref` (the latest `at` folded) is
after the moment read (a future-dated event, or a read at a retirement before it): the
cases of `evidence_rule.py`. Lineage sums the members' checkpoints when each answers.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from datetime import UTC, date, datetime, timedelta
from typing import TYPE_CHECKING, Any

from ..core import scoring
from .records import event_point, iso, parse_iso

if TYPE_CHECKING:
    from ..core.policy import Policy
    from .base import Meta
    from .executor import Executor

WATERMARK = "days_watermark"  # meta key: the last event folded into the days
_EPOCH_ORDINAL = date(1970, 1, 1).toordinal()
_FLUSH = 20_000  # checkpoint rows written at a time by a long fold
# An event as the folds take it (`points_of`): id, bullet id, kind, at (epoch days), weight,
# the bullet's own half-life, recorded_at (as stored).
Point = tuple[int, str, str, float, float, "float | None", str]
# A bullet's events (recorded day, id, kind, at, weight), in id order (`EvidenceDays.rebuild`).
Each = Callable[[str, list[tuple[int, int, str, float, float]]], None]
COLUMNS = (
    "bullet_id", "day", "half_life", "ref", "helpful", "harmful", "count", "last_at",
    "last_event_id",
)  # fmt: skip
_UPSERT = (
    f"INSERT INTO evidence_days ({', '.join(COLUMNS)}) VALUES (?,?,?,?,?,?,?,?,?) "
    "ON CONFLICT(bullet_id, day) DO UPDATE SET half_life = excluded.half_life, "
    "ref = excluded.ref, helpful = excluded.helpful, harmful = excluded.harmful, "
    "count = excluded.count, last_at = excluded.last_at, last_event_id = excluded.last_event_id"
)


# Step 4 of the SQLite schema (`store/schema.py`; PostgreSQL's in `postgres/schema.py`).
SQLITE_DAYS = """
CREATE TABLE evidence_days (
    bullet_id TEXT NOT NULL REFERENCES bullets(id),
    day INTEGER NOT NULL,
    half_life REAL NOT NULL,
    ref REAL NOT NULL,
    helpful REAL NOT NULL,
    harmful REAL NOT NULL,
    count INTEGER NOT NULL,
    last_at REAL NOT NULL,
    last_event_id INTEGER NOT NULL,
    PRIMARY KEY (bullet_id, day)
) WITHOUT ROWID;
CREATE INDEX feedback_recorded ON feedback(recorded_at);
CREATE INDEX decisions_pins ON decisions(id) WHERE action IN ('pin', 'unpin');
CREATE INDEX maturity_log_at ON maturity_log(at);
"""


def build_days(ex: Executor, policy: Policy | None) -> None:
    """Step 4's data: the days folded from the whole log, in the step's transaction, each
    rule's at its own half-life or the default of `policy`, the one the migrating process
    reads the playbook with (None: the defaults). A reader with another default reads the
    raw events until they are folded again at its own (`store.refold`, `doctor --fix`)."""
    from ..core.policy import DEFAULT_POLICY  # lazy: only an upgrade to step 4 pays
    from .base import Meta  # lazy: only an upgrade to step 4 pays

    default = (policy or DEFAULT_POLICY).half_life_days
    EvidenceDays(ex, Meta(ex), lambda hl: float(hl) if hl else default).rebuild()


def points_of(rows: Iterable[Sequence[Any]]) -> list[Point]:
    """The log's rows (id, bullet_id, kind, at, weight, half_life_days, recorded_at), with
    `at` and `weight` read as a fold takes them (`records.event_point`: epoch days, a
    float); a malformed row is noted and left out, for every reader alike."""
    out: list[Point] = []
    for eid, bid, kind, at, weight, hl, recorded in rows:
        point = event_point(eid, at, weight, recorded)
        if point is not None:
            out.append((eid, bid, kind, point[0], point[1], hl, recorded))
    return out


def day_of(recorded_at: object) -> int:
    """The UTC day (days since the epoch) of a stored `recorded_at` (the store's ISO text)."""
    text = str(recorded_at)
    if len(text) == 27 and text.endswith("Z"):  # the store's own form: its date is the day
        return date.fromisoformat(text[:10]).toordinal() - _EPOCH_ORDINAL
    return int(scoring.days(parse_iso(text)) // 1)


def day_start(day: int) -> datetime:
    return datetime(1970, 1, 1, tzinfo=UTC) + timedelta(days=day)


class _State:
    """One bullet's running checkpoint while folding (`changed`: since it was read)."""

    __slots__ = ("acc", "changed", "day", "last_at", "last_id")

    def __init__(self, acc: scoring.DecayAccumulator, day: int, last_at: float, last_id: int):
        self.acc = acc
        self.day = day
        self.last_at = last_at
        self.last_id = last_id
        self.changed = False

    def row(self, bid: str) -> tuple[Any, ...]:
        a = self.acc
        return (bid, self.day, a.half_life, a.ref, a.helpful, a.harmful, a.count,
                self.last_at, self.last_id)  # fmt: skip


class EvidenceDays:
    """`store.evidence.days`: the per-day checkpoints of the evidence cache."""

    def __init__(self, sql: Executor, meta: Meta, half_life: Callable[[float | None], float]):
        self.sql = sql
        self.meta = meta
        self.half_life = half_life

    # ------------------------------------------------------------------ state

    def watermark(self) -> int | None:
        """The last event folded into the days; None: never built (an older schema)."""
        value = self.meta.get(WATERMARK)
        return None if value is None else int(value)

    def answers(self, log_watermark: int) -> bool:
        """Whether the days hold every event of a log whose last event is `log_watermark`."""
        mark = self.watermark()
        return mark is not None and mark >= log_watermark

    # ------------------------------------------------------------------ writing

    def fold(self, points: Sequence[Point], upto: int | None) -> None:
        """Fold `points` (`points_of` the log's rows), in id order, every event past the
        days' watermark up to event `upto` (None: there was none), into the checkpoints.
        Inside the store's write transaction. A bullet whose event was recorded on a day
        before its latest checkpoint (an import of older events), or whose half-life
        changed, has its checkpoints rebuilt from the log."""
        if upto is None:
            return
        states = self._latest({p[1] for p in points})
        rebuild: set[str] = set()
        out: list[tuple[Any, ...]] = []
        half_life = self.half_life
        for eid, bid, kind, t, w, hl, recorded in points:
            if bid in rebuild:
                continue
            day = day_of(recorded)
            h = half_life(hl)
            st = states.get(bid)
            if st is None:
                st = states[bid] = _State(scoring.DecayAccumulator(h), day, float("-inf"), 0)
            elif st.day > day or st.acc.half_life != h:
                rebuild.add(bid)
                continue
            elif st.day < day:
                if st.changed:  # (a checkpoint as it was read is not written again)
                    out.append(st.row(bid))
                st.day = day
            st.acc.fold(kind, t, w)
            if t > st.last_at:
                st.last_at = t
            st.last_id = eid
            st.changed = True
            if len(out) >= _FLUSH:
                self._write(out)
                out = []
        out.extend(st.row(bid) for bid, st in states.items() if bid not in rebuild and st.changed)
        self._write(out)
        if rebuild:
            self.rebuild(sorted(rebuild))
        self.meta.set(WATERMARK, str(upto))

    def _write(self, rows: list[tuple[Any, ...]]) -> None:
        if rows:
            self.sql.later(_UPSERT, rows)

    def _latest(self, ids: Iterable[str]) -> dict[str, _State]:
        """Each bullet's latest checkpoint (of `ids`, distinct)."""
        d = self.sql.dialect
        if d.name == "postgresql":  # one index probe a bullet, not a look at each of its days
            query = (
                f"SELECT {', '.join(f'x.{c}' for c in COLUMNS)} FROM unnest(?::text[]) AS b(id) "
                "CROSS JOIN LATERAL (SELECT * FROM evidence_days WHERE bullet_id = b.id "
                "ORDER BY day DESC LIMIT 1) x"
            )
        else:  # likewise: each id's last day (one probe), then its row (another); asked
            # of each row of the bullet, the last day cost a look at all its days (0.1 s
            # for 3,000 rules of a heavy user's year, against 0.01 s)
            query = (
                f"SELECT {', '.join(f'd.{c}' for c in COLUMNS)} FROM json_each(?) b "
                "JOIN evidence_days d ON d.bullet_id = b.value AND d.day = "
                "(SELECT MAX(x.day) FROM evidence_days x WHERE x.bullet_id = b.value)"
            )
        out: dict[str, _State] = {}
        for bid, day, hl, ref, h, x, n, last_at, last_id in self.sql.execute(
            query, (d.list_param(ids),)
        ):
            out[bid] = _State(scoring.DecayAccumulator(hl, ref, h, x, n), day, last_at, last_id)
        return out

    def rebuild(self, ids: list[str] | None = None, each: Each | None = None) -> int:
        """Every checkpoint (of `ids`' bullets, or all) made again from the log: each
        bullet's events in the order of their recorded day, then id. `each`, given, is
        handed each bullet's events first, in id order (day, id, kind, at, weight), so a
        caller that folds them too reads the log once. Returns how many checkpoint rows
        were written."""
        d = self.sql.dialect
        where, args = "", []
        if ids is not None:
            if not ids:
                return 0
            where, args = f"WHERE {d.in_list('bullet_id')}", [d.list_param(ids)]
        self.sql.execute(f"DELETE FROM evidence_days {where}", args)
        mark = int(self.sql.scalar("SELECT MAX(id) FROM feedback", default=0) or 0)
        hl_of = dict(self.sql.all("SELECT id, half_life_days FROM bullets"))
        written = 0  # rows written before the last page
        out: list[tuple[Any, ...]] = []
        current: str | None = None
        events: list[tuple[int, int, str, float, float]] = []

        def finish() -> None:
            if current is None or not events:
                return
            if each is not None:
                each(current, events)
            events.sort()
            st = _State(scoring.DecayAccumulator(self.half_life(hl_of.get(current))),
                        events[0][0], float("-inf"), 0)  # fmt: skip
            for day, eid, kind, t, w in events:
                if day != st.day:
                    out.append(st.row(current))
                    st.day = day
                st.acc.fold(kind, t, w)
                st.last_at = max(st.last_at, t)
                st.last_id = max(st.last_id, eid)
            out.append(st.row(current))

        for eid, bid, kind, at, weight, recorded in self.sql.execute(
            "SELECT id, bullet_id, kind, at, weight, recorded_at FROM feedback "
            f"{where} ORDER BY bullet_id, id",
            args,
        ):
            if bid != current:
                finish()
                current, events = bid, []
                if len(out) >= _FLUSH:
                    written += len(out)
                    self._write(out)
                    out = []
            point = event_point(eid, at, weight, recorded)
            if point is not None:
                events.append((day_of(recorded), eid, kind, *point))
        finish()
        written += len(out)
        self._write(out)
        if ids is None:
            self.meta.set(WATERMARK, str(mark))
        return written

    # ------------------------------------------------------------------ reading

    def events_between(
        self, start: datetime, when: datetime, ids: list[str] | None = None
    ) -> list[tuple[str, str, float, float]]:
        """(bullet_id, kind, at in epoch days, weight) of the events (of `ids`' bullets, or
        all) recorded in [start, when], in id order (malformed ones left out)."""
        found = self._events("recorded_at >= ? AND recorded_at <= ?", [iso(start), iso(when)], ids)
        return [r[:4] for r in found]

    def events_of_day(self, day: int) -> list[tuple[str, str, float, float, str]]:
        """(bullet_id, kind, at in epoch days, weight, recorded_at) of every event recorded
        on `day`, in id order (malformed ones left out)."""
        span = [iso(day_start(day)), iso(day_start(day + 1))]
        return self._events("recorded_at >= ? AND recorded_at < ?", span, None)

    def _events(
        self, where: str, args: list[Any], ids: list[str] | None
    ) -> list[tuple[str, str, float, float, str]]:
        d = self.sql.dialect
        sql = f"SELECT id, bullet_id, kind, at, weight, recorded_at FROM feedback WHERE {where}"
        if ids is not None:  # (an expression: the day's events found by `recorded_at`, then
            # kept by bullet; SQLite otherwise walked every event of the rules asked for,
            # 1.3 s for the 40 most marked rules of a team's year, against a day's 27k)
            sql += " AND " + d.in_list("(bullet_id || '')")
            args = [*args, d.list_param(ids)]
        out = []
        for eid, bid, kind, at, weight, recorded in self.sql.execute(sql + " ORDER BY id", args):
            point = event_point(eid, at, weight, recorded)
            if point is not None:
                out.append((bid, kind, *point, recorded))
        return out
