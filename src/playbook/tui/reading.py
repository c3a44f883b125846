"""What the panes show, read in one go: the snapshot of every list, and one bullet's detail.

No Textual here, and no domain logic either: every fact comes from the API every surface
calls (`playbook.review`, `playbook.review.queue`) or the store's row view; these functions only
gather it for a thread worker (`Source.open()` gives each its own connection) and add what
only a screen needs (the diary passage a provenance points at).
"""

from __future__ import annotations

import time
import weakref
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from datetime import datetime
from functools import cached_property
from operator import attrgetter
from pathlib import Path
from typing import TYPE_CHECKING, Any

from .. import review
from ..core.terms import HOOK_ORIGIN
from ..store import BlockedPattern, PlaybookStore
from ..store.views import BulletRow

if TYPE_CHECKING:
    from ..review import BulletDetail, ConflictView, ScoreSeries
    from ..review.proposal_view import DiffOps
    from ..review.proposals import Proposal, Similar
    from .data import Source

PROPOSALS_WITH_SIMILAR = 300  # beyond this many pending, list the rest without neighbours
_TEXTS = attrgetter("id", "content", "created_at")  # of a row: what the search reads


@dataclass(frozen=True)
class DiaryPassage:
    path: str
    offset: int
    text: str


@dataclass
class Snapshot:
    """Everything the panes list, read in one go. Proposals come newest first."""

    rows: list[BulletRow]
    proposals: list[Proposal]
    conflicts: list[ConflictView]
    blocked: list[BlockedPattern]
    passages: dict[str, DiaryPassage | None] = field(default_factory=dict)  # by proposal id
    seconds: float = 0.0
    diffs: dict[str, list[tuple[str, DiffOps]]] = field(default_factory=dict)  # by proposal
    new_proposals: int = 0  # pending proposals staged after the reviewer last looked
    hook_proposals: int = 0  # pending proposals from hook-driven sessions
    as_of: datetime | None = None  # time travel: the playbook as it stood then (read-only)
    # The moment the rows of now were scored at (`bullet_rows(at=...)`; None for a moment
    # back), and how many of this workbench's writes had closed before the read began
    # (`Source.writes`): what then-vs-now needs to use these rows instead of reading again.
    read_at: datetime | None = None
    writes: int = -1
    # The nearest existing bullets of the first PROPOSALS_WITH_SIMILAR proposals are read
    # once the snapshot is on screen (`read_similar`; not on the first paint's path). Until
    # then `similar_read` is False, and the proposals in `similar_unknown` (those with none
    # carried over from the snapshot shown before) say they are being looked for.
    similar_read: bool = True
    similar_unknown: set[str] = field(default_factory=set)
    # Those whose neighbours, carried over, are still what the search would find (a refresh
    # that changed nothing it reads): not searched again.
    similar_kept: set[str] = field(default_factory=set)
    # Of now only: (id, text, created_at) of every bullet, in the store's order; what the
    # nearest-bullet search reads of them (see `_search_inputs_kept`). Built in the worker.
    texts: list[tuple[str, str, str]] | None = field(default=None, repr=False, compare=False)
    # `same_texts`'s last answer; a weak reference: a chain of snapshots kept alive by it
    # would hold every read of 100k rows since the start.
    _texts_as: tuple[weakref.ref[Snapshot], bool] | None = field(
        default=None, repr=False, compare=False
    )

    @cached_property
    def live_count(self) -> int:  # the rows never change once read
        return sum(1 for r in self.rows if r.state != "retired")

    @cached_property
    def rows_by_id(self) -> dict[str, BulletRow]:
        return {r.id: r for r in self.rows}

    def same_texts(self, other: Snapshot | None) -> bool:
        """Whether both are of now and read the same bullets with the same texts and ages
        (remembered for the last snapshot asked about: the poll worker asks first, about
        the snapshot shown, so the UI thread does not compare 100k rows)."""
        if other is None or self.texts is None or other.texts is None:
            return False
        memo = self._texts_as
        if memo is not None and memo[0]() is other:
            return memo[1]
        same = self.texts == other.texts
        self._texts_as = (weakref.ref(other), same)
        return same

    def similar_due(self) -> list[Proposal]:
        """The proposals whose nearest existing bullets are still to be read."""
        if self.similar_read:
            return []
        return [p for p in self.proposals[:PROPOSALS_WITH_SIMILAR] if p.id not in self.similar_kept]

    def similar_found(self, found: dict[str, Proposal]) -> None:
        """`found` (by id: each proposal with its nearest bullets) swapped in; the
        neighbours of this snapshot are read."""
        self.proposals = [found.get(p.id, p) for p in self.proposals]
        self.similar_unknown -= found.keys()
        self.similar_read = True

    def carry_similar(self, before: Snapshot | None) -> None:
        """Proposals shown in the snapshot `before` keep the nearest bullets read for them
        there (a refresh does not flash "looking" on them). They are read again unless
        nothing the search reads has changed since (`_search_inputs_kept`): then a proposal
        with the same delta keeps them for good (their rung and state as they are now), and
        only the others are searched."""
        if before is None or before is self or not self.similar_unknown:
            return
        kept = _search_inputs_kept(before, self)
        old = {p.id: p for p in before.proposals[:PROPOSALS_WITH_SIMILAR]}
        carried: dict[str, Proposal] = {}
        for p in self.proposals:
            was = old.get(p.id)
            if p.id not in self.similar_unknown or was is None or p.id in before.similar_unknown:
                continue
            if kept and was.delta == p.delta:
                carried[p.id] = replace(p, similar=_restated(was.similar, self.rows_by_id))
                self.similar_kept.add(p.id)
            else:
                carried[p.id] = replace(p, similar=was.similar)
        self.proposals = [carried.get(p.id, p) for p in self.proposals]
        self.similar_unknown -= carried.keys()
        if not self.similar_due():
            self.similar_read = True


