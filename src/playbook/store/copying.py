"""Copying a whole playbook from one database to another (`playbook copy SRC DST`).

Either side may be a SQLite file or a PostgreSQL URL. Every table of the playbook travels
verbatim, keys and insertion order included: the facts (bullets, the feedback log, edges,
the maturity log, blocks, receipts, the review queue, conflicts, decisions, watermarks)
and what is derived from them (the recall index, the evidence cache, the embedding cache,
the store's meta), so the copy is the same playbook in every respect: its export is the
same bytes, its scores the same floats, and its next maturity pass does what the
source's would. The source is read in one snapshot (a writer meanwhile changes nothing
of what is copied) and never written; the destination is written in one transaction and
must hold no playbook yet.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from ..core.errors import DatabaseNotEmptyError, UsageError
from .checks import well_formed
from .interchange import INTEGER_KEYS

if TYPE_CHECKING:
    from .store import PlaybookStore
    from .target import Target

# table -> (its columns, the key it is read in order of), in the order they are written:
# each table after the ones it references. Every column of schema version 2.
TABLES: dict[str, tuple[tuple[str, ...], tuple[str, ...]]] = {
    "bullets": (
        ("seq", "id", "content", "category", "tags", "scope", "scope_key", "type", "kind",
         "source", "state", "maturity", "pinned", "pinned_reason", "half_life_days",
         "session_ref", "byte_offset", "created_at", "valid_from", "valid_to",
         "content_hash", "batch_id", "maturity_due", "rev"),
        ("seq",),
    ),
    "bullet_tokens": (("token", "seq"), ("token", "seq")),
    "vocab": (("token", "df"), ("token",)),
    "bullet_tags": (("tag", "seq"), ("tag", "seq")),
    "feedback": (
        ("id", "bullet_id", "kind", "at", "recorded_at", "weight", "reason", "context",
         "session_ref", "byte_offset", "actor", "receipt", "batch_id"),
        ("id",),
    ),
    "receipts": (("receipt", "recorded_at", "outcome", "batch_id", "seq"), ("seq",)),
    "evidence": (
        ("bullet_id", "half_life", "ref", "helpful", "harmful", "count", "last_at",
         "last_event_id"),
        ("bullet_id",),
    ),
    "edges": (("id", "kind", "src", "dst", "at", "batch_id"), ("id",)),
    "maturity_log": (("id", "bullet_id", "at", "maturity", "batch_id"), ("id",)),
    "cache_blob": (
        ("key", "embedder_id", "content_hash", "dims", "value", "created_at"), ("key",)
    ),
    "watermarks": (("session_ref", "byte_offset", "updated_at", "seq"), ("seq",)),
    "blocked_patterns": (
        ("id", "pattern", "normalized", "reason", "actor", "created_at", "active",
         "unblocked_at", "seq"),
        ("seq",),
    ),
    "proposals": (
        ("id", "delta", "session_ref", "byte_offset", "status", "origin", "created_at",
         "decided_at", "decided_by", "reason", "edited_delta", "result", "seq"),
        ("seq",),
    ),
    "conflicts": (
        ("id", "a", "b", "reason", "created_at", "status", "resolved_at", "resolution",
         "batch_id"),
        ("id",),
    ),
    "decisions": (
        ("id", "at", "batch_id", "actor", "action", "bullet_id", "status", "reason", "detail"),
        ("id",),
    ),
    "meta": (("key", "value"), ("key",)),
}  # fmt: skip

PAGE = 5000  # rows read and written at a time


@dataclass
class CopyReport:
    source: str
    destination: str
    counts: dict[str, int] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        return {"source": self.source, "destination": self.destination, "counts": self.counts}


def copy_playbook(
    source: str | os.PathLike[str] | Target,
    destination: str | os.PathLike[str] | Target,
    *,
    progress: Callable[[str, int], None] | None = None,
) -> CopyReport:
    """Copy the playbook at `source` into `destination` (a new file, or a database that
    holds no playbook yet). `progress(table, rows)` is told after each page."""
    from .target import holds_playbook, open_store, remove_playbook_file, resolve_target

    src, dst = resolve_target(source), resolve_target(destination)
    if src.location == dst.location:
        raise UsageError(f"the source and the destination are the same playbook ({src})")
    created = dst.is_file and not holds_playbook(dst)
    with open_store(src, mode="read") as reader:
        try:
            with open_store(dst) as writer:
                report = CopyReport(str(src), str(dst))
                copy_between(reader, writer, report, progress)
        except BaseException:
            if created:
                remove_playbook_file(dst)
            raise
    return report


def copy_between(
    reader: PlaybookStore,
    writer: PlaybookStore,
    report: CopyReport,
    progress: Callable[[str, int], None] | None = None,
) -> None:
    """Every table of `reader`'s playbook into `writer`'s (empty) one."""
    from .interchange import is_empty

    with writer.sql.bulk(), reader.sql.snapshot(), writer.transaction():
        if not is_empty(writer):
            raise DatabaseNotEmptyError(
                f"{report.destination} already holds a playbook; a copy goes into an empty "
                "one only (it brings its own ids and history), and nothing was written"
            )
        writer.sql.execute("DELETE FROM meta")  # what opening it wrote: the source's own
        for table, (columns, key) in TABLES.items():
            n = 0
            for page in _pages(reader, table, columns, key):
                writer.sql.executemany(
                    f"INSERT INTO {table} ({', '.join(columns)}) "
                    f"VALUES ({', '.join('?' * len(columns))})",
                    page,
                )
                n += len(page)
                if progress is not None:
                    progress(table, n)
            report.counts[table] = n
            if n and table in INTEGER_KEYS:
                writer.sql.keys_written(table, INTEGER_KEYS[table])
    writer.rank_cache.table = None


def _pages(store: PlaybookStore, table: str, columns: tuple[str, ...], key: tuple[str, ...]) -> Any:
    """The rows of `table` in key order, a page at a time (keyset paging: each page starts
    after the last key of the one before, the same SQL on both backends)."""
    select = f"SELECT {', '.join(columns)} FROM {table}"
    order = f" ORDER BY {', '.join(key)} LIMIT {PAGE}"
    at = [columns.index(k) for k in key]
    after: list[Any] | None = None
    while True:
        if after is None:
            rows = store.sql.all(select + order)
        else:
            marks = ", ".join("?" * len(key))
            rows = store.sql.all(f"{select} WHERE ({', '.join(key)}) > ({marks}){order}", after)
        if not rows:
            return
        yield [tuple(r) for r in rows if well_formed(table, columns, r)]
        after = [rows[-1][i] for i in at]
