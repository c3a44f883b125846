"""`playbook import` as a real process: formats, caps, merges, summaries, maturity.

Every refusal is checked the same way: one plain line on stderr, the documented exit code
(1, `invalid_import` or `database_not_empty`), and every table of the database byte for
byte as it was (hashed through a read-only connection).
"""

from __future__ import annotations

import hashlib
import sqlite3
from pathlib import Path
from typing import Any

import pytest
import yaml

from .helpers.cli import assert_user_error, run_cli

FIXTURE = Path(__file__).parent / "fixtures" / "cass_playbook.yaml"
BLOCKED_LOG = Path(__file__).parent / "fixtures" / "cass_blocked.log"


def table_hashes(db: Path) -> dict[str, str]:
    """A digest of every table's rows, read without writing anything."""
    conn = sqlite3.connect(f"file:{db}?mode=ro", uri=True)
    try:
        names = [
            r[0]
            for r in conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'")
            if not r[0].startswith("sqlite_")
        ]
        out = {}
        for name in sorted(names):
            rows = sorted(repr(r) for r in conn.execute(f'SELECT * FROM "{name}"'))
            out[name] = hashlib.sha256("\n".join(rows).encode()).hexdigest()
        return out
    finally:
        conn.close()


def facts(db: Path) -> dict[str, Any]:
    """What an import wrote, without ids that differ between runs (batch ids, block ids)."""
    conn = sqlite3.connect(f"file:{db}?mode=ro", uri=True)
    try:
        return {
            "bullets": sorted(
                conn.execute(
                    "SELECT id, content, state, maturity, tags, created_at, valid_to FROM bullets"
                ).fetchall()
            ),
            "feedback": sorted(
                conn.execute(
                    "SELECT bullet_id, kind, at, reason, context, session_ref FROM feedback"
                ).fetchall(),
                key=repr,
            ),
            "edges": sorted(conn.execute("SELECT kind, src, dst FROM edges").fetchall()),
            "blocks": sorted(
                conn.execute(
                    "SELECT pattern, normalized, reason, actor, created_at, active "
                    "FROM blocked_patterns"
                ).fetchall()
            ),
        }
    finally:
        conn.close()


def imported(db: Path, *files: Path, args: tuple[str, ...] = ()) -> dict[str, Any]:
    data: dict[str, Any] = {}
    for f in files:
        r = run_cli("import", f, "--format", "cass", *args, "--json", db=db)
        assert r.rc == 0, r.err
        data = r.data
    return data


def cass_doc(bullets: list[dict[str, Any]], **top: Any) -> str:
    return yaml.safe_dump({"schema_version": 2, "bullets": bullets, **top}, sort_keys=False)


def rule(n: int, **fields: Any) -> dict[str, Any]:
    b: dict[str, Any] = {
        "id": f"b-r{n}",
        "category": "general",
        "content": f"Rule number {n} about caching builds",
        "maturity": "candidate",
        "state": "active",
        "createdAt": "2025-01-01T00:00:00Z",
        "updatedAt": "2025-01-01T00:00:00Z",
    }
    b.update(fields)
    return b


@pytest.fixture
def export_json(tmp_path: Path) -> Path:
    """A Playbook JSON export of the cass fixture."""
    src = tmp_path / "src.sqlite3"
    imported(src, FIXTURE)
    out = tmp_path / "export.json"
    assert run_cli("export", "-o", out, db=src).rc == 0
    return out


# ----------------------------------------------------------------------------- wrong format


def test_a_playbook_export_given_as_cass_is_refused_naming_what_it_is(
    tmp_path: Path, export_json: Path
) -> None:
    # Regression: `--format cass` read a Playbook JSON export as YAML (dates became 1970).
    db = tmp_path / "pb.sqlite3"
    imported(db, BLOCKED_LOG)  # not empty, so "unchanged" means something
    before = table_hashes(db)
    r = run_cli("import", export_json, "--format", "cass", "--json", db=db)
    err = assert_user_error(r, "invalid_import")
    assert "a Playbook export in JSON" in err["message"] and "--format json" in err["message"]
    assert table_hashes(db) == before


@pytest.mark.parametrize(
    ("fmt", "looks_like", "use"),
    [("json", "a cass-memory playbook.yaml", "cass"), ("yaml", "a cass-memory playbook", "cass")],
)
def test_a_cass_file_given_as_a_playbook_export_is_refused(
    tmp_path: Path, fmt: str, looks_like: str, use: str
) -> None:
    db = tmp_path / "pb.sqlite3"
    r = run_cli("import", FIXTURE, "--format", fmt, "--json", db=db)
    err = assert_user_error(r, "invalid_import")
    assert looks_like in err["message"] and f"--format {use}" in err["message"]
    assert not db.exists()


