"""Read-only views for the workbench: every bullet with its score in one pass, histories.

`bullet_rows` is what the bullets table shows, at any size: one query over `bullets` joined
to the evidence cache, decayed to now in Python. Bullets whose cached sums cannot answer
exactly (they inherit evidence through `supersedes`, or have an event in the future, or a
half-life changed since) go through `store.evidence_many`, so the numbers are always the
ones `store.score` gives.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from .. import scoring
from .store import PlaybookStore, parse_iso


@dataclass(frozen=True, slots=True)
class BulletRow:
    """One row of the bullets table: the bullet's facts and its score now."""

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


_ROWS_SQL = (
    "SELECT b.id, b.content, b.type, b.maturity, b.state, b.pinned, b.category, b.tags, "
    "b.scope, b.source, b.created_at, b.half_life_days, "
    "e.half_life, e.ref, e.helpful, e.harmful, e.count, e.last_at "
    "FROM bullets b LEFT JOIN evidence e ON e.bullet_id = b.id"
)


def bullet_rows(
    store: PlaybookStore, *, include_retired: bool = True, at: datetime | None = None
) -> list[BulletRow]:
    """Every bullet (retired ones too unless told otherwise) with its score at `at` (now)."""
    policy = store.policy
    when = at or store.now()
    now = scoring.days(when)
    store.sync_evidence()
    successors = {
        src
        for (src,) in store.conn.execute(
            "SELECT DISTINCT src FROM edges WHERE kind = ?", ("supersedes",)
        )
    }
    sql = _ROWS_SQL + ("" if include_retired else " WHERE b.state != 'retired'")
    raw = store.conn.execute(sql).fetchall()
    slow: list[int] = []
    values: list[tuple[float, float, float]] = []
    default_hl = policy.half_life_days
    stale_after = policy.stale_after_days
    for i, r in enumerate(raw):
        hl = r[11] or default_hl
        created = scoring.days(parse_iso(r[10]))
        if r[0] in successors or (r[12] is not None and (r[12] != hl or now < r[13])):
            values.append((0.0, 0.0, created))
            slow.append(i)
        elif r[12] is None:  # no events of its own, nothing inherited
            values.append((0.0, 0.0, created))
        else:
            factor = 0.5 ** ((now - r[13]) / hl)
            values.append((r[14] * factor, r[15] * factor, max(created, r[17])))
    if slow:
        exact = store.evidence_many([raw[i][0] for i in slow], at=when)
        for i in slow:
            ev = exact[raw[i][0]]
            values[i] = (ev.helpful, ev.harmful, ev.last_activity)
    out: list[BulletRow] = []
    for r, (h, x, last) in zip(raw, values, strict=True):
        out.append(
            BulletRow(
                id=r[0],
                content=r[1],
                type=r[2],
                maturity=r[3],
                state=r[4],
                pinned=bool(r[5]),
                helpful=h,
                harmful=x,
                effective=scoring.effective_score(h, x, r[3], policy),
                stale=now - last >= stale_after,
                category=r[6],
                tags=r[7],
                scope=r[8],
                source=r[9],
                created_at=r[10],
            )
        )
    return out


def maturity_history(store: PlaybookStore, bullet_id: str) -> list[tuple[datetime, str]]:
    """Every maturity a bullet has had, with when it took it, oldest first."""
    rows = store.conn.execute(
        "SELECT at, maturity FROM maturity_log WHERE bullet_id = ? ORDER BY at, id",
        (bullet_id,),
    )
    return [(parse_iso(at), m) for at, m in rows]


def count_bullets_by_state(store: PlaybookStore) -> dict[str, int]:
    rows = store.conn.execute("SELECT state, COUNT(*) FROM bullets GROUP BY state")
    return {state: n for state, n in rows}
