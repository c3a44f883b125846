"""Time travel: the playbook as it stood at a moment, and what changed between two moments.

Nothing of the past is stored: every view is read from the append-only logs at the moment
asked (SPEC §8: `as_of` answers "what did the playbook say then?"). Feedback counts if it
was *recorded* by then (knowledge time) and is decayed to then; a bullet's rung is its
maturity log's entry by then; a pin is the decision log's latest pin/unpin by then; a
bullet retired by then shows its score frozen at its retirement (`review.scores`).
`rows_as_of` agrees with `store.score(id, at=when)` for every bullet live then and with
`recall(as_of=when)`; it reads each bullet's evidence from the evidence cache's days (its
checkpoint before the moment's day, plus that day's events: `history_fold`), and the raw
events only of the bullets those cannot answer exactly, so a workbench can switch to any
date at once however long the log.
"""

from __future__ import annotations

import calendar
import re
from collections.abc import Container, Iterable, Sequence
from dataclasses import replace
from datetime import datetime, timedelta

import numpy as np

from ..core import scoring
from ..core.collector import paused
from ..core.model import Bullet, Score
from ..retrieval.query import parse_when
from ..store import Conflict, PlaybookStore, iso, parse_iso
from ..store.views import BulletRow
from .conflicts import CONFLICT_EVENTS, ConflictSide, ConflictView
from .history_fold import CHECKPOINT, Events, epoch_days, events_of, fold_evidence, moment_day
from .moments import Moments
from .proposals import Proposal, Target, _proposal

MOVERS = 20  # rules listed under "moved most in score"
MOVED = 0.01  # a score change smaller than this is not a move


# ------------------------------------------------------------------ the moment asked

_RELATIVE = re.compile(r"^\s*(\d+)\s*([dwmy])\s*$", re.IGNORECASE)


def parse_moment(text: str, now: datetime) -> datetime:
    """A moment a person types: an ISO date ("2026-05-01", its start in UTC), an ISO
    datetime, or a span back from `now`: "7d", "4w", "3m" (calendar months), "1y".
    ValueError says what is accepted."""
    m = _RELATIVE.match(text)
    if m:
        n, unit = int(m.group(1)), m.group(2).lower()
        try:
            if unit == "d":
                return now - timedelta(days=n)
            if unit == "w":
                return now - timedelta(weeks=n)
            return _months_back(now, n * (12 if unit == "y" else 1))
        except (OverflowError, ValueError):
            raise ValueError(f"{text[:40]!r} goes back before the year 1") from None

    try:
        return parse_when(text.strip())
    except ValueError:
        raise ValueError(
            f"not a date: {text[:40]!r} (use 2026-05-01, an ISO datetime, or 7d, 4w, 3m, 1y)"
        ) from None


def _months_back(now: datetime, months: int) -> datetime:
    total = now.year * 12 + now.month - 1 - months
    year, month = divmod(total, 12)
    month += 1
    day = min(now.day, calendar.monthrange(year, month)[1])
    return now.replace(year=year, month=month, day=day)


# ------------------------------------------------------------------ the bullets table then

# positions in store.history.ROW_COLUMNS
_ID, _CONTENT, _TYPE, _MATURITY, _STATE, _PINNED, _CATEGORY, _TAGS = range(8)
_SCOPE, _SOURCE, _CREATED, _HALF_LIFE, _VALID_TO, _SEQ = range(8, 14)


def rows_as_of(
    store: PlaybookStore, when: datetime, moments: Moments | None = None
) -> list[BulletRow]:
    """The bullets table (`store.views.bullet_rows`' shape) as the playbook stood at `when`.

    Every bullet created by then, retired ones included: `state` "retired" if it was
    retired by then (else its state now, a later retirement read as "active"); `maturity`
    from the maturity log; helpful/harmful/effective from the feedback recorded by then
    (lineage as of then), decayed to `when`; `stale` at `when`; `pinned` from the decision
    log's pin/unpin entries (a bullet without any keeps its pin now: a pin carried at its
    creation). A bullet retired by then shows the score it had when it was retired.
    `moments`: what a long-lived reader keeps between moments (the same table, read faster).
    """
    with paused():
        return _rows_as_of(store, when, None, moments)


