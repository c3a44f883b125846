"""The SQL behind export and import: every fact table read out verbatim, and written back.

Only the facts travel: bullets, the feedback log, edges, the maturity history, blocked
patterns, receipts, proposals, conflicts, decisions and session watermarks. Derived data
(the token index, the evidence cache, embeddings, maturity due times) is rebuilt by the
importer. Rows keep their ids and their stored timestamps, so a database exported and
restored into an empty file exports to the same bytes.

Imports write in batches (`executemany`, a few thousand rows a statement) inside the
caller's one transaction; the merge helpers below answer, for a whole import at once, what
the database already holds.
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Callable, Iterable, Iterator, Sequence
from contextlib import contextmanager
from itertools import groupby
from typing import TYPE_CHECKING, Any

from ..core.text import tokens
from .checks import well_formed
from .schema import ORDERED_TABLES, next_seq

if TYPE_CHECKING:
    from .executor import Executor

# table -> columns, in the order they are exported. JSON-encoded columns are decoded.
TABLES: dict[str, tuple[str, ...]] = {
    "bullets": (
        "id", "content", "category", "tags", "scope", "scope_key", "type", "kind", "source",
        "state", "maturity", "pinned", "pinned_reason", "half_life_days", "session_ref",
        "byte_offset", "created_at", "valid_from", "valid_to", "content_hash", "batch_id",
    ),
    "feedback": (
        "id", "bullet_id", "kind", "at", "recorded_at", "weight", "reason", "context",
        "session_ref", "byte_offset", "actor", "receipt", "batch_id",
    ),
    "edges": ("id", "kind", "src", "dst", "at", "batch_id"),
    "maturity_log": ("id", "bullet_id", "at", "maturity", "batch_id"),
    "blocked_patterns": (
        "id", "pattern", "normalized", "reason", "actor", "created_at", "active", "unblocked_at",
    ),
    "receipts": ("receipt", "recorded_at", "outcome", "batch_id"),
    "proposals": (
        "id", "delta", "session_ref", "byte_offset", "status", "origin", "created_at",
        "decided_at", "decided_by", "reason", "edited_delta", "result",
    ),
    "conflicts": (
        "id", "a", "b", "reason", "created_at", "status", "resolved_at", "resolution", "batch_id",
    ),
    "decisions": (
        "id", "at", "batch_id", "actor", "action", "bullet_id", "status", "reason", "detail",
    ),
    "watermarks": ("session_ref", "byte_offset", "updated_at"),
}  # fmt: skip

# Insertion order: each table after the ones it references.
ORDER = tuple(TABLES)
JSON_COLUMNS = {
    ("bullets", "tags"),
    ("proposals", "delta"),
    ("proposals", "edited_delta"),
    ("proposals", "result"),
    ("decisions", "detail"),
}
BOOL_COLUMNS = {("bullets", "pinned"), ("blocked_patterns", "active")}
# Insertion order: the integer key, or (tables keyed by text) the `seq` column of step 2.
INTEGER_KEYS = {
    "bullets": "seq",
    "feedback": "id",
    "edges": "id",
    "maturity_log": "id",
    "conflicts": "id",
    "decisions": "id",
}
_ORDER_BY = INTEGER_KEYS | {t: "seq" for t in ORDERED_TABLES}


class Interchange:
    """Export and import (`store.bulk`): every fact table read out verbatim and written
    back, and what an import merges against. The caller holds the transaction."""

    def __init__(self, sql: Executor) -> None:
        self.sql = sql

    def read_table(self, table: str) -> Iterator[dict[str, Any]]:
        """Every row of one fact table as a dict, in insertion order, JSON columns decoded."""
        cols = TABLES[table]
        order = _ORDER_BY[table]
        for row in self.sql.execute(f"SELECT {', '.join(cols)} FROM {table} ORDER BY {order}"):
            if not well_formed(table, cols, row):  # skipped, and noted (`store/checks.py`)
                continue
            out: dict[str, Any] = {}
            for col, value in zip(cols, row, strict=True):
                if (table, col) in JSON_COLUMNS and value is not None:
                    value = json.loads(value)
                elif (table, col) in BOOL_COLUMNS:
                    value = bool(value)
                out[col] = value
            yield out

    def count_rows(self) -> dict[str, int]:
        return {t: int(self.sql.execute(f"SELECT COUNT(*) FROM {t}").fetchone()[0]) for t in ORDER}

    def is_empty(self) -> bool:
        """No facts at all: a fresh or `init`-only database (what an import may go into)."""
        return not any(
            self.sql.execute(f"SELECT 1 FROM {t} LIMIT 1").fetchone() is not None for t in ORDER
        )

    def insert_rows(
        self,
        table: str,
        rows: Iterable[dict[str, Any]],
        *,
        on_rows: Callable[[int], None] | None = None,
    ) -> int:
        """Insert rows verbatim (ids included) into one fact table, in batches; bullets are
        also indexed for recall. The caller holds the transaction. `on_rows(n)` is told after
        each batch. Returns how many rows were written."""
        cols = TABLES[table]
        sql = _insert_sql(table, cols)
        key = cols.index(INTEGER_KEYS[table]) if INTEGER_KEYS.get(table) in cols else None
        keyless = _insert_sql(table, tuple(c for c in cols if c != INTEGER_KEYS.get(table)))
        encoded = [c for c in cols if (table, c) in JSON_COLUMNS or (table, c) in BOOL_COLUMNS]
        n = 0
        explicit = False  # rows came with their own integer keys
        for batch in _batches(rows):
            last_seq = self._last_seq() if table == "bullets" else 0
            values = [[row.get(c) for c in cols] for row in batch]
            for c in encoded:  # only the JSON and boolean columns need encoding
                i = cols.index(c)
                for v in values:
                    v[i] = _encode(table, c, v[i])
            if key is None:
                self.sql.executemany(sql, values)
            else:  # rows without an id take the next one (SQLite does that for a NULL key)
                for given, group in groupby(values, key=lambda v: v[key] is not None):
                    run = list(group)
                    explicit = explicit or given
                    if not given:
                        run = [v[:key] + v[key + 1 :] for v in run]
                    self.sql.executemany(sql if given else keyless, run)
            if table == "bullets":
                self.index_bullets(
                    [(r["id"], r["content"], list(r.get("tags") or [])) for r in batch],
                    after_seq=last_seq,
                )
            n += len(batch)
            if on_rows is not None:
                on_rows(len(batch))
        if explicit:
            self.sql.keys_written(table, INTEGER_KEYS[table])
        return n

    def _last_seq(self) -> int:
        return int(self.sql.execute("SELECT COALESCE(MAX(seq), 0) FROM bullets").fetchone()[0])

    def index_bullets(self, items: Sequence[tuple[str, str, list[str]]], *, after_seq: int) -> None:
        """The recall index for many new bullets at once, the ones inserted after `after_seq`:
        the rows `BulletRepo._index_bullet` writes for one (token postings and tags by
        integer `seq`, document frequencies), sorted so the B-trees fill in order."""
        seqs = dict(
            self.sql.execute("SELECT id, seq FROM bullets WHERE seq > ?", (after_seq,)).fetchall()
        )
        postings: list[tuple[str, int]] = []
        tag_rows: list[tuple[str, int]] = []
        df: Counter[str] = Counter()
        for bid, content, tags in items:
            seq = seqs[bid]
            toks = set(tokens(content))
            df.update(toks)
            postings.extend((t, seq) for t in toks)
            tag_rows.extend((t.lower(), seq) for t in tags)
        conn = self.sql
        postings.sort()
        tag_rows.sort()
        conn.executemany(
            "INSERT INTO bullet_tokens (token, seq) VALUES (?, ?) ON CONFLICT DO NOTHING", postings
        )
        conn.executemany(
            "INSERT INTO vocab (token, df) VALUES (?, ?) "
            "ON CONFLICT(token) DO UPDATE SET df = vocab.df + excluded.df",
            sorted(df.items()),
        )
        conn.executemany(
            "INSERT INTO bullet_tags (tag, seq) VALUES (?, ?) ON CONFLICT DO NOTHING", tag_rows
        )

    @contextmanager
    def bulk_cache(self) -> Iterator[None]:
        """The backend's settings for one bulk import (SQLite: a larger page cache, so the
        indexes a large import grows stay in memory; see `Executor.bulk`)."""
        with self.sql.bulk():
            yield

    def insert_events(
        self,
        events: Iterable[Sequence[Any]],
        *,
        on_rows: Callable[[int], None] | None = None,
    ) -> int:
        """Append feedback events with their own `at` and `recorded_at` (ids assigned by the
        log, in the order given), for importers from other formats. Each event is a row in
        `EVENT_COLUMNS` order. The caller holds the transaction. Returns how many were written."""
        marks = ", ".join("?" * len(EVENT_COLUMNS))
        sql = f"INSERT INTO feedback ({', '.join(EVENT_COLUMNS)}) VALUES ({marks})"
        n = 0
        for batch in _batches(events):
            self.sql.executemany(sql, batch)
            n += len(batch)
            if on_rows is not None:
                on_rows(len(batch))
        return n

    # ------------------------------------------------------------------ merging an import
    def bullets_by_hash(self, hashes: Iterable[str]) -> dict[str, list[tuple[str, str]]]:
        """Existing bullets with these content hashes: hash -> [(id, state)], oldest first."""
        out: dict[str, list[tuple[str, str]]] = {}
        d = self.sql.dialect
        for digest in _chunks(list(dict.fromkeys(hashes))):
            for bid, content_hash, state in self.sql.execute(
                f"SELECT id, content_hash, state FROM bullets WHERE {d.in_list('content_hash')} "
                "ORDER BY seq",
                (d.list_param(digest),),
            ):
                out.setdefault(content_hash, []).append((bid, state))
        return out

    def existing_ids(self, ids: Iterable[str]) -> set[str]:
        """Which of these bullet ids the database already uses."""
        found: set[str] = set()
        d = self.sql.dialect
        for chunk in _chunks(list(ids)):
            found.update(
                r[0]
                for r in self.sql.execute(
                    f"SELECT id FROM bullets WHERE {d.in_list('id')}", (d.list_param(chunk),)
                )
            )
        return found

    def event_identities(self, bullet_ids: Iterable[str]) -> Counter[tuple[Any, ...]]:
        """How many times each (bullet, kind, at, reason, context, session) event is in the log,
        for these bullets: what an import appends to an existing bullet only once."""
        seen: Counter[tuple[Any, ...]] = Counter()
        d = self.sql.dialect
        for chunk in _chunks(list(bullet_ids)):
            seen.update(
                tuple(r)
                for r in self.sql.execute(
                    "SELECT bullet_id, kind, at, reason, context, session_ref FROM feedback "
                    f"WHERE {d.in_list('bullet_id')}",
                    (d.list_param(chunk),),
                )
            )
        return seen

    def edge_identities(self) -> set[tuple[str, str, str]]:
        return {tuple(r) for r in self.sql.execute("SELECT kind, src, dst FROM edges")}

    def blocked_normalized(self) -> set[str]:
        """The normalized text of every blocked pattern, lifted ones too."""
        return {r[0] for r in self.sql.execute("SELECT normalized FROM blocked_patterns")}


def _encode(table: str, col: str, value: Any) -> Any:
    if (table, col) in JSON_COLUMNS and value is not None:
        if table == "bullets":
            return json.dumps(value)  # as BulletRepo.insert writes tags
        # Deltas are stored canonically (the queue compares them as text); the other
        # documents keep their key order, so a restored database exports the same bytes.
        return json.dumps(value, ensure_ascii=False, sort_keys=col.endswith("delta"))
    if (table, col) in BOOL_COLUMNS:
        return int(bool(value))
    return value


_CHUNK = 5000  # rows per executemany: one statement, few round trips, bounded memory


def _insert_sql(table: str, cols: tuple[str, ...]) -> str:
    sql = f"INSERT INTO {table} ({', '.join(cols)}) VALUES ({', '.join('?' * len(cols))})"
    if table in ORDERED_TABLES:  # insertion order: the order of the rows given
        sql = sql.replace(") VALUES (", ", seq) VALUES (")[:-1] + f", {next_seq(table)})"
    return sql


EVENT_COLUMNS = tuple(c for c in TABLES["feedback"] if c != "id")


def _batches(rows: Iterable[Any]) -> Iterator[list[Any]]:
    batch: list[Any] = []
    for row in rows:
        batch.append(row)
        if len(batch) == _CHUNK:
            yield batch
            batch = []
    if batch:
        yield batch


def _chunks(items: list[str], size: int = 50_000) -> Iterator[list[str]]:
    for i in range(0, len(items), size):
        yield items[i : i + size]
