"""Tests for the cass-memory playbook.yaml parser (playbook.interop.cass)."""

from __future__ import annotations

import time
from datetime import UTC, datetime
from pathlib import Path

import pytest
import yaml
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from playbook.interop.cass import (
    CassImport,
    CassImportError,
    ImportedBullet,
    ImportedEdge,
    parse_cass_playbook,
)

FIXTURE = Path(__file__).parent / "fixtures" / "cass_playbook.yaml"


@pytest.fixture(scope="module")
def imported() -> CassImport:
    return parse_cass_playbook(FIXTURE.read_bytes())


def bullet(result: CassImport, source_id: str) -> ImportedBullet:
    (found,) = [b for b in result.bullets if b.source_id == source_id]
    return found


def notes_for(result: CassImport, prefix: str) -> list[str]:
    return [line for line in result.unmapped if line.startswith(prefix)]


def doc(*bullets: object, **top: object) -> str:
    """A minimal valid playbook around the given bullet mappings."""
    body: dict[str, object] = {"schema_version": 2, "bullets": list(bullets)}
    body.update(top)
    return yaml.safe_dump(body)


def minimal(**fields: object) -> dict[str, object]:
    b: dict[str, object] = {
        "id": "b-1",
        "category": "general",
        "content": "Prefer small commits",
        "createdAt": "2025-01-01T00:00:00Z",
        "updatedAt": "2025-01-01T00:00:00Z",
    }
    b.update(fields)
    return b


# --------------------------------------------------------------------------- the fixture


def test_fixture_imports_every_bullet_and_pattern(imported: CassImport) -> None:
    assert [b.source_id for b in imported.bullets] == [
        "b-pinned", "b-lang", "b-anti", "b-dep", "b-retired",
        "b-chain-a", "b-chain-b", "b-chain-c",
    ]  # fmt: skip
    assert len(imported.blocks) == 2
    assert len(imported.events) == 8


def test_pinned_bullet(imported: CassImport) -> None:
    b = bullet(imported, "b-pinned")
    assert b.pinned is True
    assert b.pinned_reason == "Release policy, agreed with the team"
    assert b.kind == "workflow_rule"
    assert b.maturity == "proven"
    assert b.state == "active"
    assert b.tags == ["ci", "npm", "release"]
    assert b.session_ref == "/home/dev/.claude/projects/app/s0.jsonl"
    # 90 is cass-memory's default, written on every bullet and never read: follow our policy.
    assert b.half_life_days is None


def test_language_scope_and_own_half_life(imported: CassImport) -> None:
    b = bullet(imported, "b-lang")
    assert (b.scope, b.scope_key) == ("language", "python")
    assert b.half_life_days == 30.0


def test_framework_and_task_scopes(imported: CassImport) -> None:
    assert (bullet(imported, "b-anti").scope, bullet(imported, "b-anti").scope_key) == (
        "framework",
        "django",
    )
    assert bullet(imported, "b-retired").scope_key == "deploy"


def test_workspace_scope_takes_its_key_from_workspace(imported: CassImport) -> None:
    b = bullet(imported, "b-dep")
    assert (b.scope, b.scope_key) == ("workspace", "/home/dev/src/app")


def test_anti_pattern(imported: CassImport) -> None:
    b = bullet(imported, "b-anti")
    assert b.type == "anti-pattern"
    assert b.kind == "anti_pattern"


@pytest.mark.parametrize(
    "fields",
    [{"kind": "anti_pattern"}, {"isNegative": True}, {"type": "anti-pattern"}],
)
def test_any_cass_anti_pattern_marker_makes_an_anti_pattern(fields: dict[str, object]) -> None:
    result = parse_cass_playbook(doc(minimal(**{"type": "rule", **fields})))
    assert result.bullets[0].type == "anti-pattern"


def test_plain_rule_stays_a_rule() -> None:
    result = parse_cass_playbook(doc(minimal(isNegative=False, kind="workflow_rule")))
    assert result.bullets[0].type == "rule"


