"""The `playbook` command, run as a real process against temporary databases.

Each case checks stdout (one JSON document with --json), stderr (diagnostics, one plain line
for a user error, never a traceback) and the exit code.
"""

from __future__ import annotations

import json
import sqlite3
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from playbook.core.policy import Policy
from playbook.curation import curate
from playbook.store import PlaybookStore

from .helpers import store_at
from .helpers.cli import Result, assert_user_error, clean_env, run_cli


def make_store(path: Path) -> PlaybookStore:
    return store_at(path)


def add(db: Path, content: str, *args: str) -> str:
    r = run_cli("add", content, *args, "--json", db=db)
    assert r.rc == 0, r.err
    return r.data["outcomes"][0]["bullet_id"]


def seed(db: Path, content: str = "Pin npm to 11 in release jobs") -> str:
    """A bullet written in process (faster than `add` where the CLI is not under test)."""
    store = make_store(db)
    bid = store.insert_bullet(content).id
    store.close()
    return bid


def no_traceback(r: Result) -> None:
    assert "Traceback" not in r.err and "Traceback" not in r.out


# ----------------------------------------------------------------------------- basics


def test_version_and_help() -> None:
    r = run_cli("--version")
    assert r.rc == 0 and r.out.startswith("playbook 0.")
    r = run_cli("--help")
    assert r.rc == 0
    for command in ("pin", "unpin", "block", "unblock", "blocked", "stats", "stale", "export",
                    "import", "policy", "recall", "mcp"):  # fmt: skip
        assert f"\n  {command} " in r.out


def test_database_location_xdg_then_env_then_flag(tmp_path: Path) -> None:
    xdg = tmp_path / "xdg"
    r = run_cli("init", "--json", env=clean_env(XDG_DATA_HOME=str(xdg)))
    default = xdg / "playbook" / "state.sqlite3"
    assert r.rc == 0 and r.data["path"] == str(default) and default.is_file()

    env_db = tmp_path / "env.sqlite3"
    flag_db = tmp_path / "flag.sqlite3"
    env = clean_env(XDG_DATA_HOME=str(xdg), PLAYBOOK_DB=str(env_db))
    assert run_cli("init", "--json", env=env).data["path"] == str(env_db)
    r = run_cli("--db", str(flag_db), "init", "--json", env=env)
    assert r.data["path"] == str(flag_db) and flag_db.is_file()
    # Created on first write, folder included.
    nested = tmp_path / "a" / "b" / "state.sqlite3"
    add(nested, "Pin npm to 11 in release jobs")
    assert nested.is_file()


def test_success_contract(tmp_path: Path) -> None:
    db = tmp_path / "pb.sqlite3"
    r = run_cli("add", "Pin npm to 11 in release jobs", "-t", "ci", "--json", db=db)
    assert r.rc == 0 and r.err == ""
    doc = r.json
    assert doc["ok"] is True and doc["data"]["outcomes"][0]["status"] == "added"
    r = run_cli("recall", "npm release", "--json", db=db)
    assert r.rc == 0 and r.err == ""
    data = r.data
    assert [i["bullet"]["content"] for i in data["bullets"]] == ["Pin npm to 11 in release jobs"]
    assert set(data) == {"query_tokens", "bullets", "anti_patterns", "deprecated_warnings",
                         "degraded"}  # fmt: skip
    human = run_cli("recall", "npm release", db=db)
    assert human.rc == 0 and "Pin npm to 11 in release jobs" in human.out


# ----------------------------------------------------------------------------- pins


