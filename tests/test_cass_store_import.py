"""A cass-memory playbook.yaml imported into a store: fields mapped, scores per SPEC §4."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

import pytest
import yaml

from playbook.curation import curate
from playbook.interop.cass import parse_cass_playbook
from playbook.interop.importing import ImportReport, import_data
from playbook.retrieval.query import recall
from playbook.store import PlaybookStore

from .helpers import T0, dump

FIXTURE = Path(__file__).parent / "fixtures" / "cass_playbook.yaml"


def decayed(at: str, half_life: float = 90.0, weight: float = 1.0) -> float:
    """SPEC §4, computed here independently of playbook.core.scoring."""
    t = datetime.fromisoformat(at.replace("Z", "+00:00"))
    age_days = max(0.0, (T0 - t).total_seconds() / 86400)
    return weight * 0.5 ** (age_days / half_life)


def effective(h: float, x: float, maturity: str) -> float:
    mult = {"candidate": 0.5, "established": 1.0, "proven": 1.5, "deprecated": 0.0}[maturity]
    return (h - 4 * x) * mult


@pytest.fixture
def report(store: PlaybookStore) -> ImportReport:
    return import_data(store, FIXTURE.read_bytes(), "cass", source="cass_playbook.yaml")


# id -> (H, X) by SPEC §4 at T0, computed here from the fixture's events.
EVIDENCE = {
    "b-pinned": (decayed("2025-02-01T10:00:00Z") + decayed("2025-02-03T11:30:15.250Z"), 0.0),
    "b-lang": (decayed("2025-03-01T09:00:00Z", 30), decayed("2025-03-04T14:45:00Z", 30)),
    "b-anti": (0.0, decayed("2025-03-12T18:20:00Z")),
    "b-dep": (decayed("2025-01-20T10:00:00Z"), decayed("2025-04-01T10:00:00Z")),
    # The replacedBy chain a -> b -> c: c carries a's evidence.
    "b-chain-c": (decayed("2025-01-25T10:00:00Z"), 0.0),
    "b-chain-b": (decayed("2025-01-25T10:00:00Z"), 0.0),
    "b-retired": (0.0, 0.0),
}
# The maturity each file recorded, kept by a plain import.
RECORDED = {
    "b-pinned": "proven",  # pinned, although it earned only candidate
    "b-lang": "established",  # its score is negative, yet it keeps what cass-memory said
    "b-anti": "candidate",
    "b-dep": "deprecated",
    "b-chain-c": "candidate",
    "b-chain-b": "deprecated",
    "b-retired": "deprecated",
}


def assert_scores(store: PlaybookStore, maturities: dict[str, str]) -> None:
    for bid, (h, x) in EVIDENCE.items():
        bullet = store.get_bullet(bid)
        assert bullet is not None and bullet.maturity == maturities[bid], (bid, bullet)
        score = store.score(bid)
        assert score.helpful == pytest.approx(h, rel=1e-12, abs=1e-15), bid
        assert score.harmful == pytest.approx(x, rel=1e-12, abs=1e-15), bid
        want = effective(h, x, maturities[bid])
        assert score.effective == pytest.approx(want, rel=1e-12, abs=1e-15)


def test_import_keeps_the_maturity_the_file_recorded(
    store: PlaybookStore, report: ImportReport
) -> None:
    assert store.now() == T0
    assert_scores(store, RECORDED)
    assert report.maturity_changes == []
    assert not [d for d in store.decisions() if d.action == "maturity"]
    # b-lang, b-anti and b-chain-c are the rules the pass may move (not pinned, retired or
    # deprecated); each has under 3 events, so each earns candidate: b-lang differs, and
    # its negative score is what makes the pass move it.
    assert report.maturity == {
        "kept": "as recorded",
        "rated": 3,
        "would_move": 1,
        "earned_differs": 1,
    }


def test_rerate_runs_the_maturity_pass_at_import(store: PlaybookStore) -> None:
    report = import_data(store, FIXTURE.read_bytes(), "cass", rerate=True)
    # b-lang's effective score is negative: one rung down. Nothing else can move.
    assert_scores(store, {**RECORDED, "b-lang": "candidate"})
    assert [tuple(c) for c in report.maturity_changes] == [("b-lang", "established", "candidate")]
    (moved,) = [d for d in store.decisions() if d.action == "maturity"]
    assert moved.bullet_id == "b-lang" and moved.batch_id == report.batch_id
    assert moved.detail == {"from": "established", "to": "candidate"}


def test_a_mark_after_the_import_moves_only_its_own_rule(
    store: PlaybookStore, report: ImportReport
) -> None:
    # Regression: the first unrelated mark after an import re-rated every imported rule.
    result = curate(store, [{"type": "helpful", "bullet_id": "b-anti"}])
    assert result.outcomes[0].status == "applied"
    assert all(bid == "b-anti" for bid, _, _ in result.maturity_changes)
    assert store.get_bullet("b-lang").maturity == "established"  # type: ignore[union-attr]


def test_deprecation_reasons_are_kept_in_the_decision_log(
    store: PlaybookStore, report: ImportReport
) -> None:
    reasons = {d.bullet_id: d for d in store.decisions() if d.action == "deprecate"}
    assert set(reasons) == {"b-dep", "b-retired", "b-chain-a"}
    assert reasons["b-dep"].reason == "Superseded by ruff format"
    assert reasons["b-retired"].reason == "Workers reload themselves since v3"
    assert reasons["b-retired"].detail == {
        "source": "cass-memory",
        "deprecated_at": "2025-05-01T09:00:00.000000Z",
    }
    assert reasons["b-chain-a"].detail["replaced_by"] == "b-chain-b"
    assert all(d.actor == "human" and d.batch_id == report.batch_id for d in reasons.values())


def test_fields_are_mapped(store: PlaybookStore, report: ImportReport) -> None:
    pinned = store.get_bullet("b-pinned")
    assert pinned is not None
    assert pinned.pinned and pinned.pinned_reason == "Release policy, agreed with the team"
    assert pinned.source == "imported" and pinned.tags == ["ci", "npm", "release"]
    assert pinned.provenance.session_ref == "/home/dev/.claude/projects/app/s0.jsonl"
    assert pinned.created_at == datetime(2025, 1, 10, 8, tzinfo=UTC)
    lang = store.get_bullet("b-lang")
    assert lang is not None and (lang.scope, lang.scope_key) == ("language", "python")
    assert lang.half_life_days == 30.0
    anti = store.get_bullet("b-anti")
    assert anti is not None and anti.type == "anti-pattern"
    dep = store.get_bullet("b-dep")
    assert dep is not None and (dep.state, dep.maturity) == ("active", "deprecated")
    for bid, end in (("b-retired", "2025-05-01"), ("b-chain-a", "2025-02-15")):
        b = store.get_bullet(bid)
        assert b is not None and b.state == "retired"
        assert b.valid_to is not None and b.valid_to.date().isoformat() == end
    # replacedBy chain -> supersedes edges, newest first in lineage.
    assert store.lineage("b-chain-c").predecessors == [("supersedes", "b-chain-b")]
    assert store.lineage("b-chain-b").predecessors == [("supersedes", "b-chain-a")]
    assert store.lineage("b-chain-a").successors == [("supersedes", "b-chain-b")]
    # Events keep observation time; knowledge time is the same moment.
    (first, second) = store.timeline("b-pinned")
    assert first.at == first.recorded_at == datetime(2025, 2, 1, 10, tzinfo=UTC)
    assert second.context == "release 4.2 went out clean"
    assert second.provenance.session_ref == "/home/dev/.codex/sessions/s2.jsonl"
    (harm,) = [e for e in store.timeline("b-lang") if e.kind == "harmful"]
    assert harm.reason == "wasted_time" and harm.actor == "agent"
    # deprecatedPatterns -> human blocks, which refuse matching adds.
    blocks = store.blocked()
    assert [b.pattern for b in blocks] == [
        "npm install --legacy-peer-deps",
        r"sleep\s+\d+ in tests",
    ]
    assert all(b.actor == "human" and b.active for b in blocks)
    assert blocks[0].reason.startswith("Hides real peer conflicts")
    refused = curate(store, [{"type": "add", "content": "npm install --legacy-peer-deps"}])
    assert refused.outcomes[0].status == "refused-blocked"
    # The deprecated rule warns on recall; retired ones never surface.
    r = recall(store, "black line length")
    assert [i.bullet.id for i in r.deprecated_warnings] == ["b-dep"]
    assert not recall(store, "restart worker pool deploy").bullets


def test_report_and_decision_log(store: PlaybookStore, report: ImportReport) -> None:
    parsed = parse_cass_playbook(FIXTURE.read_bytes())
    assert report.unmapped == parsed.unmapped and report.unmapped
    assert report.counts == {"bullets": 8, "feedback": 8, "edges": 2, "blocked_patterns": 2}
    assert report.ids == {}  # every cass id was kept
    (decision,) = [d for d in store.decisions() if d.action == "import"]
    assert decision.actor == "human" and decision.detail["format"] == "cass"
    assert decision.detail["counts"]["bullets"] == 8
    assert decision.detail["source"] == "cass_playbook.yaml"


def test_ids_that_cannot_be_kept_are_replaced(store: PlaybookStore) -> None:
    doc = {
        "schema_version": 2,
        "bullets": [
            {
                "id": "has spaces in it",
                "category": "general",
                "content": "Prefer small commits",
                "createdAt": "2025-01-01T00:00:00Z",
                "feedbackEvents": [{"type": "helpful", "timestamp": "2025-01-02T00:00:00Z"}],
            }
        ],
    }
    report = import_data(store, yaml.safe_dump(doc).encode(), "cass")
    new = report.ids["has spaces in it"]
    assert new.startswith("b-") and store.get_bullet(new) is not None
    assert len(store.timeline(new)) == 1


def test_unreadable_cass_file_changes_nothing(store: PlaybookStore) -> None:
    before = dump(store)
    from playbook.interop.importing import InvalidImport

    with pytest.raises(InvalidImport, match="schema_version"):
        import_data(store, b"schema_version: 7\nbullets: []\n", "cass")
    assert dump(store) == before


def test_an_imported_rule_keeps_its_maturity_until_its_own_evidence_moves_it(
    store: PlaybookStore,
) -> None:
    # SPEC §4: recorded "proven", but its evidence is mostly harm (a negative score).
    harm = [{"type": "harmful", "timestamp": "2026-02-01T10:00:00Z", "reason": "outdated"}]
    doc = {
        "schema_version": 2,
        "bullets": [
            {
                "id": "b-harmed",
                "category": "ci",
                "content": "Cache node_modules between CI runs",
                "maturity": "proven",
                "state": "active",
                "createdAt": "2026-01-01T00:00:00Z",
                "feedbackEvents": [{"type": "helpful", "timestamp": "2026-01-15T10:00:00Z"}, *harm],
            },
            {
                "id": "b-other",
                "category": "ci",
                "content": "Pin the CI image digest",
                "state": "active",
                "createdAt": "2026-01-01T00:00:00Z",
            },
        ],
    }
    report = import_data(store, yaml.safe_dump(doc).encode(), "cass")
    assert store.score("b-harmed").effective < 0
    assert report.maturity["earned_differs"] == 1
    # A mark on another rule leaves it alone ...
    unrelated = curate(store, [{"type": "helpful", "bullet_id": "b-other"}])
    assert [c[0] for c in unrelated.maturity_changes] in ([], ["b-other"])
    assert store.get_bullet("b-harmed").maturity == "proven"  # type: ignore[union-attr]
    # ... its own new evidence moves it (by the pass's rule, whatever rung that gives).
    own = curate(store, [{"type": "harmful", "bullet_id": "b-harmed", "reason": "outdated"}])
    assert [c[:2] for c in own.maturity_changes] == [("b-harmed", "proven")]
