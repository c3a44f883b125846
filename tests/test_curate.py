"""Curation (SPEC §5): each of the six steps, pinned protection, invalid input."""

from __future__ import annotations

import pytest

from playbook.curation import STATUSES, curate
from playbook.store import PlaybookStore

from .helpers import Clock, add, dump

PROV = {"session_ref": "session:abc", "byte_offset": 4096}


def statuses(result) -> list[str]:
    return [o.status for o in result.outcomes]


# ------------------------------------------------------------------ add and provenance
def test_add_records_provenance_and_fields(store: PlaybookStore) -> None:
    r = curate(
        store,
        [
            {
                "type": "add",
                "content": "Pin npm to 11 in release jobs",
                "tags": ["ci", "npm"],
                "category": "ci",
                "scope": "workspace",
                "scope_key": "web",
            }
        ],
        provenance=PROV,
    )
    b = store.get_bullet(r.added[0])
    assert b is not None
    assert (b.provenance.session_ref, b.provenance.byte_offset) == ("session:abc", 4096)
    assert (b.category, b.tags, b.scope, b.scope_key) == ("ci", ["ci", "npm"], "workspace", "web")
    assert (b.type, b.source, b.state, b.maturity) == ("rule", "learned", "active", "candidate")
    assert b.id.startswith("b-") and len(b.id) == 10


def test_avoid_prefix_makes_an_anti_pattern(store: PlaybookStore) -> None:
    bid = add(store, "AVOID: force-pushing to shared branches")
    assert store.get_bullet(bid).type == "anti-pattern"


# ------------------------------------------------------------------ step 1
def test_step1_one_vote_per_bullet_per_batch(store: PlaybookStore) -> None:
    bid = add(store, "Run migrations in a transaction")
    r = curate(
        store,
        [
            {"type": "helpful", "bullet_id": bid},
            {"type": "harmful", "bullet_id": bid, "reason": "caused_bug"},
            {"type": "helpful", "bullet_id": bid, "context": "again"},
        ],
    )
    assert statuses(r) == ["applied", "dropped-duplicate", "dropped-duplicate"]
    assert [e.kind for e in store.timeline(bid)] == ["helpful"]


def test_step1_same_add_twice_in_a_batch(store: PlaybookStore) -> None:
    r = curate(
        store,
        [
            {"type": "add", "content": "Use uv for installs"},
            {"type": "add", "content": "use UV for installs!"},
        ],
    )
    assert statuses(r) == ["added", "dropped-duplicate"]
    assert len(store.bullets()) == 1


# ------------------------------------------------------------------ step 2
@pytest.mark.parametrize(
    "content",
    [
        "Disable the failing test to get CI green",  # exact
        "disable the failing test, to get ci green.",  # normalized
        "Disable the failng test to get CI gren",  # typos: rapidfuzz ratio
        "To get CI green disable the failing test",  # same tokens: Jaccard
    ],
)
def test_step2_blocked_patterns_refuse_near_matches(store: PlaybookStore, content: str) -> None:
    pid = store.block("Disable the failing test to get CI green", "hides real bugs")
    r = curate(store, [{"type": "add", "content": content}])
    assert statuses(r) == ["refused-blocked"]
    assert pid in r.outcomes[0].reason
    assert store.bullets() == []


def test_step2_unrelated_and_unblocked_adds_pass(store: PlaybookStore) -> None:
    pid = store.block("Disable the failing test to get CI green", "hides real bugs")
    assert statuses(curate(store, [{"type": "add", "content": "Quarantine flaky tests"}])) == [
        "added"
    ]
    store.unblock(pid)
    r = curate(store, [{"type": "add", "content": "Disable the failing test to get CI green"}])
    assert statuses(r) == ["added"]
    assert [b.active for b in store.blocked(include_inactive=True)] == [False]


