"""What recall needs of every recallable bullet, kept in memory between queries.

One scan of `bullets ⋈ evidence` gives, per non-retired bullet, its list (rule,
anti-pattern, deprecated), maturity multiplier, scope and evidence-cache row, as numpy
columns. The scan brings as few values into Python as it can (at 100k rows, each column
costs tens of milliseconds): the list, maturity, scope and whether the cached evidence
answers as it is come packed in one small integer. A query then scores its candidates in a
few vector operations. The table is reloaded when the database changes
(`store.change_token()` moves on any commit, by this connection or another), so it is never
stale. It is kept in `store.rank_cache`.

Keyword points come from the token index, whose postings hold each bullet's integer `seq`:
exact postings for each query token, postings of the vocabulary tokens that contain it, and
tag postings. Integers map straight to table positions, with no per-row Python work.
"""

from __future__ import annotations

from dataclasses import dataclass
from operator import itemgetter
from typing import TYPE_CHECKING, Any, get_args

from ..terms import MATURITIES, ScopeName

if TYPE_CHECKING:
    import numpy as np

    from ..policy import Policy
    from .store import PlaybookStore

LISTS = ("bullets", "anti_patterns", "deprecated_warnings")
SCOPES: tuple[str, ...] = get_args(ScopeName)  # "global" first: code 0


@dataclass(frozen=True)
class RankTable:
    key: tuple[Any, ...]
    seq: np.ndarray  # intp: the bullet of each row (its id is read only when it is shown)
    position: np.ndarray  # intp, indexed by bullet seq: its row here, or -1
    kind: np.ndarray  # int8: index into LISTS
    maturity: np.ndarray  # int8: index into MATURITIES
    multiplier: np.ndarray  # by maturity, from the policy
    half_life: np.ndarray
    ref: np.ndarray  # evidence reference time (epoch days); nan without events
    helpful: np.ndarray  # decayed sums at `ref`
    harmful: np.ndarray
    exact: np.ndarray  # bool; False: lineage, a cache row that does not fit, a lagging cache
    scoped: list[tuple[int, str, str | None]]  # (position, scope, scope_key), non-global only
    content_hash: list[str]

    def __len__(self) -> int:
        return len(self.seq)

    def positions(self, seqs: np.ndarray) -> np.ndarray:
        """Rows of the bullets with these seqs (those not in the table dropped)."""
        import numpy as np

        seqs = seqs[seqs < len(self.position)]
        at = self.position[seqs]
        return at[at >= 0] if at.size else np.empty(0, dtype=np.intp)


def _codes(column: str, names: tuple[str, ...]) -> str:
    """SQL: the index of `column`'s value in `names` (0 for anything else). The first name,
    the most common value (a candidate, a global rule), is tested first."""
    whens = " ".join(f"WHEN '{name}' THEN {i}" for i, name in enumerate(names))
    return f"CASE {column} {whens} ELSE 0 END"


# Whether a bullet's cached evidence cannot answer as it is: another half-life, or it
# inherits evidence through supersedes. One parameter: the policy's default half-life.
_CANNOT_ANSWER = (
    "(e.half_life IS NOT NULL AND e.half_life != COALESCE(b.half_life_days, ?)) "
    "OR b.id IN (SELECT src FROM edges WHERE kind = 'supersedes')"
)
_INEXACT = f"CASE WHEN {_CANNOT_ANSWER} THEN 1 ELSE 0 END"
# The list (LISTS index, bits 0-1), maturity (MATURITIES index, bits 2-3), inexact (bit 4),
# scope (SCOPES index, bits 5-7) and whether it has a half-life of its own (bit 8) of a
# bullet, in one integer. The scope key and half-life themselves, which few bullets have,
# are read afterwards for those bullets only (`_RARE`).
_PACKED = (
    "CASE WHEN b.maturity = 'deprecated' THEN 2 WHEN b.type = 'anti-pattern' THEN 1 ELSE 0 END"
    f" + 4 * ({_codes('b.maturity', MATURITIES)}) + 16 * ({_INEXACT})"
    f" + 32 * ({_codes('b.scope', SCOPES)})"
    " + 256 * (CASE WHEN b.half_life_days IS NULL THEN 0 ELSE 1 END)"
)
_COLUMNS = (
    f"SELECT b.seq, {_PACKED}, b.content_hash, e.ref, "
    "COALESCE(e.helpful, 0), COALESCE(e.harmful, 0) "
    "FROM bullets b LEFT JOIN evidence e ON e.bullet_id = b.id WHERE b.state != 'retired'"
)
_RARE = "SELECT seq, scope_key, half_life_days FROM bullets WHERE "


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
    f"b.half_life_days, {_INEXACT}, e.ref, e.helpful, e.harmful "
    "FROM bullets b LEFT JOIN evidence e ON e.bullet_id = b.id WHERE b.state != 'retired'"
)
# The rows of `_FIRST` worth reading once each list has a cut: those the cache cannot bound
# (as in `_INEXACT`, or evidence after now), and those whose helpful sum at its reference
# time times their multiplier (the most their effective score can be) reaches their
# list's floor. Parameters: the default half-life, now, the multipliers in MATURITIES
# order, the floors of the deprecated, anti-pattern and rule lists.
_ABOVE = (
    f" AND ({_CANNOT_ANSWER} OR e.ref > ? "
    "OR COALESCE(e.helpful, 0) * CASE b.maturity "
    + " ".join(f"WHEN '{name}' THEN ?" for name in MATURITIES[:-1])
    + " ELSE ? END >= CASE WHEN b.maturity = 'deprecated' THEN ? "
    "WHEN b.type = 'anti-pattern' THEN ? ELSE ? END)"
)

