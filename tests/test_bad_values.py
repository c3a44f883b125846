"""Values that must never reach the log, and rows that reached it anyway (issue 29).

- The database refuses a malformed row, whoever writes it (schema step 3: timestamps in the
  store's form and range, weights finite from 0 to 1000, JSON where JSON is kept);
- a row written before those checks existed (or behind the database's back) is skipped by
  every reader alike, said once on stderr, named by `doctor`, left out of an export and a
  copy, and an evidence cache that folded it is folded again without it at the upgrade;
- the API refuses NUL characters and empty receipts, on both backends; a receipt is spent
  only by an outcome that applied;
- every Policy number is finite and in its documented range, refused at load by name.

Each on SQLite and PostgreSQL.
"""

from __future__ import annotations

import json
import math
from pathlib import Path

import pytest

from playbook.core.errors import ConstraintError, InvalidInput
from playbook.core.policy import Policy
from playbook.core.text import content_hash
from playbook.curation import curate
from playbook.curation.outcomes import InvalidOutcome, apply_outcome
from playbook.store import PlaybookStore, iso, open_store
from playbook.store import testing as raw
from playbook.store.checks import RULES, sqlite_step

from .helpers import Clock
from .helpers.bad_rows import GOOD_TIME, bad_feedback, drop_checks, restore_checks
from .helpers.cli import assert_user_error, run_cli
from .helpers.hooks import Agent, fixture

# (column, a value the database refuses) for a feedback row; the rest of the row is good.
POISON = {
    "weight Infinity": ("weight", math.inf),
    "weight NaN": ("weight", "NaN"),
    "weight a million": ("weight", 1e6),
    "at 'yesterday'": ("at", "yesterday"),
    "at 9999-12-31": ("at", "9999-12-31T00:00:00.000000Z"),
    "at February 30": ("at", "2026-02-30T12:00:00.000000Z"),
    "at without its fraction": ("at", "2026-03-01T12:00:00Z"),
    "recorded_at 24:00": ("recorded_at", "2026-03-01T24:00:00.000000Z"),
}


@pytest.mark.parametrize("poison", [*sorted(POISON), "weight -1"])
def test_the_database_refuses_a_malformed_event(store: PlaybookStore, poison: str) -> None:
    bid = store.insert_bullet("Pin npm to 11").id
    column, value = POISON.get(poison, ("weight", -1.0))  # -1: refused since version 1
    before = raw.dump(store)
    with pytest.raises(ConstraintError):
        bad_feedback(store, bid, **{column: value})
    assert raw.dump(store) == before


def test_the_database_refuses_a_decision_without_json_detail(store: PlaybookStore) -> None:
    for detail in (None, "not json", "[1, 2]"):
        with pytest.raises(ConstraintError):
            raw.run(
                store,
                "INSERT INTO decisions (at, actor, action, status, detail) "
                "VALUES (?, 'agent', 'add', 'added', ?)",
                (GOOD_TIME, detail),
            )


def test_the_checks_keep_what_the_store_writes(store: PlaybookStore, clock: Clock) -> None:
    """Every row the API writes passes them: a rule, votes, an outcome with a receipt, a
    proposal, a block, a conflict, an inversion, a pin."""
    from playbook.review import queue

    r = curate(store, [{"type": "add", "content": "Run pytest with -x", "tags": ["ci"]},
                       {"type": "add", "content": "Never run pytest with -x"}])  # fmt: skip
    bid = r.added[0]
    for _ in range(4):
        clock.advance(hours=1)
        curate(store, [{"type": "harmful", "bullet_id": bid, "reason": "wasted_time"}])
    apply_outcome(store, {"outcome": "partial", "bullet_ids": [r.added[1]], "receipt": "r-1"})
    queue.stage(store, [{"type": "add", "content": "Cache pip downloads"}])
    store.block("Use --no-verify", "hooks matter")
    store.pin(r.added[1], "team rule")
    assert store.get_bullet(bid).state == "retired"