# ------------------------------------------------------------------ step 3
def test_step3_exact_duplicate_folds_into_helpful(store: PlaybookStore) -> None:
    bid = add(store, "Pin npm to 11 in release jobs")
    r = curate(store, [{"type": "add", "content": "Pin npm to 11 in release jobs"}], PROV)
    assert statuses(r) == ["folded"]
    assert r.outcomes[0].bullet_id == bid
    (event,) = store.timeline(bid)
    assert event.kind == "helpful"
    assert event.provenance.session_ref == "session:abc"
    assert len(store.bullets()) == 1


def test_step3_jaccard_near_duplicate_folds(store: PlaybookStore) -> None:
    bid = add(store, "Pin npm to 11 in release jobs")
    # core tokens {pin npm to 11 in release jobs} + {version}: Jaccard 7/8 = 0.875
    r = curate(store, [{"type": "add", "content": "Pin npm to version 11 in release jobs"}])
    assert statuses(r) == ["folded"] and r.outcomes[0].bullet_id == bid
    # {pin npm to 11 in release} vs 7 tokens of the original: 6/7 = 0.857 still folds;
    # dropping two words (5/7 = 0.71) does not.
    r = curate(store, [{"type": "add", "content": "Pin npm to 11 in release"}])
    assert statuses(r) == ["folded"]
    r = curate(store, [{"type": "add", "content": "Pin npm to 11"}])
    assert statuses(r) == ["added"]


def test_step3_opposite_polarity_is_added_and_flagged(store: PlaybookStore) -> None:
    bid = add(store, "Always squash commits before merging feature branches")
    r = curate(
        store, [{"type": "add", "content": "Never squash commits before merging feature branches"}]
    )
    assert statuses(r) == ["conflict"]
    new = r.added[0]
    assert r.conflicts == [(new, bid)]
    (flag,) = store.conflicts()
    assert (flag.a, flag.b, flag.status) == (new, bid, "open")
    # An anti-pattern with the same words has the "never" polarity: it folds into that one.
    r = curate(
        store,
        [
            {
                "type": "add",
                "content": "Squash commits before merging feature branches",
                "bullet_type": "anti-pattern",
            }
        ],
    )
    assert statuses(r) == ["folded"] and r.outcomes[0].bullet_id == new


def test_step3_anti_pattern_against_a_rule_is_a_conflict(store: PlaybookStore) -> None:
    bid = add(store, "Run database migrations during deploys")
    r = curate(store, [{"type": "add", "content": "AVOID: run database migrations during deploys"}])
    assert statuses(r) == ["conflict"] and r.conflicts == [(r.added[0], bid)]


def test_step3_zombie_adds_are_refused(store: PlaybookStore) -> None:
    dep = add(store, "Use setup.py develop for editable installs")
    curate(store, [{"type": "deprecate", "bullet_id": dep, "reason": "pip -e replaces it"}])
    r = curate(store, [{"type": "add", "content": "Use setup.py develop for editable installs"}])
    assert statuses(r) == ["refused-zombie"] and r.outcomes[0].bullet_id == dep
    old = add(store, "Bump the lockfile by hand")
    curate(
        store,
        [
            {
                "type": "replace",
                "bullet_id": old,
                "content": "Bump the lockfile with the package manager",
            }
        ],
    )
    r = curate(store, [{"type": "add", "content": "Bump the lockfile by hand"}])
    assert statuses(r) == ["refused-zombie"] and r.outcomes[0].bullet_id == old
    assert store.timeline(dep) == [] and store.timeline(old) == []