def test_pin_and_unpin_are_human_actions(tmp_path: Path) -> None:
    db = tmp_path / "pb.sqlite3"
    bid = seed(db)
    r = run_cli("pin", bid, "--reason", "release policy", "--json", db=db)
    assert r.rc == 0 and r.data == {"bullet_id": bid, "pinned": True,
                                    "reason": "release policy", "was_pinned": False}  # fmt: skip
    shown = run_cli("show", bid, "--json", db=db).data["bullet"]
    assert shown["pinned"] is True and shown["pinned_reason"] == "release policy"
    store = make_store(db)
    (decision,) = [d for d in store.decisions(bullet_id=bid) if d.action == "pin"]
    assert decision.actor == "human" and decision.reason == "release policy"
    # An agent can no longer deprecate it.
    res = curate(store, [{"type": "deprecate", "bullet_id": bid, "reason": "meh"}])
    assert res.outcomes[0].status == "refused-pinned"
    r = run_cli("unpin", bid, db=db)
    assert r.rc == 0 and r.out.strip() == f"unpinned {bid}"
    assert run_cli("unpin", bid, db=db).out.strip() == f"{bid} was not pinned"
    assert store.get_bullet(bid).pinned is False  # type: ignore[union-attr]


def test_pin_needs_a_reason_and_a_live_bullet(tmp_path: Path) -> None:
    db = tmp_path / "pb.sqlite3"
    bid = seed(db, "Use black for formatting")
    r = run_cli("pin", bid, "--json", db=db)
    assert r.rc == 2 and r.error["code"] == "usage"
    no_traceback(r)
    curate(make_store(db), [{"type": "replace", "bullet_id": bid, "content": "Use ruff format"}])
    r = run_cli("pin", bid, "-r", "x", "--json", db=db)
    assert "retired" in assert_user_error(r, "invalid_input")["message"]


# ----------------------------------------------------------------------------- blocks


def test_block_listing_and_unblock(tmp_path: Path) -> None:
    db = tmp_path / "pb.sqlite3"
    r = run_cli("block", "npm install --legacy-peer-deps", "-r", "hides conflicts", "--json",
                db=db)  # fmt: skip
    assert r.rc == 0
    block = r.data
    assert block["active"] is True and block["actor"] == "human"
    r = run_cli("add", "npm install --legacy-peer-deps", "--json", db=db)
    assert assert_user_error(r, "nothing_applied")["message"].startswith("refused-blocked")
    listed = run_cli("blocked", "--json", db=db).data
    assert [b["id"] for b in listed] == [block["id"]]
    assert "npm install --legacy-peer-deps" in run_cli("blocked", db=db).out
    assert run_cli("unblock", block["id"], db=db).rc == 0
    assert run_cli("blocked", "--json", db=db).data == []
    (lifted,) = run_cli("blocked", "--all", "--json", db=db).data
    assert lifted["active"] is False and lifted["unblocked_at"]
    r = run_cli("add", "npm install --legacy-peer-deps", "--json", db=db)
    assert r.data["outcomes"][0]["status"] == "added"
    assert_user_error(run_cli("unblock", block["id"], "--json", db=db), "not_found")


# ----------------------------------------------------------------------------- stats, stale


def test_stats_and_stale(tmp_path: Path) -> None:
    db = tmp_path / "pb.sqlite3"
    store = make_store(db)
    now = datetime.now(UTC)
    old = store.insert_bullet("Restart the worker pool", created_at=now - timedelta(days=200)).id
    store.insert_bullet("AVOID: sleeping in tests", type="anti-pattern", maturity="established")
    pinned = store.insert_bullet("Pin npm", maturity="proven", pinned=True).id
    for _ in range(12):
        store.add_feedback(pinned, "helpful")
    bad = store.insert_bullet("Use tabs", maturity="established").id
    for _ in range(3):
        store.add_feedback(bad, "harmful", reason="other")
    store.insert_bullet("Gone", state="retired")
    store.block("leftpad", "no")
    data = run_cli("stats", "--json", db=db).data
    b = data["bullets"]
    assert b["total"] == 5
    assert b["by_state"] == {"active": 4, "draft": 0, "retired": 1}
    assert b["by_maturity"] == {"candidate": 1, "established": 2, "proven": 1, "deprecated": 0}
    assert b["by_type"] == {"rule": 3, "anti-pattern": 1} and b["pinned"] == 1
    buckets = {x["label"]: x["count"] for x in data["score_buckets"]}
    assert sum(buckets.values()) == 4
    assert buckets[">= 10"] == 1  # 12 helpful at x1.5
    assert buckets["< -3"] == 1  # -12 x1 (the pass has not run: read as stored)
    assert data["stale"] == 1 and data["stale_after_days"] == 180
    assert data["feedback"] == {"events": 15, "helpful": 12, "harmful": 3}
    assert data["blocked_patterns"] == 1
    human = run_cli("stats", db=db).out
    assert "stale      1" in human and "active 4" in human

    stale = run_cli("stale", "--json", db=db).data
    assert stale["total"] == 1
    (item,) = stale["items"]
    assert item["bullet"]["id"] == old and 199.9 < item["days_silent"] < 200.1
    assert old in run_cli("stale", db=db).out


