"""Read-only views for the workbench: every bullet with its score in one pass, histories.

`bullet_rows` is what the bullets table shows, at any size: one query over `bullets` joined
to the evidence cache, decayed to now in Python. Bullets whose cached sums cannot answer
exactly (they inherit evidence through `supersedes`, or have an event in the future, or a
half-life changed since) go through `EvidenceRepo.many`, so the numbers are always the
ones `store.score` gives.
"""

from __future__ import annotations

from datetime import UTC, datetime
from operator import itemgetter
from typing import TYPE_CHECKING, Any, NamedTuple

from ..core import scoring
from .evidence_rule import INEXACT, lags, rows_answer
from .records import iso, parse_iso

if TYPE_CHECKING:
    from ..core.policy import Policy
    from .base import Now
    from .evidence import EvidenceRepo
    from .executor import Executor
    from .history import Past


class BulletRow(NamedTuple):
    """One row of the bullets table: the bullet's facts and its score now.

    A named tuple, not a dataclass: the table builds 100k of these on every full read, and
    a frozen dataclass takes three times as long to construct.
    """

    id: str
    content: str
    type: str
    maturity: str
    state: str
    pinned: bool
    helpful: float
    harmful: float
    effective: float
    stale: bool
    category: str
    tags: str  # JSON list, as stored
    scope: str
    source: str
    created_at: str  # ISO, sorts as text
    seq: int = 0  # the store's integer key (postings refer to it)


_ROWS_SQL = (
    "SELECT b.id, b.content, b.type, b.maturity, b.state, b.pinned, b.category, b.tags, "
    "b.scope, b.source, b.created_at, b.half_life_days, "
    "COALESCE(e.half_life, 1), e.ref, COALESCE(e.helpful, 0), COALESCE(e.harmful, 0), "
    f"e.last_at, b.seq, {INEXACT} "
    "FROM bullets b LEFT JOIN evidence e ON e.bullet_id = b.id"
)
# The same columns, with NULL for those the scores do not read (text, tags...): what
# `first=` scores every bullet with before it reads the few rows it returns in full.
_SCORE_SQL = (
    "SELECT b.id, NULL, NULL, b.maturity, b.state, NULL, NULL, NULL, "
    "NULL, NULL, b.created_at, b.half_life_days, "
    "COALESCE(e.half_life, 1), e.ref, COALESCE(e.helpful, 0), COALESCE(e.harmful, 0), "
    f"e.last_at, b.seq, {INEXACT} "
    "FROM bullets b LEFT JOIN evidence e ON e.bullet_id = b.id"
)


