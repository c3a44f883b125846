"""Replay the feedback log in time order: every candidate's view just before every mark.

The log is read a page at a time (`store.log`, `log_columns`), and what the evaluation
keeps of each mark is columns: whether it was helpful, whether it is held out, every
candidate's score of its bullet just before it (`Engine`), and, for a held-out mark with a
context, whether each candidate's recall would have had the bullet in its top k (`TopK`).
Memory grows with the log only by those columns (about 130 bytes a mark at 15 candidates);
everything else is bounded by the playbook.

Everything that changes the view is applied once its time is before the view's moment: a
bullet's validity, a maturity change, a lineage edge and every mark already read, in the
order (time, what, id), the marks of one moment after that moment's views are read.
"""

from __future__ import annotations

from bisect import bisect_left, bisect_right
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Protocol

import numpy as np

from .batch import AFTER, BEFORE, Batch, View, each_row
from .batch import MATURITY as BATCH_MATURITY
from .batch import VALID as BATCH_VALID
from .engine import REBASE_HALF_LIVES, Engine
from .hits import batch_hits
from .keywords import KeywordIndex
from .log_columns import EventPage, page_columns
from .topk import TopK

if TYPE_CHECKING:
    from collections.abc import Iterator

    from ..core.policy import Policy
    from ..store.log_replay import Edge, LogBullet, MaturityEntry

PAGE = 20_000  # marks read and replayed at a time
BATCH = 20_000  # marks of a batch (`batch.py`); held out (top-k asked): fewer, so few change
HELD_BATCH = 16_000
# What changes the view, in the order applied when several share a timestamp.
VALID_FROM, MATURITY, EDGE, EVENT, VALID_TO = range(5)

Progress = Callable[[int, int], None]


class Log(Protocol):
    """What the replay reads (`store.log`, `store/log_pages.py`)."""

    def heads(self) -> tuple[list[LogBullet], list[MaturityEntry], list[Edge]]: ...

    def event_pages(self, size: int) -> Iterator[tuple[tuple[Any, ...], ...]]: ...

    def vocab(self) -> list[str]: ...

    def postings(self, table: str) -> Iterator[list[tuple[str, int]]]: ...


@dataclass(frozen=True)
class Replay:
    """Per mark (in replay order) and per candidate: the view just before the mark."""

    y: np.ndarray  # int8: 1 helpful, 0 harmful
    heldout: np.ndarray  # bool: recorded at or after the split
    scores: np.ndarray  # (marks, candidates), a column per candidate: score just before
    ranked: np.ndarray  # bool: held out, with a context that has query words
    hits: np.ndarray  # (ranked marks, candidates) bool: in the candidate's top-k recall
    session: np.ndarray  # per held-out mark, its session: an index into the sorted keys
    sessions: int  # distinct sessions among the held-out marks
    first: str | None  # recording time of the first and last mark
    last: str | None

    def __len__(self) -> int:
        return len(self.y)


def session_key(ref: str | None, batch: str | None, key: int) -> str:
    """The unit the bootstrap resamples: the mark's session, else its curate batch, else
    the mark alone."""
    if ref:
        return f"s:{ref}"
    return f"b:{batch}" if batch else f"e:{key}"


class _Out:
    """The columns kept of every mark, filled page by page."""

    def __init__(self, size: int, c: int) -> None:
        self.n = 0
        self.y = np.zeros(size, dtype=np.int8)
        self.held = np.zeros(size, dtype=bool)
        self.ranked = np.zeros(size, dtype=bool)
        self.scores = np.zeros((size, c), order="F")
        self.hits: list[np.ndarray] = []
        self.hit_page = np.zeros((0, c), dtype=bool)
        self.n_hits = 0
        self.keys: dict[str, int] = {}  # session key -> order of first appearance
        self.session: list[np.ndarray] = []

    def hit(self, row: np.ndarray) -> None:
        if self.n_hits == len(self.hit_page):
            self.hits.append(self.hit_page)
            self.hit_page = np.zeros((PAGE, row.shape[0]), dtype=bool)
            self.n_hits = 0
        self.hit_page[self.n_hits] = row
        self.n_hits += 1

    def sessions(self, page: EventPage, first: int) -> None:
        keys = self.keys
        found = [
            keys.setdefault(session_key(r, b, k), len(keys))
            for r, b, k in zip(
                page.session_ref[first:], page.batch_id[first:], page.ids[first:].tolist(),
                strict=True,
            )
        ]  # fmt: skip
        self.session.append(np.array(found, dtype=np.intp))

    def done(self, first: str | None, last: str | None) -> Replay:
        n = self.n
        hits = np.concatenate([*self.hits, self.hit_page[: self.n_hits]])
        names = sorted(self.keys)  # the index of each key among the sorted distinct keys
        where = np.empty(len(names), dtype=np.intp)
        where[[self.keys[k] for k in names]] = np.arange(len(names))
        found = np.concatenate(self.session) if self.session else np.zeros(0, dtype=np.intp)
        return Replay(self.y[:n], self.held[:n], self.scores[:n], self.ranked[:n], hits,
                      where[found], len(names), first, last)  # fmt: skip


