"""Is a generated year what the engine would hold? What `playbook doctor` does not check.

verify(store) -> list of problems (empty: none)
tables_differ(a, b) -> the tables whose rows differ between two playbooks
"""

from __future__ import annotations

from datetime import datetime
from itertools import zip_longest
from pathlib import Path

from playbook.core import scoring
from playbook.store import PlaybookStore, open_store, parse_iso
from playbook.store.tables import TABLES


def tables_differ(a: str | Path, b: str | Path) -> list[str]:
    """The tables whose rows differ between the playbooks at `a` and `b` (SQLite or
    PostgreSQL, either way), every row compared in key order a page at a time, as
    tests/test_team_year.py compares a small year's; all but `meta`, which each backend
    notes of itself."""
    differ = []
    with open_store(a, mode="read") as x, open_store(b, mode="read") as y:
        for table, (columns, key) in TABLES.items():
            if table == "meta":
                continue
            pages = zip_longest(
                x.tables.pages(table, columns, key, checked=False),
                y.tables.pages(table, columns, key, checked=False),
            )
            if any(p != q for p, q in pages):
                differ.append(table)
    return differ


def verify(store: PlaybookStore, *, at: datetime | None = None) -> list[str]:
    """What is wrong with the derived state, against the log (empty: nothing).

    - the evidence cache has folded the whole log, and each rule's cached count and last
      event are the log's;
    - each live rule's decayed helpful and harmful sums from the cache (`evidence_many`,
      lineage included) equal those folded here from the raw events (numpy, SPEC §4's
      formula) to 1e-9 relative;
    - no live, unpinned rule's rung would move in a maturity pass, unless the engine has
      recorded it as still demoting (decay alone never moves a rung).
    """
    problems: list[str] = []
    sql = store.sql
    now = at or store.now()
    if store.evidence_behind():
        problems.append("the evidence cache has not folded the whole log")
    counts = {
        bid: (n, last)
        for bid, n, last in sql.all(
            "SELECT bullet_id, COUNT(*), MAX(id) FROM feedback GROUP BY bullet_id"
        )
    }
    cached = {
        bid: (n, last)
        for bid, n, last in sql.all("SELECT bullet_id, count, last_event_id FROM evidence")
    }
    for bid, got in counts.items():
        if cached.get(bid) != got:
            problems.append(
                f"{bid}: the cache holds (count, last event) {cached.get(bid)}, the log {got}"
            )
    live = sql.all(
        "SELECT id, maturity, pinned, half_life_days, maturity_due FROM bullets "
        "WHERE state != 'retired'"
    )
    ids = [r[0] for r in live]
    folded = _fold_log(store, now)
    smap = store.supersedes_map()
    evidence = store.evidence_many(ids, at=now)
    for bid, maturity, pinned, _, due in live:
        group = [bid, *store.ancestors(bid, smap)] if smap else [bid]
        h = sum(folded.get(m, (0.0, 0.0))[0] for m in group)
        x = sum(folded.get(m, (0.0, 0.0))[1] for m in group)
        ev = evidence[bid]
        if not (_close(ev.helpful, h) and _close(ev.harmful, x)):
            problems.append(f"{bid}: cache H={ev.helpful!r} X={ev.harmful!r}, log H={h!r} X={x!r}")
        if not pinned and due is None:
            moved = scoring.next_maturity(
                maturity, ev.helpful, ev.harmful, bool(pinned), store.policy
            )
            if str(moved) != maturity:
                problems.append(f"{bid}: {maturity}, but a pass would make it {moved}")
    return problems[:50]


def _close(a: float, b: float) -> bool:
    return abs(a - b) <= 1e-9 * max(1.0, abs(a), abs(b))


def _fold_log(store: PlaybookStore, now: datetime) -> dict[str, tuple[float, float]]:
    """Each rule's decayed (helpful, harmful) at `now`, from the raw log (its own events
    only), with its half-life (the policy's when it has none)."""
    hl = {
        bid: float(h) if h else store.policy.half_life_days
        for bid, h in store.sql.all("SELECT id, half_life_days FROM bullets")
    }
    t_now = scoring.days(now)
    out: dict[str, list[float]] = {}
    for bid, kind, at, weight in store.sql.execute(
        "SELECT bullet_id, kind, at, weight FROM feedback"
    ):
        age = max(0.0, t_now - scoring.days(parse_iso(at)))
        v = weight * 0.5 ** (age / hl[bid])
        acc = out.setdefault(bid, [0.0, 0.0])
        acc[0 if kind == "helpful" else 1] += v
    return {bid: (a[0], a[1]) for bid, a in out.items()}