def _rows_as_of(
    store: PlaybookStore, when: datetime, ids: list[str] | None, moments: Moments | None = None
) -> list[BulletRow]:
    policy = store.policy
    wanted = None
    if ids is not None:  # a few bullets, and the ones whose evidence they inherit
        lineage = store.edges.ancestors_many(ids)
        wanted = list(dict.fromkeys([*ids, *(a for i in ids for a in lineage.get(i, ()))]))
    day = moment_day(when) if store.past.days_answer() else None
    kept = day_events = derived = None
    if day is not None and moments is not None and ids is None:
        cols, kept, day_events, derived = moments.columns(store, when, day)
    else:
        rows = store.past.bullets_created_by(when, wanted, day=day)
        cols = list(zip(*rows, strict=True))
        if rows and day is not None:
            kept = np.array([r[CHECKPOINT:] for r in rows], dtype=np.float64).reshape(-1, 6)
    if not cols or not cols[_ID]:
        return []
    bids = cols[_ID]
    n = len(bids)
    when_iso = iso(when)
    default_hl = policy.half_life_days
    pos = dict(zip(bids, range(n), strict=True))
    if derived is not None:  # from the facts kept (`Moments`)
        created, own = derived
        half_life = np.where(np.isnan(own), default_hl, own)
    else:
        created = epoch_days(cols[_CREATED])
        half_life = np.array([h or default_hl for h in cols[_HALF_LIFE]], dtype=np.float64)
    retired = np.array([v is not None and v <= when_iso for v in cols[_VALID_TO]], dtype=bool)
    end = np.full(n, scoring.days(when))
    for i in np.flatnonzero(retired).tolist():
        end[i] = scoring.days(parse_iso(cols[_VALID_TO][i]))
    helpful, harmful, last = _evidence_then(
        store, when, bids, pos, (end, half_life, created), wanted, (kept, day_events)
    )
    stale = (end - last) >= policy.stale_after_days
    maturity_then = store.past.maturities_as_of(when, wanted)
    maturities = list(cols[_MATURITY])
    for bid, rung in maturity_then.items():
        if bid in pos:
            maturities[pos[bid]] = rung
    effective = scoring.effective_scores(helpful, harmful, maturities, policy)
    pins_then = list(map(bool, cols[_PINNED]))
    for bid, pinned in _pins_as_of(store, when, pos).items():
        pins_then[pos[bid]] = pinned
    states = [
        "retired" if gone else ("active" if state == "retired" else state)
        for gone, state in zip(retired.tolist(), cols[_STATE], strict=True)
    ]
    out = list(
        map(
            BulletRow._make,
            zip(
                bids, cols[_CONTENT], cols[_TYPE], maturities, states,
                pins_then, helpful.tolist(), harmful.tolist(),
                effective.tolist(), stale.tolist(), cols[_CATEGORY], cols[_TAGS],
                cols[_SCOPE], cols[_SOURCE], cols[_CREATED], cols[_SEQ], strict=True,
            ),
        )
    )  # fmt: skip
    if ids is None:
        return out
    shown = set(ids)
    return [r for r in out if r.id in shown]