def test_deprecated_flag_sets_maturity_without_retiring(imported: CassImport) -> None:
    b = bullet(imported, "b-dep")
    assert b.maturity == "deprecated"
    assert b.state == "active"
    assert b.valid_to is None  # still valid: recall must be able to warn about it
    # The reason is kept (it goes to the decision log), not dropped with a note.
    assert b.deprecation_reason == "Superseded by ruff format"
    assert not any("deprecationReason" in n for n in notes_for(imported, "b-dep:"))


def test_maturity_deprecated_without_flag() -> None:
    result = parse_cass_playbook(doc(minimal(maturity="deprecated")))
    assert result.bullets[0].maturity == "deprecated"


def test_retired_bullet_gets_valid_to(imported: CassImport) -> None:
    b = bullet(imported, "b-retired")
    assert b.state == "retired"
    assert b.valid_to == datetime(2025, 5, 1, 9, 0, tzinfo=UTC)


def test_retired_without_deprecated_at_uses_updated_at_with_a_note() -> None:
    result = parse_cass_playbook(doc(minimal(state="retired", updatedAt="2025-03-03T03:03:03Z")))
    assert result.bullets[0].valid_to == datetime(2025, 3, 3, 3, 3, 3, tzinfo=UTC)
    assert any("taken from updatedAt" in n for n in result.unmapped)


def test_replacement_chain_gives_two_supersedes_edges(imported: CassImport) -> None:
    assert imported.edges == [
        ImportedEdge("supersedes", successor_source_id="b-chain-b", original_source_id="b-chain-a"),
        ImportedEdge("supersedes", successor_source_id="b-chain-c", original_source_id="b-chain-b"),
    ]


def test_extra_source_sessions_are_reported(imported: CassImport) -> None:
    b = bullet(imported, "b-chain-a")
    assert b.session_ref == "/home/dev/.claude/projects/app/s3.jsonl"
    assert any("further source session" in n for n in notes_for(imported, "b-chain-a:"))


def test_events_carry_exact_timestamps(imported: CassImport) -> None:
    pinned = [e for e in imported.events if e.source_id == "b-pinned"]
    assert [e.at for e in pinned] == [
        datetime(2025, 2, 1, 10, 0, tzinfo=UTC),  # unquoted: PyYAML's own timestamp
        datetime(2025, 2, 3, 11, 30, 15, 250000, tzinfo=UTC),  # quoted ISO string
    ]
    assert all(e.kind == "helpful" and e.weight == 1.0 for e in pinned)
    assert pinned[0].session_ref == "/home/dev/.claude/projects/app/s1.jsonl"
    assert pinned[1].context == "release 4.2 went out clean"


def test_events_are_in_chronological_order(imported: CassImport) -> None:
    times = [e.at for e in imported.events]
    assert times == sorted(times)
    assert all(t.tzinfo is UTC for t in times)


def test_naive_timestamp_is_read_as_utc(imported: CassImport) -> None:
    (event,) = [e for e in imported.events if e.source_id == "b-anti"]
    assert event.at == datetime(2025, 3, 12, 18, 20, tzinfo=UTC)
    assert event.kind == "harmful"
    assert event.reason == "caused_bug"


def test_harmful_reason_known(imported: CassImport) -> None:
    (event,) = [e for e in imported.events if e.source_id == "b-lang" and e.kind == "harmful"]
    assert event.reason == "wasted_time"
    assert event.context == "cache dir was writable after all"
    assert event.session_ref == "/home/dev/.codex/sessions/s7.jsonl"


def test_harmful_reason_unknown_becomes_other_and_keeps_text(imported: CassImport) -> None:
    (event,) = [e for e in imported.events if e.source_id == "b-dep" and e.kind == "harmful"]
    assert event.reason == "other"
    assert event.context is not None and "style_drift" in event.context
    assert "team moved to ruff format" in event.context
    assert any("style_drift" in n for n in notes_for(imported, "b-dep:"))


