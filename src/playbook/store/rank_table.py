"""What recall needs of every recallable bullet, kept in memory between queries.

One scan of `bullets ⋈ evidence` gives, per non-retired bullet, its list (rule,
anti-pattern, deprecated), maturity multiplier, scope and evidence-cache row, as numpy
columns. The scan brings as few values into Python as it can (at 100k rows, each column
costs tens of milliseconds): the list, maturity, scope and whether the cached evidence
answers as it is come packed in one small integer. A query then scores its candidates in a
few vector operations. The table is reloaded when the database changes
(`store.change_token()` moves on any commit, by this connection or another), so it is never
stale. It is kept in `store.rank.cache`.

A module of its own, which imports numpy: a store's first keyword query (`ranking`,
`retrieval.first_cut`) never loads it (its importers import it where numpy is wanted).
"""

from __future__ import annotations

from dataclasses import dataclass
from operator import itemgetter
from typing import TYPE_CHECKING, Any, get_args

import numpy as np

from ..core.terms import MATURITIES, ScopeName
from .evidence_rule import INEXACT, lags

if TYPE_CHECKING:
    from ..core.policy import Policy
    from .evidence import EvidenceRepo
    from .executor import Executor

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
        seqs = seqs[seqs < len(self.position)]
        at = self.position[seqs]
        return at[at >= 0] if at.size else np.empty(0, dtype=np.intp)


def _codes(column: str, names: tuple[str, ...]) -> str:
    """SQL: the index of `column`'s value in `names` (0 for anything else). The first name,
    the most common value (a candidate, a global rule), is tested first."""
    whens = " ".join(f"WHEN '{name}' THEN {i}" for i, name in enumerate(names))
    return f"CASE {column} {whens} ELSE 0 END"


# The list (LISTS index, bits 0-1), maturity (MATURITIES index, bits 2-3), inexact (bit 4),
# scope (SCOPES index, bits 5-7) and whether it has a half-life of its own (bit 8) of a
# bullet, in one integer. The scope key and half-life themselves, which few bullets have,
# are read afterwards for those bullets only (`_RARE`).
_PACKED = (
    "CASE WHEN b.maturity = 'deprecated' THEN 2 WHEN b.type = 'anti-pattern' THEN 1 ELSE 0 END"
    f" + 4 * ({_codes('b.maturity', MATURITIES)}) + 16 * ({INEXACT})"
    f" + 32 * ({_codes('b.scope', SCOPES)})"
    " + 256 * (CASE WHEN b.half_life_days IS NULL THEN 0 ELSE 1 END)"
)
_COLUMNS = (
    f"SELECT b.seq, {_PACKED}, b.content_hash, e.ref, "
    "COALESCE(e.helpful, 0), COALESCE(e.harmful, 0) "
    "FROM bullets b LEFT JOIN evidence e ON e.bullet_id = b.id WHERE b.state != 'retired'"
)
_RARE = "SELECT seq, scope_key, half_life_days FROM bullets WHERE "


class TableLoader:
    """Reads the rank table of the recallable bullets (`Rank.table` keeps it)."""

    def __init__(self, sql: Executor, policy: Policy, evidence: EvidenceRepo) -> None:
        self.sql = sql
        self.policy = policy
        self.evidence = evidence

    def load(self, key: tuple[Any, ...], seqs: list[int] | None) -> RankTable:
        """The recallable bullets (or those of `seqs` only), as of one moment."""
        with self.sql.snapshot():  # the rows and their rare columns as of one moment
            default_hl = self.policy.half_life_days
            params: tuple[Any, ...]
            if seqs is not None:
                d = self.sql.dialect
                sql, params = (
                    _COLUMNS + f" AND {d.in_list('b.seq')}",
                    (default_hl, d.list_param(seqs)),
                )
            else:
                sql, params = _COLUMNS, (default_hl,)
            return self._build(key, self.sql.all(sql, params))

    def _build(self, key: tuple[Any, ...], rows: list[tuple[Any, ...]]) -> RankTable:
        policy = self.policy
        lagging = lags(self.sql.read_only, self.evidence.behind)
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
            d = self.sql.dialect
            extra = {
                s: (k, hl)
                for s, k, hl in self.sql.all(
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


def keyword_array(table: RankTable, hits: list[tuple[np.ndarray, float]]) -> np.ndarray:
    """Keyword points aligned with the table's rows."""
    points = np.zeros(len(table), dtype=np.float64)
    for seqs, value in hits:
        points[table.positions(seqs)] += value  # seqs are unique within one hit list
    return points
