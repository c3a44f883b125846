"""What the workbench reads and writes, as plain functions of a playbook file.

No Textual here: every function takes a `Source` (the file) and runs on whatever thread
calls it, on a connection of its own, so the app can call them from thread workers and the
tests can call them directly. Writes go through the public API (`curate`, `queue`, the
store's human actions) with `actor="human"`.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable, Hashable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field, replace
from datetime import datetime, timedelta
from functools import cached_property
from itertools import repeat
from pathlib import Path
from typing import Any

from .. import queue, scoring
from ..curation import CurateResult, curate
from ..model import Bullet, FeedbackEvent, Maturity, Score
from ..policy import DEFAULT_POLICY, Policy
from ..store import BlockedPattern, Conflict, Decision, PlaybookStore, new_batch_id, open_store
from ..store.ranking import keyword_hits, keyword_points
from ..store.views import BulletRow, bullet_rows, maturity_history
from ..text import query_tokens

HUMAN = "human"


@dataclass(frozen=True)
class Source:
    """The playbook the workbench shows (a file, or a `postgresql://` URL), scored with the
    policy the workbench was started with (`--policy` / `$PLAYBOOK_POLICY`, as the CLI
    does). Each `open()` is a new connection."""

    path: Path | str
    policy: Policy = DEFAULT_POLICY

    @contextmanager
    def open(self, *, migrate: bool = True) -> Iterator[PlaybookStore]:
        """`migrate=False`: for reading only (never writes, works on a read-only file)."""
        mode = "write" if migrate else "read"
        with open_store(self.path, self.policy, mode=mode) as store:
            yield store

    def watcher(self) -> Watcher:
        return Watcher(self.path)


class Watcher:
    """A long-lived read-only store whose only job is `change_token()`.

    The token changes when anyone commits. SQLite: `PRAGMA data_version` (in WAL mode the
    main file's mtime does not move), microseconds per poll. PostgreSQL: the watcher
    LISTENs to the playbook's channel and the token counts the NOTIFYs every writer sends
    on commit; reading it asks the server nothing. Used by one poll at a time (the app
    never lets polls overlap).
    """

    def __init__(self, path: Path | str) -> None:
        self.store = open_store(path, mode="read")
        self.store.listen()

    def version(self) -> Hashable:
        return self.store.change_token()

    def close(self) -> None:
        self.store.close()


# ------------------------------------------------------------------------------ snapshot


@dataclass(frozen=True)
class ConflictView:
    conflict: Conflict
    a: BulletRow | None
    b: BulletRow | None
    a_events: list[FeedbackEvent] = field(default_factory=list)  # the latest few
    b_events: list[FeedbackEvent] = field(default_factory=list)
    sources: dict[str, str | None] = field(default_factory=dict)  # bullet id -> session ref


@dataclass
class Snapshot:
    """Everything the panes list, read in one go."""

    rows: list[BulletRow]
    proposals: list[queue.Proposal]
    conflicts: list[ConflictView]
    blocked: list[BlockedPattern]
    passages: dict[str, DiaryPassage | None] = field(default_factory=dict)  # by proposal id
    seconds: float = 0.0

    @property
    def live_count(self) -> int:
        return sum(1 for r in self.rows if r.state != "retired")

    @cached_property
    def rows_by_id(self) -> dict[str, BulletRow]:
        return {r.id: r for r in self.rows}


CONFLICT_EVENTS = 6  # feedback events shown under each side of a conflict
PROPOSALS_WITH_SIMILAR = 300  # beyond this many pending, list the rest without neighbours


def load_snapshot(source: Source) -> Snapshot:
    started = time.perf_counter()
    with source.open() as store:
        rows = bullet_rows(store)
        by_id = {r.id: r for r in rows}
        proposals = queue.pending(store, limit=PROPOSALS_WITH_SIMILAR)
        if len(proposals) == PROPOSALS_WITH_SIMILAR:
            rest = queue.pending(store, similar=False)[PROPOSALS_WITH_SIMILAR:]
            proposals += rest
        conflicts = []
        for c in store.conflicts():
            pair = store.get_bullets([c.a, c.b])
            conflicts.append(
                ConflictView(
                    c,
                    by_id.get(c.a),
                    by_id.get(c.b),
                    store.timeline(c.a)[-CONFLICT_EVENTS:],
                    store.timeline(c.b)[-CONFLICT_EVENTS:],
                    {bid: b.provenance.session_ref for bid, b in pair.items()},
                )
            )
        blocked = store.blocked()
    diaries: dict[str, Any] = {}
    passages = {
        p.id: diary_passage(p.provenance.session_ref, p.provenance.byte_offset, diaries)
        for p in proposals
    }
    return Snapshot(rows, proposals, conflicts, blocked, passages, time.perf_counter() - started)


# ------------------------------------------------------------------------------ filter


@dataclass(frozen=True)
class FilterSpec:
    """A `/` filter: words ranked like recall, plus `is:` qualifiers. `unknown` holds the
    `is:` words that name no qualifier (the box says so; they are not searched for)."""

    text: str
    words: str
    flags: frozenset[str]
    unknown: tuple[str, ...] = ()

    @property
    def empty(self) -> bool:
        return not self.words.strip() and not self.flags


FLAGS = (
    "pinned",
    "stale",
    "retired",
    "all",
    "rule",
    "anti",
    "candidate",
    "established",
    "proven",
    "deprecated",
)


def parse_filter(text: str) -> FilterSpec:
    """Words and `is:` qualifiers. An `is:` word still being typed (a prefix of a known one,
    such as `is:ret`) is neither; one that names nothing is `unknown`."""
    words, flags, unknown = [], set(), []
    for part in text.split():
        low = part.lower()
        if not low.startswith("is:"):
            words.append(part)
        elif low[3:] in FLAGS:
            flags.add(low[3:])
        elif not any(f.startswith(low[3:]) for f in FLAGS):
            unknown.append(part[3:])
    return FilterSpec(text, " ".join(words), frozenset(flags), tuple(unknown))


def row_passes(row: BulletRow, flags: frozenset[str]) -> bool:
    """The `is:` qualifiers. Retired bullets only show with is:retired or is:all."""
    if row.state == "retired":
        if not flags & {"retired", "all"}:
            return False
    elif "retired" in flags:
        return False
    if "pinned" in flags and not row.pinned:
        return False
    if "stale" in flags and not row.stale:
        return False
    if "rule" in flags and row.type != "rule":
        return False
    if "anti" in flags and row.type != "anti-pattern":
        return False
    rungs = flags & {"candidate", "established", "proven", "deprecated"}
    return not rungs or row.maturity in rungs


MATURITY_RANK = {"deprecated": 0, "candidate": 1, "established": 2, "proven": 3}
SORT_KEYS: dict[str, Callable[[BulletRow], Any]] = {
    "id": lambda r: r.id,
    "content": lambda r: r.content.lower(),
    "type": lambda r: r.type,
    "maturity": lambda r: (MATURITY_RANK.get(r.maturity, 0), r.effective),
    "effective": lambda r: r.effective,
    "helpful": lambda r: r.helpful,
    "harmful": lambda r: r.harmful,
    "pinned": lambda r: (r.pinned, r.effective),
    "stale": lambda r: (r.stale, r.effective),
    "created": lambda r: r.created_at,
}
DESCENDING = {"effective", "maturity", "helpful", "harmful", "pinned", "stale", "created"}


@dataclass(frozen=True)
class View:
    """What the bullets table shows: the filter, its recall relevance, the sort."""

    spec: FilterSpec
    relevance: dict[str, float] | None = None  # None: no words to rank by
    sort_column: str | None = None  # None: by score, or by recall rank while ranking
    sort_reverse: bool = False

    @property
    def ranked(self) -> bool:
        return self.relevance is not None and bool(self.spec.words.strip())

    @property
    def column(self) -> str | None:
        """The column the order follows (None: recall rank)."""
        if self.sort_column is None:
            return None if self.ranked else "effective"
        return self.sort_column

    @property
    def descending(self) -> bool:
        return ((self.column or "effective") in DESCENDING) != self.sort_reverse


def view_order(
    rows: dict[str, BulletRow],
    view: View,
    min_confidence: float = 0.1,
    index: RowIndex | None = None,
) -> list[str]:
    """The ids the table shows, in order. Pure, so a worker thread can compute it.

    With an `index` built from these same rows, the ordering runs in numpy (milliseconds at
    100k bullets); without one, in Python (fine up to tens of thousands).
    """
    flags = view.spec.flags
    relevance = view.relevance
    column = view.column
    if index is not None and index.rows is rows:
        if column is None and relevance is not None:
            return index.ranked(relevance, flags, min_confidence)
        fast = index.sorted_by(column or "effective", view.descending, flags)
        if fast is not None:
            return fast
    if view.ranked and relevance is not None:
        found = (rows.get(bid) for bid in relevance)
        chosen = [r for r in found if r is not None and row_passes(r, flags)]
    elif flags:
        chosen = [r for r in rows.values() if row_passes(r, flags)]
    else:
        chosen = [r for r in rows.values() if r.state != "retired"]
    if column is None and relevance is not None:
        keyed = [(-recall_rank(relevance[r.id], r.effective, min_confidence), r.id) for r in chosen]
        keyed.sort()
        return [bid for _, bid in keyed]
    chosen.sort(key=lambda r: r.id)
    chosen.sort(key=SORT_KEYS[column or "effective"], reverse=view.descending)
    return [r.id for r in chosen]


class RowIndex:
    """Column arrays over one snapshot's rows, so that ranking or sorting 100k rows takes
    milliseconds instead of a Python sort's tenths of a second. Built in a worker thread,
    immutable afterwards; it answers only for the `rows` dict it was built from."""

    def __init__(self, rows: dict[str, BulletRow]) -> None:
        import numpy as np

        self.np = np
        self.rows = rows
        values = list(rows.values())
        self.values = values
        self.ids = [r.id for r in values]
        n = len(values)
        self.id_array = np.array(self.ids, dtype=object)
        self.pos = {bid: i for i, bid in enumerate(self.ids)}
        self.effective = np.fromiter((r.effective for r in values), np.float64, n)
        self.live = np.fromiter((r.state != "retired" for r in values), np.bool_, n)
        self.id_rank = self._rank_of(self.ids)
        seqs = np.fromiter((r.seq for r in values), np.intp, n)
        self.position = np.full(int(seqs.max()) + 1 if n else 0, -1, np.intp)
        self.position[seqs] = np.arange(n)
        self._keys: dict[str, Any] = {}
        self._masks: dict[frozenset[str], Any] = {}

    def _rank_of(self, keys: list[Any]) -> Any:
        """Each row's dense rank by `keys`: equal keys share a rank, as in a sort."""
        ranks = {k: i for i, k in enumerate(sorted(set(keys)))}
        return self.np.fromiter((ranks[k] for k in keys), self.np.int64, len(keys))

    def mask(self, flags: frozenset[str]) -> Any:
        if not flags:
            return self.live
        mask = self._masks.get(flags)
        if mask is None:
            values = self.values
            mask = self.np.fromiter((row_passes(r, flags) for r in values), bool, len(values))
            self._masks[flags] = mask
        return mask

    def ranked(self, relevance: dict[str, float], flags: frozenset[str], floor: float) -> list[str]:
        np = self.np
        n = len(relevance)
        idx = np.fromiter(map(self.pos.get, relevance, repeat(-1)), np.int64, n)
        points = np.fromiter(relevance.values(), np.float64, n)
        found = idx >= 0
        idx, points = idx[found], points[found]
        keep = self.mask(flags)[idx]
        idx, points = idx[keep], points[keep]
        score = -points * np.maximum(self.effective[idx], floor)
        order = np.lexsort((self.id_rank[idx], score))
        return self.id_array[idx[order]].tolist()

    def rank_hits(
        self, hits: list[tuple[Any, float]], flags: frozenset[str], floor: float, minimum: float
    ) -> tuple[dict[str, float], list[str]]:
        """Relevance by id and the ranked order, from `store.ranking.keyword_hits` (bullet
        seqs and their points), all in numpy."""
        np = self.np
        points = np.zeros(len(self.ids), np.float64)
        for seqs, value in hits:
            seqs = seqs[seqs < len(self.position)]
            at = self.position[seqs]
            points[at[at >= 0]] += value
        matched = np.flatnonzero(points >= minimum) if hits else np.empty(0, np.intp)
        relevance = dict(
            zip(self.id_array[matched].tolist(), points[matched].tolist(), strict=True)
        )
        idx = matched[self.mask(flags)[matched]]
        score = -points[idx] * np.maximum(self.effective[idx], floor)
        order = np.lexsort((self.id_rank[idx], score))
        return relevance, self.id_array[idx[order]].tolist()

    def _key(self, name: str) -> Any:
        key = self._keys.get(name)
        if key is None:
            np, values, n = self.np, self.values, len(self.values)
            if name == "created":
                key = self._rank_of([r.created_at for r in values])
            elif name == "maturity":
                key = np.fromiter((MATURITY_RANK.get(r.maturity, 0) for r in values), float, n)
            elif name in ("helpful", "harmful"):
                key = np.fromiter((getattr(r, name) for r in values), np.float64, n)
            elif name in ("pinned", "stale"):
                key = np.fromiter((getattr(r, name) for r in values), float, n)
            else:
                return None
            self._keys[name] = key
        return key

    def sorted_by(self, column: str, descending: bool, flags: frozenset[str]) -> list[str] | None:
        """Like `sorted(key=SORT_KEYS[column], reverse=descending)` after a sort by id."""
        np = self.np
        sign = -1.0 if descending else 1.0
        if column == "effective":
            keys = [self.effective]
        elif column in ("maturity", "pinned", "stale"):
            keys = [self._key(column), self.effective]
        elif column == "id":
            keys = [self.id_rank]
        else:
            key = self._key(column)
            if key is None:
                return None  # text columns: the Python sort
            keys = [key]
        idx = np.flatnonzero(self.mask(flags))
        # lexsort sorts by the last key first; ids break ties ascending, as a stable sort.
        order = np.lexsort((self.id_rank[idx], *[sign * k[idx] for k in reversed(keys)]))
        return self.id_array[idx[order]].tolist()


def rank_words(source: Source, words: str) -> dict[str, float] | None:
    """Recall's keyword relevance (SPEC §6) per matching bullet id; None for no words.

    The final rank multiplies it by the row's effective score, exactly as `recall` does;
    the rows already carry their scores, so only the token index is read.
    """
    qtokens = query_tokens(words)
    if not words.strip():
        return None
    if not qtokens:
        return {}
    with source.open(migrate=False) as store:
        scores = keyword_points(store, qtokens, store.policy)
        policy = store.policy
    return {bid: s for bid, s in scores.items() if s >= policy.min_relevance}


def rank_view(
    source: Source,
    text: str,
    rows: dict[str, BulletRow],
    view: View,
    min_confidence: float,
    index: RowIndex | None = None,
) -> tuple[View, list[str]]:
    """The view for filter `text` and its order: recall relevance times score.

    With an index (large playbooks) the postings go straight into numpy by bullet seq and
    no per-hit Python runs; without one, through `rank_words` and `view_order`.
    """
    spec = parse_filter(text)
    if index is None or index.rows is not rows or not spec.words.strip():
        view = replace(view, spec=spec, relevance=rank_words(source, spec.words))
        return view, view_order(rows, view, min_confidence, index)
    qtokens = query_tokens(spec.words)
    hits = []
    if qtokens:
        with source.open(migrate=False) as store:
            hits = keyword_hits(store, qtokens, store.policy)
            floor = store.policy.min_relevance
    relevance, order = index.rank_hits(hits, spec.flags, min_confidence, floor if hits else 0.0)
    return replace(view, spec=spec, relevance=relevance), order


def recall_rank(relevance: float, effective: float, min_confidence: float = 0.1) -> float:
    """final_score of SPEC §6: relevance * max(min_confidence, effective_score)."""
    return relevance * max(min_confidence, effective)


# ------------------------------------------------------------------------------ detail


@dataclass(frozen=True)
class DiaryPassage:
    path: str
    offset: int
    text: str


@dataclass(frozen=True)
class BulletDetail:
    bullet: Bullet
    score: Score
    timeline: list[FeedbackEvent]
    predecessors: list[tuple[str, Bullet]]
    successors: list[tuple[str, Bullet]]
    decisions: list[Decision]
    series: list[tuple[datetime, float]]
    maturity_log: list[tuple[datetime, str]]
    passage: DiaryPassage | None
    conflicts: list[Conflict] = field(default_factory=list)


SERIES_POINTS = 96


def load_detail(source: Source, bullet_id: str, points: int = SERIES_POINTS) -> BulletDetail | None:
    with source.open() as store:
        bullet = store.get_bullet(bullet_id)
        if bullet is None:
            return None
        score = store.score(bullet_id)
        lineage = store.lineage(bullet_id)
        related = store.get_bullets(
            [b for _, b in lineage.predecessors] + [b for _, b in lineage.successors]
        )
        history = maturity_history(store, bullet_id)
        series = score_series(store, bullet, history, points)
        conflicts = [c for c in store.conflicts(include_resolved=True) if bullet_id in (c.a, c.b)]
        return BulletDetail(
            bullet=bullet,
            score=score,
            timeline=store.timeline(bullet_id),
            predecessors=[(k, related[b]) for k, b in lineage.predecessors if b in related],
            successors=[(k, related[b]) for k, b in lineage.successors if b in related],
            decisions=store.decisions(bullet_id=bullet_id, limit=50),
            series=series,
            maturity_log=history,
            passage=diary_passage(bullet.provenance.session_ref, bullet.provenance.byte_offset),
            conflicts=conflicts,
        )


def score_series(
    store: PlaybookStore,
    bullet: Bullet,
    history: list[tuple[datetime, str]],
    points: int = SERIES_POINTS,
) -> list[tuple[datetime, float]]:
    """The bullet's effective score at `points` moments from its creation to now.

    At each moment: the events observed by then (its own and its supersedes-ancestors'),
    decayed to then, times the multiplier of the maturity it had then. Pure arithmetic from
    `playbook.scoring` on the log; nothing is stored.
    """
    now = store.now()
    start = bullet.created_at
    ids = [bullet.id, *store.ancestors(bullet.id)]
    events = sorted((e for evs in store.raw_events(ids).values() for e in evs), key=lambda e: e.at)
    if events:
        first = datetime.fromtimestamp(events[0].at * scoring.DAY, tz=start.tzinfo)
        start = min(start, first)
    end = bullet.valid_to or now
    if end <= start:
        end = start + timedelta(hours=1)
    half_life = store.half_life(bullet)
    span = (end - start).total_seconds()
    out: list[tuple[datetime, float]] = []
    steps = max(2, points)
    for k in range(steps):
        t = start + timedelta(seconds=span * k / (steps - 1))
        day = scoring.days(t)
        seen = [e for e in events if e.at <= day]
        h, x = scoring.decayed_totals(seen, day, half_life)
        maturity = _maturity_at(history, t) or str(bullet.maturity)
        out.append((t, scoring.effective_score(h, x, maturity, store.policy)))
    return out


def _maturity_at(history: list[tuple[datetime, str]], t: datetime) -> str | None:
    current = None
    for at, m in history:
        if at <= t:
            current = m
        else:
            break
    return current


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
            from ..diaries import read_diary

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


# ------------------------------------------------------------------------------ actions
# Each returns a short sentence for the status line; errors are raised (StoreError and
# friends) and shown by the app.


def _outcome_text(result: CurateResult) -> str:
    o = result.outcomes[0]
    text = o.status + (f" {o.bullet_id}" if o.bullet_id else "")
    if o.reason and o.status not in ("applied", "added"):
        text += f": {o.reason}"
    for bid, old, new in result.maturity_changes:
        text += f"; {bid} {old} -> {new}"
    for old, new in result.inversions:
        text += f"; {old} inverted into {new}"
    return text


def _curate_one(store: PlaybookStore, delta: dict[str, Any]) -> CurateResult:
    result = curate(store, [delta], actor=HUMAN)
    o = result.outcomes[0]
    if o.status == "rejected-invalid":
        from ..store import StoreError

        raise StoreError(o.reason or "invalid change")
    return result


def mark(
    source: Source, bullet_id: str, kind: str, reason: str | None = None, context: str | None = None
) -> str:
    delta: dict[str, Any] = {"type": kind, "bullet_id": bullet_id}
    if context:
        delta["context"] = context
    if kind == "harmful":
        delta["reason"] = reason or "other"
    with source.open() as store:
        return f"Marked {kind}: " + _outcome_text(_curate_one(store, delta))


def pin(source: Source, bullet_id: str, reason: str) -> str:
    with source.open() as store:
        store.pin(bullet_id, reason, actor=HUMAN)
    return f"Pinned {bullet_id}"


def unpin(source: Source, bullet_id: str) -> str:
    with source.open() as store:
        store.unpin(bullet_id, actor=HUMAN)
    return f"Unpinned {bullet_id}"


def block(source: Source, pattern: str, reason: str) -> str:
    with source.open() as store:
        pid = store.block(pattern, reason, actor=HUMAN)
    return f"Blocked pattern {pid}"


def unblock(source: Source, block_id: str) -> str:
    with source.open() as store:
        store.unblock(block_id, actor=HUMAN)
    return f"Unblocked {block_id}"


def deprecate(source: Source, bullet_id: str, reason: str) -> str:
    with source.open() as store:
        result = _curate_one(store, {"type": "deprecate", "bullet_id": bullet_id, "reason": reason})
    return "Deprecated: " + _outcome_text(result)


def restore_target(helpful: float, harmful: float, policy: Any) -> str:
    """The rung a restored bullet returns to: what its evidence earns now, at least
    candidate. (If the evidence still condemns it, the next maturity pass deprecates it
    again: a restore is a second chance, not an override; pin it to make it stick.)"""
    earned = scoring.earned_rung(helpful, harmful, policy)
    return str(Maturity.CANDIDATE if earned is Maturity.DEPRECATED else earned)


def restore(source: Source, bullet_id: str, reason: str) -> str:
    """Undo a deprecation: maturity back to the earned rung, logged as a human decision."""
    from ..store import StoreError

    with source.open() as store:
        bullet = store.require_bullet(bullet_id)
        if bullet.state == "retired":
            raise StoreError(f"{bullet_id} is retired (superseded); it cannot be restored")
        if bullet.maturity != "deprecated":
            raise StoreError(f"{bullet_id} is {bullet.maturity}, not deprecated")
        score = store.score(bullet_id)
        target = restore_target(score.helpful, score.harmful, store.policy)
        batch = new_batch_id()
        with store.transaction():
            store.set_maturity(bullet_id, target, batch_id=batch)
            store.log_decision(
                batch,
                HUMAN,
                "restore",
                bullet_id,
                "applied",
                reason or None,
                {"from": "deprecated", "to": target},
            )
    return f"Restored {bullet_id} to {target}"


def approve(source: Source, proposal_id: str, edited: str | None = None) -> str:
    with source.open() as store:
        result = queue.approve(store, proposal_id, actor=HUMAN, edited=edited)
    verb = "Edited and approved" if edited is not None else "Approved"
    return f"{verb} {proposal_id}: " + _outcome_text(result)


def reject(source: Source, proposal_id: str, reason: str, block: bool = False) -> str:
    with source.open() as store:
        block_id = queue.reject(store, proposal_id, reason, block=block, actor=HUMAN)
    if block_id:
        return f"Rejected {proposal_id} and blocked its pattern ({block_id})"
    return f"Rejected {proposal_id}"


def keep_both(source: Source, conflict_id: int) -> str:
    with source.open() as store:
        store.resolve_conflict(conflict_id, "kept both", actor=HUMAN)
    return f"Conflict {conflict_id}: kept both"


def deprecate_in_conflict(source: Source, conflict_id: int, bullet_id: str, reason: str) -> str:
    with source.open() as store, store.transaction():
        result = _curate_one(store, {"type": "deprecate", "bullet_id": bullet_id, "reason": reason})
        store.resolve_conflict(conflict_id, f"deprecated {bullet_id}", actor=HUMAN)
    return f"Conflict {conflict_id}: " + _outcome_text(result)


def merge_conflict(source: Source, conflict_id: int, ids: list[str], content: str) -> str:
    with source.open() as store, store.transaction():
        result = _curate_one(
            store,
            {
                "type": "merge",
                "bullet_ids": ids,
                "content": content,
                "reason": f"merged to resolve conflict {conflict_id}",
            },
        )
        new = result.outcomes[0].bullet_id
        store.resolve_conflict(conflict_id, f"merged into {new}", actor=HUMAN)
    return f"Conflict {conflict_id}: merged into {new}"


def format_age(then: datetime, now: datetime) -> str:
    """'3d ago', '5h ago', '2mo ago': compact, for tables."""
    seconds = (now - then).total_seconds()
    if seconds < 0:
        return "soon"
    minutes = seconds / 60
    if minutes < 1:
        return "now"
    if minutes < 60:
        return f"{int(minutes)}m ago"
    hours = minutes / 60
    if hours < 24:
        return f"{int(hours)}h ago"
    days = hours / 24
    if days < 60:
        return f"{int(days)}d ago"
    months = days / 30.44
    if months < 24:
        return f"{math.floor(months)}mo ago"
    return f"{days / 365.25:.1f}y ago"
