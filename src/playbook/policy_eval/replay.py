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

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Protocol

import numpy as np

from .engine import Engine
from .keywords import KeywordIndex
from .log_columns import EventPage, page_columns
from .topk import TopK

if TYPE_CHECKING:
    from collections.abc import Iterator

    from ..core.policy import Policy
    from ..store.log_replay import Edge, LogBullet, MaturityEntry

PAGE = 20_000  # marks read and replayed at a time
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
    applies = _applies(bullets, maturity, edges)
    out = _Out(size, len(policies))
    ai, n_ap = 0, len(applies)
    step = max(1, size // 100)
    first: str | None = None
    last: str | None = None
    waiting: list[tuple[EventPage, int, int]] = []  # marks read, not yet folded: one moment
    moment = -1  # microseconds of the moment being read
    for raw in log.event_pages(page or PAGE):
        p = page_columns(raw, eng.col)
        if not len(p):
            continue
        if first is None:
            first = p.recorded_at[0]
            eng.t0 = float(p.recorded[0])
        base = out.n
        out.y[base : base + len(p)] = p.helpful
        held_from = len(p)
        bounds = np.flatnonzero(np.diff(p.recorded_us)) + 1
        starts = [0, *bounds.tolist()]
        ends = [*bounds.tolist(), len(p)]
        for s, e in zip(starts, ends, strict=True):
            t = p.recorded_at[s]
            if int(p.recorded_us[s]) != moment:  # a new moment: apply what came before it
                moment = int(p.recorded_us[s])
                if waiting:
                    before = (waiting[0][0].recorded_at[waiting[0][1]], EVENT)
                    while ai < n_ap and applies[ai][:2] < before:
                        _apply(eng, applies[ai][1], applies[ai][3])
                        ai += 1
                    for w, ws, we in waiting:
                        _fold(eng, w, ws, we)
                    waiting = []
                while ai < n_ap and applies[ai][0] < t:
                    _apply(eng, applies[ai][1], applies[ai][3])
                    ai += 1
                eng.at(float(p.now[s]))
            held = t >= split_at
            if held and held_from == len(p):
                held_from = s
            for i in range(s, e):
                b = int(p.cols[i])
                out.scores[base + i] = eng.effective(b)
                context = p.context[i]
                if held and context:
                    q = top.query(context)
                    if q is not None:
                        out.ranked[base + i] = True
                        out.hit(top.hit(b, q))
            waiting.append((p, s, e))
            if progress is not None and (base + e) // step != (base + s) // step:
                progress(base + e, size)
        out.held[base + held_from : base + len(p)] = True
        if held_from < len(p):
            out.sessions(p, held_from)
        out.n += len(p)
        last = p.recorded_at[-1]
    if progress is not None:
        progress(out.n, out.n)
    return out.done(first, last)