def _evidence_then(
    store: PlaybookStore,
    when: datetime,
    bids: Sequence[str],
    pos: dict[str, int],
    columns: tuple[np.ndarray, np.ndarray, np.ndarray],
    wanted: list[str] | None,
    days_read: tuple[np.ndarray | None, list[tuple[str, str, float, float, str]] | None],
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(H, X, last activity) per row as of `when` (`columns`: each row's end, half-life
    and creation day): from the evidence cache's days (`days_read`: each row's checkpoint
    before the moment's day, and that day's events when they were read with them), and
    from the raw events for the rows they cannot answer (or for all, when the days lag the
    log or the schema has none: no checkpoints)."""
    end, half_life, created = columns
    kept, day_events = days_read
    if kept is None:
        events = _events_recorded_by(store, when, pos, wanted)
        return _evidence(store, when, pos, end, half_life, created, events)
    days = fold_evidence(store, when, kept, pos, (end, half_life, created), wanted, day_events)
    helpful, harmful, last = days.helpful, days.harmful, days.last
    slow = np.flatnonzero(days.inexact)
    if len(slow):
        ids = [bids[i] for i in slow.tolist()]
        lineage = store.edges.ancestors_many(ids)
        read = list(dict.fromkeys([*ids, *(a for i in ids for a in lineage.get(i, ()))]))
        events = _events_recorded_by(store, when, pos, read)
        h, x, at = _evidence(store, when, pos, end, half_life, created, events)
        helpful[slow], harmful[slow], last[slow] = h[slow], x[slow], at[slow]
    return helpful, harmful, last


def _events_recorded_by(
    store: PlaybookStore, when: datetime, pos: dict[str, int], ids: list[str] | None
) -> Events:
    """The feedback recorded by `when` (of `ids`' bullets, or all), owned by row positions;
    an event of a bullet created after `when` (an import) is left out."""
    return events_of(store.past.events_recorded_by(when, ids), pos)[0]


def _evidence(
    store: PlaybookStore,
    when: datetime,
    pos: dict[str, int],
    end: np.ndarray,
    half_life: np.ndarray,
    created: np.ndarray,
    events: Events,
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(H, X, last activity) per row: the `events` (recorded by `when`), each counted for
    its own bullet and for every successor that supersedes it by then (SPEC §4 lineage),
    decayed to the owner's end (`when`, or its retirement) with the owner's half-life."""

    n = len(pos)
    owner, at, weight, helpful = events
    # lineage: a successor also owns its ancestors' events (as of then)
    smap = store.supersedes_map(as_of=when)
    if smap:
        order = np.argsort(owner, kind="stable")
        bounds = np.searchsorted(owner[order], np.arange(n + 1))
        extra: list[np.ndarray] = []
        extra_owner: list[np.ndarray] = []
        for succ in smap:
            if succ not in pos:
                continue
            for anc in store.ancestors(succ, smap):
                if anc in pos:
                    k = pos[anc]
                    sel = order[bounds[k] : bounds[k + 1]]
                    extra.append(sel)
                    extra_owner.append(np.full(len(sel), pos[succ], dtype=np.int64))
        if extra:
            sel = np.concatenate(extra)
            at = np.concatenate([at, at[sel]])
            weight = np.concatenate([weight, weight[sel]])
            helpful = np.concatenate([helpful, helpful[sel]])
            owner = np.concatenate([owner, *extra_owner])
    age = end[owner] - at
    value = scoring.decayed(weight, age, half_life[owner])
    h = np.bincount(owner[helpful], weights=value[helpful], minlength=n)
    x = np.bincount(owner[~helpful], weights=value[~helpful], minlength=n)
    last = created.copy()
    seen = age >= 0  # an event after the owner's moment is pending, not activity
    np.maximum.at(last, owner[seen], at[seen])
    return h.astype(np.float64), x.astype(np.float64), last


def _pins_as_of(store: PlaybookStore, when: datetime, rows: Container[str]) -> dict[str, bool]:
    """The pin at `when` of each bullet of `rows` with pin/unpin decisions: its latest one
    by then; before its first one, the opposite of that one. (A bullet with none keeps its
    pin now.)"""
    changes: dict[str, list[tuple[str, str]]] = {}
    for bid, action, at in store.past.pin_changes():
        if bid in rows:
            changes.setdefault(bid, []).append((action, at))
    when_iso = iso(when)
    out = {}
    for bid, seq in changes.items():
        done = [a for a, at in seq if at <= when_iso]
        out[bid] = done[-1] == "pin" if done else seq[0][0] == "unpin"
    return out


# ------------------------------------------------------------------ conflicts and the queue


def _bullets_as_of(store: PlaybookStore, rows: Iterable[BulletRow]) -> dict[str, Bullet]:
    """The bullets of `rows_as_of` rows, with their state, rung and pin then."""
    by_id = {r.id: r for r in rows}
    bullets = store.get_bullets(by_id)
    return {
        bid: b.model_copy(
            update={"state": by_id[bid].state, "maturity": by_id[bid].maturity,
                    "pinned": by_id[bid].pinned}
        )
        for bid, b in bullets.items()
    }  # fmt: skip


def rows_as_of_ids(store: PlaybookStore, ids: Iterable[str], when: datetime) -> list[BulletRow]:
    """`rows_as_of` for a few bullets only (a conflict's sides, a proposal's targets)."""
    wanted = list(dict.fromkeys(ids))
    return _rows_as_of(store, when, wanted) if wanted else []


def conflicts_as_of(
    store: PlaybookStore, when: datetime, *, events: int = CONFLICT_EVENTS
) -> list[ConflictView]:
    """The conflict flags open at `when` (flagged by then, not resolved by then), oldest
    first, each side as it stood then: rung, state, score and its latest feedback recorded
    by then."""
    flags = [
        Conflict(cid, a, b, reason, parse_iso(created), "open", None)
        for cid, a, b, reason, created in store.past.conflicts_open_at(when)
    ]
    ids = list(dict.fromkeys(i for c in flags for i in (c.a, c.b)))
    rows = {r.id: r for r in rows_as_of_ids(store, ids, when)}
    bullets = _bullets_as_of(store, rows.values())
    policy = store.policy

    def side(bid: str) -> ConflictSide:
        row, bullet = rows.get(bid), bullets.get(bid)
        if row is None or bullet is None:
            return ConflictSide(bid, None, None, [])
        earned = scoring.earned_rung(row.helpful, row.harmful, policy)
        score = Score(
            helpful=row.helpful, harmful=row.harmful, effective=row.effective,
            earned=earned, stale=row.stale,
        )  # fmt: skip
        return ConflictSide(bid, bullet, score, store.latest_events(bid, events, when))

    return [ConflictView(c, side(c.a), side(c.b)) for c in flags]


def proposals_as_of(store: PlaybookStore, when: datetime) -> list[Proposal]:
    """The review queue as it stood at `when`: proposals staged by then and not decided by
    then, oldest first, all "pending", each with its targets as they stood then (a target
    retired by then makes it stale). `similar` is left empty (`closest_rules` is about the
    playbook now)."""
    found = [_proposal(r) for r in store.past.proposals_pending_at(when)]
    ids = {
        i
        for p in found
        for i in [*(p.delta.get("bullet_ids") or ()), p.delta.get("bullet_id")]
        if isinstance(i, str)
    }
    bullets = _bullets_as_of(store, rows_as_of_ids(store, ids, when)) if ids else {}
    retired = [b for b, x in bullets.items() if x.state == "retired"]
    successors = store.past.successors_of(retired, when)
    out = []
    for p in found:
        targets = []
        named = [*(p.delta.get("bullet_ids") or ()), p.delta.get("bullet_id")]
        for bid in dict.fromkeys(i for i in named if isinstance(i, str)):
            b = bullets.get(bid)
            if b is None:
                targets.append(Target(bid, exists=False))
                continue
            after = tuple(successors.get(bid, ())) if b.state == "retired" else ()
            targets.append(Target(bid, True, str(b.state), str(b.maturity), b.content, after))
        out.append(
            replace(
                p,
                status="pending",
                decided_at=None,
                decided_by=None,
                reason=None,
                edited_delta=None,
                result=None,
                targets=targets,
            )
        )
    return out