# ------------------------------------------------------------------ step 4
def test_step4_replace_inherits_evidence(store: PlaybookStore, clock: Clock) -> None:
    old = add(store, "Run tests with pytest -x")
    for _ in range(4):
        curate(store, [{"type": "helpful", "bullet_id": old}])
    curate(store, [{"type": "harmful", "bullet_id": old, "reason": "wasted_time"}])
    r = curate(
        store,
        [{"type": "replace", "bullet_id": old, "content": "Run tests with pytest -x --lf"}],
        PROV,
    )
    assert statuses(r) == ["applied"]
    new = r.outcomes[0].bullet_id
    assert store.get_bullet(old).state == "retired"
    assert store.get_bullet(old).valid_to == clock.t
    assert store.lineage(new).predecessors == [("supersedes", old)]
    assert store.lineage(old).successors == [("supersedes", new)]
    s = store.score(new)
    assert (s.helpful, s.harmful) == (4.0, 1.0)
    # the successor climbs to the rung its inherited evidence earns (T=5, R=0.2), where its
    # score, 4 - 4 * 1 = 0, is not negative, so it stays there
    assert store.get_bullet(new).maturity == "established"
    clock.advance(days=90)
    assert store.score(new).helpful == pytest.approx(2.0)
    curate(store, [{"type": "helpful", "bullet_id": new}])
    assert store.score(new).helpful == pytest.approx(3.0)
    assert store.timeline(new)[0].kind == "helpful" and len(store.timeline(new)) == 1


def test_step4_merge_retires_all_and_sums_lineage(store: PlaybookStore) -> None:
    a = add(store, "Cache node_modules in CI", tags=["ci"], category="ci")
    b = add(store, "Cache the pnpm store between CI runs", tags=["pnpm"], category="ci")
    curate(store, [{"type": "helpful", "bullet_id": a}, {"type": "helpful", "bullet_id": b}])
    curate(store, [{"type": "helpful", "bullet_id": a}])
    r = curate(
        store,
        [{"type": "merge", "bullet_ids": [a, b], "content": "Cache package manager stores in CI"}],
    )
    new = r.outcomes[0].bullet_id
    nb = store.get_bullet(new)
    assert (nb.source, nb.category, nb.tags) == ("merged", "ci", ["ci", "pnpm"])
    assert {store.get_bullet(i).state for i in (a, b)} == {"retired"}
    assert store.score(new).helpful == 3.0
    # a chain: replacing the merged bullet keeps the whole ancestry's evidence
    r = curate(
        store, [{"type": "replace", "bullet_id": new, "content": "Cache dependency stores in CI"}]
    )
    assert store.score(r.outcomes[0].bullet_id).helpful == 3.0


def test_step4_deprecate(store: PlaybookStore) -> None:
    bid = add(store, "Use npm ci in Docker builds")
    r = curate(store, [{"type": "deprecate", "bullet_id": bid, "reason": "moved to pnpm"}])
    assert statuses(r) == ["applied"]
    assert r.maturity_changes == [(bid, "candidate", "deprecated")]
    assert store.get_bullet(bid).maturity == "deprecated"
    assert store.get_bullet(bid).state == "active"  # deprecated is a warning, not retired


# ------------------------------------------------------------------ step 5
def test_step5_harmful_rule_inverts_to_avoid(store: PlaybookStore) -> None:
    bid = add(store, "Retry flaky tests until they pass", category="testing", tags=["ci"])
    curate(store, [{"type": "helpful", "bullet_id": bid}])
    for _ in range(2):
        r = curate(store, [{"type": "harmful", "bullet_id": bid, "reason": "caused_bug"}])
        assert r.inversions == []
    r = curate(store, [{"type": "harmful", "bullet_id": bid, "reason": "caused_bug"}])
    # H=1, X=3: harm >= 3 and > 2 * help
    ((old, new),) = r.inversions
    assert old == bid
    nb = store.get_bullet(new)
    assert nb.content == "AVOID: Retry flaky tests until they pass"
    assert (nb.type, nb.source, nb.category, nb.tags) == (
        "anti-pattern",
        "inverted",
        "testing",
        ["ci"],
    )
    assert store.get_bullet(bid).state == "retired"
    assert store.lineage(new).predecessors == [("inverts", bid)]
    assert store.score(new).helpful == 0 and store.score(new).harmful == 0  # no evidence carried