def test_count_disagreeing_with_events_is_reported(imported: CassImport) -> None:
    notes = notes_for(imported, "b-lang:")
    assert any("helpfulCount is 3 but 1 helpful" in n for n in notes)
    assert not any("harmfulCount" in n for n in notes)  # 1 harmful event, count 1: agrees
    assert not any("Count" in n for n in notes_for(imported, "b-pinned:"))


def test_derived_fields_are_dropped_with_a_note(imported: CassImport) -> None:
    notes = notes_for(imported, "b-lang:")
    assert any("'embedding' dropped" in n for n in notes)
    assert any("'effectiveScore' dropped" in n for n in notes)
    assert any("'decayedValue' dropped" in n for n in notes)


def test_deprecated_patterns_become_blocks(imported: CassImport) -> None:
    first, second = imported.blocks
    assert first.pattern == "npm install --legacy-peer-deps"
    assert first.reason.startswith("Hides real peer conflicts")
    assert "npm install with explicit overrides" in first.reason
    assert first.at == datetime(2025, 4, 2, 8, 30, tzinfo=UTC)
    assert second.at == datetime(2025, 5, 10, 16, 0, tzinfo=UTC)
    assert any("regular expression" in n for n in notes_for(imported, "deprecatedPatterns[1]"))


# --------------------------------------------------------------------------- mapping edges


def test_unknown_scope_becomes_global_with_a_note() -> None:
    result = parse_cass_playbook(doc(minimal(scope="galaxy", scopeKey="x")))
    assert result.bullets[0].scope == "global"
    assert result.bullets[0].scope_key is None
    assert any("scope 'galaxy' is unknown" in n for n in result.unmapped)


def test_replaced_by_missing_bullet_is_reported() -> None:
    result = parse_cass_playbook(doc(minimal(replacedBy="b-gone")))
    assert result.edges == []
    assert any("b-gone" in n and "not in this playbook" in n for n in result.unmapped)


def test_replaced_by_cycle_gives_no_edges() -> None:
    a = minimal(id="b-a", replacedBy="b-b")
    b = minimal(id="b-b", content="Another rule", replacedBy="b-a")
    result = parse_cass_playbook(doc(a, b))
    assert result.edges == []
    assert sum("cycle" in n for n in result.unmapped) == 2


def test_unparseable_event_timestamp_falls_back_to_created_at() -> None:
    events = [{"type": "helpful", "timestamp": "last tuesday"}]
    result = parse_cass_playbook(doc(minimal(feedbackEvents=events, helpfulCount=1)))
    (event,) = result.events
    assert event.at == datetime(2025, 1, 1, tzinfo=UTC)
    assert any("'last tuesday' is not a timestamp" in n for n in result.unmapped)


def test_unparseable_created_at_falls_back_with_a_note() -> None:
    events = [{"type": "helpful", "timestamp": "2025-02-02T00:00:00Z"}]
    b = minimal(createdAt="soon", updatedAt="2025-03-03T00:00:00Z", feedbackEvents=events)
    result = parse_cass_playbook(doc(b, metadata={"createdAt": "2024-01-01T00:00:00Z"}))
    assert result.bullets[0].created_at == datetime(2025, 2, 2, tzinfo=UTC)
    assert any("createdAt 'soon'" in n for n in result.unmapped)


def test_missing_created_at_uses_playbook_metadata() -> None:
    b = minimal()
    del b["createdAt"], b["updatedAt"]
    result = parse_cass_playbook(doc(b, metadata={"createdAt": "2024-06-01T00:00:00+02:00"}))
    assert result.bullets[0].created_at == datetime(2024, 5, 31, 22, 0, tzinfo=UTC)


