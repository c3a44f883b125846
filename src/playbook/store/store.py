"""PlaybookStore: the only code that writes SQL.

It keeps the facts (bullets, the append-only feedback log, edges, blocks, proposals,
conflicts, decisions) and one derived cache, `evidence`: per-bullet decayed sums maintained
incrementally from the log (watermark on the event id), so a score never rescans history.
The formulas themselves live in `playbook.scoring`.
"""

from __future__ import annotations

import json
import os
import sqlite3
from collections.abc import Callable, Iterable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any

from .. import scoring
from ..model import (
    Actor,
    Bullet,
    FeedbackEvent,
    Provenance,
    Score,
    utcnow,
)
from ..policy import DEFAULT_POLICY, Policy
from ..text import content_hash, normalize, tokens
from .schema import MEMORY_LATEST, connection_of, memory_migration, run_migrations

if TYPE_CHECKING:
    from sqlite_utils import Database

ISO = "%Y-%m-%dT%H:%M:%S.%fZ"
BULLET_COLUMNS = (
    "id, content, category, tags, scope, scope_key, type, kind, source, state, maturity, "
    "pinned, pinned_reason, half_life_days, session_ref, byte_offset, created_at, valid_from, "
    "valid_to, content_hash"
)
EVENT_COLUMNS = (
    "id, bullet_id, kind, at, recorded_at, weight, reason, context, session_ref, byte_offset, "
    "actor, receipt"
)

IN_IDS = "(SELECT value FROM json_each(?))"  # a list bound as one JSON parameter


class StoreError(ValueError):
    """A request the store cannot carry out (unknown id, wrong state): a user error."""


def iso(t: datetime) -> str:
    if t.tzinfo is None:
        raise ValueError("timestamps must be timezone-aware")
    return t.astimezone(UTC).strftime(ISO)


def parse_iso(s: str) -> datetime:
    t = datetime.fromisoformat(s)
    return t if t.tzinfo else t.replace(tzinfo=UTC)


def random_hex(nbytes: int) -> str:
    """Random hex from os.urandom (what `secrets` uses, without importing hmac)."""
    return os.urandom(nbytes).hex()


def new_id(prefix: str) -> str:
    return f"{prefix}-{random_hex(4)}"


def new_batch_id() -> str:
    return f"c-{random_hex(6)}"


def _bullet(row: Sequence[Any]) -> Bullet:
    """A row of BULLET_COLUMNS as a Bullet, without re-validating what the schema checked."""
    return Bullet.model_construct(
        id=row[0],
        content=row[1],
        category=row[2],
        tags=json.loads(row[3]),
        scope=row[4],
        scope_key=row[5],
        type=row[6],
        kind=row[7],
        source=row[8],
        state=row[9],
        maturity=row[10],
        pinned=bool(row[11]),
        pinned_reason=row[12],
        half_life_days=row[13],
        provenance=Provenance.model_construct(session_ref=row[14], byte_offset=row[15]),
        created_at=parse_iso(row[16]),
        valid_from=parse_iso(row[17]),
        valid_to=parse_iso(row[18]) if row[18] else None,
        content_hash=row[19],
    )


def _event(row: Sequence[Any]) -> FeedbackEvent:
    return FeedbackEvent.model_construct(
        id=row[0],
        bullet_id=row[1],
        kind=row[2],
        at=parse_iso(row[3]),
        recorded_at=parse_iso(row[4]),
        weight=row[5],
        reason=row[6],
        context=row[7],
        provenance=Provenance.model_construct(session_ref=row[8], byte_offset=row[9]),
        actor=row[10],
        receipt=row[11],
    )


@dataclass(frozen=True)
class Evidence:
    """A bullet's decayed evidence (its own events plus its supersedes-ancestors')."""

    helpful: float
    harmful: float
    last_activity: float  # epoch days of the latest event or of creation
    pending_until: float | None = None  # epoch days of an event still in the future


@dataclass(frozen=True)
class BlockedPattern:
    id: str
    pattern: str
    reason: str
    actor: str
    created_at: datetime
    active: bool
    unblocked_at: datetime | None


@dataclass(frozen=True)
class Conflict:
    id: int
    a: str
    b: str
    reason: str
    created_at: datetime
    status: str
    resolution: str | None


@dataclass(frozen=True)
class Lineage:
    predecessors: list[tuple[str, str]]  # (kind, bullet id) this bullet came from
    successors: list[tuple[str, str]]  # (kind, bullet id) that came from this bullet


