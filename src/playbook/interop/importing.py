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

import gc
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Literal

from ..core.errors import ConstraintError, DatabaseNotEmptyError, InvalidImportError, InvalidInput
from ..store import new_batch_id
from . import formats
from .notes import Note, summarize

if TYPE_CHECKING:
    from ..store import PlaybookStore
    from .cass import CassImport
    from .cass.diary import CassDiary
    from .snapshot import Snapshot

Progress = Callable[[int, int], None]  # (rows done, rows in total)
Format = Literal["auto", "json", "yaml", "cass"]
FORMATS: tuple[str, ...] = ("auto", "json", "yaml", "cass")

# JSON and YAML can spell a lone surrogate ("\\ud800"), which is not text SQLite can store.
_NOT_UNICODE = "the file holds text that is not valid Unicode (a lone surrogate such as \\ud800)"


class InvalidImport(InvalidImportError):
    """The file cannot be imported; nothing was written. The message is one line."""


class DatabaseNotEmpty(DatabaseNotEmptyError):
    """A Playbook export is restored into an empty database only."""


@dataclass
class ImportReport:
    format: str
    counts: dict[str, int] = field(default_factory=dict)
    notes: list[Note] = field(default_factory=list)
    ids: dict[str, str] = field(default_factory=dict)  # source id -> new id, when changed
    merged: dict[str, str] = field(default_factory=dict)  # source id -> existing bullet id
    maturity: dict[str, Any] = field(default_factory=dict)
    maturity_changes: list[tuple[str, str, str]] = field(default_factory=list)
    batch_id: str | None = None
    # cass-memory: the rules that are live (shown to agents) and how many were drafts there
    live: dict[str, int] = field(default_factory=dict)
    # cass-memory: where workspace rules were scoped (see `interop.cass.workspaces`)
    workspaces: dict[str, Any] = field(default_factory=dict)

    @property
    def unmapped(self) -> list[str]:
        """Every note, one line each."""
        return [str(n) for n in self.notes]

    @property
    def warnings(self) -> list[str]:
        """The notes for a person: a kind that repeats is one line with a count."""
        return summarize(self.notes)

    def to_dict(self) -> dict[str, Any]:
        return {
            "format": self.format,
            "counts": dict(self.counts),
            "unmapped": self.unmapped,
            "warnings": self.warnings,
            "ids": dict(self.ids),
            "merged": dict(self.merged),
            "maturity": dict(self.maturity),
            "maturity_changes": [list(c) for c in self.maturity_changes],
            "batch_id": self.batch_id,
            "live": dict(self.live),
            "workspaces": dict(self.workspaces),
        }


