"""`doctor`'s check of the evidence cache's days (`evidence_days`) against the log.

The days are a cache of the feedback log (`store/evidence_days.py`), which stays the truth.
A check that replays the whole log would take as long as building them (a minute at 10M
events), so doctor checks what is cheap and catches what can go wrong:

- the latest checkpoints count as many events as the log holds up to the days' watermark
  (`full`, `doctor --full`: bullet by bullet, a grouped pass over the log);
- where the evidence cache has folded exactly the same events, its row and the latest
  checkpoint give the same sums (relative 1e-9: the same events, perhaps in another order);
- a sample of `SAMPLE` bullets (the same ones every run; each at most `SAMPLE_EVENTS`
  events) is folded again from the log and every one of its checkpoints compared.
"""

from __future__ import annotations

import math
import random
from typing import TYPE_CHECKING, Any

from ..core import scoring
from ..core.policy import DEFAULT_POLICY
from .evidence_days import COLUMNS, WATERMARK, day_of
from .records import event_point

if TYPE_CHECKING:
    from ..core.policy import Policy
    from .executor import Executor

DAYS_STEP = 4  # the schema step that added the days
SAMPLE = 64
SAMPLE_EVENTS = 5000
_TOLERANCE = 1e-9


def _close(a: float, b: float) -> bool:
    return math.isclose(a, b, rel_tol=_TOLERANCE, abs_tol=1e-12)


def latest_checkpoints(ex: Executor, version: int) -> dict[str, Any]:
    """Each bullet's latest checkpoint (`COLUMNS`), by bullet id (none before step 4)."""
    if version < DAYS_STEP:
        return {}
    return {
        r[0]: r
        for r in ex.all(
            f"SELECT {', '.join(COLUMNS)} FROM evidence_days d WHERE d.day = "
            "(SELECT MAX(x.day) FROM evidence_days x WHERE x.bullet_id = d.bullet_id)"
        )
    }


def days_problems(
    ex: Executor, version: int, most: int, *, full: bool = False, latest: dict[str, Any]
) -> list[str]:
    """At most `most` lines, one per disagreement between the days and the log (`latest`:
    `latest_checkpoints`)."""
    if version < DAYS_STEP:
        return []
    mark = ex.scalar("SELECT value FROM meta WHERE key = ?", (WATERMARK,))
    if mark is None:
        return ["the evidence cache's days were never built (meta has no days_watermark)"]
    mark = int(mark)
    out: list[str] = []
    if full:  # every bullet's count against the log's (a grouped pass over the log)
        counts = dict(
            ex.all(
                "SELECT bullet_id, COUNT(*) FROM feedback WHERE id <= ? GROUP BY bullet_id",
                (mark,),
            )
        )
        for bid in sorted(set(counts) | set(latest)):
            have = int(latest[bid][6]) if bid in latest else 0
            if have != int(counts.get(bid, 0)):
                out.append(
                    f"evidence_days of {bid}: its latest checkpoint counts {have} events, "
                    f"the log holds {counts.get(bid, 0)}"
                )
    else:  # the whole log's count against the checkpoints' (a count of the key's range)
        logged = int(ex.scalar("SELECT COUNT(*) FROM feedback WHERE id <= ?", (mark,), 0))
        have = sum(int(r[6]) for r in latest.values())
        if have != logged:
            out.append(
                f"evidence_days: the latest checkpoints count {have} events, the log holds "
                f"{logged} (doctor --full names the rules)"
            )
    evidence_mark = ex.scalar("SELECT value FROM meta WHERE key = 'evidence_watermark'")
    if evidence_mark is not None and int(evidence_mark) == mark:
        for bid, hl, ref, h, x, n in ex.all(
            "SELECT bullet_id, half_life, ref, helpful, harmful, count FROM evidence"
        ):
            row = latest.get(bid)
            if row is None or row[2] != hl or int(row[6]) != int(n):
                continue  # counted above, or refolded at another half-life since
            at = max(ref, row[3])
            then = scoring.sums_at(row[3], row[4], row[5], hl, at)
            now = scoring.sums_at(ref, h, x, hl, at)
            if not (_close(then[0], now[0]) and _close(then[1], now[1])):
                out.append(f"evidence_days of {bid}: its latest checkpoint is not its evidence")
    out += _replayed(ex, latest, mark)
    return out[:most]


def _replayed(ex: Executor, latest: dict[str, Any], mark: int) -> list[str]:
    """The sampled bullets folded again from the log, every checkpoint compared."""
    small = sorted(b for b, r in latest.items() if int(r[6]) <= SAMPLE_EVENTS)
    out: list[str] = []
    for bid in random.Random(0).sample(small, min(SAMPLE, len(small))):
        kept = ex.all(
            f"SELECT {', '.join(COLUMNS)} FROM evidence_days WHERE bullet_id = ? ORDER BY day",
            (bid,),
        )
        hl = kept[-1][2]
        events = []
        for eid, kind, at, weight, recorded in ex.execute(
            "SELECT id, kind, at, weight, recorded_at FROM feedback "
            "WHERE bullet_id = ? AND id <= ? ORDER BY id",
            (bid, mark),
        ):
            point = event_point(eid, at, weight, recorded)
            if point is not None:
                events.append((day_of(recorded), eid, kind, *point))
        events.sort()
        acc = scoring.DecayAccumulator(hl)
        expected: dict[int, tuple[float, float, float, int]] = {}
        for day, _, kind, t, w in events:
            acc.fold(kind, t, w)
            expected[day] = (acc.ref, acc.helpful, acc.harmful, acc.count)
        got = {r[1]: (r[3], r[4], r[5], int(r[6])) for r in kept if r[2] == hl}
        if set(got) != set(expected) or any(
            got[d][3] != e[3] or not all(map(_close, got[d][:3], e[:3]))
            for d, e in expected.items()
        ):
            out.append(f"evidence_days of {bid}: its checkpoints are not its log folded again")
    return out


def half_life_notes(ex: Executor, policy: Policy | None, latest: dict[str, Any]) -> list[str]:
    """One line when rules are kept, in the evidence cache or its days (`latest`: the
    days' latest checkpoints; every checkpoint of a rule is folded at one half-life), at
    another half-life than `policy` gives them: sound, but read from the raw events."""
    default = (policy or DEFAULT_POLICY).half_life_days
    own = dict(ex.all("SELECT id, half_life_days FROM bullets WHERE half_life_days IS NOT NULL"))
    days = {b: r[2] for b, r in latest.items() if r[2] != own.get(b, default)}
    rows = dict(
        ex.all(
            "SELECT e.bullet_id, e.half_life FROM evidence e JOIN bullets b ON b.id = e.bullet_id "
            "WHERE e.half_life != COALESCE(b.half_life_days, ?)",
            (default,),
        )
    )
    if not days and not rows:
        return []
    kept = sorted({float(h) for h in (*days.values(), *rows.values())})
    at = " or ".join(f"{h:g}" for h in kept)
    n = len(days.keys() | rows.keys())
    return [
        f"the evidence of {n} rule{'' if n == 1 else 's'} is kept at a half-life of "
        f"{at} days ({len(rows)} in the evidence cache, {len(days)} in its days), not the "
        f"one this policy gives {'it' if n == 1 else 'them'} (its default: {default:g} days, "
        f"--policy / $PLAYBOOK_POLICY): {'its' if n == 1 else 'their'} scores and reads of "
        "the past come from the raw events, the same answers more slowly; 'playbook doctor "
        f"--fix' folds {'it' if n == 1 else 'them'} again at "
        f"{default:g} days (one transaction)"
    ]