def test_legacy_event_lists_are_merged_without_duplicates() -> None:
    shared = {"type": "helpful", "timestamp": "2025-02-01T00:00:00Z"}
    legacy_only = {"type": "harmful", "timestamp": "2025-02-05T00:00:00Z", "reason": "outdated"}
    b = minimal(feedbackEvents=[shared], helpfulEvents=[shared], harmfulEvents=[legacy_only])
    result = parse_cass_playbook(doc(b))
    assert [(e.kind, e.reason) for e in result.events] == [
        ("helpful", None),
        ("harmful", "outdated"),
    ]


def test_event_with_unknown_type_is_skipped() -> None:
    result = parse_cass_playbook(doc(minimal(feedbackEvents=[{"type": "meh", "timestamp": 1}])))
    assert result.events == []
    assert any("neither helpful nor harmful" in n for n in result.unmapped)


def test_unknown_bullet_field_is_reported() -> None:
    result = parse_cass_playbook(doc(minimal(mood="happy")))
    assert len(result.bullets) == 1
    assert any("field 'mood'" in n for n in result.unmapped)


# --------------------------------------------------------------------------- bad input


@pytest.mark.parametrize(
    "data",
    [
        b"\xff\xfe\x00garbage\x80",  # not UTF-8
        b"\x00\x01\x02\x03",  # binary junk
        "[]",  # not a mapping
        "just a string",
        "",  # empty
        "bullets: 5",
        "bullets: {a: 1}",
        "schema_version: 2\nname: x",  # no bullets
        "schema_version: 99\nbullets: []",
        "schema_version: '2'\nbullets: []",
        "schema_version: true\nbullets: []",
        "bullets: [\n",  # broken YAML
        "a: !!python/object/apply:os.system ['true']\nbullets: []",  # unsafe tag
        "when: 2024-13-45\nbullets: []",  # a timestamp PyYAML recognises but cannot build
        "? [a, b]\n: 1\nbullets: []",  # unhashable key
        "[" * 5000 + "]" * 5000,  # deeply nested
    ],
)
def test_bad_input_raises_cass_import_error(data: bytes | str) -> None:
    with pytest.raises(CassImportError) as info:
        parse_cass_playbook(data)
    assert "\n" not in str(info.value)


def test_wrong_input_type_raises_cass_import_error() -> None:
    with pytest.raises(CassImportError):
        parse_cass_playbook(42)  # type: ignore[arg-type]


def test_oversized_input_is_refused_before_it_is_parsed() -> None:
    from playbook.interop import cass

    assert cass.MAX_INPUT_BYTES >= 256 * 1024 * 1024  # a 100k-rule playbook is ~145 MB
    broken = b"bullets: [\n" * 20  # not YAML either: the cap is what is reported
    with pytest.raises(CassImportError, match=r"over the 100 bytes import cap.*--max-size"):
        parse_cass_playbook(broken, max_bytes=100)
    with pytest.raises(CassImportError, match="not valid YAML"):
        parse_cass_playbook(broken, max_bytes=1000)


def test_billion_laughs_is_refused_quickly() -> None:
    lines = ['a0: &a0 ["lol"]']
    for i in range(1, 10):
        refs = ", ".join([f"*a{i - 1}"] * 10)
        lines.append(f"a{i}: &a{i} [{refs}]")
    # A few kilobytes of YAML that expand to a billion tags and a million events once the
    # aliases are followed: the walk must stop at its item budget, not try.
    lines.append("ev: &ev {type: helpful, timestamp: 2025-01-01T00:00:00Z}")
    lines.append("evs: &evs [" + ", ".join(["*ev"] * 2000) + "]")
    lines.append("bullets:")
    for n in range(500):
        lines.append(
            f"  - {{id: b-{n}, category: c, content: x, createdAt: 2025-01-01T00:00:00Z, "
            "feedbackEvents: *evs, tags: *a9}"
        )
    started = time.process_time()  # CPU time: a busy machine does not make it fail
    with pytest.raises(CassImportError, match="aliases"):
        parse_cass_playbook("\n".join(lines))
    assert time.process_time() - started < 20