# The same rows for many candidates at once, by one pass over the evidence cache instead of
# a look-up per candidate: every bullet whose helpful sum reaches the least floor, or whose
# cache cannot answer as it is (evidence after now, another half-life: the first test needs
# no look-up of the bullet), and the candidates that inherit evidence, have a half-life of
# their own their cache was not kept at, or are in a list read whole. Parameters: the least
# helpful sum, now and the default half-life (twice over), the candidates, and 1 for each
# list read whole (deprecated, anti-pattern, rule), else 0.
_WORTH = (
    "SELECT b.seq FROM evidence e JOIN bullets b ON b.id = e.bullet_id "
    "WHERE (e.helpful >= ? OR e.ref > ? OR e.half_life != ?) "
    "AND (e.helpful >= ? OR e.ref > ? OR e.half_life != COALESCE(b.half_life_days, ?)) "
    "UNION SELECT b.seq FROM bullets b WHERE {in_list} "
    "AND (b.id IN (SELECT src FROM edges WHERE kind = 'supersedes') "
    "OR (b.half_life_days IS NOT NULL AND EXISTS (SELECT 1 FROM evidence x "
    "WHERE x.bullet_id = b.id AND x.half_life != b.half_life_days)) "
    "OR CASE WHEN b.maturity = 'deprecated' THEN ? WHEN b.type = 'anti-pattern' THEN ? "
    "ELSE ? END = 1)"
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
    partial = seqs is not None and not cache.wanted
    with store.sql.snapshot():  # the rows and their rare columns as of one moment
        default_hl = store.policy.half_life_days
        if partial:
            d = store.sql.dialect
            sql, params = _COLUMNS + f" AND {d.in_list('b.seq')}", (default_hl, d.list_param(seqs))
        else:
            sql, params = _COLUMNS, (default_hl,)
        table = _build(store, key, store.sql.all(sql, params))
    if partial:
        cache.wanted = True
    else:
        cache.table = table
    return table


def first_query(store: PlaybookStore) -> bool:
    """Whether this is the store's first query, which a one-shot command scores without
    numpy from the rows `first_rows` reads (it then counts as that first query); False once
    the table is cached or wanted whole (the caller then uses `rank_table`)."""
    store.sync_evidence()
    cache = store.rank_cache
    if cache.wanted or cache.table is not None:
        return False
    cache.wanted = True
    return True


def first_rows(
    store: PlaybookStore,
    seqs: list[int],
    now: float,
    floors: tuple[float, float, float] | None = None,
) -> list[tuple[Any, ...]]:
    """The rank rows (`_FIRST`) of the recallable bullets among `seqs`, for a store's
    first query. With `floors` (per list in `LISTS`), only those whose cached helpful sum
    times their maturity's multiplier reaches their list's floor, and those the cache
    cannot bound: it does not answer as it is, or holds evidence dated after `now` (epoch
    days)."""
    d = store.sql.dialect
    default_hl = store.policy.half_life_days
    sql = _FIRST + f" AND {d.in_list('b.seq')}"
    params: tuple[Any, ...] = (default_hl, d.list_param(seqs))
    if floors is not None:
        policy = store.policy
        sql += _ABOVE
        params += (
            default_hl,
            now,
            *(policy.multiplier(m) for m in MATURITIES),
            *reversed(floors),
        )
    return store.sql.all(sql, params)


def first_worth(
    store: PlaybookStore, seqs: list[int], now: float, least: float, whole: tuple[bool, ...]
) -> list[int]:
    """Those of `seqs` that `first_rows` with floors may return, and a few more, found in
    one pass over the evidence cache: cheaper than a look-up per candidate when the
    candidates are a good part of the playbook (`playbook_size`). `least`: the least
    helpful sum that can reach a floor; `whole`: per list in `LISTS`, whether it is read
    whole (it has no floor)."""
    d = store.sql.dialect
    found = store.sql.column(
        _WORTH.format(in_list=d.in_list("b.seq")),
        (
            *(least, now, store.policy.half_life_days) * 2,
            d.list_param(seqs),
            *(int(w) for w in reversed(whole)),
        ),
    )
    return sorted(set(found).intersection(seqs))


def playbook_size(store: PlaybookStore) -> int:
    """At least the number of bullets with evidence (the highest seq ever given)."""
    return int(store.sql.scalar("SELECT MAX(seq) FROM bullets", default=0))


def ids_of(store: PlaybookStore, seqs: list[int]) -> dict[int, str]:
    """The ids of the bullets with these seqs."""
    d = store.sql.dialect
    rows = store.sql.all(
        f"SELECT seq, id FROM bullets WHERE {d.in_list('seq')}", (d.list_param(seqs),)
    )
    return {seq: bid for seq, bid in rows}


def contents_of(store: PlaybookStore, seqs: list[int]) -> dict[int, str]:
    """The contents of the bullets with these seqs (what semantic recall embeds)."""
    d = store.sql.dialect
    rows = store.sql.all(
        f"SELECT seq, content FROM bullets WHERE {d.in_list('seq')}", (d.list_param(seqs),)
    )
    return {seq: content for seq, content in rows}


def _build(store: PlaybookStore, key: tuple[Any, ...], rows: list[tuple[Any, ...]]) -> RankTable:
    import numpy as np

    policy = store.policy
    lagging = store.read_only and store.evidence_behind()
    n = len(rows)

    def column(k: int, dtype: type) -> np.ndarray:  # no NULLs: straight from the rows
        return np.fromiter(map(itemgetter(k), rows), dtype=dtype, count=n)

    seq = column(0, np.intp)
    position = np.full(int(seq.max()) + 1 if n else 0, -1, dtype=np.intp)
    position[seq] = np.arange(n, dtype=np.intp)
    packed = column(1, np.int64)
    maturity = ((packed >> 2) & 3).astype(np.int8)
    scope = (packed >> 5) & 7
    mult = np.array([policy.multiplier(m) for m in MATURITIES], dtype=np.float64)
    half_life = np.full(n, float(policy.half_life_days))  # a bullet's own where it has one
    scoped: list[tuple[int, str, str | None]] = []
    rare = np.flatnonzero(scope | (packed & 256))
    if rare.size:
        d = store.sql.dialect
        extra = {
            s: (k, hl)
            for s, k, hl in store.sql.all(
                _RARE + d.in_list("seq"), (d.list_param(seq[rare].tolist()),)
            )
        }
        for i in rare.tolist():
            scope_key, own = extra[int(seq[i])]
            if own is not None:
                half_life[i] = own
            if scope[i]:
                scoped.append((i, SCOPES[scope[i]], scope_key))

    return RankTable(
        key=key,
        seq=seq,
        position=position,
        kind=(packed & 3).astype(np.int8),
        maturity=maturity,
        multiplier=mult[maturity],
        half_life=half_life,
        # NULL (no evidence yet) becomes NaN
        ref=np.array(list(map(itemgetter(3), rows)), dtype=np.float64),
        helpful=column(4, np.float64),
        harmful=column(5, np.float64),
        exact=((packed & 16) == 0) & (not lagging),
        scoped=scoped,
        content_hash=list(map(itemgetter(2), rows)),
    )


def keyword_lists(
    store: PlaybookStore, tokens: list[str], policy: Policy
) -> list[tuple[list[int], float]]:
    """(bullet seqs, points) for each query token: +3 where it is a token of the bullet,
    else +1 where it is a substring of one of its tokens; +5 more where it equals a tag.
    Each list holds a seq at most once."""
    sql = store.sql
    d = sql.dialect
    # the vocabulary read once for every token (each read scans it whole)
    vocab = (
        sql.column(
            "SELECT token FROM vocab WHERE " + " OR ".join([d.contains("token")] * len(tokens)),
            tuple(tokens),
        )
        if tokens
        else []
    )
    hits: list[tuple[list[int], float]] = []
    for q in tokens:
        exact = sql.column("SELECT seq FROM bullet_tokens WHERE token = ?", (q,))
        containing = [v for v in vocab if q in v and v != q]
        partial = (
            sql.column(
                f"SELECT DISTINCT seq FROM bullet_tokens WHERE {d.in_list('token')}",
                (d.list_param(containing),),
            )
            if containing
            else []
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
