"""What every import shares (a Playbook export, a cass-memory playbook, a cass diary): the
report, the progress ticker, the one transaction an import runs in, and the finish that
folds the evidence and checks the maturity rungs. `importing` reads a file and picks the
import; `cass_import` and `diary_import` write theirs with these."""

from __future__ import annotations

import gc
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from ..core.errors import ConstraintError, InvalidImportError, InvalidInput
from ..core.scoring import earned_rung, next_maturity
from ..curation import run_maturity_pass
from .notes import Note, summarize

if TYPE_CHECKING:
    from ..store import PlaybookStore

Progress = Callable[[int, int], None]  # (rows done, rows in total)

# JSON and YAML can spell a lone surrogate ("\\ud800"), which is not text SQLite can store.
_NOT_UNICODE = "the file holds text that is not valid Unicode (a lone surrogate such as \\ud800)"


class InvalidImport(InvalidImportError):
    """The file cannot be imported; nothing was written. The message is one line."""


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
