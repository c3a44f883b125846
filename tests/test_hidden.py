"""What decay hid (`review.explain_hidden`, `recall --explain-hidden`, MCP recall's
`explain_hidden`). Expected numbers are worked out here from SPEC §4 and §6 with a pinned
clock; the remedies are then carried out and recall is asked again, so a remedy that says
"3 marks" is checked by making 3 marks (and 2 are not enough)."""

from __future__ import annotations

from datetime import timedelta
from pathlib import Path

import pytest

from playbook import review
from playbook.mcp.tools import PlaybookTools
from playbook.retrieval.query import recall
from playbook.store import PlaybookStore, open_store

from .helpers import T0, Clock, add, mark
from .helpers.cli import run_cli

H90 = 0.5  # one half-life


def build(store: PlaybookStore, clock: Clock) -> dict[str, str]:
    """Every id matches "npm" with an exact token (keyword 3), all at T0; then 90 days."""
    ids = {
        "a": add(store, "Pin npm in release jobs"),
        "b": add(store, "Cache the npm store in CI"),
        "c": add(store, "Run npm scripts through yarn"),
        "e": add(store, "Run npm audit in CI"),
        "f": add(store, "Use npm workspaces", scope="language", scope_key="javascript"),
    }
    mark(store, ids["a"], n=3)  # established, H = 3
    mark(store, ids["b"])  # candidate, H = 1
    mark(store, ids["c"], "harmful", n=3)  # deprecated at the 2nd, inverted at the 3rd
    ids["d"] = store.lineage(ids["c"]).successors[0][1]
    mark(store, ids["e"], n=2)
    review.deprecate(store, ids["e"], "we moved to osv-scanner")
    clock.advance(days=90)
    return ids


def by_id(report: review.HiddenReport) -> dict[str, review.HiddenItem]:
    return {h.bullet.id: h for h in report.hidden}


def test_an_outranked_rule_with_its_numbers_and_the_marks_that_bring_it_back(
    store: PlaybookStore, clock: Clock
) -> None:
    ids = build(store, clock)
    report = review.explain_hidden(store, "npm", limit=1)
    a_final = 3 * (3 * H90) * 1.0  # relevance 3, effective 1.5 (established)
    assert report.cutoffs["bullets"] == pytest.approx(a_final)
    assert report.shown == {"bullets": 1, "anti_patterns": 1, "deprecated_warnings": 1}
    assert report.counts == {"outranked": 2, "deprecated": 1, "out_of_scope": 0, "retired": 1}
    b = by_id(report)[ids["b"]]
    assert (b.reason, b.in_list, b.rank) == ("outranked", "bullets", 2)
    assert b.keyword == b.relevance == 3.0
    assert b.helpful == pytest.approx(H90) and b.harmful == 0.0
    assert (b.maturity, b.maturity_multiplier, b.harm_multiplier) == ("candidate", 0.5, 4.0)
    assert b.effective == pytest.approx(0.25) and b.final == pytest.approx(0.75)
    assert not b.at_floor and b.days_silent == pytest.approx(90.0) and not b.stale
    # marks: H 1.5, 2.5 stay candidate (finals 2.25, 3.75 < 4.5); at 3.5 (3 events) it
    # earns established: effective 3.5, final 10.5
    (fix,) = b.remedies
    assert (fix.action, fix.marks, fix.rank_after) == ("feedback", 3, 1)
    assert fix.final_after == pytest.approx(10.5)
    assert "ranks #2 in rules with final 0.75 < cut-off 4.50" in b.why()
    # the rule out of scope when there is no scope: ranked, at the confidence floor
    f = by_id(report)[ids["f"]]
    assert f.reason == "outranked" and f.at_floor and f.final == pytest.approx(3 * 0.1)


def test_the_marks_it_says_are_the_marks_it_takes(store: PlaybookStore, clock: Clock) -> None:
    ids = build(store, clock)
    mark(store, ids["b"], n=2)
    assert [i.bullet.id for i in recall(store, "npm", limit=1).bullets] == [ids["a"]]
    mark(store, ids["b"])
    assert [i.bullet.id for i in recall(store, "npm", limit=1).bullets] == [ids["b"]]


def test_a_deprecated_rule_and_what_a_restore_would_do(store: PlaybookStore, clock: Clock) -> None:
    ids = build(store, clock)
    e = by_id(review.explain_hidden(store, "npm", limit=1))[ids["e"]]
    assert (e.reason, e.in_list, e.rank, e.shown_as_warning) == (
        "deprecated", "deprecated_warnings", 1, True
    )  # fmt: skip
    assert e.helpful == pytest.approx(2 * H90) and e.effective == 0.0 and e.at_floor
    restore, then = e.remedies
    # restore: earned rung of (1, 0) is candidate: effective 0.5, final 1.5 -> #2 behind 4.5
    assert (restore.action, restore.rank_after) == ("restore", 2)
    assert restore.final_after == pytest.approx(1.5)
    # then marks: H 2 (candidate, final 3) is not enough; H 3 earns established: final 9
    assert (then.action, then.marks, then.rank_after) == ("restore+feedback", 2, 1)
    assert then.final_after == pytest.approx(9.0)
    review.restore(store, ids["e"])
    mark(store, ids["e"])
    assert ids["e"] not in [i.bullet.id for i in recall(store, "npm", limit=1).bullets]
    mark(store, ids["e"])
    assert [i.bullet.id for i in recall(store, "npm", limit=1).bullets] == [ids["e"]]


