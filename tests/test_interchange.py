"""Export and import of our own format, in process with a pinned clock."""

from __future__ import annotations

import json
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest
import yaml

from playbook.curation import curate, run_maturity_pass
from playbook.interop.importing import DatabaseNotEmpty, InvalidImport, import_data, load
from playbook.interop.snapshot import SECTIONS, export_snapshot, to_json, to_yaml
from playbook.retrieval.query import recall
from playbook.review import queue
from playbook.store import PlaybookStore, connect

from .helpers import Clock, dump, store_at
from .helpers.varied import build_varied

START = datetime(2025, 6, 1, 9, 30, tzinfo=UTC)


@pytest.fixture
def source(tmp_path: Path) -> Iterator[tuple[PlaybookStore, Clock, dict[str, str]]]:
    clock = Clock(START)
    conn = connect(tmp_path / "source.sqlite3")
    store = PlaybookStore(conn, clock=clock)
    ids = build_varied(store, clock)
    yield store, clock, ids
    conn.close()


def empty_store(path: Path, clock: Clock) -> PlaybookStore:
    return store_at(path, clock=clock)


def restored(source: PlaybookStore, clock: Clock, path: Path, fmt: str = "json") -> PlaybookStore:
    doc = export_snapshot(source)
    data = (to_json(doc) if fmt == "json" else to_yaml(doc)).encode()
    target = empty_store(path, clock)
    import_data(target, data, fmt)
    return target


def test_export_holds_every_fact(source: tuple[PlaybookStore, Clock, dict[str, str]]) -> None:
    store, _, ids = source
    doc = export_snapshot(store)
    assert doc["format"] == "playbook-export" and doc["version"] == 1
    assert list(doc)[3:] == list(SECTIONS)
    bullets = {b["id"]: b for b in doc["bullets"]}
    assert len(bullets) == store.count_bullets()
    npm = bullets[ids["npm"]]
    assert npm["pinned"] is True and npm["pinned_reason"].startswith("release policy")
    assert set(npm) >= {"provenance", "created_at", "valid_from", "valid_to", "content_hash"}
    assert bullets[ids["black"]]["state"] == "retired" and bullets[ids["black"]]["valid_to"]
    assert bullets[ids["slow"]]["half_life_days"] == 30.0
    assert {e["kind"] for e in doc["edges"]} == {"supersedes", "inverts"}
    assert len(doc["feedback"]) == store.event_count()
    backdated = [e for e in doc["feedback"] if e["at"] < e["recorded_at"]]
    assert backdated and any(e["actor"] == "human" for e in backdated)
    harmful = [e for e in doc["feedback"] if e["reason"] == "wasted_time"]
    assert harmful[0]["provenance"] == {"session_ref": "session:two", "byte_offset": 12}
    assert harmful[0]["context"] == "flaky on arm"
    assert [e["receipt"] for e in doc["feedback"] if e["receipt"]] == ["run-1", "run-1"]
    assert sorted(b["active"] for b in doc["blocked_patterns"]) == [False, True, True]
    assert sorted(p["status"] for p in doc["proposals"]) == ["approved", "pending", "rejected"]
    assert doc["watermarks"][0]["byte_offset"] == 8192
    assert doc["decisions"] and doc["conflicts"] and doc["receipts"]


@pytest.mark.parametrize("fmt", ["json", "yaml"])
def test_round_trip_is_exact(
    source: tuple[PlaybookStore, Clock, dict[str, str]], tmp_path: Path, fmt: str
) -> None:
    store, clock, _ = source
    first = to_json(export_snapshot(store))
    target = restored(store, clock, tmp_path / "copy.sqlite3", fmt)
    assert to_json(export_snapshot(target)) == first
    assert to_yaml(export_snapshot(target)) == to_yaml(export_snapshot(store))


def test_restored_copy_scores_recalls_and_evolves_like_the_original(
    source: tuple[PlaybookStore, Clock, dict[str, str]], tmp_path: Path
) -> None:
    store, clock, _ = source
    target = restored(store, clock, tmp_path / "copy.sqlite3")
    assert target.evidence_watermark() == target.log_watermark()  # the cache is folded
    all_ids = [b.id for b in store.bullets(state="all")]
    assert target.scores(all_ids) == store.scores(all_ids)
    # Scores as of the past (knowledge time) agree too.
    past = datetime(2025, 7, 15, tzinfo=UTC)
    assert target.scores(all_ids, at=past) == store.scores(all_ids, at=past)
    for bid in all_ids:
        assert target.timeline(bid) == store.timeline(bid)
        assert target.lineage(bid) == store.lineage(bid)
    assert target.blocked(include_inactive=True) == store.blocked(include_inactive=True)
    assert [p.id for p in queue.pending(target)] == [p.id for p in queue.pending(store)]
    for query in ("npm release", "squash merge", "sleep retry deploy"):
        assert recall(target, query).to_dict() == recall(store, query).to_dict()
    # A blocked pattern still refuses adds in the copy.
    result = curate(target, [{"type": "add", "content": "npm install --legacy-peer-deps"}])
    assert result.outcomes[0].status == "refused-blocked"
    # A year later, decay moves the same bullets the same way in both.
    clock.advance(days=400)
    assert run_maturity_pass(target) == run_maturity_pass(store)
    assert target.scores(all_ids) == store.scores(all_ids)