@pytest.mark.parametrize("poison", [*sorted(POISON), "decision detail NULL"])
def test_a_malformed_row_already_there_is_skipped_and_named(
    db_target: str | Path, clock: Clock, poison: str, tmp_path: Path
) -> None:
    """Written before the checks existed: recall, show, stats, diff, the prompt hook and an
    export read on without it (one note on stderr), its bullet scores as if it were not
    there, `doctor` names it, and the export imports into a new playbook."""
    with open_store(db_target, clock=clock) as store:
        bid = curate(store, [{"type": "add", "content": "Run pytest with -x in CI"}]).added[0]
        store.add_feedback(bid, "helpful")
        clean = store.score(bid)
        table = "decisions" if poison.startswith("decision") else "feedback"
        drop_checks(store, table)
        if table == "feedback":
            column, value = POISON[poison]
            bad_feedback(store, bid, **{column: value})
        else:
            raw.run(
                store,
                "INSERT INTO decisions (at, actor, action, bullet_id, status, detail) "
                "VALUES (?, 'agent', 'add', ?, 'added', NULL)",
                (GOOD_TIME, bid),
            )
        restore_checks(store, table)
    with open_store(db_target, clock=clock, mode="read") as store:
        assert store.score(bid) == clean
    env_db = str(db_target)
    for args in (["recall", "pytest"], ["show", bid], ["stats"], ["diff", "--since", "2026-01-01"]):
        r = run_cli(*args, "--json", db=env_db)  # type: ignore[arg-type]
        assert r.rc == 0 and "Traceback" not in r.err, (args, r.err)
        assert json.loads(r.out)["ok"] is True
        if table == "feedback" or args[0] == "show":  # the commands that read such a row
            assert "malformed row" in r.err and "playbook doctor" in r.err, (args, r.err)
    agent = Agent(db=db_target, state=tmp_path / "state")  # type: ignore[arg-type]
    hook = agent.hook("prompt", fixture("user_prompt_submit.json", prompt="pytest CI"))
    assert hook.rc == 0 and bid in hook.out and agent.log == [], (hook, agent.log)
    doctor = run_cli("doctor", "--json", db=env_db)  # type: ignore[arg-type]
    assert doctor.rc == 3
    problems = json.loads(doctor.out)["data"]["problems"]
    assert any(f"{table} row" in p for p in problems), problems
    exported = run_cli("export", "--json", db=env_db)  # type: ignore[arg-type]
    assert exported.rc == 0
    out = tmp_path / "export.json"
    out.write_text(json.dumps(json.loads(exported.out)["data"]["content"]), encoding="utf-8")
    fresh = tmp_path / "fresh.sqlite3"
    assert run_cli("import", out, "--json", db=fresh).rc == 0


def test_an_upgrade_folds_the_log_again_without_a_poisoned_event(
    tmp_path: Path, clock: Clock
) -> None:
    """A version-2 file whose cache folded an infinite weight: after the upgrade (step 3)
    the score is the log's without that event, not infinity."""
    from playbook.store import connect, memory_migration, run_migrations

    path = tmp_path / "v2.sqlite3"
    conn = connect(path)
    run_migrations(conn, [memory_migration(2)])
    store = PlaybookStore(conn, clock=clock, migrate=False)
    bid = store.insert_bullet("Pin npm to 11").id
    store.add_feedback(bid, "helpful")
    last = store.add_feedback(bid, "helpful", weight=1.0)
    # What a version-2 Playbook did with an infinite weight: folded it into the cache.
    raw.run(store, "DROP TRIGGER feedback_no_update")
    raw.run(store, "UPDATE feedback SET weight = 9e999 WHERE id = ?", (last,))
    raw.run(store, "UPDATE evidence SET helpful = 9e999 WHERE bullet_id = ?", (bid,))
    assert math.isinf(store.score(bid).helpful)
    conn.close()
    with open_store(path, clock=clock) as upgraded:
        assert upgraded.score(bid).helpful == 1.0


# ------------------------------------------------------------------ the API


def test_nul_characters_are_refused_on_every_path(store: PlaybookStore) -> None:
    bid = store.insert_bullet("Pin npm to 11").id
    r = curate(store, [{"type": "add", "content": "Use\x00uv"},
                       {"type": "helpful", "bullet_id": bid, "context": "ok\x00"}])  # fmt: skip
    assert [o.status for o in r.outcomes] == ["rejected-invalid"] * 2
    assert all("NUL" in (o.reason or "") for o in r.outcomes)
    before = raw.dump(store)
    for call in (
        lambda: store.block("Force\x00push", "no"),
        lambda: store.pin(bid, "house\x00style"),
        lambda: store.add_feedback(bid, "helpful", context="a\x00b"),
        lambda: apply_outcome(
            store, {"outcome": "success", "bullet_ids": [bid], "context": "\x00"}
        ),
    ):
        with pytest.raises(InvalidInput, match="NUL"):
            call()
    assert raw.dump(store) == before


def test_an_empty_receipt_is_refused(store: PlaybookStore, db_target: str | Path) -> None:
    bid = store.insert_bullet("Pin npm to 11").id
    for receipt in ("", "   "):
        with pytest.raises(InvalidOutcome, match="receipt"):
            apply_outcome(store, {"outcome": "success", "bullet_ids": [bid], "receipt": receipt})
    r = run_cli("outcome", "success", bid, "--receipt", "", "--json", db=db_target)  # type: ignore[arg-type]
    assert_user_error(r, "invalid_input")
    assert store.timeline(bid) == []