def test_self_referencing_alias_does_not_loop() -> None:
    result = parse_cass_playbook("bullets: &x [*x]\n")
    assert result.bullets == []
    assert any("not a mapping" in n for n in result.unmapped)


def test_non_mapping_bullet_is_skipped_with_a_note() -> None:
    result = parse_cass_playbook(doc("just text", 7, minimal()))
    assert [b.source_id for b in result.bullets] == ["b-1"]
    assert sum("not a mapping" in n for n in result.unmapped) == 2


@pytest.mark.parametrize(
    ("fields", "expected"),
    [
        ({"content": None}, "'content' is missing"),
        ({"content": 12}, "'content' is a number, not text"),
        ({"content": ["a"]}, "'content' is a list, not text"),
        ({"content": "   "}, "'content' is empty"),
        ({"id": None}, "no string 'id'"),
        ({"id": ["x"]}, "no string 'id'"),
    ],
)
def test_bad_bullet_is_skipped_with_a_note(fields: dict[str, object], expected: str) -> None:
    b = minimal(**fields)
    if fields.get("content", "") is None:
        del b["content"]
    result = parse_cass_playbook(doc(b))
    assert result.bullets == []
    assert any(expected in n for n in result.unmapped), result.unmapped


def test_wrong_types_in_fields_never_crash() -> None:
    b = minimal(
        scope=["global"],
        state={"x": 1},
        maturity=3,
        tags="ci",
        pinned="yes please",
        feedbackEvents={"type": "helpful"},
        helpfulCount="many",
        confidenceDecayHalfLifeDays=-5,
        replacedBy=["b-2"],
        sourceSessions=[1, None, "s.jsonl"],
    )
    result = parse_cass_playbook(doc(b, deprecatedPatterns=[5, {"pattern": None}, {"x": 1}]))
    (got,) = result.bullets
    assert (got.scope, got.state, got.maturity) == ("global", "draft", "candidate")
    assert got.tags == [] and got.pinned is False and got.half_life_days is None
    assert got.session_ref == "s.jsonl"
    assert result.blocks == [] and result.edges == [] and result.events == []
    assert len(result.unmapped) >= 10


def test_duplicate_ids_keep_the_first() -> None:
    result = parse_cass_playbook(doc(minimal(), minimal(content="Second copy")))
    assert [b.content for b in result.bullets] == ["Prefer small commits"]
    assert any("already used" in n for n in result.unmapped)


def test_missing_schema_version_is_read_as_2_with_a_note() -> None:
    result = parse_cass_playbook(yaml.safe_dump({"bullets": [minimal()]}))
    assert len(result.bullets) == 1
    assert any("no schema_version" in n for n in result.unmapped)


# --------------------------------------------------------------------------- fuzz


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.one_of(st.binary(max_size=2048), st.text(max_size=2048)))
def test_only_cass_import_error_escapes(data: bytes | str) -> None:
    try:
        result = parse_cass_playbook(data)
    except CassImportError:
        return
    assert isinstance(result, CassImport)


_scalars = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(),
    st.floats(),
    st.text(max_size=20),
    st.sampled_from(["helpful", "harmful", "retired", "b-1", "2025-01-01T00:00:00Z", "language"]),
)
_values = st.recursive(
    _scalars,
    lambda inner: (
        st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner, max_size=4)
    ),
    max_leaves=12,
)
_bullet_keys = st.sampled_from(
    ["id", "content", "category", "scope", "scopeKey", "state", "maturity", "type", "kind",
     "tags", "feedbackEvents", "createdAt", "replacedBy", "pinned", "helpfulCount",
     "confidenceDecayHalfLifeDays", "deprecated", "deprecatedAt", "sourceSessions"]
)  # fmt: skip


