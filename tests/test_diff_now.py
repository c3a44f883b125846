"""Then and now (`review.diff_since`) from whole columns, and from a table of now already
read (`now=`: the workbench's snapshot, when nothing was written since): the same answer
as the diff by hand, and as a diff that reads the table itself, at every moment of a small
year. Both backends."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

import pytest

from playbook import review
from playbook.review.diff import MOVED, MOVERS
from playbook.store import PlaybookStore, iso

from .helpers import Clock, add
from .helpers.years import moments_of, small_year


def _by_hand(store: PlaybookStore, since: Any, movers: int = MOVERS) -> dict[str, Any]:
    """The diff as the definition reads (one rule at a time), as `to_dict()` gives it."""
    end = store.now()
    before = {r.id: r for r in review.rows_as_of(store, since)}
    after = {r.id: r for r in store.views.bullet_rows()}

    def change(now: Any, then: Any, successors: Any = ()) -> dict[str, Any]:
        return {
            "id": now.id, "content": now.content, "type": now.type,
            "state_then": then.state if then else None, "state_now": now.state,
            "maturity_then": then.maturity if then else None, "maturity_now": now.maturity,
            "score_then": then.effective if then else None, "score_now": now.effective,
            "delta": None if then is None else now.effective - then.effective,
            "successors": list(successors),
        }  # fmt: skip

    new = sorted((r for r in after.values() if r.id not in before),
                 key=lambda r: (r.created_at, r.seq))  # fmt: skip
    gone = [r for r in after.values() if r.state == "retired"
            and (r.id not in before or before[r.id].state != "retired")]  # fmt: skip
    successors = store.past.successors_of([r.id for r in gone], end)
    rungs = [r for r in after.values() if r.id in before and before[r.id].maturity != r.maturity]
    moved = sorted(
        (-abs(r.effective - before[r.id].effective), r.id)
        for r in after.values()
        if r.state != "retired" and r.id in before and before[r.id].state != "retired"
        and abs(r.effective - before[r.id].effective) >= MOVED
    )  # fmt: skip
    counts = {
        "appeared": len(new), "retired": len(gone), "rung_changes": len(rungs),
        "moved": len(moved),
        "rules_then": sum(1 for r in before.values() if r.state != "retired"),
        "rules_now": sum(1 for r in after.values() if r.state != "retired"),
    }  # fmt: skip
    return {
        "since": iso(since),
        "until": iso(end),
        "counts": counts,
        "appeared": [change(r, None) for r in new],
        "retired": [change(r, before.get(r.id), successors.get(r.id, ())) for r in gone],
        "rung_changes": [change(r, before[r.id]) for r in rungs],
        "movers": [change(after[i], before[i]) for _, i in moved[: max(0, movers)]],
    }


def test_the_diff_is_the_diff_by_hand_at_every_moment(store: PlaybookStore, clock: Clock) -> None:
    small_year(store, clock)
    moments = moments_of(store, clock)
    for since in moments[::2]:
        assert review.diff_since(store, since).to_dict() == _by_hand(store, since), since
    since = moments[len(moments) // 3]
    for movers in (0, 1, 3, -1):  # fewer movers than moved: the largest, equal ones by id
        found = review.diff_since(store, since, movers=movers).to_dict()
        assert found == _by_hand(store, since, movers), movers


def test_a_table_of_now_already_read_gives_the_diff_that_reads_it(
    store: PlaybookStore, clock: Clock
) -> None:
    small_year(store, clock, seed=3)
    read_at = clock()
    table = store.views.bullet_rows(at=read_at)
    for since in moments_of(store, clock)[::3]:
        kept = review.diff_since(store, since, now=(table, read_at))
        assert kept == review.diff_since(store, since), since
    for since in moments_of(store, clock)[1::5]:  # the table of then kept too
        then = review.rows_as_of(store, since)
        assert review.diff_since(store, since, then=then) == review.diff_since(store, since)
        both = review.diff_since(store, since, then=then, now=(table, read_at))
        assert both == review.diff_since(store, since), since
    # read a while ago: the diff is until then, not a moment later
    clock.advance(hours=5)
    kept = review.diff_since(store, read_at - timedelta(days=30), now=(table, read_at))
    assert kept.until == read_at != store.now()
    # asked about a moment after the kept read: the table is read afresh, until now
    since = read_at + timedelta(hours=1)
    add(store, "A rule written after the kept read")
    fresh = review.diff_since(store, since, now=(table, read_at))
    assert fresh == review.diff_since(store, since)
    assert [c.content for c in fresh.appeared] == ["A rule written after the kept read"]
    with pytest.raises(ValueError, match="until"):
        review.diff_since(store, since, until=store.now(), now=(table, read_at))
