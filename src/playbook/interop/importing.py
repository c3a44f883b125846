"""Import a file into a playbook: our own export, or a cass-memory playbook, blocked.log or
diary.

Every import is one transaction: every row is written and the evidence cache is folded from
the imported log; any failure rolls everything back. Imported bullets keep the maturity their
source recorded (SPEC §4) until their own evidence moves them; the report says on how many
Playbook's earned rung differs, and `rerate=True` runs the maturity pass over them instead
(each move in the decision log).

- A Playbook export (JSON or YAML) is a whole history with its own ids: it is restored into
  an *empty* database only (`DatabaseNotEmpty` otherwise, before anything is parsed);
- a cass-memory file goes into any playbook: see `cass_import` (a diary's lessons go to
  the review queue: `diary_import`).

`load` tells the format from the content and refuses a file that is not in the format asked
for, naming the format it looks like; files over the size cap are refused before parsing.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Literal

from ..core.errors import DatabaseNotEmptyError
from ..store import new_batch_id
from . import formats
from .cass import CassImport, CassImportError, parse_blocked_log, parse_cass_playbook
from .cass.diary import CassDiary, parse_diary
from .cass_import import import_cass
from .diary_import import import_diary
from .import_common import (  # noqa: F401  (part of this module's API)
    ImportReport,
    InvalidImport,
    Progress,
    Ticker,
    finish,
    import_transaction,
    movable_rules,
    rung_check,
)
from .snapshot import SECTIONS, decode, validate
from .snapshot_rows import SnapshotError

if TYPE_CHECKING:
    from ..store import PlaybookStore
    from .snapshot_rows import Snapshot

Format = Literal["auto", "json", "yaml", "cass"]
FORMATS: tuple[str, ...] = ("auto", "json", "yaml", "cass")


class DatabaseNotEmpty(DatabaseNotEmptyError):
    """A Playbook export is restored into an empty database only."""


# --------------------------------------------------------------------------- reading


def load(
    data: bytes,
    fmt: str = "auto",
    *,
    max_bytes: int = formats.DEFAULT_MAX_BYTES,
    progress: Progress | None = None,
    name: str | None = None,
) -> tuple[str, Snapshot | CassImport | CassDiary]:
    """Parse and validate a file's bytes; nothing touches a database.

    Returns ("json" | "yaml", Snapshot) for a Playbook export, ("cass", CassImport) for a
    cass-memory playbook.yaml or blocked.log, ("cass", CassDiary) for a cass-memory diary.
    `progress` follows the reading of a large cass-memory playbook (characters read,
    characters in all). An empty file is an empty blocked.log (nothing to import) under
    `--format cass`, or when its `name` is a log's (`blocked.log`: cass-memory leaves it
    empty when nothing was forgotten).
    """
    if fmt not in FORMATS:
        raise InvalidImport(f"unknown import format {fmt!r} (expected one of {', '.join(FORMATS)})")
    if len(data) > max_bytes:
        raise InvalidImport(formats.too_large(len(data), max_bytes))
    kind = formats.sniff(data)
    if kind == formats.EMPTY:
        if fmt == "cass" or (fmt == "auto" and (name or "").lower().endswith(".log")):
            return "cass", _load_cass(data, formats.CASS_BLOCKED_LOG, max_bytes, progress)
        hint = " (an empty cass-memory blocked.log imports with --format cass)"
        raise InvalidImport("the file is empty" + (hint if fmt == "auto" else ""))
    expected = formats.FORMAT_FOR.get(kind)
    if fmt != "auto" and expected is not None and expected != fmt:
        raise InvalidImport(
            f"this looks like {formats.NAMES[kind]}, not what --format {fmt} reads; "
            f"import it with --format {expected} (or auto)"
        )
    if fmt == "cass" or expected == "cass":
        return "cass", _load_cass(data, kind, max_bytes, progress)

    if fmt == "auto":
        fmt = expected or ("json" if kind == formats.OTHER_JSON else "yaml")
    try:
        return fmt, validate(decode(data, fmt))
    except SnapshotError as exc:
        raise InvalidImport(str(exc)) from None


def _load_cass(
    data: bytes, kind: str, max_bytes: int, progress: Progress | None
) -> CassImport | CassDiary:
    try:
        if kind == formats.CASS_BLOCKED_LOG:
            return parse_blocked_log(data)
        if kind == formats.CASS_DIARY:
            return parse_diary(data)
        return parse_cass_playbook(data, max_bytes=max_bytes, progress=progress)
    except CassImportError as exc:
        raise InvalidImport(str(exc)) from None


def require_empty(store: PlaybookStore) -> None:
    if not store.bulk.is_empty():
        raise DatabaseNotEmpty(
            "the database already holds a playbook, and a Playbook export is restored into "
            "an empty database only (it brings its own ids, event log and decision log)"
        )


# --------------------------------------------------------------------------- writing


def import_snapshot(
    store: PlaybookStore,
    snap: Snapshot,
    *,
    progress: Progress | None = None,
    actor: str = "human",
    rerate: bool = False,
) -> ImportReport:
    """Restore an export into an empty database, ids, timestamps and maturities kept.

    No decision is logged for the import itself: the database becomes a copy of the one
    exported (its decision log included), so exporting it again gives the same document.
    """

    report = ImportReport(format="playbook", batch_id=new_batch_id())
    tick = Ticker(sum(len(getattr(snap, s)) for s in SECTIONS), progress)
    with import_transaction(store):
        require_empty(store)
        for section, table in SECTIONS.items():
            rows = snap.rows(section, notes=report.notes)
            report.counts[section] = store.bulk.insert_rows(table, rows, on_rows=tick)
        finish(
            store,
            report,
            actor=actor,
            movable=movable_rules(snap.bullets),
            imported=[b.id for b in snap.bullets],
            rerate=rerate,
            was_empty=True,
        )
    tick.finish()
    return report


def import_data(
    store: PlaybookStore,
    data: bytes,
    fmt: str = "auto",
    *,
    progress: Progress | None = None,
    source: str | None = None,
    rerate: bool = False,
    max_bytes: int = formats.DEFAULT_MAX_BYTES,
    workspace: str | None = None,
    keep_global: bool = False,
) -> ImportReport:
    """Parse `data` (see `load`; `source` is the file's name) and import it into `store`
    (empty, for our own exports). `workspace`: the identity of the repository a cass-memory
    file belongs to, and `keep_global` (see `cass_import.import_cass`)."""
    expected = formats.FORMAT_FOR.get(formats.sniff(data))
    if expected in ("json", "yaml") and fmt in ("auto", expected):
        require_empty(store)  # before a large export is parsed for nothing
    kind, parsed = load(data, fmt, max_bytes=max_bytes, name=source)

    if isinstance(parsed, CassDiary):
        return import_diary(store, parsed, source=source, workspace=workspace)
    if isinstance(parsed, CassImport):
        return import_cass(
            store,
            parsed,
            progress=progress,
            source=source,
            rerate=rerate,
            workspace=workspace,
            keep_global=keep_global,
        )
    report = import_snapshot(store, parsed, progress=progress, rerate=rerate)
    report.format = kind
    return report