@settings(max_examples=200, deadline=None)
@given(st.lists(st.dictionaries(_bullet_keys, _values, max_size=8), max_size=4), _values)
@example([{"id": "0\n0"}], None)  # an id with a newline made a note of two lines (found here)
def test_wrong_shapes_inside_a_playbook_never_crash(
    bullets: list[dict[str, object]], patterns: object
) -> None:
    text = yaml.safe_dump({"schema_version": 2, "bullets": bullets, "deprecatedPatterns": patterns})
    result = parse_cass_playbook(text)
    assert all(b.created_at.tzinfo is UTC for b in result.bullets)
    assert all(isinstance(line, str) and "\n" not in line for line in result.unmapped)


# --------------------------------------------------------------------------- the reader

_leaf = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(-(2**40), 2**40),
    st.floats(allow_nan=False),
    st.text(max_size=12),
    st.sampled_from(["yes", "No", "~", "0o17", "0x1f", "1_000", "1:30", ".inf", "<<", "="]),
    st.datetimes(timezones=st.sampled_from([UTC, None])),
    st.dates(),
)
_tree = st.recursive(
    _leaf,
    lambda inner: (
        st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=6), inner, max_size=4)
    ),
    max_leaves=16,
)


@settings(max_examples=200, deadline=None)
@given(
    st.lists(st.dictionaries(st.text(max_size=8), _tree, max_size=5), max_size=5),
    st.dictionaries(st.sampled_from(["name", "metadata", "x"]), _tree, max_size=3),
    st.booleans(),
)
def test_the_one_pass_reader_reads_what_safe_load_reads(
    bullets: list[dict[str, object]], top: dict[str, object], flow: bool
) -> None:
    from playbook.interop.cass.yamlstream import stream_document

    text = yaml.safe_dump({**top, "bullets": bullets}, default_flow_style=flow)
    handed: list[object] = []
    result = stream_document(text, "bullets", lambda i, v, _: handed.append(v))
    expected = yaml.safe_load(text)
    assert handed == expected.pop("bullets")
    assert result.items == len(handed)
    assert result.doc == {**expected, "bullets": []}  # the streamed list is not kept


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("bullets: !!set {a, b}", "tag"),
        ("bullets: [!!python/name:os.system x]", "tag"),
        ("bullets: []\n---\nbullets: []\n", "more than one YAML document"),
        ("bullets: [*nowhere]", "undefined alias"),
        ("bullets:" + " [" * 300 + " ]" * 300, "nested"),
    ],
)
def test_the_reader_refuses_what_a_playbook_never_holds(text: str, message: str) -> None:
    with pytest.raises(CassImportError, match=message):
        parse_cass_playbook(text)


def test_duplicate_tags_are_kept_once_with_a_note() -> None:
    result = parse_cass_playbook(doc(minimal(tags=["ci", " ci", "npm", "ci"])))
    assert result.bullets[0].tags == ["ci", "npm"]
    (note,) = [n for n in result.unmapped if "more than once" in n]
    assert note == "b-1: tag(s) 'ci' written more than once; kept once"


def test_metadata_after_the_bullets_keeps_the_bullet_order() -> None:
    no_time = minimal(id="b-2", content="Second")
    del no_time["createdAt"], no_time["updatedAt"]
    text = doc(minimal(), no_time, minimal(id="b-3", content="Third"))
    text += "metadata:\n  createdAt: 2024-06-01T00:00:00Z\n"
    result = parse_cass_playbook(text)
    assert [b.source_id for b in result.bullets] == ["b-1", "b-2", "b-3"]
    assert result.bullets[1].created_at == datetime(2024, 6, 1, tzinfo=UTC)


# --------------------------------------------------------------------------- notes


def test_repeated_notes_are_summarised_by_kind() -> None:
    from playbook.interop.notes import Notes, summarize

    notes = Notes()
    for n in range(5):
        notes.add(f"b-{n}", f"field 'sourceAgents' (agent{n}) dropped", "sourceAgents dropped")
    notes.add("b-9", "a one-off")
    notes.add("b-8", "twice", "pair")
    notes.add("b-7", "twice", "pair")
    for n in range(3):
        notes.add(f"b-{n}", "promotedAt dropped")
    assert summarize(notes.items) == [
        "sourceAgents dropped (5 times; e.g. b-0: field 'sourceAgents' (agent0) dropped; "
        "b-1: field 'sourceAgents' (agent1) dropped)",
        "b-9: a one-off",
        "b-8: twice",
        "b-7: twice",
        "promotedAt dropped (3 times; e.g. b-0, b-1)",
    ]


