"""Import a playbook file into an empty database: our own export, or a cass-memory playbook.

Both go in one transaction: every row is written, the evidence cache is folded from the
imported log and the maturity pass runs; any failure rolls everything back. Imports go into
an *empty* database only (a new file, or one that `playbook init` just created): an export is
a whole history with its own ids, and there is no merge of two histories that is right for
everyone. `DatabaseNotEmpty` says so before anything is read from the file.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Literal

from ..errors import ConstraintError, DatabaseNotEmptyError, InvalidImportError
from ..store import iso, new_batch_id
from ..store.interchange import insert_events, insert_rows, is_empty
from ..store.store import new_id
from ..text import content_hash, normalize
from .snapshot import SECTIONS, Snapshot, SnapshotError, decode, is_snapshot, validate

if TYPE_CHECKING:
    from ..store import PlaybookStore
    from .cass import CassImport

Progress = Callable[[int, int], None]  # (rows done, rows in total)
Format = Literal["auto", "json", "yaml", "cass"]
FORMATS: tuple[str, ...] = ("auto", "json", "yaml", "cass")

# Ids we keep from another tool: short, printable, no spaces.
_KEEPABLE_ID = re.compile(r"[A-Za-z0-9][A-Za-z0-9._:-]{0,63}")


# JSON and YAML can spell a lone surrogate ("\\ud800"), which is not text SQLite can store.
_NOT_UNICODE = "the file holds text that is not valid Unicode (a lone surrogate such as \\ud800)"


class InvalidImport(InvalidImportError):
    """The file cannot be imported; nothing was written. The message is one line."""


class DatabaseNotEmpty(DatabaseNotEmptyError):
    """Imports go into an empty database only."""


@dataclass
class ImportReport:
    format: str
    counts: dict[str, int] = field(default_factory=dict)
    unmapped: list[str] = field(default_factory=list)
    ids: dict[str, str] = field(default_factory=dict)  # source id -> new id, when changed
    maturity_changes: list[tuple[str, str, str]] = field(default_factory=list)
    batch_id: str | None = None

    def to_dict(self) -> dict[str, Any]:
        return {
            "format": self.format,
            "counts": dict(self.counts),
            "unmapped": list(self.unmapped),
            "ids": dict(self.ids),
            "maturity_changes": [list(c) for c in self.maturity_changes],
            "batch_id": self.batch_id,
        }


class _Ticker:
    """Counts rows and calls `progress` now and then (every 1% and at the end)."""

    def __init__(self, total: int, progress: Progress | None) -> None:
        self.total = max(total, 1)
        self.done = 0
        self.progress = progress
        self.step = max(1, self.total // 100)

    def __call__(self) -> None:
        self.done += 1
        if self.progress is not None and (self.done % self.step == 0):
            self.progress(self.done, self.total)

    def finish(self) -> None:
        if self.progress is not None:
            self.progress(self.total, self.total)


def sniff(data: bytes, fmt: str) -> tuple[str, Any]:
    """Decide the format of `data` and decode it: ("json"|"yaml", document) for our own
    exports, ("cass", raw bytes) for a cass-memory playbook."""
    if fmt == "cass":
        return "cass", data
    if fmt == "auto":
        head = data.lstrip(b"\xef\xbb\xbf \t\r\n")[:1]
        fmt = "json" if head in (b"{", b"[") else "yaml"
        try:
            doc = decode(data, fmt)
        except SnapshotError as exc:
            raise InvalidImport(str(exc)) from None
        if fmt == "yaml" and isinstance(doc, dict) and not is_snapshot(doc) and "bullets" in doc:
            return "cass", data  # a cass-memory playbook.yaml
        return fmt, doc
    try:
        return fmt, decode(data, fmt)
    except SnapshotError as exc:
        raise InvalidImport(str(exc)) from None


def load(data: bytes, fmt: str = "auto") -> tuple[str, Snapshot | CassImport]:
    """Parse and validate a file's bytes; nothing touches a database."""
    if fmt not in FORMATS:
        raise InvalidImport(f"unknown import format {fmt!r} (expected one of {', '.join(FORMATS)})")
    kind, doc = sniff(data, fmt)
    if kind == "cass":
        from .cass import CassImportError, parse_cass_playbook

        try:
            return kind, parse_cass_playbook(doc)
        except CassImportError as exc:
            raise InvalidImport(str(exc)) from None
    try:
        return kind, validate(doc)
    except SnapshotError as exc:
        raise InvalidImport(str(exc)) from None


def require_empty(store: PlaybookStore) -> None:
    if not is_empty(store):
        raise DatabaseNotEmpty(
            "the database already holds a playbook; imports go into an empty database only"
        )


def _finish(
    store: PlaybookStore, report: ImportReport, *, actor: str, log: dict[str, Any] | None
) -> None:
    """Fold the evidence, run the maturity pass (and log the import) inside the transaction."""
    from ..curation import run_maturity_pass

    store.sync_evidence()
    if log is not None:
        store.log_decision(report.batch_id, actor, "import", None, "applied", None, log)
    report.maturity_changes = run_maturity_pass(
        store, touched=store.active_ids(), batch_id=report.batch_id, actor=actor
    )


def import_snapshot(
    store: PlaybookStore,
    snap: Snapshot,
    *,
    progress: Progress | None = None,
    actor: str = "human",
) -> ImportReport:
    """Restore an export into an empty database, ids and timestamps kept.

    No decision is logged for the import itself: the database becomes a copy of the one
    exported (its decision log included), so exporting it again gives the same document.
    """
    report = ImportReport(format="playbook", batch_id=new_batch_id())
    tick = _Ticker(sum(len(getattr(snap, s)) for s in SECTIONS), progress)
    with _import_transaction(store):
        require_empty(store)
        for section, table in SECTIONS.items():
            report.counts[section] = insert_rows(store, table, snap.rows(section), on_row=tick)
        _finish(store, report, actor=actor, log=None)
    tick.finish()
    return report