# ----------------------------------------------------------------------------- policy


def test_policy_show_names_sources_a_reader_can_look_up() -> None:
    """Every default's source is cass-memory (a public repository, named in the README),
    a section of the README, or a function of the package; never a design note a user
    has no copy of ("seed 000") or "SPEC"."""
    import importlib
    import re

    readme = (Path(__file__).resolve().parents[1] / "README.md").read_text(encoding="utf-8")
    headings = set(re.findall(r"^#+ (.+)$", readme, re.M))
    assert "github.com/Dicklesworthstone/cass_memory_system" in readme
    for item in run_cli("policy", "show", "--json").data:
        source = item["source"]
        assert not re.search(r"seed|SPEC", source), (item["name"], source)
        if source.startswith("cass-memory"):
            continue
        where = re.fullmatch(r"Playbook's own \((?:README: (.+)|(playbook\.[\w.]+))\)", source)
        assert where is not None, (item["name"], source)
        section, dotted = where.groups()
        if section is not None:
            assert section in headings, (item["name"], section)
        else:
            module, _, name = dotted.rpartition(".")
            assert callable(getattr(importlib.import_module(module), name))


def test_policy_show_every_constant(tmp_path: Path) -> None:
    items = run_cli("policy", "show", "--json").data
    assert [i["name"] for i in items] == Policy.names()
    hl = next(i for i in items if i["name"] == "half_life_days")
    assert (
        hl["value"] == 90.0 and hl["source"] == "cass-memory src/scoring.ts" and hl["description"]
    )
    assert not any(i["overridden"] for i in items)

    toml = tmp_path / "playbook.toml"
    toml.write_text("[policy]\nhalf_life_days = 30\n")
    items = run_cli("--policy", str(toml), "policy", "show", "--json").data
    hl = next(i for i in items if i["name"] == "half_life_days")
    assert hl["value"] == 30 and hl["overridden"] and hl["source"] == str(toml)
    assert hl["default"] == 90.0
    human = run_cli("policy", "show", env=clean_env(PLAYBOOK_POLICY=str(toml))).out
    assert f"set in {toml} (default 90)" in human


def test_policy_file_changes_scoring(tmp_path: Path) -> None:
    db = tmp_path / "pb.sqlite3"
    store = make_store(db)
    bid = store.insert_bullet("Pin npm").id
    store.add_feedback(bid, "helpful", at=datetime.now(UTC) - timedelta(days=30))
    toml = tmp_path / "playbook.toml"
    toml.write_text("half_life_days = 30\n")
    default = run_cli("show", bid, "--json", db=db).data["score"]["helpful"]
    short = run_cli("--policy", str(toml), "show", bid, "--json", db=db).data["score"]["helpful"]
    assert default == pytest.approx(0.5 ** (30 / 90), rel=1e-4)
    assert short == pytest.approx(0.5, rel=1e-4)


@pytest.mark.parametrize(
    ("text", "needle"), [("half_life_days = -1\n", "half_life_days"), ("nope = [\n", "TOML")]
)
def test_bad_policy_file(tmp_path: Path, text: str, needle: str) -> None:
    toml = tmp_path / "playbook.toml"
    toml.write_text(text)
    r = run_cli("--policy", str(toml), "policy", "show", "--json")
    assert needle in assert_user_error(r, "invalid_policy")["message"]


# ----------------------------------------------------------------------------- user errors


