"""One definition of scoring on both sides: the database's own fold and maturity pass
(`store/postgres/scoring_sql.py`, what it computes for the agent role) give the same bits
as Python's (`playbook.core.scoring`, `store/evidence.py`) for the same log.

Generated logs (observation times from 1970 to 2999, weights from 0 to 1000 with subnormal
and huge ones, half-lives from a hundredth of a day to a century, lineage by supersedes
edges) are folded by each side into two copies of one playbook, and the cached sums compared
exactly; the evidence at a moment, the earned rung, the next maturity, the test of step 5
and whether a rule is still demoting are compared on the same inputs. CI runs a few dozen
logs; `pytest -m slow` a few hundred.
"""

from __future__ import annotations

import itertools
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from playbook.core import scoring
from playbook.core.policy import DEFAULT_POLICY, Policy
from playbook.store import PlaybookStore, iso, open_store
from playbook.store import testing as raw

pytestmark = pytest.mark.postgres

CI = settings(max_examples=40, deadline=None, suppress_health_check=list(HealthCheck))
LONG = settings(max_examples=400, deadline=None, suppress_health_check=list(HealthCheck))
# A policy far from the defaults: the constants the database was given are the ones it uses.
ODD = Policy(
    half_life_days=7.5, harm_multiplier=2.5, multiplier_candidate=0.25, min_events_for_rung=2.0,
    deprecate_harm_ratio=0.45, proven_min_helpful=4.0, proven_max_harm_ratio=0.2,
    deprecate_score_below=-1.5, epsilon=0.001, invert_min_harm=1.5, invert_harm_over_help=1.25,
)  # fmt: skip
EPOCH = datetime(1970, 1, 1, tzinfo=UTC)