def test_step5_deprecated_rule_still_inverts_once_harm_reaches_three(store: PlaybookStore) -> None:
    bid = add(store, "Commit generated lockfiles by hand")
    curate(store, [{"type": "helpful", "bullet_id": bid}])
    curate(store, [{"type": "harmful", "bullet_id": bid, "reason": "caused_bug"}])
    r = curate(store, [{"type": "harmful", "bullet_id": bid, "reason": "caused_bug"}])
    assert store.get_bullet(bid).maturity == "deprecated" and r.inversions == []
    r = curate(store, [{"type": "harmful", "bullet_id": bid, "reason": "outdated"}])
    assert [o for o, _ in r.inversions] == [bid]


def test_step5_not_when_help_is_at_least_half_the_harm(store: PlaybookStore) -> None:
    bid = add(store, "Vendor third-party code")
    for kind in ["helpful", "helpful", "harmful", "harmful", "harmful"]:
        r = curate(
            store,
            [
                {
                    "type": kind,
                    "bullet_id": bid,
                    **({"reason": "other"} if kind == "harmful" else {}),
                }
            ],
        )
        assert r.inversions == []  # X=3 is not > 2 * H=2 * 2


def test_step5_pinned_rules_are_never_inverted(store: PlaybookStore) -> None:
    bid = add(store, "Keep the changelog by hand")
    store.pin(bid, "release managers want it")
    for _ in range(4):
        r = curate(store, [{"type": "harmful", "bullet_id": bid, "reason": "wasted_time"}])
        assert r.inversions == []
    assert store.get_bullet(bid).state == "active"


# ------------------------------------------------------------------ pinned protection
@pytest.mark.parametrize("kind", ["replace", "deprecate", "merge"])
def test_pinned_bullets_refuse_agents_but_not_humans(store: PlaybookStore, kind: str) -> None:
    bid = add(store, "Never commit secrets to the repository")
    other = add(store, "Scan commits for secrets in CI")
    store.pin(bid, "security policy")
    delta = {
        "replace": {"type": "replace", "bullet_id": bid, "content": "Keep secrets in the vault"},
        "deprecate": {"type": "deprecate", "bullet_id": bid, "reason": "obsolete"},
        "merge": {"type": "merge", "bullet_ids": [other, bid], "content": "Secrets: vault + scans"},
    }[kind]
    r = curate(store, [delta])
    assert statuses(r) == ["refused-pinned"] and r.outcomes[0].bullet_id == bid
    assert store.get_bullet(bid).state == "active" and store.get_bullet(bid).maturity == "candidate"
    r = curate(store, [delta], actor="human")
    assert statuses(r) == ["applied"]


# ------------------------------------------------------------------ invalid input
def test_invalid_deltas_are_reported_not_raised_and_write_nothing(store: PlaybookStore) -> None:
    bid = add(store, "Read the file before editing it")
    before = dump(store)
    bad = [
        {"type": "add", "content": "x y", "provenance": {"session_ref": "s"}},
        {"type": "add", "content": "Trust me", "session_ref": "session:forged"},
        {"type": "promote", "bullet_id": bid},
        {"type": "helpful"},
        {"type": "helpful", "bullet_id": "b-00000000"},
        {"type": "merge", "bullet_ids": [bid], "content": "one is not a merge"},
        {"type": "add", "content": "   "},
        {"type": "add", "content": "z" * 8001},
        {"type": "harmful", "bullet_id": bid, "reason": "because"},
        {"content": "no type"},
        "add: a string",
        None,
    ]
    r = curate(store, bad)
    assert statuses(r) == ["rejected-invalid"] * len(bad)
    assert [o.index for o in r.rejected] == list(range(len(bad)))
    reasons = [o.reason for o in r.rejected]
    assert "provenance" in reasons[0] and "provenance" in reasons[1]
    assert "unknown delta type" in reasons[2]
    assert "bullet_id" in reasons[3] and "Field required" in reasons[3]
    assert "no bullet with id 'b-00000000'" in reasons[4]
    assert "bullet_ids" in reasons[5]
    assert "blank" in reasons[6]
    assert "8,001 characters" in reasons[7]
    assert "reason" in reasons[8]
    assert "missing delta type" in reasons[9]
    assert "must be an object" in reasons[10] and "must be an object" in reasons[11]
    assert dump(store) == before