class Ticker:
    """Counts rows written and tells `progress` (at most about every 1 % and at the end)."""

    def __init__(self, total: int, progress: Progress | None) -> None:
        self.total = max(total, 1)
        self.done = 0
        self.progress = progress
        self.step = max(1, self.total // 100)
        self._last = 0

    def __call__(self, n: int = 1) -> None:
        self.done += n
        if self.progress is not None and self.done - self._last >= self.step:
            self._last = self.done
            self.progress(min(self.done, self.total), self.total)

    def finish(self) -> None:
        if self.progress is not None:
            self.progress(self.total, self.total)


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
    from .snapshot import SnapshotError, decode, validate

    if fmt == "auto":
        fmt = expected or ("json" if kind == formats.OTHER_JSON else "yaml")
    try:
        return fmt, validate(decode(data, fmt))
    except SnapshotError as exc:
        raise InvalidImport(str(exc)) from None


def _load_cass(
    data: bytes, kind: str, max_bytes: int, progress: Progress | None
) -> CassImport | CassDiary:
    from .cass import CassImportError, parse_blocked_log, parse_cass_playbook

    try:
        if kind == formats.CASS_BLOCKED_LOG:
            return parse_blocked_log(data)
        if kind == formats.CASS_DIARY:
            from .cass.diary import parse_diary

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


@contextmanager
def _still_objects() -> Iterator[None]:
    """Keep the cyclic garbage collector off what is already in memory (the parsed file:
    a million objects at 100k rules) while an import writes: it would walk them again at
    every collection, a quarter of the import's time. New objects are still collected."""
    gc.freeze()
    try:
        yield
    finally:
        gc.unfreeze()


@contextmanager
def import_transaction(store: PlaybookStore) -> Iterator[None]:
    """One transaction for a whole import; what the file gets wrong becomes InvalidImport."""
    try:
        with _still_objects(), store.bulk.bulk_cache(), store.transaction():
            yield
    except ConstraintError as exc:
        raise InvalidImport(f"the file is not consistent: {exc}") from None
    except UnicodeEncodeError:
        raise InvalidImport(_NOT_UNICODE) from None
    except InvalidImportError:
        raise
    except InvalidInput as exc:  # a value the store refuses (a NUL character, say)
        raise InvalidImport(f"the file holds a value that cannot be stored: {exc}") from None


def finish(
    store: PlaybookStore,
    report: ImportReport,
    *,
    actor: str,
    movable: dict[str, str],
    imported: Iterable[str] = (),
    touched: Iterable[str] = (),
    rerate: bool = False,
    was_empty: bool = False,
    log: dict[str, Any] | None = None,
) -> None:
    """Inside the import's transaction: fold the evidence; compare the recorded maturity of
    each imported bullet the maturity pass may move (`movable`: id -> maturity; not pinned,
    retired or deprecated) with the rung its evidence earns; log the import; run the
    maturity pass over the existing bullets the import gave new evidence (`touched`) and,
    with `rerate`, over the imported ones (`imported`)."""
    from ..curation import run_maturity_pass

    store.sync_evidence()
    report.maturity = rung_check(store, movable, rerate=rerate)
    if log is not None:
        log["maturity"] = report.maturity
        store.log_decision(report.batch_id, actor, "import", None, "applied", None, log)
    if was_empty:
        # The maturity rule now in force has rated every bullet there is: the first pass
        # after the import visits only what it touches, not the whole playbook.
        store.record_maturity_policy()
    # The call site of the maturity pass for `--rerate` (and for merged rules).
    visit = list(dict.fromkeys([*touched, *(imported if rerate else ())]))
    if visit:
        report.maturity_changes = run_maturity_pass(
            store, touched=visit, batch_id=report.batch_id, actor=actor
        )


def rung_check(store: PlaybookStore, movable: dict[str, str], *, rerate: bool) -> dict[str, Any]:
    """What the maturity pass would make of the `movable` bullets (id -> recorded
    maturity): on how many it would move the rung (`would_move`, what `--rerate` moves),
    and on how many the rung their evidence earns differs from the recorded one
    (`earned_differs`: more, since the pass lowers a rung only on a negative score, never
    because evidence is missing or has decayed)."""
    from ..core.scoring import earned_rung, next_maturity

    evidence = store.evidence_many(movable, at=store.now())
    policy = store.policy
    differs = moves = 0
    for bid, maturity in movable.items():
        ev = evidence[bid]
        differs += earned_rung(ev.helpful, ev.harmful, policy) != maturity
        moves += next_maturity(maturity, ev.helpful, ev.harmful, False, policy) != maturity
    return {
        "kept": "no (--rerate)" if rerate else "as recorded",
        "rated": len(movable),
        "would_move": moves,
        "earned_differs": differs,
    }


def movable_rules(bullets: Iterable[Any]) -> dict[str, str]:
    """id -> maturity of the bullets the maturity pass may move (`id` may be `source_id`)."""
    return {
        getattr(b, "id", None) or b.source_id: b.maturity
        for b in bullets
        if not b.pinned and b.state != "retired" and b.maturity != "deprecated"
    }


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
    from .snapshot import SECTIONS

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
    from .cass import CassImport
    from .cass.diary import CassDiary

    if isinstance(parsed, CassDiary):
        from .diary_import import import_diary

        return import_diary(store, parsed, source=source, workspace=workspace)
    if isinstance(parsed, CassImport):
        from .cass_import import import_cass

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