@pytest.mark.parametrize(
    "args",
    [
        ["show", "b-nope"],
        ["mark", "b-nope", "helpful"],
        ["pin", "b-nope", "-r", "why"],
        ["unpin", "b-nope"],
        ["unblock", "p-nope"],
    ],
)
def test_bad_id(tmp_path: Path, args: list[str]) -> None:
    db = tmp_path / "pb.sqlite3"
    seed(db)
    r = run_cli(*args, "--json", db=db)
    assert "nope" in assert_user_error(r, "not_found")["message"]


def test_user_error_without_json_is_one_plain_line(tmp_path: Path) -> None:
    db = tmp_path / "pb.sqlite3"
    seed(db)
    plain = run_cli("show", "b-nope", db=db)
    assert plain.rc == 1 and plain.out == ""
    assert plain.err == "playbook: error: no bullet with id 'b-nope' (see 'playbook recall')\n"


@pytest.mark.parametrize(
    "args",
    [["show", "b-1"], ["recall", "npm"], ["stats"], ["stale"], ["blocked"], ["export"]],
)
def test_missing_database_for_read_commands(tmp_path: Path, args: list[str]) -> None:
    db = tmp_path / "missing" / "pb.sqlite3"
    r = run_cli(*args, "--json", db=db)
    err = assert_user_error(r, "no_database")
    assert str(db) in err["message"] and "playbook init" in err["hint"]
    assert not db.exists() and not db.parent.exists()


def test_malformed_json_input(tmp_path: Path) -> None:
    db = tmp_path / "pb.sqlite3"
    bad = tmp_path / "deltas.json"
    bad.write_text('[{"type": "add", "content": ')
    assert_user_error(run_cli("curate", bad, "--json", db=db), "invalid_json")
    r = run_cli("curate", "-", "--json", db=db, stdin=b"{not json")
    assert_user_error(r, "invalid_json")
    r = run_cli("import", bad, "--format", "json", "--json", db=db)
    assert "not valid JSON" in assert_user_error(r, "invalid_import")["message"]
    assert not db.exists()  # a bad file creates nothing


def test_database_from_a_newer_version(tmp_path: Path) -> None:
    db = tmp_path / "pb.sqlite3"
    seed(db)
    conn = sqlite3.connect(db)
    conn.execute("INSERT INTO _migrations VALUES ('memory', 99, '2030-01-01')")
    conn.commit()
    conn.close()
    for args in (["show", "b-x"], ["add", "Another rule"]):
        r = run_cli(*args, "--json", db=db)
        err = assert_user_error(r, "schema_too_new", exit_code=3)
        assert "version 99" in err["message"] and err["hint"]


def test_a_file_that_is_not_sqlite(tmp_path: Path) -> None:
    db = tmp_path / "notes.txt"
    db.write_bytes(b"these are my notes, not a database\n" * 100)
    for args in (["stats"], ["add", "Pin npm"]):
        r = run_cli(*args, "--json", db=db)
        assert_user_error(r, "not_a_database", exit_code=3)
    assert db.read_bytes().startswith(b"these are my notes")


def test_usage_errors_exit_2(tmp_path: Path) -> None:
    r = run_cli("mark", "b-1")
    assert r.rc == 2 and r.out == "" and "Missing argument" in r.err
    no_traceback(r)
    r = run_cli("mark", "b-1", "--json")
    assert r.rc == 2 and r.error["code"] == "usage" and "playbook mark" in r.error["hint"]
    r = run_cli("frobnicate")
    assert r.rc == 2 and "No such command" in r.err
    r = run_cli("export", "--format", "pdf", "--json", db=tmp_path / "x.sqlite3")
    assert "agents-md" in assert_user_error(r, "invalid_input")["hint"]


def test_mcp_without_the_sdk_is_a_clear_error(tmp_path: Path) -> None:
    prelude = "import sys; sys.modules['mcp'] = None\n"
    r = run_cli("mcp", db=tmp_path / "pb.sqlite3", python_prelude=prelude)
    assert r.rc == 1 and "pip install -e '.[mcp]'" in r.err
    no_traceback(r)


