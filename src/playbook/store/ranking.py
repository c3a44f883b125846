"""What recall needs of every recallable bullet, kept in memory between queries.

One scan of `bullets ⋈ evidence` gives, per non-retired bullet, its list (rule,
anti-pattern, deprecated), maturity multiplier, scope and evidence-cache row, as numpy
columns. A query then scores its candidates in a few vector operations. The table is
reloaded when the database changes (`store.change_token()` moves on any commit, by this
connection or another), so it is never stale. It is kept in `store.rank_cache`.

Keyword points come from the token index, whose postings hold each bullet's integer `seq`:
exact postings for each query token, postings of the vocabulary tokens that contain it, and
tag postings. Integers map straight to table positions, with no per-row Python work.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from ..terms import MATURITIES

if TYPE_CHECKING:
    import numpy as np

    from ..policy import Policy
    from .store import PlaybookStore

LISTS = ("bullets", "anti_patterns", "deprecated_warnings")


@dataclass(frozen=True)
class RankTable:
    key: tuple[Any, ...]
    ids: list[str]
    position: np.ndarray  # intp, indexed by bullet seq: its row here, or -1
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

    def positions(self, seqs: np.ndarray) -> np.ndarray:
        """Rows of the bullets with these seqs (those not in the table dropped)."""
        import numpy as np

        seqs = seqs[seqs < len(self.position)]
        at = self.position[seqs]
        return at[at >= 0] if at.size else np.empty(0, dtype=np.intp)


_COLUMNS = (
    "SELECT b.seq, b.id, b.type, b.maturity, b.scope, b.scope_key, b.content_hash, "
    "b.half_life_days, e.half_life, e.ref, e.helpful, e.harmful "
    "FROM bullets b LEFT JOIN evidence e ON e.bullet_id = b.id WHERE b.state != 'retired'"
)


# What a keyword-only first query reads of each candidate, shaped so that most values are
# small integers or NULL (cheap to bring into Python): its list (LISTS index), its maturity
# (MATURITIES index), its scope and key when not global, its half-life when set, whether
# its cached evidence cannot answer as it is (another half-life, or it inherits evidence
# through supersedes), and the cache's reference time and sums.
_FIRST = (
    "SELECT b.seq, "
    "CASE WHEN b.maturity = 'deprecated' THEN 2 WHEN b.type = 'anti-pattern' THEN 1 ELSE 0 END, "
    "CASE b.maturity WHEN 'candidate' THEN 0 WHEN 'established' THEN 1 WHEN 'proven' THEN 2 "
    "ELSE 3 END, "
    "CASE WHEN b.scope = 'global' THEN NULL ELSE b.scope END, "
    "CASE WHEN b.scope = 'global' THEN NULL ELSE b.scope_key END, "
    "b.half_life_days, "
    "CASE WHEN (e.half_life IS NOT NULL AND e.half_life != COALESCE(b.half_life_days, ?)) "
    "OR b.id IN (SELECT src FROM edges WHERE kind = 'supersedes') THEN 1 ELSE 0 END, "
    "e.ref, e.helpful, e.harmful "
    "FROM bullets b LEFT JOIN evidence e ON e.bullet_id = b.id WHERE b.state != 'retired'"
)


def rank_table(store: PlaybookStore, seqs: list[int] | None = None) -> RankTable:
    """The recallable bullets of `store` (or of `seqs` only), cached until the db changes.

    A process's first query loads only its candidates (a one-shot `playbook recall` never
    pays for the whole table); from the second query on, the whole table is loaded once
    and kept, so repeated queries touch nothing but their postings.
    """
    store.sync_evidence()
    key = (store.change_token(), store.policy_fingerprint())
    cache = store.rank_cache
    if cache.table is not None and cache.table.key == key:
        return cache.table
    if seqs is not None and not cache.wanted:
        cache.wanted = True
        d = store.sql.dialect
        rows = store.sql.all(_COLUMNS + f" AND {d.in_list('b.seq')}", (d.list_param(seqs),))
        return _build(store, key, rows)
    cache.table = _build(store, key, store.sql.all(_COLUMNS))
    return cache.table


def first_rows(store: PlaybookStore, seqs: list[int]) -> list[tuple[Any, ...]] | None:
    """The rank rows (`_FIRST`) of the recallable bullets among `seqs`, for a store's
    first query, which a one-shot command scores without numpy; None once the table is
    cached or wanted whole (the caller then uses `rank_table`). Counts as that first
    query."""
    store.sync_evidence()
    cache = store.rank_cache
    if cache.wanted or cache.table is not None:
        return None
    cache.wanted = True
    d = store.sql.dialect
    return store.sql.all(
        _FIRST + f" AND {d.in_list('b.seq')}", (store.policy.half_life_days, d.list_param(seqs))
    )


def ids_of(store: PlaybookStore, seqs: list[int]) -> dict[int, str]:
    """The ids of the bullets with these seqs."""
    d = store.sql.dialect
    rows = store.sql.all(
        f"SELECT seq, id FROM bullets WHERE {d.in_list('seq')}", (d.list_param(seqs),)
    )
    return {seq: bid for seq, bid in rows}


def inexact(store: PlaybookStore) -> tuple[set[str], bool]:
    """What makes a cached evidence row unusable as it is: the bullets that inherit
    evidence (supersedes sources), and whether the whole cache lags the log (a read-only
    store behind its writers)."""
    lineage = set(store.sql.column("SELECT DISTINCT src FROM edges WHERE kind = 'supersedes'"))
    return lineage, store.read_only and store.evidence_behind()


def _build(store: PlaybookStore, key: tuple[Any, ...], rows: list[tuple[Any, ...]]) -> RankTable:
    import numpy as np

    policy = store.policy
    lineage, lagging = inexact(store)
    n = len(rows)
    cols = list(zip(*rows, strict=True)) if rows else [()] * 12
    seq = np.array(cols[0], dtype=np.intp)
    position = np.full(int(seq.max()) + 1 if n else 0, -1, dtype=np.intp)
    position[seq] = np.arange(n, dtype=np.intp)
    ids = list(cols[1])
    maturity = list(cols[3])
    mult = {m: policy.multiplier(m) for m in MATURITIES}
    kinds = (
        2 if m == "deprecated" else 1 if t == "anti-pattern" else 0
        for t, m in zip(cols[2], maturity, strict=True)
    )

    # NULL (None) becomes NaN in a float64 array; the helpers below fill the NaNs.
    def floats(values: tuple[Any, ...], fill: float | None = None) -> np.ndarray:
        out = np.array(values, dtype=np.float64)
        if fill is not None:
            out[np.isnan(out)] = fill
        return out

    half_life = floats(cols[7], policy.half_life_days)  # a bullet's own, else the default
    cache_hl = floats(cols[8])
    return RankTable(
        key=key,
        ids=ids,
        position=position,
        kind=np.fromiter(kinds, dtype=np.int8, count=n),
        maturity=maturity,
        multiplier=np.array([mult[m] for m in maturity], dtype=np.float64),
        half_life=half_life,
        ref=floats(cols[9]),
        helpful=floats(cols[10], 0.0),
        harmful=floats(cols[11], 0.0),
        exact=(np.isnan(cache_hl) | (cache_hl == half_life))
        & np.fromiter((bid not in lineage for bid in ids), dtype=bool, count=n)
        & (not lagging),
        scoped=[
            (i, s, k)
            for i, (s, k) in enumerate(zip(cols[4], cols[5], strict=True))
            if s != "global"
        ],
        content_hash=list(cols[6]),
    )


def keyword_lists(
    store: PlaybookStore, tokens: list[str], policy: Policy
) -> list[tuple[list[int], float]]:
    """(bullet seqs, points) for each query token: +3 where it is a token of the bullet,
    else +1 where it is a substring of one of its tokens; +5 more where it equals a tag.
    Each list holds a seq at most once."""
    sql = store.sql
    hits: list[tuple[list[int], float]] = []
    for q in tokens:
        exact = sql.column("SELECT seq FROM bullet_tokens WHERE token = ?", (q,))
        # The matching vocabulary first, then its postings: written as a join, SQLite scans
        # every posting and looks each one up in vocab.
        partial = sql.column(
            "SELECT DISTINCT seq FROM bullet_tokens WHERE token IN "
            f"(SELECT token FROM vocab WHERE {sql.dialect.contains('token')} AND token != ?)",
            (q, q),
        )
        tags = sql.column("SELECT seq FROM bullet_tags WHERE tag = ?", (q,))
        hits.append((list(exact), policy.exact_points))
        hits.append((sorted(set(partial).difference(exact)), policy.substring_points))
        hits.append((list(tags), policy.tag_points))
    return hits


def keyword_hits(
    store: PlaybookStore, tokens: list[str], policy: Policy
) -> list[tuple[np.ndarray, float]]:
    """`keyword_lists` as numpy arrays of seqs."""
    import numpy as np

    return [
        (np.array(seqs, dtype=np.intp), points)
        for seqs, points in keyword_lists(store, tokens, policy)
    ]


def keyword_array(table: RankTable, hits: list[tuple[np.ndarray, float]]) -> np.ndarray:
    """Keyword points aligned with the table's rows."""
    import numpy as np

    points = np.zeros(len(table), dtype=np.float64)
    for seqs, value in hits:
        points[table.positions(seqs)] += value  # seqs are unique within one hit list
    return points


def keyword_points(store: PlaybookStore, tokens: list[str], policy: Policy) -> dict[str, float]:
    """The same points by bullet id, for any bullet (retired ones too): the as-of path."""
    hits = keyword_hits(store, tokens, policy)
    seq_points: dict[int, float] = {}
    for seqs, value in hits:
        for s in seqs.tolist():
            seq_points[s] = seq_points.get(s, 0.0) + value
    if not seq_points:
        return {}
    d = store.sql.dialect
    rows = store.sql.execute(
        f"SELECT seq, id FROM bullets WHERE {d.in_list('seq')}", (d.list_param(seq_points),)
    )
    return {bid: seq_points[s] for s, bid in rows}