def test_a_retired_rule_points_at_what_replaced_it(store: PlaybookStore, clock: Clock) -> None:
    ids = build(store, clock)
    c = by_id(review.explain_hidden(store, "npm", limit=1))[ids["c"]]
    assert (c.reason, c.in_list, c.rank) == ("retired", None, None)
    assert c.successors == (ids["d"],)
    assert c.maturity == "deprecated" and c.effective == 0.0
    assert c.harmful == pytest.approx(3.0)  # frozen at its retirement, T0: no decay
    assert c.days_silent == pytest.approx(0.0)
    (fix,) = c.remedies
    assert fix.action == "successor" and ids["d"] in fix.note
    assert ids["c"] not in {i.bullet.id for i in recall(store, "npm", limit=100).bullets}


def test_out_of_scope_and_as_of(store: PlaybookStore, clock: Clock) -> None:
    ids = build(store, clock)
    report = review.explain_hidden(store, "npm", limit=1, scope=["language:python"])
    f = by_id(report)[ids["f"]]
    assert f.reason == "out_of_scope" and report.counts["out_of_scope"] == 1
    assert f.remedies[0].action == "scope" and "language:javascript" in f.remedies[0].note
    then = review.explain_hidden(store, "npm", limit=1, as_of=T0 + timedelta(days=45))
    b = by_id(then)[ids["b"]]
    assert b.helpful == pytest.approx(0.5 ** (45 / 90)) and b.days_silent == pytest.approx(45)
    assert review.explain_hidden(store, "npm", limit=1, as_of=T0 - timedelta(hours=1)).total == 0


def test_hidden_numbers_are_recalls_own(store: PlaybookStore, clock: Clock) -> None:
    build(store, clock)
    report = review.explain_hidden(store, "npm cache release", limit=2)
    full = recall(store, "npm cache release", limit=100)
    ranked = {i.bullet.id: i for i in full.bullets + full.anti_patterns}
    shown = {i.bullet.id for i in recall(store, "npm cache release", limit=2).bullets}
    for h in report.hidden:
        assert h.bullet.id not in shown
        if h.reason == "outranked":
            assert h.final == ranked[h.bullet.id].final_score
            assert h.effective == pytest.approx(ranked[h.bullet.id].effective_score)


def test_explain_hidden_needs_a_limit(store: PlaybookStore) -> None:
    with pytest.raises(ValueError, match="at least 1"):
        review.explain_hidden(store, "npm", limit=0)


# ------------------------------------------------------------------ surfaces


@pytest.fixture
def npm_db(tmp_path: Path) -> tuple[Path, dict[str, str]]:
    path = tmp_path / "state.sqlite3"
    clock = Clock()
    with open_store(path, clock=clock) as s:
        ids = build(s, clock)
    return path, ids


def test_cli_recall_explain_hidden(npm_db: tuple[Path, dict[str, str]]) -> None:
    db, ids = npm_db
    r = run_cli("recall", "npm", "-n", "1", "--explain-hidden", "--json", db=db)
    assert r.rc == 0, r.err
    hidden = r.data["hidden"]
    assert hidden["counts"]["retired"] == 1 and hidden["limit"] == 1
    reasons = {h["id"]: h["reason"] for h in hidden["hidden"]}
    assert reasons[ids["b"]] == "outranked" and reasons[ids["c"]] == "retired"
    assert r.data["bullets"][0]["bullet"]["id"] == ids["a"]  # recall's own output is kept
    text = run_cli("recall", "npm", "-n", "1", "--explain-hidden", db=db)
    assert text.rc == 0, text.err
    assert "Hidden: 4 rules matched but not shown (2 outranked, 1 deprecated, 1 retired)" in (
        text.out
    )
    assert f"-> a retired rule cannot be restored; {ids['d']} replaced it" in text.out
    plain = run_cli("recall", "npm", "-n", "1", "--json", db=db)
    assert "hidden" not in plain.data


def test_mcp_recall_explain_hidden(npm_db: tuple[Path, dict[str, str]]) -> None:
    db, ids = npm_db
    tools = PlaybookTools(db)
    out = tools.recall("npm", 1, None, True)
    assert {h["id"] for h in out["hidden"]["rules"]} >= {ids["b"], ids["c"], ids["e"]}
    assert "hidden" not in tools.recall("npm", 1)