@pytest.mark.parametrize("batch", [{"type": "add", "content": "x"}, "add", 7, None])
def test_a_batch_that_is_not_a_list_is_rejected(store: PlaybookStore, batch: object) -> None:
    before = dump(store)
    r = curate(store, batch)
    assert statuses(r) == ["rejected-invalid"] and "list" in r.rejected[0].reason
    assert dump(store) == before


def test_valid_deltas_still_apply_beside_invalid_ones(store: PlaybookStore) -> None:
    bid = add(store, "Read the file before editing it")
    r = curate(
        store,
        [
            {"type": "helpful", "bullet_id": "b-missing"},
            {"type": "helpful", "bullet_id": bid},
            {"type": "bogus"},
            {"type": "add", "content": "Run the formatter before committing"},
        ],
    )
    assert statuses(r) == ["rejected-invalid", "applied", "rejected-invalid", "added"]
    assert len(store.timeline(bid)) == 1 and len(r.added) == 1


def test_feedback_on_a_retired_bullet_is_rejected_with_its_successor(store: PlaybookStore) -> None:
    old = add(store, "Use black for formatting")
    r = curate(store, [{"type": "replace", "bullet_id": old, "content": "Use ruff format"}])
    new = r.outcomes[0].bullet_id
    r = curate(store, [{"type": "helpful", "bullet_id": old}])
    assert statuses(r) == ["rejected-invalid"] and new in r.rejected[0].reason


def test_each_outcome_carries_its_code(store: PlaybookStore) -> None:
    """A caller tells outcomes apart by `code`, set where the outcome is made (issue 28):
    a missing bullet and a retired one are both rejected-invalid, with different codes."""
    old = add(store, "Use black for formatting")
    keep = add(store, "Read the file before editing it")
    pinned = add(store, "Never commit secrets to the repository")
    store.pin(pinned, "security policy")
    store.block("Skip the tests to save time", "never")
    r = curate(store, [{"type": "replace", "bullet_id": old, "content": "Use ruff format"}])
    assert [o.code for o in r.outcomes] == [None]
    r = curate(
        store,
        [
            {"type": "helpful", "bullet_id": "b-00000000"},
            {"type": "helpful", "bullet_id": old},
            {"type": "nope"},
            {"type": "add", "content": "Skip the tests to save time"},
            {"type": "deprecate", "bullet_id": pinned, "reason": "old"},
            {"type": "helpful", "bullet_id": keep},
            {"type": "helpful", "bullet_id": keep, "context": "again"},
        ],
    )
    codes = [(o.status, o.code) for o in r.outcomes]
    assert codes == [
        ("rejected-invalid", "not_found"),
        ("rejected-invalid", "retired"),
        ("rejected-invalid", "invalid"),
        ("refused-blocked", "blocked"),
        ("refused-pinned", "pinned"),
        ("applied", None),
        ("dropped-duplicate", "duplicate"),
    ]
    assert r.to_dict()["outcomes"][0]["code"] == "not_found"


# ------------------------------------------------------------------ decision log
def test_every_decision_is_logged_with_its_batch(store: PlaybookStore) -> None:
    bid = add(store, "Read the file before editing it")
    store.block("Skip the tests to save time", "never")
    r = curate(
        store,
        [
            {"type": "helpful", "bullet_id": bid},
            {"type": "add", "content": "Skip the tests to save time"},
            {"type": "helpful", "bullet_id": bid},
            {"type": "nope"},
        ],
        actor="agent",
    )
    rows = sorted(store.decisions(batch_id=r.batch_id), key=lambda d: d.detail["index"])
    assert [(d.action, d.status) for d in rows] == [
        ("helpful", "applied"),
        ("add", "refused-blocked"),
        ("helpful", "dropped-duplicate"),
    ]
    assert all(d.actor == "agent" for d in rows)
    assert {o.status for o in r.outcomes} <= set(STATUSES)


