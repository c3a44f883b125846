"""What recall reads of the store's rank data: keyword points from the token index, and the
rank rows of a store's first keyword query (`retrieval.first_cut`), which a one-shot command
scores without numpy. The whole-playbook numpy table of later queries is `rank_table.py`.

Keyword points come from the token index, whose postings hold each bullet's integer `seq`:
exact postings for each query token, postings of the vocabulary tokens that contain it, and
tag postings. Integers map straight to table positions, with no per-row Python work.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ..core.policy import DEFAULT_POLICY
from ..core.record import Record
from ..core.terms import MATURITIES
from .evidence_rule import AFTER_NOW, CANNOT_ANSWER, HALF_LIFE_CHANGED, INEXACT, INHERITS

if TYPE_CHECKING:
    import numpy as np

    from ..core.policy import Policy
    from .base import DecisionLog
    from .evidence import EvidenceRepo
    from .executor import Executor
    from .rank_table import RankTable

LISTS = ("bullets", "anti_patterns", "deprecated_warnings")

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
    f"b.half_life_days, {INEXACT}, e.ref, e.helpful, e.harmful "
    "FROM bullets b LEFT JOIN evidence e ON e.bullet_id = b.id WHERE b.state != 'retired'"
)
# The rows of `_FIRST` worth reading once each list has a cut: those the cache cannot bound
# (as in `INEXACT`, or evidence after now), and those whose helpful sum at its reference
# time times their multiplier (the most their effective score can be) reaches their
# list's floor. Parameters: the default half-life, now, the multipliers in MATURITIES
# order, the floors of the deprecated, anti-pattern and rule lists.
_ABOVE = (
    f" AND ({CANNOT_ANSWER} OR {AFTER_NOW} "
    "OR COALESCE(e.helpful, 0) * CASE b.maturity "
    + " ".join(f"WHEN '{name}' THEN ?" for name in MATURITIES[:-1])
    + " ELSE ? END >= CASE WHEN b.maturity = 'deprecated' THEN ? "
    "WHEN b.type = 'anti-pattern' THEN ? ELSE ? END)"
)

# The same rows for many candidates at once, by one pass over the evidence cache instead of
# a look-up per candidate: every bullet whose helpful sum reaches the least floor, or whose
# cache cannot answer as it is (evidence after now, another half-life: the first test needs
# no look-up of the bullet), and every bullet that inherits evidence or has a half-life of
# its own its cache was not kept at (found without the candidates: a look-up per candidate
# cost PostgreSQL 77k buffers at 100k rules, against 12k for the pass); the caller keeps
# the candidates among them. Parameters: the least helpful sum, now and the default
# half-life (twice over).
_WORTH = (
    "SELECT b.seq FROM evidence e JOIN bullets b ON b.id = e.bullet_id "
    "WHERE (e.helpful >= ? OR e.ref > ? OR e.half_life != ?) "
    f"AND (e.helpful >= ? OR {AFTER_NOW} OR {HALF_LIFE_CHANGED}) "
    f"UNION SELECT b.seq FROM bullets b WHERE {INHERITS} "
    "OR (b.half_life_days IS NOT NULL AND EXISTS (SELECT 1 FROM evidence x "
    "WHERE x.bullet_id = b.id AND x.half_life != b.half_life_days))"
)
# With a list read whole, its candidates too. Parameters: the candidates, and 1 for each
# list read whole (deprecated, anti-pattern, rule), else 0.
_WHOLE = (
    " UNION SELECT b.seq FROM bullets b WHERE {in_list} "
    "AND CASE WHEN b.maturity = 'deprecated' THEN ? WHEN b.type = 'anti-pattern' THEN ? "
    "ELSE ? END = 1"
)


LOOKUP_COST = {"sqlite": 2.5, "postgresql": 7.0}  # see `Rank.lookup_cost`


class RankCache(Record):
    """What recall keeps between queries on one store (`rank_table.py`)."""

    table: RankTable | None
    wanted: bool  # a second query came: load the whole table next time

    def __init__(self, table: RankTable | None = None, wanted: bool = False) -> None:
        self.table = table
        self.wanted = wanted


class Rank:
    """What recall reads of the store's rank data (`store.rank`), and the rank table it keeps
    between queries (`cache`)."""

    def __init__(
        self, sql: Executor, policy: Policy, evidence: EvidenceRepo, decisions: DecisionLog
    ) -> None:
        self.sql = sql
        self.policy = policy
        self.evidence = evidence
        self.decisions = decisions
        self.cache = RankCache()

    def first_query(self) -> bool:
        """Whether this is the store's first query, which a one-shot command scores without
        numpy from the rows `first_rows` reads (it then counts as that first query); False once
        the table is cached or wanted whole (the caller then uses `rank_table`)."""
        self.evidence.sync()
        cache = self.cache
        if cache.wanted or cache.table is not None:
            return False
        cache.wanted = True
        return True

    def first_rows(
        self,
        seqs: list[int],
        now: float,
        floors: tuple[float, float, float] | None = None,
    ) -> list[tuple[Any, ...]]:
        """The rank rows (`_FIRST`) of the recallable bullets among `seqs`, for a store's
        first query. With `floors` (per list in `LISTS`), only those whose cached helpful sum
        times their maturity's multiplier reaches their list's floor, and those the cache
        cannot bound: it does not answer as it is, or holds evidence dated after `now` (epoch
        days)."""
        d = self.sql.dialect
        default_hl = self.policy.half_life_days
        sql = _FIRST + f" AND {d.in_list('b.seq')}"
        params: tuple[Any, ...] = (default_hl, d.list_param(seqs))
        if floors is not None:
            policy = self.policy
            sql += _ABOVE
            params += (
                default_hl,
                now,
                *(policy.multiplier(m) for m in MATURITIES),
                *reversed(floors),
            )
        return self.sql.all(sql, params)

    def first_worth(
        self, seqs: list[int], now: float, least: float, whole: tuple[bool, ...]
    ) -> list[int]:
        """Those of `seqs` that `first_rows` with floors may return, and a few more, found in
        one pass over the evidence cache: cheaper than a look-up per candidate when the
        candidates are a good part of the playbook (`playbook_size`). `least`: the least
        helpful sum that can reach a floor; `whole`: per list in `LISTS`, whether it is read
        whole (it has no floor)."""
        d = self.sql.dialect
        sql = _WORTH
        params: tuple[Any, ...] = (least, now, self.policy.half_life_days) * 2
        if any(whole):
            sql += _WHOLE.format(in_list=d.in_list("b.seq"))
            params += (d.list_param(seqs), *(int(w) for w in reversed(whole)))
        return sorted(set(self.sql.column(sql, params)).intersection(seqs))

    @property
    def lookup_cost(self) -> float:
        """A candidate's look-up by `first_rows`, in the microseconds of
        `retrieval.first_cut`'s weighing: PostgreSQL's batch of a few thousand seqs in one
        `= ANY` costs more a row than SQLite's (measured on the team-year at 100k rules, in a
        quiet spell: with SQLite's 2.5 a recall read 18,601 candidates by look-up, 131-171
        ms in-process; at 7 it makes one pass over the evidence cache, 97-100 ms)."""
        return LOOKUP_COST.get(self.sql.dialect.name, LOOKUP_COST["sqlite"])

    def playbook_size(self) -> int:
        """At least the number of bullets with evidence (the highest seq ever given)."""
        return int(self.sql.scalar("SELECT MAX(seq) FROM bullets", default=0))

    def ids_of(self, seqs: list[int]) -> dict[int, str]:
        """The ids of the bullets with these seqs."""
        d = self.sql.dialect
        rows = self.sql.all(
            f"SELECT seq, id FROM bullets WHERE {d.in_list('seq')}", (d.list_param(seqs),)
        )
        return {seq: bid for seq, bid in rows}

    def contents_of(self, seqs: list[int]) -> dict[int, str]:
        """The contents of the bullets with these seqs (what semantic recall embeds)."""
        d = self.sql.dialect
        rows = self.sql.all(
            f"SELECT seq, content FROM bullets WHERE {d.in_list('seq')}", (d.list_param(seqs),)
        )
        return {seq: content for seq, content in rows}

    def keyword_lists(self, tokens: list[str], policy: Policy) -> list[tuple[list[int], float]]:
        """(bullet seqs, points) for each query token: +3 where it is a token of the bullet,
        else +1 where it is a substring of one of its tokens; +5 more where it equals a tag.
        Each list holds a seq at most once."""
        sql = self.sql
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
        # then every token's postings in one round trip: exact, containing, tag, per token
        containing = [[v for v in vocab if q in v and v != q] for q in tokens]
        queries: list[tuple[str, tuple[Any, ...]]] = []
        for q, contains in zip(tokens, containing, strict=True):
            queries.append(("SELECT seq FROM bullet_tokens WHERE token = ?", (q,)))
            if contains:
                queries.append(
                    (
                        f"SELECT DISTINCT seq FROM bullet_tokens WHERE {d.in_list('token')}",
                        (d.list_param(contains),),
                    )
                )
            queries.append(("SELECT seq FROM bullet_tags WHERE tag = ?", (q,)))
        answers = iter(sql.all_of(queries)) if queries else iter(())
        hits: list[tuple[list[int], float]] = []
        for contains in containing:
            exact = [r[0] for r in next(answers)]
            partial = [r[0] for r in next(answers)] if contains else []
            tags = [r[0] for r in next(answers)]
            hits.append((exact, policy.exact_points))
            hits.append((sorted(set(partial).difference(exact)), policy.substring_points))
            hits.append((tags, policy.tag_points))
        return hits

    def keyword_hits(self, tokens: list[str], policy: Policy) -> list[tuple[np.ndarray, float]]:
        """`keyword_lists` as numpy arrays of seqs."""
        import numpy as np  # lazy: numpy: mark, recall, every hook (a first query needs none)

        return [
            (np.array(seqs, dtype=np.intp), points)
            for seqs, points in self.keyword_lists(tokens, policy)
        ]

    def keyword_points(self, tokens: list[str], policy: Policy) -> dict[str, float]:
        """The same points by bullet id, for any bullet (retired ones too): the as-of path."""
        hits = self.keyword_hits(tokens, policy)
        seq_points: dict[int, float] = {}
        for seqs, value in hits:
            for s in seqs.tolist():
                seq_points[s] = seq_points.get(s, 0.0) + value
        if not seq_points:
            return {}
        d = self.sql.dialect
        rows = self.sql.execute(
            f"SELECT seq, id FROM bullets WHERE {d.in_list('seq')}", (d.list_param(seq_points),)
        )
        return {bid: seq_points[s] for s, bid in rows}

    def token_matches(self, token: str) -> tuple[list[int], list[int], list[int]]:
        """Bullet seqs where `token` is a content token, a substring of one (and not a token),
        and a tag: the three kinds of keyword points recall gives (SPEC §6)."""
        (exact, _), (partial, _), (tag, _) = self.keyword_hits([token], DEFAULT_POLICY)
        return exact.tolist(), partial.tolist(), tag.tolist()

    def table(self, seqs: list[int] | None = None) -> RankTable:
        """The recallable bullets (or those of `seqs` only) as numpy columns
        (`rank_table.py`, which loads numpy), cached until the database changes.

        A process's first query loads only its candidates (a one-shot `playbook recall` never
        pays for the whole table); from the second query on, the whole table is loaded once
        and kept, so repeated queries touch nothing but their postings.
        """
        from .rank_table import TableLoader  # lazy: numpy: mark, recall, every hook

        self.evidence.sync()
        key = (self.sql.change_token(), self.decisions.policy_fingerprint())
        cache = self.cache
        if cache.table is not None and cache.table.key == key:
            return cache.table
        partial = seqs is not None and not cache.wanted
        table = TableLoader(self.sql, self.policy, self.evidence).load(
            key, seqs if partial else None
        )
        if partial:
            cache.wanted = True
        else:
            cache.table = table
        return table
