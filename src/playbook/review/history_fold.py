"""Time travel's evidence: the feedback recorded by a moment, as arrays (`Events`), and the
same sums read from the evidence cache's days (`fold_evidence`) instead of the whole log.

`fold_evidence` takes each bullet's checkpoint of the last day before the moment's day
(`store.past.checkpoints_before`: one indexed row per bullet), folds on top the events
recorded that day up to the moment (`store.past.events_between`), and reads the sums at
each row's end (the moment, or its retirement) with `scoring.sums_at`, a successor adding
its ancestors' sums (lineage as of then). Where a checkpoint cannot answer exactly (kept
at another half-life than the row's, or holding an event observed after the row's end: a
future-dated event, or feedback after a retirement; `store/evidence_rule.py`), it says so
and the caller reads those rows' raw events (`review.history._evidence`).
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import UTC, datetime, timedelta
from typing import Any, NamedTuple

import numpy as np

from ..core import scoring
from ..store import PlaybookStore, iso, parse_iso

_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)
CHECKPOINT = 15  # where a row's checkpoint columns start (store.history.CHECKPOINT_COLUMNS)
_DAY = timedelta(days=1)


class Events(NamedTuple):
    """Feedback events as parallel arrays: the position of each one's bullet in a list of
    rows, when it was observed (epoch days), its weight, and whether it was helpful."""

    owner: np.ndarray
    at: np.ndarray
    weight: np.ndarray
    helpful: np.ndarray


class Folded(NamedTuple):
    """(H, X, last activity) per row, and the rows the days could not answer (`inexact`)."""

    helpful: np.ndarray
    harmful: np.ndarray
    last: np.ndarray
    inexact: np.ndarray


def moment_day(when: datetime) -> int:
    """The UTC day of `when` (days since the epoch): its checkpoints are those before it."""
    return (when - _EPOCH) // _DAY


def fold_evidence(
    store: PlaybookStore,
    when: datetime,
    kept: np.ndarray,
    pos: dict[str, int],
    columns: tuple[np.ndarray, np.ndarray, np.ndarray],
    wanted: list[str] | None,
    day_events: list[tuple[str, str, float, float, str]] | None = None,
) -> Folded:
    """(H, X, last activity) of each row as of `when`, from the days: `kept` holds each
    row's checkpoint before the moment's day (n x 6, `store.history.CHECKPOINT_COLUMNS`;
    NaN: none), `pos` the rows' positions by id, `columns` each row's end, half-life and
    creation day; `wanted`: the bullets read (None: every bullet); `day_events`: every
    event recorded on the moment's day (`store.past.events_of_day`), when already read."""
    end, half_life, created = columns
    n = len(kept)
    if day_events is None:
        start = _EPOCH + moment_day(when) * _DAY
        events = store.past.events_between(start, when, wanted)
    else:  # the store's own ISO text: compared as text, as the database does
        by = iso(when)
        events = [e[:4] for e in day_events if e[4] <= by]
    has_row = ~np.isnan(kept[:, 4])  # NULLs (no checkpoint): NaN
    kept_hl = kept[:, 0].copy()
    ref = np.where(has_row, kept[:, 1], -np.inf)
    hsum = np.where(has_row, kept[:, 2], 0.0)
    xsum = np.where(has_row, kept[:, 3], 0.0)
    count = np.where(has_row, kept[:, 4], 0.0).astype(np.int64)
    last_at = np.where(has_row, kept[:, 5], -np.inf)
    state = (kept_hl, ref, hsum, xsum, count, last_at)
    _fold_day(state, half_life, events, pos)
    # (owner, member) pairs: each row owns its own sums, a successor its ancestors' too
    owner = [np.arange(n)]
    member = [np.arange(n)]
    smap = store.supersedes_map(as_of=when)
    for succ in smap:
        if succ in pos:
            anc = [pos[a] for a in store.ancestors(succ, smap) if a in pos]
            owner.append(np.full(len(anc), pos[succ], dtype=np.int64))
            member.append(np.array(anc, dtype=np.int64))
    o = np.concatenate(owner)
    m = np.concatenate(member)
    has = count[m] > 0
    answers = ~has | ((kept_hl[m] == half_life[o]) & (ref[m] <= end[o]))
    inexact = np.zeros(n, dtype=bool)
    inexact[o[~answers]] = True
    sel = has & answers
    o, m = o[sel], m[sel]
    hv, xv = scoring.sums_at(ref[m], hsum[m], xsum[m], kept_hl[m], end[o])
    helpful = np.bincount(o, weights=hv, minlength=n).astype(np.float64)
    harmful = np.bincount(o, weights=xv, minlength=n).astype(np.float64)
    last = created.copy()
    np.maximum.at(last, o, last_at[m])
    return Folded(helpful, harmful, last, inexact)