@dataclass(frozen=True)
class Decision:
    id: int
    at: datetime
    batch_id: str | None
    actor: str
    action: str
    bullet_id: str | None
    status: str
    reason: str | None
    detail: dict[str, Any] = field(default_factory=dict)


@dataclass
class _Agg:
    bullet_id: str
    acc: scoring.DecayAccumulator
    last_at: float
    last_event_id: int


class PlaybookStore:
    """The playbook kept in one SQLite file. Construct with `open_database(...)`'s result."""

    def __init__(
        self,
        db: Database | sqlite3.Connection,
        *,
        policy: Policy = DEFAULT_POLICY,
        clock: Callable[[], datetime] = utcnow,
        migrate: bool = True,
    ) -> None:
        self.db = db
        self.conn: sqlite3.Connection = connection_of(db)
        self.policy = policy
        self.clock = clock
        self._depth = 0
        if migrate:
            run_migrations(self.conn, [memory_migration(MEMORY_LATEST)])

    # ---------------------------------------------------------------- time & transactions
    def now(self) -> datetime:
        t = self.clock()
        if t.tzinfo is None:
            raise ValueError("the store's clock must return timezone-aware datetimes")
        return t.astimezone(UTC)

    @contextmanager
    def transaction(self) -> Iterator[None]:
        """One write transaction (re-entrant: an inner block joins the outer one)."""
        if self._depth:
            self._depth += 1
            try:
                yield
            finally:
                self._depth -= 1
            return
        self.conn.execute("BEGIN IMMEDIATE")
        self._depth = 1
        try:
            yield
        except BaseException:
            self._depth = 0
            self.conn.execute("ROLLBACK")
            raise
        self._depth = 0
        self.conn.execute("COMMIT")

    def data_version(self) -> int:
        """Changes when another connection commits (cheap: for live refresh polling)."""
        return int(self.conn.execute("PRAGMA data_version").fetchone()[0])

    def half_life(self, bullet: Bullet | None = None, value: float | None = None) -> float:
        if bullet is not None:
            value = bullet.half_life_days
        return float(value) if value else self.policy.half_life_days

    # ---------------------------------------------------------------- bullets
    def insert_bullet(
        self,
        content: str,
        *,
        category: str = "general",
        tags: Iterable[str] = (),
        scope: str = "global",
        scope_key: str | None = None,
        type: str = "rule",
        kind: str = "workflow_rule",
        source: str = "learned",
        state: str = "active",
        maturity: str = "candidate",
        pinned: bool = False,
        pinned_reason: str | None = None,
        half_life_days: float | None = None,
        provenance: Provenance | None = None,
        created_at: datetime | None = None,
        valid_to: datetime | None = None,
        batch_id: str | None = None,
        bullet_id: str | None = None,
    ) -> Bullet:
        provenance = provenance or Provenance()
        at = iso(created_at or self.now())
        clean_tags = list(dict.fromkeys(t.strip() for t in tags if t and t.strip()))
        with self.transaction():
            for _ in range(20):
                bid = bullet_id or new_id("b")
                try:
                    self.conn.execute(
                        f"INSERT INTO bullets ({BULLET_COLUMNS}, batch_id) VALUES "
                        "(?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)",
                        (
                            bid,
                            content,
                            category,
                            json.dumps(clean_tags),
                            scope,
                            scope_key,
                            type,
                            kind,
                            source,
                            state,
                            maturity,
                            int(pinned),
                            pinned_reason,
                            half_life_days,
                            provenance.session_ref,
                            provenance.byte_offset,
                            at,
                            at,
                            iso(valid_to) if valid_to else None,
                            content_hash(content),
                            batch_id,
                        ),
                    )
                    break
                except sqlite3.IntegrityError as exc:
                    if bullet_id or "UNIQUE" not in str(exc):
                        raise
            else:  # pragma: no cover - 20 collisions of 32 random bits
                raise RuntimeError("could not allocate a bullet id")
            self._index_bullet(bid, content, clean_tags)
            self.conn.execute(
                "INSERT INTO maturity_log (bullet_id, at, maturity, batch_id) VALUES (?,?,?,?)",
                (bid, at, maturity, batch_id),
            )
        bullet = self.get_bullet(bid)
        assert bullet is not None
        return bullet

    def _index_bullet(self, bid: str, content: str, tags: list[str]) -> None:
        """Postings for recall and duplicate search, keyed by the bullet's integer `seq`."""
        seq = self.conn.execute("SELECT seq FROM bullets WHERE id = ?", (bid,)).fetchone()[0]
        toks = sorted(set(tokens(content)))
        self.conn.executemany(
            "INSERT OR IGNORE INTO bullet_tokens (token, seq) VALUES (?, ?)",
            [(t, seq) for t in toks],
        )
        self.conn.executemany(
            "INSERT INTO vocab (token, df) VALUES (?, 1) "
            "ON CONFLICT(token) DO UPDATE SET df = df + 1",
            [(t,) for t in toks],
        )
        self.conn.executemany(
            "INSERT OR IGNORE INTO bullet_tags (tag, seq) VALUES (?, ?)",
            [(t.lower(), seq) for t in tags],
        )

    def get_bullet(self, bullet_id: str) -> Bullet | None:
        row = self.conn.execute(
            f"SELECT {BULLET_COLUMNS} FROM bullets WHERE id = ?", (bullet_id,)
        ).fetchone()
        return _bullet(row) if row else None

    def require_bullet(self, bullet_id: str) -> Bullet:
        bullet = self.get_bullet(bullet_id)
        if bullet is None:
            raise StoreError(f"no bullet with id {bullet_id!r}")
        return bullet

    def get_bullets(self, ids: Iterable[str]) -> dict[str, Bullet]:
        out: dict[str, Bullet] = {}
        ids = list(dict.fromkeys(ids))
        for row in self.conn.execute(
            f"SELECT {BULLET_COLUMNS} FROM bullets WHERE id IN {IN_IDS}",
            (_json_ids(ids),),
        ):
            out[row[0]] = _bullet(row)
        return out

    def bullets(
        self,
        state: str | Sequence[str] | None = None,
        maturity: str | Sequence[str] | None = None,
        tag: str | None = None,
        pinned: bool | None = None,
        *,
        type: str | None = None,
    ) -> list[Bullet]:
        """Bullets in creation order. `state=None` means every non-retired bullet."""
        where: list[str] = []
        args: list[Any] = []
        if state is None:
            where.append("state != 'retired'")
        elif state != "all":
            states = [state] if isinstance(state, str) else list(state)
            where.append(f"state IN ({','.join('?' * len(states))})")
            args += states
        if maturity is not None:
            ms = [maturity] if isinstance(maturity, str) else list(maturity)
            where.append(f"maturity IN ({','.join('?' * len(ms))})")
            args += ms
        if tag is not None:
            where.append("seq IN (SELECT seq FROM bullet_tags WHERE tag = ?)")
            args.append(tag.lower())
        if pinned is not None:
            where.append("pinned = ?")
            args.append(int(pinned))
        if type is not None:
            where.append("type = ?")
            args.append(type)
        sql = f"SELECT {BULLET_COLUMNS} FROM bullets"
        if where:
            sql += " WHERE " + " AND ".join(where)
        sql += " ORDER BY created_at, seq"
        return [_bullet(r) for r in self.conn.execute(sql, args)]

    def count_bullets(self) -> int:
        return int(self.conn.execute("SELECT COUNT(*) FROM bullets").fetchone()[0])

    def find_by_hash(self, digest: str) -> list[Bullet]:
        rows = self.conn.execute(
            f"SELECT {BULLET_COLUMNS} FROM bullets WHERE content_hash = ?", (digest,)
        )
        return [_bullet(r) for r in rows]

    def token_postings(self, token: str) -> list[str]:
        rows = self.conn.execute(
            "SELECT b.id FROM bullet_tokens t JOIN bullets b ON b.seq = t.seq WHERE t.token = ?",
            (token,),
        )
        return [r[0] for r in rows]

    def token_df(self, toks: Iterable[str]) -> dict[str, int]:
        toks = list(toks)
        out = dict.fromkeys(toks, 0)
        for tok, df in self.conn.execute(
            f"SELECT token, df FROM vocab WHERE token IN {IN_IDS}",
            (_json_ids(toks),),
        ):
            out[tok] = df
        return out

    def recall_candidates(
        self, ids: list[str] | None, *, at: str | None = None
    ) -> list[tuple[str, str, str, str, str, str | None, str]]:
        """(id, type, maturity, state, scope, scope_key, content_hash) of bullets that can be
        recalled: not retired now, or, with `at` (ISO), valid at that time. `ids` None: all."""
        cols = "id, type, maturity, state, scope, scope_key, content_hash FROM bullets"
        if at is None:
            where, args = "state != 'retired'", []
        else:
            where, args = "valid_from <= ? AND (valid_to IS NULL OR valid_to > ?)", [at, at]
        if ids is None:
            return self.conn.execute(f"SELECT {cols} WHERE {where}", args).fetchall()
        return self.conn.execute(
            f"SELECT {cols} WHERE id IN {IN_IDS} AND {where}", [_json_ids(ids), *args]
        ).fetchall()

    def set_maturity(
        self,
        bullet_id: str,
        maturity: str,
        *,
        batch_id: str | None = None,
        at: datetime | None = None,
    ) -> None:
        with self.transaction():
            self.conn.execute(
                "UPDATE bullets SET maturity = ?, rev = rev + 1 WHERE id = ?",
                (maturity, bullet_id),
            )
            self.conn.execute(
                "INSERT INTO maturity_log (bullet_id, at, maturity, batch_id) VALUES (?,?,?,?)",
                (bullet_id, iso(at or self.now()), maturity, batch_id),
            )

    def set_maturity_due(self, bullet_id: str, due: float | None) -> None:
        self.conn.execute("UPDATE bullets SET maturity_due = ? WHERE id = ?", (due, bullet_id))

    def due_for_maturity(self, now_days: float) -> list[str]:
        rows = self.conn.execute(
            "SELECT id FROM bullets WHERE maturity_due IS NOT NULL AND maturity_due <= ?",
            (now_days,),
        )
        return [r[0] for r in rows]

    def retire(self, bullet_id: str, *, at: datetime | None = None) -> None:
        with self.transaction():
            self.conn.execute(
                "UPDATE bullets SET state = 'retired', valid_to = ?, maturity_due = NULL, "
                "rev = rev + 1 WHERE id = ? AND state != 'retired'",
                (iso(at or self.now()), bullet_id),
            )

    def pin(self, bullet_id: str, reason: str, *, actor: str = "human") -> None:
        """Pin a bullet: its maturity never moves and agents cannot retire it. Human only."""
        _require_human(actor, "pin a bullet")
        self.require_bullet(bullet_id)
        with self.transaction():
            self.conn.execute(
                "UPDATE bullets SET pinned = 1, pinned_reason = ?, maturity_due = NULL, "
                "rev = rev + 1 WHERE id = ?",
                (reason, bullet_id),
            )
            self.log_decision(None, actor, "pin", bullet_id, "applied", reason)

    def unpin(self, bullet_id: str, *, actor: str = "human") -> None:
        _require_human(actor, "unpin a bullet")
        self.require_bullet(bullet_id)
        with self.transaction():
            self.conn.execute(
                "UPDATE bullets SET pinned = 0, pinned_reason = NULL, rev = rev + 1 WHERE id = ?",
                (bullet_id,),
            )
            self.log_decision(None, actor, "unpin", bullet_id, "applied", None)

    # ---------------------------------------------------------------- feedback log
    def add_feedback(
        self,
        bullet_id: str,
        kind: str,
        *,
        weight: float = 1.0,
        reason: str | None = None,
        context: str | None = None,
        provenance: Provenance | None = None,
        actor: str = "agent",
        receipt: str | None = None,
        at: datetime | None = None,
        batch_id: str | None = None,
    ) -> int:
        """Append one event (stamped with the store's clock) and fold it into the cache."""
        provenance = provenance or Provenance()
        recorded = self.now()
        with self.transaction():
            cur = self.conn.execute(
                "INSERT INTO feedback (bullet_id, kind, at, recorded_at, weight, reason, "
                "context, session_ref, byte_offset, actor, receipt, batch_id) "
                "VALUES (?,?,?,?,?,?,?,?,?,?,?,?)",
                (
                    bullet_id,
                    kind,
                    iso(at or recorded),
                    iso(recorded),
                    weight,
                    reason,
                    context,
                    provenance.session_ref,
                    provenance.byte_offset,
                    actor,
                    receipt,
                    batch_id,
                ),
            )
            self.sync_evidence()
        return int(cur.lastrowid or 0)

    def timeline(self, bullet_id: str) -> list[FeedbackEvent]:
        """Every feedback event of a bullet, oldest first (by observation time, then id)."""
        rows = self.conn.execute(
            f"SELECT {EVENT_COLUMNS} FROM feedback WHERE bullet_id = ? ORDER BY at, id",
            (bullet_id,),
        )
        return [_event(r) for r in rows]

    def has_receipt(self, receipt: str) -> bool:
        row = self.conn.execute("SELECT 1 FROM receipts WHERE receipt = ?", (receipt,)).fetchone()
        return row is not None

    def add_receipt(self, receipt: str, outcome: str, batch_id: str | None) -> None:
        self.conn.execute(
            "INSERT INTO receipts (receipt, recorded_at, outcome, batch_id) VALUES (?,?,?,?)",
            (receipt, iso(self.now()), outcome, batch_id),
        )

    def event_count(self) -> int:
        return int(self.conn.execute("SELECT COUNT(*) FROM feedback").fetchone()[0])

    # ---------------------------------------------------------------- evidence cache
    def _meta(self, key: str) -> str | None:
        row = self.conn.execute("SELECT value FROM meta WHERE key = ?", (key,)).fetchone()
        return row[0] if row else None

    def _set_meta(self, key: str, value: str) -> None:
        self.conn.execute(
            "INSERT INTO meta (key, value) VALUES (?, ?) "
            "ON CONFLICT(key) DO UPDATE SET value = excluded.value",
            (key, value),
        )

    def evidence_watermark(self) -> int:
        return int(self._meta("evidence_watermark") or 0)

    def log_watermark(self) -> int:
        row = self.conn.execute("SELECT MAX(id) FROM feedback").fetchone()
        return int(row[0] or 0)

    def sync_evidence(self) -> int:
        """Fold every event past the cache's watermark into the per-bullet sums.

        Returns how many events were folded. Called inside each feedback write, and by
        readers when another writer appended events without folding them.
        """
        mark = self.evidence_watermark()
        if self.log_watermark() <= mark:
            return 0
        with self.transaction():
            mark = self.evidence_watermark()  # re-read under the write lock
            rows = self.conn.execute(
                "SELECT f.id, f.bullet_id, f.kind, f.at, f.weight, b.half_life_days "
                "FROM feedback f JOIN bullets b ON b.id = f.bullet_id "
                "WHERE f.id > ? ORDER BY f.id",
                (mark,),
            ).fetchall()
            if not rows:
                return 0
            aggs = self._load_aggs({r[1] for r in rows})
            for eid, bid, kind, at, weight, hl in rows:
                h = self.half_life(value=hl)
                agg = aggs.get(bid)
                if agg is None or agg.acc.half_life != h:
                    agg = self._rebuild_agg(bid, h, upto=eid - 1)
                    aggs[bid] = agg
                t = scoring.days(parse_iso(at))
                agg.acc.fold(kind, t, weight)
                agg.last_at = max(agg.last_at, t)
                agg.last_event_id = eid
            self.conn.executemany(
                "INSERT OR REPLACE INTO evidence (bullet_id, half_life, ref, helpful, harmful, "
                "count, last_at, last_event_id) VALUES (?,?,?,?,?,?,?,?)",
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
            self._set_meta("evidence_watermark", str(rows[-1][0]))
            return len(rows)

    def _load_aggs(self, ids: Iterable[str]) -> dict[str, _Agg]:
        out: dict[str, _Agg] = {}
        ids = list(ids)
        for bid, hl, ref, h, x, n, last_at, last_id in self.conn.execute(
            "SELECT bullet_id, half_life, ref, helpful, harmful, count, last_at, "
            f"last_event_id FROM evidence WHERE bullet_id IN {IN_IDS}",
            (_json_ids(ids),),
        ):
            acc = scoring.DecayAccumulator(hl, ref, h, x, n)
            out[bid] = _Agg(bid, acc, last_at, last_id)
        return out

    def _rebuild_agg(self, bullet_id: str, half_life: float, upto: int) -> _Agg:
        acc = scoring.DecayAccumulator(half_life)
        last_at = float("-inf")
        last_id = 0
        for eid, kind, at, weight in self.conn.execute(
            "SELECT id, kind, at, weight FROM feedback WHERE bullet_id = ? AND id <= ? ORDER BY id",
            (bullet_id, upto),
        ):
            t = scoring.days(parse_iso(at))
            acc.fold(kind, t, weight)
            last_at = max(last_at, t)
            last_id = eid
        return _Agg(bullet_id, acc, last_at, last_id)

    def raw_events(
        self, ids: Iterable[str], *, recorded_by: datetime | None = None
    ) -> dict[str, list[scoring.RawEvent]]:
        out: dict[str, list[scoring.RawEvent]] = {}
        ids = list(ids)
        extra = ""
        args_tail: list[Any] = []
        if recorded_by is not None:
            extra = " AND recorded_at <= ?"
            args_tail = [iso(recorded_by)]
        for bid, kind, at, weight in self.conn.execute(
            f"SELECT bullet_id, kind, at, weight FROM feedback WHERE bullet_id IN {IN_IDS}"
            + extra
            + " ORDER BY id",
            [_json_ids(ids), *args_tail],
        ):
            out.setdefault(bid, []).append(
                scoring.RawEvent(kind, scoring.days(parse_iso(at)), weight)
            )
        return out

    def supersedes_map(self, *, as_of: datetime | None = None) -> dict[str, list[str]]:
        """successor id -> ids it directly supersedes."""
        sql = "SELECT src, dst FROM edges WHERE kind = 'supersedes'"
        args: list[Any] = []
        if as_of is not None:
            sql += " AND at <= ?"
            args.append(iso(as_of))
        out: dict[str, list[str]] = {}
        for src, dst in self.conn.execute(sql + " ORDER BY id", args):
            out.setdefault(src, []).append(dst)
        return out

    def ancestors(self, bullet_id: str, smap: dict[str, list[str]] | None = None) -> list[str]:
        """Every bullet this one supersedes, transitively (its evidence is inherited)."""
        smap = self.supersedes_map() if smap is None else smap
        seen: dict[str, None] = {}
        stack = list(smap.get(bullet_id, ()))
        while stack:
            b = stack.pop()
            if b in seen or b == bullet_id:
                continue
            seen[b] = None
            stack.extend(smap.get(b, ()))
        return list(seen)

    def evidence_many(
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
        when = at or as_of or self.now()
        now = scoring.days(when)
        smap = self.supersedes_map(as_of=as_of)
        groups = {bid: [bid, *self.ancestors(bid, smap)] if smap else [bid] for bid in ids}
        members = list({m for g in groups.values() for m in g})
        info: dict[str, tuple[float | None, float]] = {}
        for bid, hl, created in self.conn.execute(
            f"SELECT id, half_life_days, created_at FROM bullets WHERE id IN {IN_IDS}",
            (_json_ids(members),),
        ):
            info[bid] = (hl, scoring.days(parse_iso(created)))
        raw: dict[str, list[scoring.RawEvent]] | None = None
        aggs: dict[str, _Agg] = {}
        if as_of is None:
            self.sync_evidence()
            aggs = self._load_aggs(members)
        else:
            raw = self.raw_events(members, recorded_by=as_of)
        out: dict[str, Evidence] = {}
        need_raw: set[str] = set()
        for bid, group in groups.items():
            if bid not in info:
                continue
            h = self.half_life(value=info[bid][0])
            if raw is None:
                for m in group:
                    agg = aggs.get(m)
                    if agg and (agg.acc.half_life != h or not agg.acc.covers(now)):
                        need_raw.add(m)
        if need_raw:
            raw = self.raw_events(need_raw)
        for bid, group in groups.items():
            if bid not in info:
                continue
            h = self.half_life(value=info[bid][0])
            total_h = total_x = 0.0
            last = info[bid][1]
            pending: float | None = None
            for m in group:
                if raw is not None and (as_of is not None or m in need_raw):
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

    def evidence(
        self, bullet_id: str, *, at: datetime | None = None, as_of: datetime | None = None
    ) -> Evidence:
        ev = self.evidence_many([bullet_id], at=at, as_of=as_of).get(bullet_id)
        if ev is None:
            raise StoreError(f"no bullet with id {bullet_id!r}")
        return ev

    def maturity_as_of(self, ids: Iterable[str], as_of: datetime) -> dict[str, str]:
        """Each bullet's maturity as it stood at `as_of` (absent if it did not exist yet)."""
        out: dict[str, str] = {}
        ids = list(ids)
        for bid, maturity in self.conn.execute(
            f"SELECT bullet_id, maturity FROM maturity_log WHERE bullet_id IN {IN_IDS} "
            "AND at <= ? ORDER BY at, id",
            [_json_ids(ids), iso(as_of)],
        ):
            out[bid] = maturity
        return out

    def score(self, bullet_id: str, at: datetime | None = None) -> Score:
        """helpful/harmful (decayed, lineage included), effective score, earned rung, stale.

        `at` in the past reads the playbook as it stood then (feedback recorded by `at`,
        maturity as it was); `at` None means now.
        """
        return self.scores([bullet_id], at=at)[bullet_id]

    def scores(self, ids: Iterable[str], at: datetime | None = None) -> dict[str, Score]:
        ids = list(ids)
        bullets = self.get_bullets(ids)
        missing = [i for i in ids if i not in bullets]
        if missing:
            raise StoreError(f"no bullet with id {missing[0]!r}")
        now_t = self.now()
        past = at is not None and at < now_t
        evidence = self.evidence_many(ids, at=at, as_of=at if past else None)
        maturities = self.maturity_as_of(ids, at) if past and at else {}
        now = scoring.days(at or now_t)
        out: dict[str, Score] = {}
        for bid in ids:
            ev = evidence[bid]
            maturity = maturities.get(bid, bullets[bid].maturity)
            out[bid] = Score(
                helpful=ev.helpful,
                harmful=ev.harmful,
                effective=scoring.effective_score(ev.helpful, ev.harmful, maturity, self.policy),
                earned=scoring.earned_rung(ev.helpful, ev.harmful, self.policy),
                stale=scoring.is_stale(ev.last_activity, now, self.policy),
            )
        return out

    # ---------------------------------------------------------------- edges & lineage
    def add_edge(self, kind: str, src: str, dst: str, *, batch_id: str | None = None) -> None:
        self.conn.execute(
            "INSERT INTO edges (kind, src, dst, at, batch_id) VALUES (?,?,?,?,?)",
            (kind, src, dst, iso(self.now()), batch_id),
        )

    def lineage(self, bullet_id: str) -> Lineage:
        preds = self.conn.execute(
            "SELECT kind, dst FROM edges WHERE src = ? ORDER BY id", (bullet_id,)
        ).fetchall()
        succs = self.conn.execute(
            "SELECT kind, src FROM edges WHERE dst = ? ORDER BY id", (bullet_id,)
        ).fetchall()
        return Lineage([(k, b) for k, b in preds], [(k, b) for k, b in succs])

    # ---------------------------------------------------------------- blocked patterns
    def block(self, pattern: str, reason: str, *, actor: str = "human") -> str:
        """Block a pattern: adds near it are refused. Returns the block's id. Human only."""
        _require_human(actor, "block a pattern")
        if not normalize(pattern):
            raise StoreError("a blocked pattern needs at least one word")
        pid = new_id("p")
        with self.transaction():
            self.conn.execute(
                "INSERT INTO blocked_patterns (id, pattern, normalized, reason, actor, "
                "created_at) VALUES (?,?,?,?,?,?)",
                (pid, pattern, normalize(pattern), reason, actor, iso(self.now())),
            )
            self.log_decision(None, actor, "block", None, "applied", reason, {"pattern": pattern})
        return pid

    def unblock(self, block_id: str, *, actor: str = "human") -> None:
        _require_human(actor, "unblock a pattern")
        with self.transaction():
            cur = self.conn.execute(
                "UPDATE blocked_patterns SET active = 0, unblocked_at = ? "
                "WHERE id = ? AND active = 1",
                (iso(self.now()), block_id),
            )
            if cur.rowcount == 0:
                raise StoreError(f"no active blocked pattern with id {block_id!r}")
            self.log_decision(None, actor, "unblock", None, "applied", None, {"id": block_id})

    def blocked(self, *, include_inactive: bool = False) -> list[BlockedPattern]:
        sql = (
            "SELECT id, pattern, reason, actor, created_at, active, unblocked_at "
            "FROM blocked_patterns"
        )
        if not include_inactive:
            sql += " WHERE active = 1"
        return [
            BlockedPattern(
                r[0],
                r[1],
                r[2],
                r[3],
                parse_iso(r[4]),
                bool(r[5]),
                parse_iso(r[6]) if r[6] else None,
            )
            for r in self.conn.execute(sql + " ORDER BY created_at, id")
        ]

    # ---------------------------------------------------------------- conflicts
    def flag_conflict(self, a: str, b: str, reason: str, *, batch_id: str | None = None) -> int:
        cur = self.conn.execute(
            "INSERT INTO conflicts (a, b, reason, created_at, batch_id) VALUES (?,?,?,?,?)",
            (a, b, reason, iso(self.now()), batch_id),
        )
        return int(cur.lastrowid or 0)

    def conflicts(self, *, include_resolved: bool = False) -> list[Conflict]:
        sql = "SELECT id, a, b, reason, created_at, status, resolution FROM conflicts"
        if not include_resolved:
            sql += " WHERE status = 'open'"
        return [
            Conflict(r[0], r[1], r[2], r[3], parse_iso(r[4]), r[5], r[6])
            for r in self.conn.execute(sql + " ORDER BY id")
        ]

    def resolve_conflict(self, conflict_id: int, resolution: str, *, actor: str = "human") -> None:
        with self.transaction():
            cur = self.conn.execute(
                "UPDATE conflicts SET status = 'resolved', resolved_at = ?, resolution = ? "
                "WHERE id = ? AND status = 'open'",
                (iso(self.now()), resolution, conflict_id),
            )
            if cur.rowcount == 0:
                raise StoreError(f"no open conflict with id {conflict_id}")
            self.log_decision(
                None, actor, "resolve-conflict", None, "applied", resolution, {"id": conflict_id}
            )

    # ---------------------------------------------------------------- decision log
    def log_decision(
        self,
        batch_id: str | None,
        actor: str,
        action: str,
        bullet_id: str | None,
        status: str,
        reason: str | None,
        detail: dict[str, Any] | None = None,
    ) -> None:
        self.conn.execute(
            "INSERT INTO decisions (at, batch_id, actor, action, bullet_id, status, reason, "
            "detail) VALUES (?,?,?,?,?,?,?,?)",
            (
                iso(self.now()),
                batch_id,
                str(Actor(actor)),
                action,
                bullet_id,
                status,
                reason,
                json.dumps(detail or {}, ensure_ascii=False),
            ),
        )

    def decisions(
        self, *, bullet_id: str | None = None, batch_id: str | None = None, limit: int = 200
    ) -> list[Decision]:
        where, args = [], []
        if bullet_id is not None:
            where.append("bullet_id = ?")
            args.append(bullet_id)
        if batch_id is not None:
            where.append("batch_id = ?")
            args.append(batch_id)
        sql = "SELECT id, at, batch_id, actor, action, bullet_id, status, reason, detail "
        sql += "FROM decisions" + (" WHERE " + " AND ".join(where) if where else "")
        sql += " ORDER BY id DESC LIMIT ?"
        rows = self.conn.execute(sql, [*args, limit]).fetchall()
        return [
            Decision(r[0], parse_iso(r[1]), r[2], r[3], r[4], r[5], r[6], r[7], json.loads(r[8]))
            for r in reversed(rows)
        ]

    # ---------------------------------------------------------------- watermarks
    def watermark(self, session_ref: str) -> int:
        row = self.conn.execute(
            "SELECT byte_offset FROM watermarks WHERE session_ref = ?", (session_ref,)
        ).fetchone()
        return int(row[0]) if row else 0

    def set_watermark(self, session_ref: str, byte_offset: int) -> None:
        self.conn.execute(
            "INSERT INTO watermarks (session_ref, byte_offset, updated_at) VALUES (?,?,?) "
            "ON CONFLICT(session_ref) DO UPDATE SET byte_offset = excluded.byte_offset, "
            "updated_at = excluded.updated_at",
            (session_ref, byte_offset, iso(self.now())),
        )

    # ---------------------------------------------------------------- cache_blob
    def cache_get(self, embedder_id: str, hashes: Iterable[str]) -> dict[str, bytes]:
        out: dict[str, bytes] = {}
        keys = [f"{embedder_id}:{h}" for h in hashes]
        for digest, value in self.conn.execute(
            f"SELECT content_hash, value FROM cache_blob WHERE key IN {IN_IDS}",
            (_json_ids(keys),),
        ):
            out[digest] = value
        return out

    def cache_put(self, embedder_id: str, dims: int, items: dict[str, bytes]) -> None:
        at = iso(self.now())
        with self.transaction():
            self.conn.executemany(
                "INSERT OR REPLACE INTO cache_blob (key, embedder_id, content_hash, dims, value, "
                "created_at) VALUES (?,?,?,?,?,?)",
                [(f"{embedder_id}:{h}", embedder_id, h, dims, v, at) for h, v in items.items()],
            )

    def cache_embedders(self) -> dict[str, int]:
        """Embedder identities present in the cache, with how many vectors each."""
        rows = self.conn.execute("SELECT embedder_id, COUNT(*) FROM cache_blob GROUP BY 1")
        return {r[0]: r[1] for r in rows}

    # ---------------------------------------------------------------- maturity pass helpers
    def policy_fingerprint(self) -> str:
        """Identifies the policy's values (cheap: no serializer schema is built)."""
        return content_hash(repr(sorted(self.policy.__dict__.items())))

    def maturity_policy_changed(self) -> bool:
        return self._meta("maturity_policy") != self.policy_fingerprint() + scoring.PASS_RULES

    def record_maturity_policy(self) -> None:
        self._set_meta("maturity_policy", self.policy_fingerprint() + scoring.PASS_RULES)

    def active_ids(self) -> list[str]:
        rows = self.conn.execute("SELECT id FROM bullets WHERE state != 'retired'")
        return [r[0] for r in rows]


def _require_human(actor: str, action: str) -> None:
    """Pins and blocks are a reviewer's decisions: an agent that could unpin a rule could
    then retire it, and one that could unblock a pattern could add it."""
    if actor != Actor.HUMAN:
        raise StoreError(f"only a human can {action} (actor was {actor!r})")


def _json_ids(items: Iterable[str]) -> str:
    """A list bound as one parameter, for `x IN (SELECT value FROM json_each(?))`."""
    return json.dumps(list(items))