class Views:
    """What the workbench reads: every bullet with its score in one pass, and histories
    (`store.views`)."""

    def __init__(
        self, sql: Executor, policy: Policy, now: Now, evidence: EvidenceRepo, past: Past
    ) -> None:
        self.sql = sql
        self.policy = policy
        self.now = now
        self.evidence = evidence
        self.past = past

    def bullet_rows(
        self,
        *,
        include_retired: bool = True,
        at: datetime | None = None,
        first: int | None = None,
    ) -> list[BulletRow]:
        """Every bullet (retired ones too unless told otherwise) with its score at `at` (now);
        a retired bullet's score is the one it had when it was retired (`frozen_evidence`).

        `first=N`: only the N rows of the highest effective score (ties: the older bullet
        first), in that order, with the same values the full read gives them. Every bullet
        is scored, but only those N are read whole: at 100k bullets, a table's first page
        in a fraction of the full read's time.

        It runs over every bullet on every full read (at 100k bullets, most of the workbench's
        start-up time), so the scores are computed for whole columns at once, by `scoring`'s
        array form, and which rows the cache answers by `evidence_rule`'s.
        """
        import numpy as np  # lazy: numpy: the workbench's first frame (tui imports BulletRow)

        policy = self.policy
        when = at or self.now()
        now = scoring.days(when)
        self.evidence.sync()
        # A read-only store whose cache lags the log: every row asks the store.
        lagging = lags(self.sql.read_only, self.evidence.behind)
        where = "" if include_retired else " WHERE b.state != 'retired'"
        sql = _ROWS_SQL if first is None else _SCORE_SQL
        # the same order on every backend
        raw = self.sql.all(sql + where + " ORDER BY b.seq", (policy.half_life_days,))
        # Staleness without parsing dates: ISO timestamps of one format sort as text.
        cutoff = now - policy.stale_after_days
        cutoff_iso = iso(datetime.fromtimestamp(cutoff * scoring.DAY, tz=UTC))
        n = len(raw)
        stale = [
            r[10] <= cutoff_iso if r[13] is None else (r[16] <= cutoff and r[10] <= cutoff_iso)
            for r in raw
        ]

        def column(k: int, dtype: Any = np.float64) -> Any:  # no NULLs: straight from the rows
            return np.fromiter(map(itemgetter(k), raw), dtype=dtype, count=n)

        ref = np.array(list(map(itemgetter(13), raw)), dtype=np.float64)  # NULL: NaN
        # the cache's sums at its ref, read now (a bullet without evidence: 0 at any moment)
        helpful, harmful = scoring.sums_at(
            np.where(np.isnan(ref), now, ref), column(14), column(15), column(12), now
        )
        inexact = column(18, bool)
        slow = np.flatnonzero(~rows_answer(inexact, ref, now, lagging)).tolist()
        if slow:  # inherited evidence, future events, changed half-life: ask the store
            exact = self.evidence.many([raw[i][0] for i in slow], at=when)
            for i in slow:
                ev = exact[raw[i][0]]
                helpful[i], harmful[i] = ev.helpful, ev.harmful
                stale[i] = now - ev.last_activity >= policy.stale_after_days
        if include_retired:  # a retired bullet's score is frozen at its retirement
            frozen = self.past.frozen_evidence()
            for i, r in enumerate(raw):
                if r[4] == "retired" and r[0] in frozen:
                    helpful[i], harmful[i], stale[i] = frozen[r[0]]
        effective = scoring.effective_scores(helpful, harmful, [r[3] for r in raw], policy)
        if first is not None:
            raw, helpful, harmful, effective, stale = self._page(
                raw, first, helpful, harmful, effective, stale
            )
        return [
            BulletRow(
                r[0], r[1], r[2], r[3], r[4], bool(r[5]), h, x, e, s,
                r[6], r[7], r[8], r[9], r[10], r[17],
            )
            for r, h, x, e, s in zip(
                raw, helpful.tolist(), harmful.tolist(), effective.tolist(), stale, strict=True
            )
        ]  # fmt: skip

    def maturity_history(self, bullet_id: str) -> list[tuple[datetime, str]]:
        """Every maturity a bullet has had, with when it took it, oldest first."""
        rows = self.sql.execute(
            "SELECT at, maturity FROM maturity_log WHERE bullet_id = ? ORDER BY at, id",
            (bullet_id,),
        )
        return [(parse_iso(at), m) for at, m in rows]

    def count_bullets_by_state(self) -> dict[str, int]:
        rows = self.sql.execute("SELECT state, COUNT(*) FROM bullets GROUP BY state")
        return {state: n for state, n in rows}

    def _page(
        self,
        raw: list[Any],
        first: int,
        helpful: Any,
        harmful: Any,
        effective: Any,
        stale: list[bool],
    ) -> tuple[list[Any], Any, Any, Any, list[bool]]:
        """The `first` rows of the highest effective score (ties: lower seq first), read whole,
        with their numbers."""
        import numpy as np  # lazy: numpy: the workbench's first frame (tui imports BulletRow)

        order = np.lexsort((np.array([r[17] for r in raw], dtype=np.int64), -effective))[
            : max(0, first)
        ]
        d = self.sql.dialect
        whole = {
            r[17]: r
            for r in self.sql.all(
                f"{_ROWS_SQL} WHERE {d.in_list('b.seq')}",
                (self.policy.half_life_days, d.list_param([raw[i][17] for i in order])),
            )
        }
        return (
            [whole[raw[i][17]] for i in order],
            helpful[order],
            harmful[order],
            effective[order],
            [stale[i] for i in order],
        )