def _search_inputs_kept(before: Snapshot, after: Snapshot) -> bool:
    """Whether the nearest-bullet search finds for `after` what it found for `before`'s
    proposals: `before`'s neighbours all read (not carried over, unread, from yet another
    snapshot), and both of now (a moment back shows neighbours searched now) with the same
    bullets, texts and ages. That is all `curation.similar_bullets` reads of the bullets: it
    compares texts, ranks by similarity then age, and keeps any state (a mark, a retirement,
    a maturity step change none of it). Exact, from the rows both snapshots read anyway: no
    query, and sound on any store (bullets are never deleted or reworded, but a change that
    did either is still seen)."""
    return before.similar_read and after.same_texts(before)


def _restated(similar: list[Similar], rows: dict[str, BulletRow]) -> list[Similar]:
    """`similar` with each bullet's rung and state as in `rows` (shown, not searched on)."""
    out = []
    for s in similar:
        r = rows.get(s.bullet_id)
        if r is not None and (r.state, r.maturity) != (s.state, s.maturity):
            s = replace(s, state=r.state, maturity=r.maturity)
        out.append(s)
    return out


def pending_proposals(store: PlaybookStore, limit: int = PROPOSALS_WITH_SIMILAR) -> list[Proposal]:
    """Pending proposals, newest first, each with its targets as they are now (stale or
    not); the newest `limit` also with their nearest existing bullets (the snapshot takes
    none: `read_similar` reads them once it is on screen)."""
    from ..review import queue  # lazy: pydantic: the workbench's first frame
    from ..review.proposal_view import with_similar  # lazy: pydantic: the workbench's first frame
    from ..review.proposals import with_targets  # lazy: pydantic: the workbench's first frame

    found = queue.list_proposals(store, status="pending", newest_first=True)
    out = [with_targets(store, p) for p in found]
    return [with_similar(store, p) if i < limit else p for i, p in enumerate(out)]


def load_snapshot(
    source: Source,
    *,
    last_looked: datetime | None = None,
    as_of: datetime | None = None,
) -> Snapshot:
    """Rows, proposals, conflicts and blocked patterns as they are now, or `as_of` a moment
    (time travel). `last_looked`: when the reviewer last saw the
    Proposals tab (for its "new" count)."""
    from ..review import queue  # lazy: pydantic: the workbench's first frame

    if as_of is not None:
        return load_snapshot_as_of(source, as_of)
    started = time.perf_counter()
    writes = source.writes
    with source.open(reads=True) as store:
        read_at = store.now()
        rows = store.views.bullet_rows(at=read_at)
        proposals = pending_proposals(store, limit=0)
        diffs = diffs_of(store, proposals)
        conflicts = review.conflicts(store)
        blocked = store.blocked()
        new = len(proposals)
        if last_looked is not None:
            new = queue.count_pending(store, since=last_looked)
        hooks = queue.count_pending(store, origin=HOOK_ORIGIN)
    return Snapshot(
        rows,
        proposals,
        conflicts,
        blocked,
        passages_of(proposals),
        time.perf_counter() - started,
        diffs,
        new_proposals=new,
        hook_proposals=hooks,
        similar_read=not proposals,
        similar_unknown=_unknown(proposals),
        texts=list(map(_TEXTS, rows)),
        read_at=read_at,
        writes=writes,
    )