# --------------------------------------------------------------------------- blocked.log

BLOCKED_LOG = Path(__file__).parent / "fixtures" / "cass_blocked.log"


def test_blocked_log_entries_become_blocks() -> None:
    from playbook.interop.cass import parse_blocked_log

    result = parse_blocked_log(BLOCKED_LOG.read_bytes())
    assert result.kind == "blocked-log" and not result.bullets and not result.events
    first, second = result.blocks
    assert first.pattern == "Run migrations by hand on the production database"
    assert first.reason == "Caused an outage; migrations run in the deploy job now"
    assert first.at == datetime(2025, 5, 20, 8, 15, tzinfo=UTC)
    assert first.source_id == "b-m8x2k1-q7w3e9"
    assert second.source_id == "b-retired"
    (note,) = result.unmapped  # the line a crash cut short
    assert note.startswith("line 3: skipped, not JSON")


@pytest.mark.parametrize(
    ("lines", "problem"),
    [
        (['{"id": "b-1", "content": "Use tabs"}'], "no reason given"),
        (['{"id": "b-1", "content": "Use tabs", "reason": "x"}'] * 2, "repeats an earlier"),
        (['{"content": "Use tabs", "reason": "x"}', '{"id": "b-2", "content": "y"}'], "no 'id'"),
        (['{"id": "b-1", "content": "z", "forgottenAt": "soon"}'], "not a timestamp"),
        (['{"id": "b-1", "content": "z", "mood": 1}'], "field 'mood'"),
    ],
)
def test_blocked_log_problems_are_notes(lines: list[str], problem: str) -> None:
    from playbook.interop.cass import parse_blocked_log

    result = parse_blocked_log("\n".join(lines) + "\n")
    assert result.blocks
    assert any(problem in n for n in result.unmapped), result.unmapped


@pytest.mark.parametrize("text", ["not json\n", '{"id": 1}\n', "[1, 2]\n"])
def test_a_file_with_no_blocked_log_entry_is_refused(text: str) -> None:
    from playbook.interop.cass import parse_blocked_log

    with pytest.raises(CassImportError):
        parse_blocked_log(text)


@pytest.mark.parametrize("text", ["", "\n\n", " \r\n"])
def test_an_empty_blocked_log_holds_no_blocks(text: str) -> None:
    # What cass-memory leaves when nothing was forgotten (`cm init --repo`).
    from playbook.interop.cass import parse_blocked_log

    parsed = parse_blocked_log(text)
    assert parsed.kind == "blocked-log" and parsed.blocks == [] and parsed.unmapped == []


def test_a_blocked_log_is_told_from_a_playbook_by_its_first_line() -> None:
    from playbook.interop.cass import looks_like_blocked_log

    assert looks_like_blocked_log(BLOCKED_LOG.read_bytes())
    assert not looks_like_blocked_log(FIXTURE.read_bytes())
    assert not looks_like_blocked_log(b'{\n  "format": "playbook-export",\n')
    assert not looks_like_blocked_log(b'{"format": "playbook-export", "bullets": []}')


def test_reading_a_large_playbook_reports_progress() -> None:
    text = doc(*(minimal(id=f"b-{n}", content=f"Rule {n}") for n in range(2500)))
    calls: list[tuple[int, int]] = []
    result = parse_cass_playbook(text, progress=lambda done, total: calls.append((done, total)))
    assert len(result.bullets) == 2500
    assert len(calls) == 3 and calls[-1] == (len(text), len(text))
    assert [d for d, _ in calls] == sorted(d for d, _ in calls) and calls[0][0] < len(text)