def test_a_blocked_log_given_as_json_is_refused(tmp_path: Path) -> None:
    r = run_cli("import", BLOCKED_LOG, "--format", "json", "--json", db=tmp_path / "pb.sqlite3")
    assert "a cass-memory blocked.log" in assert_user_error(r, "invalid_import")["message"]


# ----------------------------------------------------------------------------- size cap


def test_the_size_cap_is_checked_before_reading_and_names_how_to_raise_it(
    tmp_path: Path,
) -> None:
    db = tmp_path / "pb.sqlite3"
    imported(db, FIXTURE)
    before = table_hashes(db)
    big = tmp_path / "big.yaml"
    big.write_bytes(b"schema_version: 2\n" * 120 + b"bullets: [\n")  # 2.2 KB, not YAML
    r = run_cli("import", big, "--max-size", "1K", "--json", db=db)
    message = assert_user_error(r, "invalid_import")["message"]
    assert "over the 1 KiB import cap" in message and "--max-size" in message
    assert table_hashes(db) == before
    # Raised, the same file is read (and refused for what it is).
    r = run_cli("import", big, "--max-size", "1M", "--json", db=db)
    assert "not valid YAML" in assert_user_error(r, "invalid_import")["message"]
    r = run_cli("import", "-", "--max-size", "1K", "--json", db=db, stdin=big.read_bytes())
    assert "stdin: the file is" in assert_user_error(r, "invalid_import")["message"]
    r = run_cli("import", big, "--max-size", "lots", "--json", db=db)
    assert "--max-size" in assert_user_error(r, "invalid_input")["message"]
    assert table_hashes(db) == before


# ----------------------------------------------------------------------------- merging


def test_a_second_import_of_the_same_file_adds_nothing(tmp_path: Path) -> None:
    db = tmp_path / "pb.sqlite3"
    first = imported(db, FIXTURE, BLOCKED_LOG)
    assert first["counts"]["blocked_patterns"] == 2
    before = table_hashes(db)
    for f in (FIXTURE, BLOCKED_LOG):
        r = run_cli("import", f, "--format", "cass", db=db)
        assert r.rc == 0 and "imported nothing new" in r.out, (r.out, r.err)
        assert table_hashes(db) == before


def test_playbook_and_blocked_log_import_in_either_order(tmp_path: Path) -> None:
    one, two = tmp_path / "one.sqlite3", tmp_path / "two.sqlite3"
    imported(one, FIXTURE, BLOCKED_LOG)
    imported(two, BLOCKED_LOG, FIXTURE)
    assert facts(one) == facts(two)
    blocks = {b[0]: b for b in facts(one)["blocks"]}
    # The blocked.log entry keeps its reason and time; the actor is the person importing.
    forgotten = blocks["Run migrations by hand on the production database"]
    assert forgotten[2:5] == (
        "Caused an outage; migrations run in the deploy job now",
        "human",
        "2025-05-20T08:15:00.000000Z",
    )


def test_import_into_a_playbook_with_rules_merges_same_content(tmp_path: Path) -> None:
    db = tmp_path / "pb.sqlite3"
    r = run_cli("add", "Pin npm to 11 in release jobs", "--json", db=db)
    existing = r.data["outcomes"][0]["bullet_id"]
    assert run_cli("mark", existing, "helpful", db=db).rc == 0
    other = run_cli("add", "Run pytest with -x in CI", "--json", db=db).data
    clash = other["outcomes"][0]["bullet_id"]
    doc = cass_doc(
        [
            {  # same content as an existing rule: merges into it
                **rule(1, content="Pin npm to 11 in release jobs", maturity="proven"),
                "feedbackEvents": [
                    {"type": "helpful", "timestamp": "2025-02-01T10:00:00Z"},
                    {"type": "harmful", "timestamp": "2025-02-02T10:00:00Z", "reason": "outdated"},
                ],
            },
            # new content whose id is already taken here: added under a new id
            {**rule(2), "id": clash, "feedbackEvents": [
                {"type": "helpful", "timestamp": "2025-03-01T10:00:00Z"}]},
            rule(3),  # new content, free id: added as it is
        ]
    )  # fmt: skip
    f = tmp_path / "playbook.yaml"
    f.write_text(doc)
    data = imported(db, f)
    assert data["merged"] == {"b-r1": existing}
    assert set(data["ids"]) == {clash} and data["ids"][clash] != clash
    assert data["counts"] == {"bullets": 2, "feedback": 3, "edges": 0, "blocked_patterns": 0}
    shown = run_cli("show", existing, "--json", db=db).data
    assert shown["bullet"]["source"] != "imported"  # the existing rule keeps its own fields
    assert [e["kind"] for e in shown["timeline"]] == ["helpful", "harmful", "helpful"]
    assert run_cli("show", "b-r3", "--json", db=db).data["bullet"]["source"] == "imported"
    # Once more: every event is there already, nothing is appended.
    before = table_hashes(db)
    again = imported(db, f)
    assert again["counts"] == {"bullets": 0, "feedback": 0, "edges": 0, "blocked_patterns": 0}
    assert table_hashes(db) == before