def _unknown(proposals: list[Proposal]) -> set[str]:
    return {p.id for p in proposals[:PROPOSALS_WITH_SIMILAR]}


def read_similar(
    source: Source, proposals: list[Proposal], cancelled: Callable[[], bool]
) -> dict[str, Proposal] | None:
    """Each of `proposals` with its nearest existing bullets as the playbook is now
    (`with_similar`; for a moment back too, as the snapshot of then always showed them),
    by id; None once `cancelled()` (another snapshot is on screen)."""
    from ..review.proposal_view import with_similar  # lazy: pydantic: the workbench's first frame

    found: dict[str, Proposal] = {}
    if not proposals:
        return found
    with source.open(migrate=False) as store:
        for p in proposals:
            if cancelled():
                return None
            found[p.id] = with_similar(store, p)
    return found


def diffs_of(
    store: PlaybookStore, proposals: list[Proposal]
) -> dict[str, list[tuple[str, DiffOps]]]:
    """Word-level diffs of each replace or merge proposal against the text of its targets
    (`review.proposal_diffs`)."""
    out = {}
    for p in proposals:
        if p.delta.get("type") in ("replace", "merge"):
            out[p.id] = review.proposal_diffs(store, p)
    return out


def passages_of(proposals: list[Proposal]) -> dict[str, DiaryPassage | None]:
    """The diary passage each proposal points at (each diary file read once)."""
    diaries: dict[str, Any] = {}
    return {
        p.id: diary_passage(p.provenance.session_ref, p.provenance.byte_offset, diaries)
        for p in proposals
    }


def load_snapshot_as_of(source: Source, when: datetime) -> Snapshot:
    """The playbook as it stood at `when`, from the log (no copy of the data): rows,
    conflicts and the queue as of then (`review.history`); blocked patterns made by then."""
    from ..review import (  # lazy: numpy: the workbench's first frame
        conflicts_as_of,
        proposals_as_of,
        rows_as_of,
    )

    started = time.perf_counter()
    writes = source.writes
    with source.open(migrate=False) as store:
        rows = rows_as_of(store, when, source.moments)
        proposals = sorted(proposals_as_of(store, when), key=lambda p: p.created_at, reverse=True)
        diffs = diffs_of(store, proposals)
        conflicts = conflicts_as_of(store, when)
        blocked = [b for b in store.blocked() if b.created_at <= when]
    hooks = sum(1 for p in proposals if p.origin == HOOK_ORIGIN)
    return Snapshot(
        rows,
        proposals,
        conflicts,
        blocked,
        passages_of(proposals),
        time.perf_counter() - started,
        diffs,
        hook_proposals=hooks,
        as_of=when,
        similar_read=not proposals,
        similar_unknown=_unknown(proposals),
        writes=writes,
    )


@dataclass(frozen=True)
class DetailRead:
    """One bullet as the Detail pane shows it: the API's detail, its score over time, and
    the diary passage it came from (when the file is at hand)."""

    detail: BulletDetail
    series: ScoreSeries  # (moment, score) pairs, with `.events` to mark on the plot
    passage: DiaryPassage | None


def load_detail(source: Source, bullet_id: str) -> DetailRead | None:
    with source.open(reads=True) as store:
        try:
            detail = review.bullet_detail(store, bullet_id)
        except review.NotFound:
            return None
        series = review.score_series(store, detail.bullet, detail.maturity_log)
    prov = detail.bullet.provenance
    return DetailRead(detail, series, diary_passage(prov.session_ref, prov.byte_offset))


def diary_passage(
    session_ref: str | None, offset: int | None, cache: dict[str, Any] | None = None
) -> DiaryPassage | None:
    """The passage a provenance points at, when the session ref is a readable diary file.
    `cache` keeps diaries already read (by path) across calls."""
    if not session_ref or offset is None:
        return None
    ref = session_ref.removeprefix("file://").removeprefix("file:")
    path = Path(ref).expanduser()
    cache = {} if cache is None else cache
    diary = cache.get(ref)
    if diary is None and ref not in cache:
        try:
            from ..reflection.diaries import read_diary  # lazy: the workbench's first frame

            diary = read_diary(path) if path.is_file() else None
        except (OSError, ValueError):
            diary = None
        cache[ref] = diary
    if diary is None:
        return None
    passage = diary.passage_at(offset)
    if passage is None:
        return None
    return DiaryPassage(str(path), passage.offset, passage.text)