def test_import_refuses_a_database_that_is_not_empty(
    source: tuple[PlaybookStore, Clock, dict[str, str]],
) -> None:
    store, _, _ = source
    before = dump(store)
    data = to_json(export_snapshot(store)).encode()
    with pytest.raises(DatabaseNotEmpty, match="empty database"):
        import_data(store, data)
    assert dump(store) == before


def test_a_failure_midway_rolls_everything_back(
    source: tuple[PlaybookStore, Clock, dict[str, str]],
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    store, clock, _ = source
    data = to_json(export_snapshot(store)).encode()
    target = empty_store(tmp_path / "copy.sqlite3", clock)
    before = dump(target)
    real = target.bulk.insert_rows

    def failing(table: str, rows: Any, **kw: Any) -> int:
        if table == "proposals":
            raise RuntimeError("disk on fire")
        return real(table, rows, **kw)

    monkeypatch.setattr(target.bulk, "insert_rows", failing)
    with pytest.raises(RuntimeError, match="disk on fire"):
        import_data(target, data)
    assert dump(target) == before
    assert target.count_bullets() == 0


def test_a_nul_in_any_field_of_an_export_is_an_invalid_import(
    source: tuple[PlaybookStore, Clock, dict[str, str]], tmp_path: Path
) -> None:
    """Regression (found by test_fuzz): a NUL in a field the export's rows do not check
    (a batch id) reached the store, whose refusal of NUL (issue 29) escaped the import as
    a plain InvalidInput; an import's failure is InvalidImport, and writes nothing."""
    store, clock, _ = source
    doc = json.loads(to_json(export_snapshot(store)))
    doc["bullets"][0]["batch_id"] = "\u0000"
    target = empty_store(tmp_path / "copy.sqlite3", clock)
    before = dump(target)
    with pytest.raises(InvalidImport, match="NUL") as refused:
        import_data(target, json.dumps(doc).encode())
    assert "\n" not in str(refused.value)
    assert dump(target) == before


def test_progress_is_reported_to_the_end(
    source: tuple[PlaybookStore, Clock, dict[str, str]], tmp_path: Path
) -> None:
    store, clock, _ = source
    data = to_json(export_snapshot(store)).encode()
    calls: list[tuple[int, int]] = []
    target = empty_store(tmp_path / "copy.sqlite3", clock)
    import_data(target, data, progress=lambda d, t: calls.append((d, t)))
    total = sum(len(v) for k, v in export_snapshot(store).items() if k in SECTIONS)
    assert calls[-1] == (total, total)
    assert [d for d, _ in calls] == sorted(d for d, _ in calls)


def _doc(source: PlaybookStore) -> dict[str, Any]:
    return json.loads(to_json(export_snapshot(source)))


@pytest.mark.parametrize(
    ("mutate", "message"),
    [
        (lambda d: d["feedback"][0].update(bullet_id="b-nowhere"), r"feedback\[0\]\.bullet_id"),
        (lambda d: d["edges"][0].update(dst="b-nowhere"), r"edges\[0\]\.dst"),
        (lambda d: d["bullets"].append(dict(d["bullets"][0])), "duplicate id"),
        (lambda d: d["bullets"][1].update(maturity="legendary"), r"bullets\[1\]\.maturity"),
        (lambda d: d["bullets"][0].update(colour="red"), r"bullets\[0\]\.colour"),
        (lambda d: d["feedback"][2].update(at="last tuesday"), "not an ISO 8601 timestamp"),
        (lambda d: d["feedback"][2].update(weight=-1), r"feedback\[2\]\.weight"),
        (lambda d: d.update(version=2), "newer than this Playbook reads"),
        (lambda d: d.update(format="something-else"), "not a Playbook export"),
    ],
)
def test_invalid_exports_are_refused_with_the_place_named(
    source: tuple[PlaybookStore, Clock, dict[str, str]], mutate: Any, message: str
) -> None:
    store, _, _ = source
    doc = _doc(store)
    mutate(doc)
    with pytest.raises(InvalidImport, match=message):
        load(json.dumps(doc).encode(), "json")


def test_yaml_with_aliases_is_refused() -> None:
    text = (
        "format: playbook-export\nversion: 1\nbullets: []\n"
        "decisions:\n- &d {id: 1, at: '2025-01-01T00:00:00Z', actor: human, action: x,"
        " status: applied, detail: &x {a: 1}}\n- {id: 2, at: '2025-01-01T00:00:00Z',"
        " actor: human, action: x, status: applied, detail: *x}\n"
    )
    with pytest.raises(InvalidImport, match="aliases"):
        load(text.encode(), "yaml")


def test_auto_format_tells_json_yaml_and_cass_apart(
    source: tuple[PlaybookStore, Clock, dict[str, str]],
) -> None:
    store, _, _ = source
    doc = export_snapshot(store)
    assert load(to_json(doc).encode())[0] == "json"
    assert load(to_yaml(doc).encode())[0] == "yaml"
    cass = Path(__file__).parent / "fixtures" / "cass_playbook.yaml"
    assert load(cass.read_bytes())[0] == "cass"
    with pytest.raises(InvalidImport, match="not valid JSON"):
        load(b"{nope", "auto")
    with pytest.raises(InvalidImport, match="not a Playbook export"):
        load(yaml.safe_dump({"hello": "world"}).encode(), "auto")


# ----------------------------------------------------------------------------- formats

CASS = Path(__file__).parent / "fixtures" / "cass_playbook.yaml"
BLOCKED_LOG = Path(__file__).parent / "fixtures" / "cass_blocked.log"


@pytest.mark.parametrize(
    ("which", "fmt", "looks_like", "use"),
    [
        ("export-json", "cass", "a Playbook export in JSON", "json"),
        ("export-json", "yaml", "a Playbook export in JSON", "json"),
        ("export-yaml", "cass", "a Playbook export in YAML", "yaml"),
        ("export-yaml", "json", "a Playbook export in YAML", "yaml"),
        ("cass", "json", "a cass-memory playbook.yaml", "cass"),
        ("cass", "yaml", "a cass-memory playbook.yaml", "cass"),
        ("blocked", "yaml", "a cass-memory blocked.log", "cass"),
    ],
)
def test_a_file_in_another_format_is_refused_naming_it(
    source: tuple[PlaybookStore, Clock, dict[str, str]],
    which: str,
    fmt: str,
    looks_like: str,
    use: str,
) -> None:
    # Regression: `--format cass` read a Playbook JSON export (JSON is YAML) and imported
    # its bullets with 1970 dates and 74 "unmapped" lines.
    store, _, _ = source
    doc = export_snapshot(store)
    data = {
        "export-json": to_json(doc).encode(),
        "export-yaml": to_yaml(doc).encode(),
        "cass": CASS.read_bytes(),
        "blocked": BLOCKED_LOG.read_bytes(),
    }[which]
    with pytest.raises(InvalidImport) as info:
        load(data, fmt)
    assert looks_like in str(info.value) and f"--format {use}" in str(info.value)


def test_auto_format_recognises_a_blocked_log() -> None:
    kind, parsed = load(BLOCKED_LOG.read_bytes())
    assert kind == "cass" and len(parsed.blocks) == 2  # type: ignore[union-attr]


def test_the_size_cap_comes_before_parsing(tmp_path: Path, clock: Clock) -> None:
    with pytest.raises(InvalidImport, match=r"over the 64 bytes import cap.*--max-size"):
        load(b"{" * 100, max_bytes=64)  # not JSON either: the cap is what is reported
    target = empty_store(tmp_path / "t.sqlite3", clock)
    before = dump(target)
    with pytest.raises(InvalidImport, match="import cap"):
        import_data(target, CASS.read_bytes(), max_bytes=1000)
    assert dump(target) == before


def test_duplicate_tags_in_an_export_are_kept_once_and_reported(
    source: tuple[PlaybookStore, Clock, dict[str, str]], tmp_path: Path
) -> None:
    store, clock, ids = source
    doc = _doc(store)
    (npm,) = [b for b in doc["bullets"] if b["id"] == ids["npm"]]
    npm["tags"] = [*npm["tags"], npm["tags"][0], " " + npm["tags"][0]]
    target = empty_store(tmp_path / "copy.sqlite3", clock)
    report = import_data(target, json.dumps(doc).encode(), "json")
    assert target.get_bullet(ids["npm"]).tags == store.get_bullet(ids["npm"]).tags  # type: ignore[union-attr]
    (note,) = report.unmapped
    assert ids["npm"] in note and "kept once" in note


def test_a_restore_keeps_every_maturity_and_rates_nothing(
    source: tuple[PlaybookStore, Clock, dict[str, str]], tmp_path: Path
) -> None:
    store, clock, _ = source
    clock.advance(days=400)  # long after the export: decay has moved every score
    data = to_json(export_snapshot(store)).encode()
    target = empty_store(tmp_path / "copy.sqlite3", clock)
    report = import_data(target, data)
    assert report.maturity_changes == []
    for b in store.bullets(state="all"):
        assert target.get_bullet(b.id).maturity == b.maturity  # type: ignore[union-attr]
    # ... and an unrelated mark afterwards visits only its own bullet.
    (live,) = [b for b in target.bullets() if not b.pinned][:1]
    result = curate(target, [{"type": "helpful", "bullet_id": live.id}])
    assert {bid for bid, _, _ in result.maturity_changes} <= {live.id}