@contextmanager
def _import_transaction(store: PlaybookStore) -> Iterator[None]:
    """One transaction for a whole import; what the file gets wrong becomes InvalidImport."""
    try:
        with store.transaction():
            yield
    except ConstraintError as exc:
        raise InvalidImport(f"the file is not consistent: {exc}") from None
    except UnicodeEncodeError:
        raise InvalidImport(_NOT_UNICODE) from None


def import_cass(
    store: PlaybookStore,
    cass: CassImport,
    *,
    progress: Progress | None = None,
    actor: str = "human",
    source: str | None = None,
) -> ImportReport:
    """Write a parsed cass-memory playbook into an empty database.

    Bullets keep their cass-memory ids when those are short and printable (so citations
    survive), else get new ones (listed in `report.ids`). Events keep their observation time;
    their knowledge time is the same moment (cass-memory appends an event when it happens),
    capped at now. `replacedBy` chains become `supersedes` edges stamped when the successor
    was created; deprecated patterns become human blocks, active.
    """
    report = ImportReport(format="cass", unmapped=list(cass.unmapped), batch_id=new_batch_id())
    batch = report.batch_id
    now = store.now()
    total = len(cass.bullets) + len(cass.events) + len(cass.edges) + len(cass.blocks)
    tick = _Ticker(total, progress)
    ids: dict[str, str] = {}
    taken: set[str] = set()
    for b in cass.bullets:
        new = b.source_id
        if not _KEEPABLE_ID.fullmatch(new) or new in taken:
            new = new_id("b")
            while new in taken:  # pragma: no cover - 32 random bits
                new = new_id("b")
            report.ids[b.source_id] = new
        ids[b.source_id] = new
        taken.add(new)
    created = {b.source_id: b.created_at for b in cass.bullets}
    with _import_transaction(store):
        require_empty(store)
        rows = (
            {
                "id": ids[b.source_id],
                "content": b.content,
                "category": b.category,
                "tags": list(dict.fromkeys(t.strip() for t in b.tags if t.strip())),
                "scope": b.scope,
                "scope_key": b.scope_key,
                "type": b.type,
                "kind": b.kind,
                "source": "imported",
                "state": b.state,
                "maturity": b.maturity,
                "pinned": b.pinned,
                "pinned_reason": b.pinned_reason if b.pinned else None,
                "half_life_days": b.half_life_days,
                "session_ref": b.session_ref,
                "byte_offset": None,
                "created_at": iso(b.created_at),
                "valid_from": iso(b.created_at),
                "valid_to": iso(b.valid_to) if b.valid_to else None,
                "content_hash": content_hash(b.content),
                "batch_id": batch,
            }
            for b in cass.bullets
        )
        report.counts["bullets"] = insert_rows(store, "bullets", rows, on_row=tick)
        insert_rows(
            store,
            "maturity_log",
            (
                {
                    "id": None,
                    "bullet_id": ids[b.source_id],
                    "at": iso(b.created_at),
                    "maturity": b.maturity,
                    "batch_id": batch,
                }
                for b in cass.bullets
            ),
        )
        events = [
            {
                "bullet_id": ids[e.source_id],
                "kind": e.kind,
                "at": iso(e.at),
                "recorded_at": iso(min(e.at, now)),
                "weight": e.weight,
                "reason": e.reason if e.kind == "harmful" else None,
                "context": e.context,
                "session_ref": e.session_ref,
                "byte_offset": None,
                "actor": "agent",
                "receipt": None,
                "batch_id": batch,
            }
            for e in cass.events
            if e.source_id in ids
        ]
        report.counts["feedback"] = len(insert_events(store, events, on_row=tick))
        edges = (
            {
                "id": None,
                "kind": e.kind,
                "src": ids[e.successor_source_id],
                "dst": ids[e.original_source_id],
                "at": iso(created[e.successor_source_id]),
                "batch_id": batch,
            }
            for e in cass.edges
            if e.successor_source_id in ids and e.original_source_id in ids
        )
        report.counts["edges"] = insert_rows(store, "edges", edges, on_row=tick)
        blocks = []
        for blk in cass.blocks:
            normalized = normalize(blk.pattern)
            if not normalized:
                report.unmapped.append(
                    f"deprecated pattern {blk.pattern!r} has no words to match; not blocked"
                )
                continue
            blocks.append(
                {
                    "id": new_id("p"),
                    "pattern": blk.pattern,
                    "normalized": normalized,
                    "reason": blk.reason,
                    "actor": "human",
                    "created_at": iso(blk.at or now),
                    "active": True,
                    "unblocked_at": None,
                }
            )
        report.counts["blocked_patterns"] = insert_rows(
            store, "blocked_patterns", blocks, on_row=tick
        )
        log = {
            "format": "cass",
            "source": source,
            "counts": report.counts,
            "unmapped": len(report.unmapped),
            "ids": report.ids,
        }
        _finish(store, report, actor=actor, log=log)
    tick.finish()
    return report


def import_data(
    store: PlaybookStore,
    data: bytes,
    fmt: str = "auto",
    *,
    progress: Progress | None = None,
    source: str | None = None,
) -> ImportReport:
    """Parse `data` (see `load`) and import it into `store`, which must be empty."""
    require_empty(store)
    kind, parsed = load(data, fmt)
    if isinstance(parsed, Snapshot):
        report = import_snapshot(store, parsed, progress=progress)
        report.format = kind
        return report
    return import_cass(store, parsed, progress=progress, source=source)
