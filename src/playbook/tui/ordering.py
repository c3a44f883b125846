"""The order the bullets table shows: the filter's `is:` qualifiers, recall's ranking of its
words, or a column sort. Pure functions of the rows (a worker thread computes them), with a
numpy index for large playbooks.

The ranking is recall's (SPEC §6): keyword relevance from `review.filter_relevance` (the
postings from `review.filter_postings` on the numpy path) times the row's effective score,
through `scoring.final_score`; nothing here re-implements it.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from dataclasses import dataclass, replace
from itertools import repeat
from operator import attrgetter
from typing import TYPE_CHECKING, Any

from .. import review
from ..core.policy import DEFAULT_POLICY, Policy
from ..core.scoring import final_score
from ..store.views import BulletRow
from .filterspec import FilterSpec, parse_filter, row_passes

if TYPE_CHECKING:
    from .data import Source

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
NUMPY_FROM = 2000  # rows from which `view_order` sorts by score in numpy (`by_score`)
_ID, _EFFECTIVE = attrgetter("id"), attrgetter("effective")
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
    policy: Policy = DEFAULT_POLICY,
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
            return index.ranked(relevance, flags, policy)
        fast = index.sorted_by(column or "effective", view.descending, flags)
        if fast is not None:
            return fast
    if column == "effective" and not flags and len(rows) >= NUMPY_FROM:
        return by_score(rows, descending=view.descending)
    if view.ranked and relevance is not None:
        found = (rows.get(bid) for bid in relevance)
        chosen = [r for r in found if r is not None and row_passes(r, flags)]
    elif flags:
        chosen = [r for r in rows.values() if row_passes(r, flags)]
    else:
        chosen = [r for r in rows.values() if r.state != "retired"]
    if column is None and relevance is not None:
        keyed = [(-final_score(relevance[r.id], r.effective, policy), r.id) for r in chosen]
        keyed.sort()
        return [bid for _, bid in keyed]
    chosen.sort(key=lambda r: r.id)
    chosen.sort(key=SORT_KEYS[column or "effective"], reverse=view.descending)
    return [r.id for r in chosen]


def by_score(rows: dict[str, BulletRow], *, descending: bool = True) -> list[str]:
    """The live rows' ids by effective score (ties by id, ascending), as the Python sort in
    `view_order` gives them, in numpy, the ids ranked by `_id_ranks` (a step in time
    orders 100k rows before its first frame: 0.17 s in Python)."""
    import numpy as np  # lazy: numpy: the workbench's first frame

    values = list(rows.values())
    everyone = np.fromiter(map(_ID, values), object, len(values))
    rank = _id_ranks(everyone)  # every row's id: a moment back the retired are live
    live = np.fromiter((r.state != "retired" for r in values), bool, len(values))
    ids, rank = everyone[live], rank[live]
    n = len(ids)
    score = np.fromiter(map(_EFFECTIVE, values), np.float64, len(values))[live]
    at = np.full(int(rank.max()) + 1 if n else 0, -1, np.int64)
    at[rank] = np.arange(n)
    by_id = at[at >= 0]  # the rows in id order (each id ranks once)
    key = (-score if descending else score)[by_id]
    ordered: list[str] = ids[by_id[np.argsort(key, kind="stable")]].tolist()
    return ordered


class _IdRanks:
    """Each id's place among every id ranked so far (code point order, as Python sorts
    text), kept between calls: the rows of another moment are the same bullets, or fewer,
    so ordering them looks their ranks up instead of sorting 100k ids again. Any thread."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._ranks: dict[str, int] = {}

    def __call__(self, ids: Any) -> Any:
        import numpy as np  # lazy: numpy: the workbench's first frame

        try:  # stops at the first id not ranked yet
            return np.fromiter(map(self._ranks.__getitem__, ids), np.int64, len(ids))
        except KeyError:  # rank them all again, with the new ones
            with self._lock:
                everyone = sorted({*self._ranks, *ids})
                ranks = self._ranks = dict(zip(everyone, range(len(everyone)), strict=True))
            return np.fromiter(map(ranks.__getitem__, ids), np.int64, len(ids))