def _applies(bullets: Sequence[LogBullet], maturity: Sequence[MaturityEntry],
             edges: Sequence[Edge]) -> list[tuple[str, int, int, Any]]:  # fmt: skip
    """Everything but the marks that changes the view, in the order it is applied."""
    out: list[tuple[str, int, int, Any]] = []
    for b in bullets:
        out.append((b.valid_from, VALID_FROM, b.seq, b.id))
        if b.valid_to:
            out.append((b.valid_to, VALID_TO, b.seq, b.id))
    out.extend((m.at, MATURITY, m.id, m) for m in maturity)
    out.extend((e.at, EDGE, e.id, e) for e in edges)
    out.sort(key=lambda a: a[:3])
    return out


def _apply(eng: Engine, what: int, item: Any) -> None:
    if what in (VALID_FROM, VALID_TO):
        eng.valid[eng.col[item]] = what == VALID_FROM
    elif what == MATURITY:
        eng.set_maturity(eng.col[item.bullet_id], eng.code[item.maturity])
    else:
        eng.supersede(item.src, item.dst)


def _fold(eng: Engine, p: EventPage, start: int, end: int) -> None:
    for b, helpful, at, recorded, key, w in zip(
        p.cols[start:end].tolist(), p.helpful[start:end].tolist(), p.at[start:end].tolist(),
        p.recorded[start:end].tolist(), p.ids[start:end].tolist(), p.weight[start:end].tolist(),
        strict=True,
    ):  # fmt: skip
        eng.fold(b, helpful, at, recorded, key, w)


