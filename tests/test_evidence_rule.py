"""When the evidence cache answers a score as it is (`store/evidence_rule.py`): its SQL and
its Python forms decide every case alike, on both backends, and a row they let answer
gives the bits the log gives.

The cases: the bullet's half-life (its own, the default, its own changed since the fold)
x the policy's default (the one the cache was folded at, or changed since) x whether it
inherits evidence through `supersedes` x whether it has evidence at all x the moment read
(after the cache's reference time, or before it) x a lagging cache. What each case should
decide is written from its construction, not from the code.
"""

from __future__ import annotations

import itertools
from datetime import timedelta

import numpy as np
import pytest

from playbook.core import scoring
from playbook.core.policy import Policy
from playbook.store import PlaybookStore
from playbook.store.evidence_rule import (
    AFTER_NOW,
    CANNOT_ANSWER,
    INEXACT,
    half_life_changed,
    member_answers,
    row_answers,
    rows_answer,
)

from .helpers import Clock

HL_CASES = ("own", "default", "own changed")
OWN_HL = 30.0


def _world(store: PlaybookStore, clock: Clock) -> dict[str, tuple[str, bool, bool]]:
    """One bullet per (half-life case, inherits, has evidence): id -> the case."""
    cases: dict[str, tuple[str, bool, bool]] = {}
    for hl_case, inherits, evidence in itertools.product(HL_CASES, (False, True), (True, False)):
        own = OWN_HL if hl_case.startswith("own") else None
        b = store.insert_bullet(f"Rule for {hl_case} {inherits} {evidence}", half_life_days=own)
        if evidence:
            for days_ago, kind in ((40, "helpful"), (12, "harmful"), (3, "helpful")):
                store.add_feedback(b.id, kind, at=clock.t - timedelta(days=days_ago))
        if inherits:
            old = store.insert_bullet(f"Ancestor of {hl_case} {inherits} {evidence}")
            store.add_feedback(old.id, "helpful", at=clock.t - timedelta(days=20))
            store.add_edge("supersedes", b.id, old.id)
        cases[b.id] = (hl_case, inherits, evidence)
    store.sync_evidence()
    # half-lives changed since the fold: a rule's own, and the policy's default
    changed = [bid for bid, c in cases.items() if c[0] == "own changed"]
    d = store.sql.dialect
    with store.transaction():
        store.sql.execute(
            f"UPDATE bullets SET half_life_days = 45 WHERE {d.in_list('id')}",
            (d.list_param(changed),),
        )
    return cases


def test_the_sql_and_python_forms_decide_every_case_alike(
    store: PlaybookStore, clock: Clock
) -> None:
    cases = _world(store, clock)
    decided = 0
    for default in (90.0, 60.0):  # the default the cache was folded at, or changed since
        decided += _decide(store, cases, default)
    assert decided == 2 * 2 * 2 * len(cases) == 96


def _decide(store: PlaybookStore, cases: dict[str, tuple[str, bool, bool]], default: float) -> int:
    store.policy = Policy(half_life_days=default)
    rows = {
        r[0]: r[1:]
        for r in store.sql.all(
            f"SELECT b.id, {INEXACT}, e.half_life, e.ref, e.helpful, e.harmful, "
            "b.half_life_days FROM bullets b LEFT JOIN evidence e ON e.bullet_id = b.id",
            (default,),
        )
    }
    successors = set(store.supersedes_map())
    refs = {rows[bid][2] for bid, c in cases.items() if c[2]}
    assert len(refs) == 1  # every bullet with evidence: its last event 3 days ago
    ref = refs.pop()
    decided = 0
    for now in (ref + 1.0, ref - 1.0):  # read after the cache's reference time, or before
        cannot = set(
            store.sql.column(
                "SELECT b.id FROM bullets b LEFT JOIN evidence e ON e.bullet_id = b.id "
                f"WHERE {CANNOT_ANSWER} OR {AFTER_NOW}",
                (default, now),
            )
        )
        ids = list(cases)
        inexact = np.array([bool(rows[i][0]) for i in ids])
        ref_col = np.array([rows[i][2] for i in ids], dtype=np.float64)
        for lagging in (False, True):
            array_form = rows_answer(inexact, ref_col, now, lagging).tolist()
            for k, bid in enumerate(ids):
                hl_case, inherits, evidence = cases[bid]
                flag, e_hl, e_ref, _, _, own = rows[bid]
                # the case itself says: a row kept at another half-life, an inherited
                # score, evidence after the moment read, or a lagging cache cannot answer
                changed = evidence and (
                    hl_case == "own changed" or (hl_case == "default" and default != 90.0)
                )
                expected = not (lagging or changed or inherits or (evidence and now < ref))
                python_flag = half_life_changed(e_hl, own, default) or bid in successors
                assert bool(flag) == python_flag == (changed or inherits), cases[bid]
                assert row_answers(flag, e_ref, now, lagging) == expected, (cases[bid], now)
                assert array_form[k] == expected, (cases[bid], now, lagging)
                if not lagging:
                    assert (bid not in cannot) == expected, (cases[bid], now)
                if not inherits and evidence and not lagging:  # evidence_many's own test
                    reader_hl = store.half_life(value=own)
                    assert member_answers(e_hl, reader_hl, e_ref, now) == expected
                decided += 1
    return decided


@pytest.mark.parametrize("read_days_later", [0.5, 30.0])
def test_a_row_the_rule_lets_answer_gives_the_logs_bits(
    store: PlaybookStore, clock: Clock, read_days_later: float
) -> None:
    cases = _world(store, clock)
    clock.advance(days=read_days_later)
    now_t = store.now()
    now = scoring.days(now_t)
    default = store.policy.half_life_days
    rows = {
        r[0]: r[1:]
        for r in store.sql.all(
            f"SELECT b.id, {INEXACT}, e.half_life, e.ref, e.helpful, e.harmful "
            "FROM bullets b LEFT JOIN evidence e ON e.bullet_id = b.id",
            (default,),
        )
    }
    from_log = store.evidence_many(list(cases), at=now_t)
    differs = []
    for bid, (_, inherits, evidence) in cases.items():
        flag, e_hl, ref, h, x = rows[bid]
        if not evidence:
            assert row_answers(flag, ref, now, False) == (not inherits)
            continue
        cached = scoring.sums_at(ref, h, x, e_hl, now)
        log = (from_log[bid].helpful, from_log[bid].harmful)
        if row_answers(flag, ref, now, False):
            assert cached == log, cases[bid]  # exactly: the same functions, the same bits
        else:
            differs.append(cached != log)
    # the rows it turns away would be wrong: another half-life, or the ancestor left out
    assert differs and all(differs)