def test_a_playbook_export_into_a_playbook_with_rules_is_still_refused(
    tmp_path: Path, export_json: Path
) -> None:
    db = tmp_path / "pb.sqlite3"
    assert run_cli("add", "Keep commits small", db=db).rc == 0
    before = table_hashes(db)
    r = run_cli("import", export_json, "--json", db=db)
    err = assert_user_error(r, "database_not_empty")
    assert "restored into an empty database only" in err["message"] and "new file" in err["hint"]
    assert table_hashes(db) == before


# ----------------------------------------------------------------------------- messages


def test_repeated_notes_are_one_line_with_a_count_and_two_examples(tmp_path: Path) -> None:
    # Regression: one stderr line per bullet ("sourceAgents dropped" 10,001 times).
    bullets = [rule(n, sourceAgents=["claude"], tags=["ci", "ci", "npm"]) for n in range(30)]
    f = tmp_path / "playbook.yaml"
    f.write_text(cass_doc(bullets))
    r = run_cli("import", f, "--format", "cass", "--json", db=tmp_path / "pb.sqlite3")
    assert r.rc == 0
    lines = [ln for ln in r.err.splitlines() if ln.startswith("playbook: not imported: ")]
    agents = [ln for ln in lines if "sourceAgents" in ln]
    assert len(agents) == 1
    assert "(30 times; e.g. b-r0: field 'sourceAgents' (claude) dropped" in agents[0]
    assert "; b-r1: field 'sourceAgents' (claude)" in agents[0]
    tags = [ln for ln in lines if "more than once" in ln]
    assert len(tags) == 1 and "30 times" in tags[0] and "'ci'" in tags[0]
    assert len(r.data["unmapped"]) == 60  # the JSON keeps every note
    shown = run_cli("show", "b-r0", "--json", db=tmp_path / "pb.sqlite3").data
    assert shown["bullet"]["tags"] == ["ci", "npm"]


def test_an_item_count_past_the_old_cap_without_aliases_is_not_refused(
    tmp_path: Path,
) -> None:
    # Regression: 500k items (no aliases at all) were refused with a message about aliases.
    prelude = (  # the walk budget's floor, wherever it lives
        "import importlib, playbook.interop.cass as c\n"
        "c.MAX_ITEMS = 50\n"
        "try:\n"
        "    importlib.import_module('playbook.interop.cass.playbook').MAX_ITEMS = 50\n"
        "except ImportError:\n"
        "    pass\n"
    )
    bullets = [rule(n, tags=[f"t{i}" for i in range(8)]) for n in range(20)]  # 180 items
    f = tmp_path / "playbook.yaml"
    f.write_text(cass_doc(bullets))
    r = run_cli("import", f, "--json", db=tmp_path / "pb.sqlite3", python_prelude=prelude)
    assert r.rc == 0, r.err
    assert r.data["counts"]["bullets"] == 20


def test_deprecation_reasons_show_in_show(tmp_path: Path) -> None:
    db = tmp_path / "pb.sqlite3"
    imported(db, FIXTURE)
    r = run_cli("show", "b-dep", db=db)
    assert r.rc == 0 and "deprecated " in r.out and "Superseded by ruff format" in r.out
    data = run_cli("show", "b-retired", "--json", db=db).data
    assert data["deprecation"]["reason"] == "Workers reload themselves since v3"
    assert data["deprecation"]["deprecated_at"].startswith("2025-05-01T09:00")
    assert run_cli("show", "b-lang", "--json", db=db).data["deprecation"] is None


def test_maturity_is_kept_and_the_difference_reported(tmp_path: Path) -> None:
    db = tmp_path / "pb.sqlite3"
    r = run_cli("import", FIXTURE, "--format", "cass", db=db)
    assert r.rc == 0
    assert "maturity kept as recorded; the maturity pass (--rerate) would move 1 of 3" in r.out
    data = run_cli("show", "b-lang", "--json", db=db).data
    assert data["bullet"]["maturity"] == "established"
    r = run_cli(
        "import", FIXTURE, "--format", "cass", "--rerate", "--json", db=tmp_path / "re.sqlite3"
    )
    assert r.data["maturity_changes"] == [["b-lang", "established", "candidate"]]
    assert r.data["maturity"]["kept"] == "no (--rerate)"


def test_json_output_has_warnings_and_every_note(tmp_path: Path) -> None:
    r = run_cli("import", FIXTURE, "--json", db=tmp_path / "pb.sqlite3")
    data = r.data
    assert data["format"] == "cass" and data["warnings"] and data["unmapped"]
    assert len(data["warnings"]) <= len(data["unmapped"])
