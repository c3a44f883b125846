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

from ..core.errors import UsageError
from .tables import TABLES as TABLES  # the tables a copy moves
from .target import Target, holds_playbook, open_store, remove_playbook_file, resolve_target

if TYPE_CHECKING:
    from .store import PlaybookStore


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
    report.counts.update(writer.tables.copy_from(reader.tables, report.destination, progress))
    writer.rank_cache.table = None