def test_a_failed_batch_leaves_the_database_as_it_was(store: PlaybookStore, monkeypatch) -> None:
    bid = add(store, "Read the file before editing it")
    before = dump(store)

    def boom(*a, **k):
        raise RuntimeError("disk on fire")

    monkeypatch.setattr(store, "flag_conflict", boom)
    with pytest.raises(RuntimeError):
        curate(
            store,
            [
                {"type": "helpful", "bullet_id": bid},
                {"type": "add", "content": "Never read the file before editing it"},
            ],
        )
    assert dump(store) == before


def test_a_delta_cannot_date_its_event(store: PlaybookStore, clock: Clock) -> None:
    """Events are stamped with the store's clock; a delta that names a time is invalid."""
    bid = add(store, "Read the file before editing it")
    before = dump(store)
    r = curate(store, [{"type": "helpful", "bullet_id": bid, "at": "2099-01-01T00:00:00Z"}])
    assert statuses(r) == ["rejected-invalid"]
    assert r.outcomes[0].reason == "at: unknown field"
    assert dump(store) == before


@pytest.mark.parametrize(
    ("delta", "reason"),
    [
        ({"type": "add", "content": "   "}, "content: must not be blank"),
        (
            {"type": "merge", "bullet_ids": ["b-1", "b-1"], "content": "x"},
            "bullet_ids: must name distinct bullets",
        ),
        ({"type": "add", "content": "Run \ud800 tests"}, "content: not valid Unicode text"),
    ],
)
def test_reasons_carry_no_pydantic_wording(store: PlaybookStore, delta: dict, reason: str) -> None:
    (outcome,) = curate(store, [delta]).outcomes
    assert outcome.status == "rejected-invalid"
    assert outcome.reason is not None and outcome.reason.startswith(reason)
    assert "Value error" not in outcome.reason


def _conflicting_pair(store: PlaybookStore) -> tuple[str, str]:
    always = add(store, "Always run database migrations in CI jobs")
    r = curate(store, [{"type": "add", "content": "Never run database migrations in CI jobs"}])
    assert statuses(r) == ["conflict"]
    never = r.added[0]
    for _ in range(3):  # the "Always" rule hurt three times, the "Never" rule helped twice
        store.add_feedback(always, "harmful", reason="caused_bug")
    for _ in range(2):
        store.add_feedback(never, "helpful")
    return always, never


def test_a_merge_does_not_carry_evidence_whose_meaning_flips(store: PlaybookStore) -> None:
    always, never = _conflicting_pair(store)
    r = curate(
        store,
        [{"type": "merge", "bullet_ids": [always, never],
          "content": "Never run database migrations from CI jobs; run them at deploy"}],
        actor="human",
    )  # fmt: skip
    assert statuses(r) == ["applied"]
    new = r.outcomes[0].bullet_id
    assert f"evidence of {always} not carried over" in (r.outcomes[0].reason or "")
    assert store.lineage(new).predecessors == [("inverts", always), ("supersedes", never)]
    s = store.score(new)
    assert (s.helpful, s.harmful) == (2.0, 0.0)  # the harm "Always" earned is not the new rule's
    assert store.get_bullet(always).state == "retired"


def test_a_pin_carries_only_from_a_superseded_original_and_only_when_asked(
    store: PlaybookStore,
) -> None:
    always, never = _conflicting_pair(store)
    store.pin(always, "team rule")
    merge = {"type": "merge", "bullet_ids": [always, never], "content": "Never run migrations"}
    r = curate(store, [merge], actor="human")
    assert store.get_bullet(r.outcomes[0].bullet_id).pinned is False  # "Always"'s pin flips
    a2 = add(store, "Always tag release images")
    n2 = curate(store, [{"type": "add", "content": "Never tag release images"}]).added[0]
    store.pin(n2, "agreed")
    merge = {"type": "merge", "bullet_ids": [a2, n2], "content": "Never tag images by hand"}
    kept = curate(store, [merge], actor="human").outcomes[0].bullet_id
    assert store.get_bullet(kept).pinned and store.get_bullet(kept).pinned_reason == "agreed"
    a3 = add(store, "Always sign release tags")
    n3 = curate(store, [{"type": "add", "content": "Never sign release tags"}]).added[0]
    store.pin(n3, "agreed")
    merge = {"type": "merge", "bullet_ids": [a3, n3], "content": "Never sign tags by hand"}
    unpinned = curate(store, [merge], actor="human", carry_pins=False).outcomes[0].bullet_id
    assert store.get_bullet(unpinned).pinned is False