_id_ranks = _IdRanks()


class RowIndex:
    """Column arrays over one snapshot's rows, so that ranking or sorting 100k rows takes
    milliseconds instead of a Python sort's tenths of a second. Built in a worker thread,
    immutable afterwards; it answers only for the `rows` dict it was built from."""

    def __init__(self, rows: dict[str, BulletRow]) -> None:
        import numpy as np  # lazy: numpy: the workbench's first frame

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
        """Each row's dense rank by `keys`: equal keys share a rank, as in a sort. Text is
        ranked by numpy (code point order, as Python's; 0.16 s in a dict at 100k ids, most
        of building the index), anything else by a sort."""
        np = self.np
        if all(type(k) is str and not k.endswith("\0") for k in keys):
            return np.unique(np.array(keys, dtype=str), return_inverse=True)[1].astype(np.int64)
        ranks = {k: i for i, k in enumerate(sorted(set(keys)))}
        return np.fromiter((ranks[k] for k in keys), np.int64, len(keys))

    def _ids_at(self, positions: Any) -> list[str]:
        """The ids of the rows at these positions, in their order (an object array of str,
        which numpy's `tolist` does not type)."""
        ids: list[str] = self.id_array[positions].tolist()
        return ids

    def mask(self, flags: frozenset[str]) -> Any:
        if not flags:
            return self.live
        mask = self._masks.get(flags)
        if mask is None:
            values = self.values
            mask = self.np.fromiter((row_passes(r, flags) for r in values), bool, len(values))
            self._masks[flags] = mask
        return mask

    def ranked(
        self, relevance: dict[str, float], flags: frozenset[str], policy: Policy
    ) -> list[str]:
        np = self.np
        n = len(relevance)
        idx = np.fromiter(map(self.pos.get, relevance, repeat(-1)), np.int64, n)
        points = np.fromiter(relevance.values(), np.float64, n)
        found = idx >= 0
        idx, points = idx[found], points[found]
        keep = self.mask(flags)[idx]
        idx, points = idx[keep], points[keep]
        score = -final_score(points, self.effective[idx], policy)
        order = np.lexsort((self.id_rank[idx], score))
        return self._ids_at(idx[order])

    def rank_hits(
        self, hits: list[tuple[Any, float]], flags: frozenset[str], policy: Policy
    ) -> tuple[dict[str, float], list[str]]:
        """Relevance by id and the ranked order, from `review.filter_postings` (bullet seqs
        and their points), all in numpy."""
        np = self.np
        points = np.zeros(len(self.ids), np.float64)
        for seqs, value in hits:
            seqs = seqs[seqs < len(self.position)]
            at = self.position[seqs]
            points[at[at >= 0]] += value
        minimum = policy.min_relevance
        matched = np.flatnonzero(points >= minimum) if hits else np.empty(0, np.intp)
        relevance = dict(
            zip(self.id_array[matched].tolist(), points[matched].tolist(), strict=True)
        )
        idx = matched[self.mask(flags)[matched]]
        score = -final_score(points[idx], self.effective[idx], policy)
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
        return self._ids_at(idx[order])


def rank_view(
    source: Source,
    text: str,
    rows: dict[str, BulletRow],
    view: View,
    policy: Policy,
    index: RowIndex | None = None,
) -> tuple[View, list[str]]:
    """The view for filter `text` and its order: recall relevance times score.

    With an index (large playbooks) the postings go straight into numpy by bullet seq and
    no per-hit Python runs; without one, through `review.filter_relevance` and `view_order`.
    """
    spec = parse_filter(text)
    with source.open(migrate=False) as store:
        if index is None or index.rows is not rows or not spec.words.strip():
            relevance = review.filter_relevance(store, spec.words)
            view = replace(view, spec=spec, relevance=relevance)
            return view, view_order(rows, view, policy, index)
        hits = review.filter_postings(store, spec.words)
    relevance_by_id, order = index.rank_hits(hits, spec.flags, policy)
    return replace(view, spec=spec, relevance=relevance_by_id), order