def test_bugs_exit_4_with_a_traceback(tmp_path: Path) -> None:
    prelude = (
        "import playbook.review.stats as a\n"
        "def boom(*_a, **_k): raise ZeroDivisionError('oops')\n"
        "a.bucket = boom\n"
    )
    db = tmp_path / "pb.sqlite3"
    seed(db)
    r = run_cli("stats", "--json", db=db, python_prelude=prelude)
    assert r.rc == 4 and r.error["code"] == "internal"
    assert "Traceback" in r.err and "ZeroDivisionError" in r.err


# ----------------------------------------------------------------------------- export/import


def test_export_import_round_trip_through_the_cli(tmp_path: Path) -> None:
    from .helpers import Clock
    from .helpers.varied import SPAN_DAYS, build_varied

    src = tmp_path / "src.sqlite3"
    clock = Clock(datetime.now(UTC) - timedelta(days=SPAN_DAYS))
    store = store_at(src, clock=clock)
    build_varied(store, clock)
    first = tmp_path / "first.json"
    r = run_cli("export", "-o", first, "--json", db=src)
    assert r.rc == 0 and r.data["counts"]["bullets"] == store.count_bullets()
    stdout_copy = run_cli("export", db=src).out
    assert stdout_copy == first.read_text()

    copy = tmp_path / "copy.sqlite3"
    r = run_cli("import", first, "--json", db=copy)
    assert r.rc == 0, r.err
    assert r.data["format"] == "json" and r.data["maturity_changes"] == []
    assert r.data["counts"]["feedback"] == store.event_count()
    assert run_cli("export", db=copy).out == first.read_text()

    yaml_file = tmp_path / "export.yaml"
    assert run_cli("export", "--format", "yaml", "-o", yaml_file, db=src).rc == 0
    copy2 = tmp_path / "copy2.sqlite3"
    r = run_cli("import", yaml_file, db=copy2)
    assert r.rc == 0 and r.out.startswith("imported ")
    assert run_cli("export", db=copy2).out == first.read_text()

    # Into a database that is not empty: refused, nothing changes.
    before = copy.read_bytes()
    r = run_cli("import", first, "--json", db=copy)
    assert "new file" in assert_user_error(r, "database_not_empty")["hint"]
    assert copy.read_bytes() == before
    # A broken file into a new database: refused, no file left behind.
    broken = json.loads(first.read_text())
    broken["feedback"][0]["bullet_id"] = "b-missing"
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps(broken))
    r = run_cli("import", bad, "--json", db=tmp_path / "new.sqlite3")
    assert "feedback[0].bullet_id" in assert_user_error(r, "invalid_import")["message"]
    assert not (tmp_path / "new.sqlite3").exists()


def test_agents_md_export(tmp_path: Path) -> None:
    db = tmp_path / "pb.sqlite3"
    store = make_store(db)
    store.insert_bullet("Pin npm to 11 in release jobs", category="ci", maturity="proven")
    store.insert_bullet("Sleeping in tests", type="anti-pattern", maturity="established")
    store.insert_bullet("Use black", maturity="deprecated")
    r = run_cli("export", "--format", "agents-md", db=db)
    assert r.rc == 0 and r.out.startswith("<!-- playbook:begin ")
    assert r.out.endswith("<!-- playbook:end -->\n") and "\n## Playbook\n" in r.out
    assert "- Pin npm to 11 in release jobs `b-" in r.out
    assert "- Avoid: Sleeping in tests `b-" in r.out
    assert "black" not in r.out
    out = tmp_path / "AGENTS.md"
    r = run_cli("export", "--format", "agents-md", "-o", out, "--title", "Rules", "--json", db=db)
    assert r.data["path"] == str(out) and r.data["how"] == "created"
    assert "\n## Rules\n" in out.read_text()
    data = run_cli("export", "--format", "agents-md", "--json", db=db).data
    assert data["content"].startswith("<!-- playbook:begin") and data["shown"] == 2