def test_a_receipt_is_spent_only_by_an_outcome_that_applied(store: PlaybookStore) -> None:
    bid = store.insert_bullet("Pin npm to 11").id
    first = apply_outcome(store, {"outcome": "success", "bullet_ids": ["b-gone"], "receipt": "r"})
    assert first.applied == [] and first.skipped == ["b-gone"]
    second = apply_outcome(store, {"outcome": "success", "bullet_ids": [bid], "receipt": "r"})
    assert not second.replayed and second.applied == [bid]
    third = apply_outcome(store, {"outcome": "success", "bullet_ids": [bid], "receipt": "r"})
    assert third.replayed and len(store.timeline(bid)) == 1


# ------------------------------------------------------------------ the policy


@pytest.mark.parametrize(
    "name, value",
    [
        ("outcome_success_weight", math.inf), ("half_life_days", math.nan),
        ("harm_multiplier", -math.inf), ("max_batch", 10**30), ("semantic_weight", 1.5),
        ("deprecate_score_below", 5.0), ("outcome_partial_weight", 1001.0),
    ],
)  # fmt: skip
def test_a_policy_number_out_of_its_range_is_refused_by_name(
    name: str, value: float, tmp_path: Path
) -> None:
    with pytest.raises(ValueError, match=name):
        Policy(**{name: value})
    toml = tmp_path / "playbook.toml"
    text = "inf" if value == math.inf else "-inf" if value == -math.inf else repr(value)
    toml.write_text(f"[policy]\n{name} = {'nan' if value != value else text}\n", encoding="utf-8")
    r = run_cli("--policy", toml, "policy", "show", "--json")
    err = assert_user_error(r, "invalid_policy")
    assert name in err["message"]


def test_every_policy_number_has_a_documented_range() -> None:
    for name in Policy.names():
        bounds = Policy.range_of(name)
        default = getattr(Policy(), name)
        if isinstance(default, tuple):
            assert bounds is None
            continue
        assert bounds is not None and all(math.isfinite(b) for b in bounds[:2]), name
        low, high, above = bounds
        assert (low < default if above else low <= default) and default <= high, name


def test_json_output_is_always_json(tmp_path: Path) -> None:
    """A statistic of too little data is not a number: --json writes null, never NaN."""
    from playbook.core.inert import dumps

    text = dumps({"interval": [math.nan, math.inf], "ok": 1.5})
    assert json.loads(text, parse_constant=lambda c: pytest.fail(c)) == {
        "interval": [None, None],
        "ok": 1.5,
    }


def test_iso_of_the_store_is_what_the_checks_take() -> None:
    from datetime import UTC, datetime

    from playbook.store.checks import is_time

    assert is_time(iso(datetime(2026, 3, 1, 12, tzinfo=UTC)))
    assert not is_time(iso(datetime(1969, 12, 31, 23, tzinfo=UTC)))


# ------------------------------------------------------------------ the command line

HUGE = "9" * 30


@pytest.mark.parametrize(
    "args, code",
    [
        (["diff", "--since", "9999-12-31"], "invalid_input"),
        (["diff", "--since", "99999999999d"], "invalid_input"),
        (["diff", "--since", "2026-01-01", "--until", ""], "invalid_input"),
        (["recall", "npm", "--as-of", ""], "invalid_input"),
        (["policy", "eval", "--split", "NaN"], "invalid_input"),
        (["proposals", "--limit", HUGE], "invalid_input"),
        (["topics", "--threshold", "nan"], "invalid_input"),
        (["topics", "--threshold", "2"], "invalid_input"),
        (["--policy", "", "stats"], "usage"),
        (["--db", ":memory:", "add", "Use uv"], "usage"),
    ],
)
def test_bad_values_on_the_command_line_are_one_line_with_their_exit_code(
    db_target: str | Path, args: list[str], code: str
) -> None:
    """Issue 29: tracebacks (exit 4) on a date far ahead, a span far back, NaN, a huge
    number; invalid_input that exited 2; empty values taken for none; :memory: writes."""
    with open_store(db_target) as store:
        store.insert_bullet("Pin npm to 11 in release jobs")
    if "--db" not in args:
        args = ["--db", str(db_target), *args]
    r = run_cli(*args, "--json")
    assert_user_error(r, code, 2 if code == "usage" else 1)


@pytest.mark.postgres
@pytest.mark.parametrize("name", ["TeamA", '"Team A"', '"a,b"', '"we""ird"', '"it\'s"'])
def test_a_schema_of_any_name_holds_a_playbook(pg_server: str, name: str) -> None:
    """Capitals, quotes, commas (issue 29: init failed and left a stray schema)."""
    from urllib.parse import quote

    from playbook.store.postgres.opening import search_path_names

    (schema,) = search_path_names(name)
    with open_store(pg_server) as admin:
        raw.run(admin, f'DROP SCHEMA IF EXISTS "{schema.replace(chr(34), chr(34) * 2)}" CASCADE')
    url = (
        f"{pg_server}?options={quote('-csearch_path=' + name.replace(' ', chr(92) + ' '), safe='')}"
    )
    with open_store(url) as store:
        bid = curate(store, [{"type": "add", "content": "Pin npm to 11"}]).added[0]
        tag = content_hash(name)[:8]
        store.roles.install(f"names_{tag}_agent", f"names_{tag}_human")
        assert store.sql.schema == schema  # type: ignore[attr-defined]
    with open_store(url, mode="read") as store:
        assert store.get_bullet(bid) is not None