class _Walk:
    """The replay's walk over moments: ordinary ones collected into a `Batch` (array
    operations), the rest (a lineage edge, a mark dated after its recording or pending,
    a new reference time) one at a time with the engine."""

    def __init__(self, eng: Engine, top: TopK, applies: list[tuple[str, int, int, Any]],
                 out: _Out, split_at: str) -> None:  # fmt: skip
        self.eng, self.top, self.applies, self.out = eng, top, applies, out
        self.split_at = split_at
        self.ai = 0
        self.waiting: list[tuple[EventPage, int, int]] = []  # read, not folded: one moment
        self.moment = -1  # microseconds of the moment being read
        self.one_by_one = False  # the moment being read is read with the engine
        self.batch: Batch | None = None
        self.future: tuple[EventPage | None, np.ndarray] = (None, np.zeros(0, dtype=np.intp))

    def moment_of(self, p: EventPage, base: int, s: int, e: int) -> None:
        """The marks s:e of page `p` (rows from `base`), of one moment."""
        eng = self.eng
        t = p.recorded_at[s]
        if int(p.recorded_us[s]) != self.moment:
            self.moment = int(p.recorded_us[s])
            self._transition(t, float(p.now[s]))
        elif not self.one_by_one and self.batch is None:  # a moment begun on the last page
            self.batch = Batch(now=[eng.now])
        held = t >= self.split_at
        if self.one_by_one:
            self._read(p, base, s, e, held)
        else:
            batch = self.batch
            assert batch is not None
            batch.reads.append((len(batch) - 1, p, s, e, base, held))
            batch.marks += e - s
            if batch.marks >= (HELD_BATCH if held else BATCH):
                self.flush()
        self.waiting.append((p, s, e))

    def _transition(self, t: str, now: float) -> None:
        """Collect what comes before the moment `t`; apply it, or hand it to the batch."""
        eng, applies = self.eng, self.applies
        before: list[tuple[str, int, int, Any]] = []
        after: list[tuple[str, int, int, Any]] = []
        prev = (self.waiting[0][0].recorded_at[self.waiting[0][1]], EVENT) if self.waiting \
            else None  # fmt: skip
        while self.ai < len(applies) and applies[self.ai][0] < t:
            a = applies[self.ai]
            (before if prev is not None and a[:2] < prev else after).append(a)
            self.ai += 1
        folds, self.waiting = self.waiting, []
        if (
            eng.n_pending
            or any(a[1] == EDGE for a in (*before, *after))
            or any(bool((w.at[ws:we] > w.recorded[ws:we]).any()) for w, ws, we in folds)
            or (now - eng.t0) / eng.min_hl >= REBASE_HALF_LIVES
        ):
            self.flush()
            for a in before:
                _apply(eng, a[1], a[3])
            for w, ws, we in folds:
                _fold(eng, w, ws, we)
            for a in after:
                _apply(eng, a[1], a[3])
            eng.at(now)
            self.one_by_one = True
            return
        self.one_by_one = False
        if self.batch is None:
            self.batch = Batch()
        batch = self.batch
        m = len(batch)
        batch.now.append(now)
        batch.folds.extend((m, w, ws, we) for w, ws, we in folds)
        for phase, group in ((BEFORE, before), (AFTER, after)):
            for _, what, _, item in group:
                if what == MATURITY:
                    batch.applies.append((m, phase, BATCH_MATURITY, eng.col[item.bullet_id],
                                          eng.code[item.maturity]))  # fmt: skip
                else:
                    batch.applies.append((m, phase, BATCH_VALID, eng.col[item],
                                          int(what == VALID_FROM)))  # fmt: skip

    def run(self, p: EventPage, base: int, starts: np.ndarray, ends: np.ndarray, i: int) -> int:
        """After the moment `i` of page `p` (its moments' rows `starts`, `ends`), the ordinary
        moments that follow it taken into the batch at once, as `moment_of` would one at a
        time: up to the first that an apply, a mark dated after its recording, a new
        reference time, the split or the batch's end concerns. The next moment not taken."""
        batch, eng, nxt = self.batch, self.eng, i + 1
        if self.one_by_one or batch is None or nxt >= len(starts) or len(self.waiting) != 1:
            return nxt
        j = len(starts)  # moments nxt:j taken
        if self.ai < len(self.applies):  # (applied before the first moment after its time)
            row = bisect_right(p.recorded_at, self.applies[self.ai][0])  # rows not after it
            j = min(j, int(np.searchsorted(starts, row)))
        if self.future[0] is not p:  # the page's marks dated after their recording
            self.future = (p, np.flatnonzero(p.at > p.recorded))
        future = self.future[1]
        at = int(np.searchsorted(future, starts[i]))
        if at < len(future):  # (folded at the moment after its own)
            j = min(j, int(np.searchsorted(ends, future[at], side="right")) + 1)
        now = p.now[starts[nxt:j]]
        late = np.flatnonzero((now - eng.t0) / eng.min_hl >= REBASE_HALF_LIVES)
        if len(late):
            j = nxt + int(late[0])
        held = bisect_left(p.recorded_at, self.split_at)  # rows from here are held out
        first_held = starts[nxt] >= held
        if not first_held:
            j = min(j, int(np.searchsorted(starts, held)))
        if j <= nxt:
            return nxt
        sizes = ends[nxt:j] - starts[nxt:j]
        full = np.flatnonzero(
            batch.marks + np.cumsum(sizes) >= (HELD_BATCH if first_held else BATCH)
        )
        flush = len(full) > 0
        if flush:
            j = nxt + int(full[0]) + 1
        m0 = len(batch)
        s, e = int(starts[nxt]), int(ends[j - 1])
        moment = np.repeat(np.arange(m0, m0 + j - nxt), sizes[: j - nxt])  # per row s:e
        batch.now.extend(p.now[starts[nxt:j]].tolist())
        batch.folds.extend((m0, w, ws, we) for w, ws, we in self.waiting)  # moment i's marks
        if j - nxt > 1:  # the others': each folded at the moment after its own
            batch.folds.append((moment[: int(starts[j - 1]) - s] + 1, p, s, int(starts[j - 1])))
        batch.reads.append((moment, p, s, e, base, first_held))
        batch.marks += e - s
        self.waiting = [(p, int(starts[j - 1]), e)]
        self.moment = int(p.recorded_us[starts[j - 1]])
        if flush:
            self.flush()
        return j

    def _read(self, p: EventPage, base: int, s: int, e: int, held: bool) -> None:
        """The marks s:e read with the engine, as it stands at their moment."""
        eng, out, top = self.eng, self.out, self.top
        for i in range(s, e):
            b = int(p.cols[i])
            out.scores[base + i] = eng.effective(b)
            context = p.context[i]
            if held and context:
                q = top.query(context)
                if q is not None:
                    out.ranked[base + i] = True
                    out.hit(top.hit(b, q))

    def flush(self) -> None:
        """Run the batch collected so far: every score it reads, every top-k."""
        batch, self.batch = self.batch, None
        if batch is None or not len(batch):
            return
        eng, out, top = self.eng, self.out, self.top
        view = View(eng, batch)
        reads = [(m, p, s, e, base) for m, p, s, e, base, _ in batch.reads]
        if reads:
            cols = np.concatenate([p.cols[s:e] for _, p, s, e, _ in reads])
            moment = np.concatenate([each_row(m, e - s) for m, _, s, e, _ in reads])
            rows = np.concatenate([np.arange(base + s, base + e) for _, _, s, e, base in reads])
            got = view.scaled_at(cols, view.order(moment)) * view.factors(cols, moment) + 0.0
            out.scores[rows] = got
        items: list[tuple[int, str, int]] = []  # the held-out marks with context words
        for m, p, s, e, base, held in batch.reads:
            if not held:
                continue
            at = each_row(m, e - s).tolist()
            for i in range(s, e):
                context = p.context[i]
                if context and top.slots(context) is not None:
                    out.ranked[base + i] = True
                    items.append((int(p.cols[i]), context, at[i - s]))
        for row in batch_hits(top, view, items):
            out.hit(row)
        view.commit()