def test_cass_import_reports_what_it_could_not_map(tmp_path: Path) -> None:
    from playbook.interop.cass import parse_cass_playbook

    fixture = Path(__file__).parent / "fixtures" / "cass_playbook.yaml"
    unmapped = parse_cass_playbook(fixture.read_bytes()).unmapped
    db = tmp_path / "pb.sqlite3"
    r = run_cli("import", fixture, "--format", "cass", "--json", db=db)
    assert r.rc == 0
    assert r.data["format"] == "cass" and r.data["unmapped"] == unmapped
    assert r.data["counts"] == {"bullets": 8, "feedback": 8, "edges": 2, "blocked_patterns": 2}
    notes = [ln for ln in r.err.splitlines() if ln.startswith("playbook: not imported: ")]
    assert len(notes) == len(unmapped)
    assert "\r" not in r.err  # no progress bar when stderr is not a terminal
    shown = run_cli("show", "b-pinned", "--json", db=db).data
    assert shown["bullet"]["pinned"] is True and len(shown["timeline"]) == 2
    assert [b["pattern"] for b in run_cli("blocked", "--json", db=db).data] == [
        "npm install --legacy-peer-deps",
        r"sleep\s+\d+ in tests",
    ]
    # auto-detection picks cass for this file too
    r = run_cli("import", fixture, "--json", db=tmp_path / "auto.sqlite3")
    assert r.data["format"] == "cass"


def test_progress_bar_draws_on_a_terminal_only(capsys: pytest.CaptureFixture[str]) -> None:
    from playbook.cli.interchange import _ProgressBar

    bar = _ProgressBar("importing", enabled=True)
    bar.DELAY = 0.0
    for done in range(0, 1001, 100):
        bar(done, 1000)
    bar.close()
    err = capsys.readouterr().err
    assert err.startswith("\rimporting [") and "100% 1000/1000" in err and err.endswith("\n")
    quiet = _ProgressBar("importing", enabled=False)
    quiet(1000, 1000)
    quiet.close()
    assert capsys.readouterr().err == ""


def test_hot_commands_do_not_import_heavy_modules(tmp_path: Path) -> None:
    db = tmp_path / "pb.sqlite3"
    bid = seed(db)
    # recall ranks with numpy (retrieval_rank.rank_now), so numpy is allowed there only.
    heavy = ("numpy", "textual", "yaml", "mcp", "rich", "rapidfuzz")
    for args, allowed in (
        (["--help"], ()),
        (["mark", bid, "helpful"], ()),
        (["recall", "npm", "--json"], ("numpy",)),
    ):
        names = tuple(m for m in heavy if m not in allowed)
        prelude = (
            "import atexit, sys\n"
            "def _report():\n"
            f"    heavy = {names!r}\n"
            "    bad = sorted({m.split('.')[0] for m in sys.modules} & set(heavy))\n"
            "    sys.stderr.write('HEAVY:' + ','.join(bad) + '\\n')\n"
            "atexit.register(_report)\n"
        )
        r = run_cli(*args, db=db, python_prelude=prelude)
        assert r.rc == 0, r.err
        assert "HEAVY:\n" in r.err, (args, r.err)


def test_library_user_errors_map_to_stable_codes() -> None:
    from playbook.cli.common import CliError
    from playbook.curation.outcomes import InvalidOutcome
    from playbook.interop.importing import DatabaseNotEmpty, InvalidImport
    from playbook.review.queue import ApprovalRefused
    from playbook.store import NotFound, StoreError

    def code(exc: BaseException) -> str | None:
        err = CliError.from_exception(exc)
        return None if err is None else err.code

    assert code(InvalidOutcome("bad report")) == "invalid_input"
    assert code(InvalidImport("bad file")) == "invalid_import"
    assert code(DatabaseNotEmpty("full")) == "database_not_empty"
    assert code(ApprovalRefused("only a human can approve")) == "refused"
    assert code(NotFound("no bullet with id 'x'")) == "not_found"
    assert code(StoreError("a blocked pattern needs at least one word")) == "invalid_input"
    assert code(sqlite3.OperationalError("database is locked")) == "database_error"
    assert code(ValueError("something else")) is None  # a bug keeps its traceback