def test_search_path_names_are_read_as_the_server_reads_them() -> None:
    from playbook.store.postgres.opening import search_path_names

    assert search_path_names('"$user", public') == ["$user", "public"]
    assert search_path_names('TeamA, "TeamB"') == ["teama", "TeamB"]
    assert search_path_names('"a,b" ,"we""ird"') == ["a,b", 'we"ird']


def _vouched(store: PlaybookStore) -> set[str]:
    """The constraints of the playbook's schema that PostgreSQL has validated."""
    return set(
        store.sql.column(
            "SELECT c.conname FROM pg_constraint c JOIN pg_namespace n ON n.oid = c.connamespace "
            "WHERE c.convalidated AND n.nspname = current_schema()"
        )
    )


def test_a_new_postgresql_playbook_has_its_rules_validated(db_target: str | Path) -> None:
    """Made at the latest schema, its tables empty when the rules came: PostgreSQL vouches
    for every rule at once (`doctor` then reads no row again)."""
    if isinstance(db_target, Path):
        pytest.skip("PostgreSQL's constraints")
    with open_store(db_target, clock=Clock()) as store:
        assert {rule.name for rules, _ in RULES.values() for rule in rules} <= _vouched(store)


def test_doctor_reads_again_only_what_postgresql_has_not_validated(
    db_target: str | Path, clock: Clock
) -> None:
    """A bad event written while the checks were gone is named while its rules are NOT
    VALID; once PostgreSQL has validated them (here: said so in its catalog, as only a
    superuser could), doctor takes its word and reads the table no more."""
    if isinstance(db_target, Path):
        pytest.skip("PostgreSQL's constraints")
    with open_store(db_target, clock=clock) as store:
        bid = curate(store, [{"type": "add", "content": "Run pytest with -x in CI"}]).added[0]
        drop_checks(store, "feedback")
        bad_feedback(store, bid, at="yesterday")
        restore_checks(store, "feedback")
        names = [rule.name for rule in RULES["feedback"][0]]
        assert not set(names) & _vouched(store)
    doctor = run_cli("doctor", "--json", db=str(db_target))  # type: ignore[arg-type]
    assert doctor.rc == 3 and any(
        "feedback row" in p for p in json.loads(doctor.out)["data"]["problems"]
    )
    with open_store(db_target, clock=clock) as store:
        raw.run(
            store,
            "UPDATE pg_constraint SET convalidated = true WHERE conname = ANY(?) "
            "AND connamespace = to_regnamespace(current_schema())",
            (names,),
        )
        assert set(names) <= _vouched(store)
    doctor = run_cli("doctor", "--json", db=str(db_target))  # type: ignore[arg-type]
    assert doctor.rc == 0 and json.loads(doctor.out)["data"]["healthy"] is True


def test_doctor_trusts_sqlite_triggers_unless_full_or_one_is_gone(
    tmp_path: Path, clock: Clock
) -> None:
    """SQLite: the rows written since the rules' triggers keep them, so doctor reads again
    only the rows from before (none in a new playbook). A bad event slipped in behind the
    triggers' back (dropped, then made again) is found by `--full`; with a trigger still
    gone, the table is read whole."""
    db = tmp_path / "p.sqlite3"
    with open_store(db, clock=clock) as store:
        bid = curate(store, [{"type": "add", "content": "Run pytest with -x in CI"}]).added[0]
        assert store.sql.scalar("SELECT value FROM meta WHERE key = 'rules_from:feedback'") == "0"
        drop_checks(store, "feedback")
        bad_feedback(store, bid, at="yesterday")
        for statement in sqlite_step():  # the triggers again, without saying when
            if " ON feedback " in statement:
                raw.run(store, statement)

    def problems(*args: str) -> list[str]:
        doctor = run_cli("doctor", "--json", *args, db=db)  # type: ignore[arg-type]
        return list(json.loads(doctor.out)["data"]["problems"])

    assert problems() == []
    assert any("feedback row" in p and "yesterday" in p for p in problems("--full"))
    with open_store(db, clock=clock) as store:
        raw.run(store, f"DROP TRIGGER {RULES['feedback'][0][0].name}")
    assert any("feedback row" in p and "yesterday" in p for p in problems())