times = st.integers(0, (datetime(2999, 12, 31, tzinfo=UTC) - EPOCH) // timedelta(microseconds=1))
weights = st.one_of(
    st.sampled_from([1.0, 1 / 3, 0.0, 1000.0, 5e-324, 1e-300]),
    st.floats(0.0, 1000.0, allow_nan=False, allow_infinity=False),
)
half_lives = st.one_of(st.none(), st.floats(0.01, 36500.0), st.sampled_from([90.0, 0.01]))
events = st.lists(st.tuples(st.booleans(), times, weights), min_size=1, max_size=12)


_ids = itertools.count()  # hypothesis seeds `random` alike for every example


def _new_id() -> str:
    return f"b-{next(_ids):08x}"


def _at(micros: int) -> str:
    return iso(EPOCH + timedelta(microseconds=micros))


@pytest.fixture(scope="module")
def twins(pg_server: str, worker_id: str) -> Iterator[dict[str, Any]]:
    """Two empty playbooks with the database's functions (one per policy each): one whose
    owner folds in Python, one whose folds the database makes (`playbook_fold`)."""
    from .helpers import pg as pg_support

    out: dict[str, Any] = {}
    stores: list[PlaybookStore] = []
    for name, policy in (("default", DEFAULT_POLICY), ("odd", ODD)):
        pair = []
        for _ in range(2):
            store = open_store(pg_support.fresh_target(pg_server, worker_id), policy=policy)
            store.roles.install(f"{name}_scoring_agent", f"{name}_scoring_human")
            stores.append(store)
            pair.append(store)
        out[name] = pair
    yield out
    for store in stores:
        store.close()


def _evidence(store: PlaybookStore, bid: str) -> tuple[Any, ...]:
    return tuple(
        raw.rows(
            store,
            "SELECT half_life, ref, helpful, harmful, count, last_at, last_event_id "
            "FROM evidence WHERE bullet_id = ?",
            (bid,),
        )[0]
    )


def _log(store: PlaybookStore, bid: str, evs: list[tuple[bool, int, float]]) -> None:
    for helpful, micros, weight in evs:
        raw.run(
            store,
            "INSERT INTO feedback (bullet_id, kind, at, recorded_at, weight) VALUES (?,?,?,?,?)",
            (bid, "helpful" if helpful else "harmful", _at(micros), _at(micros), weight),
        )


def _fold_in_database(store: PlaybookStore) -> None:
    with store.transaction():
        store.sql.call("SELECT playbook_fold()")


@given(
    first=events, then=st.lists(st.tuples(st.booleans(), times, weights), max_size=8),
    hl=half_lives, changed=half_lives, policy=st.sampled_from(["default", "odd"]),
)  # fmt: skip
@CI
def test_the_database_folds_the_log_as_python_does(
    twins: dict[str, Any],
    first: list[tuple[bool, int, float]],
    then: list[tuple[bool, int, float]],
    hl: float | None,
    changed: float | None,
    policy: str,
) -> None:
    """The same events, folded in two rounds (the second after the rule's half-life may have
    changed, which folds its whole log again): the cached sums are the same floats."""
    python, database = twins[policy]
    bid = _new_id()
    for store in (python, database):
        store.insert_bullet("A rule", bullet_id=bid, half_life_days=hl)
    for rounds in (first, then):
        for store in (python, database):
            _log(store, bid, rounds)
        python.sync_evidence()
        _fold_in_database(database)
        if changed != hl:
            for store in (python, database):
                raw.run(store, "UPDATE bullets SET half_life_days = ? WHERE id = ?", (changed, bid))
            hl = changed
        assert _evidence(database, bid) == _evidence(python, bid)


@given(
    logs=st.lists(st.tuples(events, half_lives), min_size=1, max_size=4),
    edges=st.lists(st.tuples(st.integers(0, 3), st.integers(0, 3)), max_size=5),
    now=times, policy=st.sampled_from(["default", "odd"]),
)  # fmt: skip
@CI
def test_the_database_reads_evidence_and_judges_as_python_does(
    twins: dict[str, Any],
    logs: list[tuple[list[tuple[bool, int, float]], float | None]],
    edges: list[tuple[int, int]],
    now: int,
    policy: str,
) -> None:
    """A bullet's evidence at a moment (its own and its supersedes-ancestors', from the cache
    or, for a changed half-life or an event after that moment, from the log), the rung it
    earns, its next maturity from every rung, pinned or not, step 5's test and whether it is
    still demoting: the same on both sides."""
    store = twins[policy][0]
    p = store.policy
    ids = [_new_id() for _ in logs]
    for bid, (evs, hl) in zip(ids, logs, strict=True):
        store.insert_bullet("A rule", bullet_id=bid, half_life_days=hl)
        _log(store, bid, evs)
    for src, dst in edges:
        if src < len(ids) and dst < len(ids) and src != dst:
            store.add_edge("supersedes", ids[src], ids[dst])
    store.sync_evidence()
    at = EPOCH + timedelta(microseconds=now)
    mine = store.evidence_many(ids, at=at)
    for bid in ids:
        h, x, pending = raw.rows(
            store, "SELECT * FROM playbook_evidence(?, ?)", (bid, scoring.days(at))
        )[0]
        assert (h, x, pending) == (mine[bid].helpful, mine[bid].harmful, mine[bid].pending_until)
        for current in ("candidate", "established", "proven", "deprecated"):
            for pinned in (False, True):
                theirs = raw.value(
                    store, "SELECT playbook_next_maturity(?, ?, ?, ?)", (current, h, x, pinned)
                )
                assert theirs == str(scoring.next_maturity(current, h, x, pinned, p))
                demoting = raw.value(
                    store, "SELECT playbook_still_demoting(?, ?, ?, ?)", (h, x, current, pinned)
                )
                assert demoting == scoring.still_demoting(h, x, current, pinned, p)
        assert raw.value(store, "SELECT playbook_earned(?, ?)", (h, x)) == str(
            scoring.earned_rung(h, x, p)
        )
        judged = raw.value(
            store,
            "SELECT ev.harmful >= ?::float8 - ?::float8 AND ev.harmful > "
            "playbook_scaled(ev.helpful, ?::float8) FROM (SELECT ?::float8 AS helpful, "
            "?::float8 AS harmful) ev",
            (p.invert_min_harm, p.epsilon, p.invert_harm_over_help, h, x),
        )
        assert judged == scoring.should_invert(h, x, p)


def test_the_judgement_is_the_same_on_numbers_at_every_edge(twins: dict[str, Any]) -> None:
    """Sums at the rungs' thresholds (to the last bit either side), the smallest a fold
    leaves (0, or TINY and up: below it a fold flushes to 0), huge ones."""
    edges = [0.0, scoring.TINY, scoring.TINY * 2, 1e-200, 1.0, 2.99, 2.99 + 1e-15, 3.0]
    edges += [10.0, 9.99, 1e6, 1e12, 0.75, 0.25, 1 / 3, 2.0, 1.5, 1.5 - 2**-52]
    for name, (store, _) in twins.items():
        p = store.policy
        for h in edges:
            for x in edges:
                for current in ("candidate", "established", "proven"):
                    theirs = raw.value(
                        store, "SELECT playbook_next_maturity(?, ?, ?, false)", (current, h, x)
                    )
                    assert theirs == str(scoring.next_maturity(current, h, x, False, p)), (
                        name, h, x, current,
                    )  # fmt: skip
                assert raw.value(
                    store, "SELECT playbook_effective(?, ?, 'proven')", (h, x)
                ) == scoring.effective_score(h, x, "proven", p)


@pytest.mark.slow
@given(first=events, then=events, hl=half_lives, policy=st.sampled_from(["default", "odd"]))
@LONG
def test_the_database_folds_long_logs_as_python_does(
    twins: dict[str, Any],
    first: list[tuple[bool, int, float]],
    then: list[tuple[bool, int, float]],
    hl: float | None,
    policy: str,
) -> None:
    test_the_database_folds_the_log_as_python_does.hypothesis.inner_test(  # type: ignore[attr-defined]
        twins, first, then, hl, hl, policy
    )