def events_of(
    found: Sequence[tuple[Any, ...]], pos: dict[str, int]
) -> tuple[Events, list[tuple[Any, ...]]]:
    """Feedback rows (bullet_id, kind, at, weight, ...) as `Events` owned by the rows'
    positions in `pos`, and the rows kept: an event whose bullet is not among them (created
    after the moment asked) is left out."""

    kept = [r for r in found if r[0] in pos]
    return Events(
        np.fromiter((pos[r[0]] for r in kept), dtype=np.int64, count=len(kept)),
        epoch_days([r[2] for r in kept]),
        np.fromiter((r[3] for r in kept), dtype=np.float64, count=len(kept)),
        np.fromiter((r[1] == "helpful" for r in kept), dtype=bool, count=len(kept)),
    ), kept


def epoch_days(values: Sequence[Any]) -> np.ndarray:
    """Timestamps as epoch days: ISO text as the store writes it, parsed by numpy at once;
    anything else (another ISO form, a datetime from a driver) one by one."""

    text = _canonical(values)
    if text is not None:
        micros = text.astype("U26").astype("datetime64[us]").astype(np.int64)
        return micros / (scoring.DAY * 1e6)
    return np.array(
        [scoring.days(v if isinstance(v, datetime) else parse_iso(v)) for v in values],
        dtype=np.float64,
    )


def _canonical(values: Sequence[Any]) -> np.ndarray | None:
    """`values` as a text array when every one is the store's own ISO form
    ("2026-05-01T10:00:00.000000Z"), else None."""

    if not len(values):
        return np.zeros(0, dtype="U27")
    text = np.array(values, dtype=str)  # a datetime becomes "2026-...+00:00": not ours
    if (np.char.str_len(text) == 27).all() and np.char.endswith(text, "Z").all():
        return text
    return None


def _fold_day(
    state: tuple[np.ndarray, ...],
    half_life: np.ndarray,
    events: Sequence[tuple[str, str, float, float]],
    pos: dict[str, int],
) -> None:
    """Fold `events` (bullet_id, kind, at, weight; in id order) into each row's checkpoint
    state (half-life, ref, H, X, count, last activity: arrays, changed in place), as
    `scoring.DecayAccumulator.fold` does one by one, over arrays: each row's sums carried
    once to its new reference time (its latest event), each event decayed to it. The same
    sums to the last few bits (a day of a team's year, 27k events, one by one in Python:
    0.2 s). A bullet not among the rows (created after the moment) is left out."""
    kept_hl, ref, hsum, xsum, count, last_at = state
    n = len(ref)
    get = pos.get
    owner = np.fromiter((get(e[0], -1) for e in events), np.int64, len(events))
    mine = owner >= 0
    if not mine.any():
        return
    owner = owner[mine]
    at = np.fromiter((e[2] for e in events), np.float64, len(events))[mine]
    weight = np.fromiter((e[3] for e in events), np.float64, len(events))[mine]
    helpful = np.fromiter((e[1] == "helpful" for e in events), bool, len(events))[mine]
    touched = np.zeros(n, dtype=bool)
    touched[owner] = True
    had = touched & (count > 0)
    hl = np.where(count > 0, kept_hl, half_life)  # a new accumulator: the row's half-life
    latest = np.full(n, -np.inf)
    np.maximum.at(latest, owner, at)
    new_ref = np.where(touched, np.maximum(ref, latest), ref)
    moved = had & (new_ref > ref)  # carried to the new reference, as each later event does
    h, x = scoring.sums_at(ref[moved], hsum[moved], xsum[moved], hl[moved], new_ref[moved])
    hsum[moved], xsum[moved] = h, x
    value = scoring.decayed(weight, new_ref[owner] - at, hl[owner])
    hsum += np.bincount(owner[helpful], weights=value[helpful], minlength=n)
    xsum += np.bincount(owner[~helpful], weights=value[~helpful], minlength=n)
    count += np.bincount(owner, minlength=n)
    np.maximum.at(last_at, owner, at)
    kept_hl[touched] = hl[touched]
    ref[touched] = new_ref[touched]