def replay(
    log: Log,
    policies: Sequence[Policy],
    *,
    split_at: str,
    k: int,
    size: int,
    page: int | None = None,
    progress: Progress | None = None,
) -> Replay:
    """Walk the log once; for each mark, every candidate's score of its bullet just before
    it, and for held-out marks with a context, whether each candidate's recall would have
    put the bullet in its top `k`. `size`: at least the number of marks (`event_count`)."""
    bullets, maturity, edges = log.heads()
    col = {b.id: i for i, b in enumerate(bullets)}
    eng = Engine(bullets, policies, {col[e.dst] for e in edges if e.dst in col})
    index = KeywordIndex(log.vocab(), log.postings("bullet_tokens"), log.postings("bullet_tags"))
    top = TopK(eng, index, k)
    out = _Out(size, len(policies))
    walk = _Walk(eng, top, _applies(bullets, maturity, edges), out, split_at)
    step = max(1, size // 100)
    first: str | None = None
    last: str | None = None
    for raw in log.event_pages(page or PAGE):
        p = page_columns(raw, eng.col)
        if not len(p):
            continue
        if first is None:
            first = p.recorded_at[0]
            eng.t0 = float(p.recorded[0])
        base = out.n
        out.y[base : base + len(p)] = p.helpful
        bounds = np.flatnonzero(np.diff(p.recorded_us)) + 1
        starts = np.r_[0, bounds]
        ends = np.r_[bounds, len(p)]
        i = 0
        while i < len(starts):
            walk.moment_of(p, base, int(starts[i]), int(ends[i]))
            i = walk.run(p, base, starts, ends, i)
        if progress is not None:
            for e in ends[(base + ends) // step != (base + starts) // step].tolist():
                progress(base + e, size)
        walk.flush()  # (a page's columns are let go once no batch holds them)
        held_from = bisect_left(p.recorded_at, split_at)
        out.held[base + held_from : base + len(p)] = True
        if held_from < len(p):
            out.sessions(p, held_from)
        out.n += len(p)
        last = p.recorded_at[-1]
    walk.flush()
    if progress is not None:
        progress(out.n, out.n)
    return out.done(first, last)