# ------------------------------------------------------------------ polarity (SPEC §5)
@pytest.mark.parametrize(
    ("content", "negative"),
    [
        ("AVOID: force-pushing to main", True),
        ("Avoid global state in tests", True),
        ("Never print secrets", True),
        ("Don't commit .env files", True),
        ("Don\u2019t commit .env files", True),
        ("Do not edit generated files", True),
        ("Stop using yarn 1 for releases", True),
        ("Stop the dev server before running migrations", False),
        ("Run tests with -x to stop at first failure", False),
        ("Pin npm to 11 so lockfile changes do not break publishing", False),
        ("Close a channel only from the sender and never twice", False),
        ("Use a concurrency group to avoid duplicate runs", False),
        ("Nevertheless run the linter", False),
    ],
)
def test_polarity_is_a_leading_prohibition_not_a_word_anywhere(
    content: str, negative: bool
) -> None:
    from playbook.core.text import is_negative

    assert is_negative(content) is negative
    assert is_negative(content, "anti-pattern") is True  # the type decides first


def test_a_merge_carries_the_evidence_of_a_rule_that_merely_mentions_stop(
    store: PlaybookStore,
) -> None:
    # The case: "stop" in the first rule made it read as a prohibition, so the merge
    # linked it by `inverts` and dropped its evidence.
    x = add(store, "Run tests with -x to stop at first failure")
    q = add(store, "Use pytest -q for quiet output in CI")
    curate(store, [{"type": "helpful", "bullet_id": x}, {"type": "helpful", "bullet_id": q}])
    curate(store, [{"type": "harmful", "bullet_id": x, "reason": "wasted_time"}])
    r = curate(
        store, [{"type": "merge", "bullet_ids": [x, q], "content": "Run pytest -q -x in CI"}]
    )
    assert statuses(r) == ["applied"] and "not carried over" not in (r.outcomes[0].reason or "")
    new = r.outcomes[0].bullet_id
    assert store.lineage(new).predecessors == [("supersedes", x), ("supersedes", q)]
    s = store.score(new)
    assert (s.helpful, s.harmful) == (2.0, 1.0)


def test_a_replace_that_starts_a_prohibition_flips_the_rule(store: PlaybookStore) -> None:
    old = add(store, "Use yarn 1 for release builds")
    store.add_feedback(old, "harmful", reason="caused_bug")
    r = curate(
        store,
        [{"type": "replace", "bullet_id": old, "content": "Stop using yarn 1 for release builds"}],
    )
    new = r.outcomes[0].bullet_id
    assert store.lineage(new).predecessors == [("inverts", old)]
    assert store.score(new).harmful == 0.0


def test_duplicate_or_conflict_follows_the_leading_prohibition(store: PlaybookStore) -> None:
    bid = add(store, "Run pytest with -x to stop at the first failure")
    # A rephrasing is a duplicate: "stop" inside the sentence is no prohibition.
    r = curate(
        store, [{"type": "add", "content": "Run pytest with -x to halt at the first failure"}]
    )
    assert statuses(r) == ["folded"] and r.outcomes[0].bullet_id == bid
    # The same words behind a leading "Never" are the opposite rule.
    r = curate(
        store, [{"type": "add", "content": "Never run pytest with -x to stop at the first failure"}]
    )
    assert statuses(r) == ["conflict"] and r.conflicts == [(r.added[0], bid)]
