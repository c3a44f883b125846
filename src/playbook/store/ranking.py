"""What recall needs of every recallable bullet, kept in memory between queries.

One scan of `bullets ⋈ evidence` gives, per non-retired bullet, its list (rule,
anti-pattern, deprecated), maturity multiplier, scope and evidence-cache row, as numpy
columns. A query then scores its candidates in a few vector operations. The table is
reloaded when the database changes (another connection's commit moves `PRAGMA
data_version`; this connection's own writes move `total_changes`), so it is never stale.

Keyword points come from the token index: exact postings for each query token, postings
of the vocabulary tokens that contain it, and tag postings.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import numpy as np

    from ..policy import Policy
    from .store import PlaybookStore

LISTS = ("bullets", "anti_patterns", "deprecated_warnings")


@dataclass(frozen=True)
class RankTable:
    key: tuple[Any, ...]
    ids: list[str]
    pos: dict[str, int]
    kind: np.ndarray  # int8: index into LISTS
    maturity: list[str]
    multiplier: np.ndarray  # by maturity, from the policy
    half_life: np.ndarray
    ref: np.ndarray  # evidence reference time (epoch days); nan without events
    helpful: np.ndarray  # decayed sums at `ref`
    harmful: np.ndarray
    exact: np.ndarray  # bool; False: lineage or a cache row that does not fit
    scoped: list[tuple[int, str, str | None]]  # (position, scope, scope_key), non-global only
    content_hash: list[str]

    def __len__(self) -> int:
        return len(self.ids)


_COLUMNS = (
    "SELECT b.id, b.type, b.maturity, b.scope, b.scope_key, b.content_hash, "
    "b.half_life_days, e.half_life, e.ref, e.helpful, e.harmful "
    "FROM bullets b LEFT JOIN evidence e ON e.bullet_id = b.id WHERE b.state != 'retired'"
)


def rank_table(store: PlaybookStore, ids: Iterable[str] | None = None) -> RankTable:
    """The recallable bullets of `store` (or of `ids` only), cached until the db changes.

    A process's first query loads only its candidates (a one-shot `playbook recall` never
    pays for the whole table); from the second query on, the whole table is loaded once
    and kept, so repeated queries touch nothing but their postings.
    """
    store.sync_evidence()
    key = (store.data_version(), store.conn.total_changes, store.policy_fingerprint())
    cached: RankTable | None = getattr(store, "_rank_table", None)
    if cached is not None and cached.key == key:
        return cached
    if ids is not None and not getattr(store, "_rank_table_wanted", False):
        store._rank_table_wanted = True  # type: ignore[attr-defined]
        rows = store.conn.execute(
            _COLUMNS + " AND b.id IN (SELECT value FROM json_each(?))", (json.dumps(list(ids)),)
        ).fetchall()
        return _build(store, key, rows)
    table = _build(store, key, store.conn.execute(_COLUMNS).fetchall())
    store._rank_table = table  # type: ignore[attr-defined]
    return table


def _build(store: PlaybookStore, key: tuple[Any, ...], rows: list[tuple[Any, ...]]) -> RankTable:
    import numpy as np

    policy = store.policy
    lineage = {
        r[0] for r in store.conn.execute("SELECT DISTINCT src FROM edges WHERE kind = 'supersedes'")
    }
    n = len(rows)
    cols = list(zip(*rows, strict=True)) if rows else [()] * 11
    ids = list(cols[0])
    maturity = list(cols[2])
    mult = {m: policy.multiplier(m) for m in ("candidate", "established", "proven", "deprecated")}
    kinds = (
        2 if m == "deprecated" else 1 if t == "anti-pattern" else 0
        for t, m in zip(cols[1], maturity, strict=True)
    )
    default_hl = policy.half_life_days
    half_life = np.array([v or default_hl for v in cols[6]], dtype=np.float64)
    nan = float("nan")
    cache_hl = np.array([nan if v is None else v for v in cols[7]], dtype=np.float64)
    return RankTable(
        key=key,
        ids=ids,
        pos={bid: i for i, bid in enumerate(ids)},
        kind=np.fromiter(kinds, dtype=np.int8, count=n),
        maturity=maturity,
        multiplier=np.array([mult[m] for m in maturity], dtype=np.float64),
        half_life=half_life,
        ref=np.array([nan if v is None else v for v in cols[8]], dtype=np.float64),
        helpful=np.array([v or 0.0 for v in cols[9]], dtype=np.float64),
        harmful=np.array([v or 0.0 for v in cols[10]], dtype=np.float64),
        exact=(np.isnan(cache_hl) | (cache_hl == half_life))
        & np.fromiter((bid not in lineage for bid in ids), dtype=bool, count=n),
        scoped=[
            (i, s, k)
            for i, (s, k) in enumerate(zip(cols[3], cols[4], strict=True))
            if s != "global"
        ],
        content_hash=list(cols[5]),
    )


def _token_hits(store: PlaybookStore, q: str, policy: Policy) -> list[tuple[Iterable[str], float]]:
    """The bullets one query token scores on, with the points each earns."""
    conn = store.conn
    exact = {
        r[0] for r in conn.execute("SELECT bullet_id FROM bullet_tokens WHERE token = ?", (q,))
    }
    # The matching vocabulary first, then its postings: written as a join, SQLite scans every
    # posting and looks each one up in vocab (30 ms per query token at 10k bullets, not 0.5).
    partial = {
        r[0]
        for r in conn.execute(
            "SELECT bullet_id FROM bullet_tokens WHERE token IN "
            "(SELECT token FROM vocab WHERE instr(token, ?) > 0 AND token != ?)",
            (q, q),
        )
    }
    tags = [r[0] for r in conn.execute("SELECT bullet_id FROM bullet_tags WHERE tag = ?", (q,))]
    return [
        (exact, policy.exact_points),
        (partial - exact, policy.substring_points),
        (tags, policy.tag_points),
    ]


def keyword_points(store: PlaybookStore, tokens: list[str], policy: Policy) -> dict[str, float]:
    """The same points by bullet id, for any bullet (retired ones too): the as-of path."""
    points: dict[str, float] = {}
    for q in tokens:
        for ids, value in _token_hits(store, q, policy):
            for bid in ids:
                points[bid] = points.get(bid, 0.0) + value
    return points
