"""What the panes show, read in one go: the snapshot of every list, and one bullet's detail.

No Textual here, and no domain logic either: every fact comes from the API every surface
calls (`playbook.review`, `playbook.review.queue`) or the store's row view; these functions only
gather it for a thread worker (`Source.open()` gives each its own connection) and add what
only a screen needs (the diary passage a provenance points at).
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from datetime import datetime
from functools import cached_property
from pathlib import Path
from typing import TYPE_CHECKING, Any

from .. import review
from ..core.terms import HOOK_ORIGIN
from ..store import BlockedPattern, PlaybookStore
from ..store.views import BulletRow

if TYPE_CHECKING:
    from ..review import BulletDetail, ConflictView, HistoryCache, ScoreSeries
    from ..review.proposal_view import DiffOps
    from ..review.proposals import Proposal
    from .data import Source

PROPOSALS_WITH_SIMILAR = 300  # beyond this many pending, list the rest without neighbours


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

    @property
    def live_count(self) -> int:
        return sum(1 for r in self.rows if r.state != "retired")

    @cached_property
    def rows_by_id(self) -> dict[str, BulletRow]:
        return {r.id: r for r in self.rows}


def pending_proposals(store: PlaybookStore, limit: int = PROPOSALS_WITH_SIMILAR) -> list[Proposal]:
    """Pending proposals, newest first, each with its targets as they are now (stale or
    not); the newest `limit` also with their nearest existing bullets."""
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
    history: HistoryCache | None = None,
) -> Snapshot:
    """Rows, proposals, conflicts and blocked patterns as they are now, or `as_of` a moment
    (time travel, from `history` when given). `last_looked`: when the reviewer last saw the
    Proposals tab (for its "new" count)."""
    from ..review import queue  # lazy: pydantic: the workbench's first frame

    if as_of is not None:
        return load_snapshot_as_of(source, as_of, history)
    started = time.perf_counter()
    with source.open() as store:
        rows = store.views.bullet_rows()
        proposals = pending_proposals(store)
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
    )


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


def load_history(source: Source) -> HistoryCache:
    """The bullets and the feedback log read once, for stepping through moments."""
    with source.open(migrate=False) as store:
        return review.HistoryCache.read(store)


def load_snapshot_as_of(
    source: Source, when: datetime, history: HistoryCache | None = None
) -> Snapshot:
    """The playbook as it stood at `when`, from the log (no copy of the data): rows,
    conflicts and the queue as of then (`review.history`); blocked patterns made by then.
    `history`: the log read before (`load_history`), if the playbook has not changed since."""
    from ..review import (  # lazy: numpy: the workbench's first frame
        conflicts_as_of,
        proposals_as_of,
        rows_as_of,
    )

    started = time.perf_counter()
    with source.open(migrate=False) as store:
        rows = rows_as_of(store, when, cache=history)
        found = sorted(proposals_as_of(store, when), key=lambda p: p.created_at, reverse=True)
        proposals = [review.with_closest(store, p) for p in found[:PROPOSALS_WITH_SIMILAR]]
        proposals += found[PROPOSALS_WITH_SIMILAR:]
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
    )


@dataclass(frozen=True)
class DetailRead:
    """One bullet as the Detail pane shows it: the API's detail, its score over time, and
    the diary passage it came from (when the file is at hand)."""

    detail: BulletDetail
    series: ScoreSeries  # (moment, score) pairs, with `.events` to mark on the plot
    passage: DiaryPassage | None


def load_detail(source: Source, bullet_id: str) -> DetailRead | None:
    with source.open() as store:
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
