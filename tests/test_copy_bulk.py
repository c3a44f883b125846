"""`playbook copy` into PostgreSQL loads the rows first and makes the tables' indexes and
foreign keys after, the checks kept in place (`store/postgres/loading.py`): the copy has
the catalog of a playbook made anew (the same indexes, constraints and triggers, the rules
validated), a copy that fails (even when the keys are checked, after the rows are in)
leaves the destination as it was, catalog included, and a role that does not own the
tables copies with them in place. Rows the source's own rules vouch for are not checked
again (`vouch.vouched_tables`); any other row still is, and a malformed one is left out.
"""

from __future__ import annotations

from pathlib import Path
from urllib.parse import urlsplit, urlunsplit

import pytest

from playbook.core.errors import ConstraintError
from playbook.store import PlaybookStore, copy_playbook, open_store
from playbook.store import testing as raw
from playbook.store.checks import RULES, all_rules, sqlite_triggers
from playbook.store.postgres import loading
from playbook.store.tables import TABLES
from playbook.store.vouch import vouched_tables

from .helpers import Clock
from .helpers import pg as pg_support
from .helpers.pg_catalog import catalog, fresh
from .helpers.varied import build_with_outcomes as history

BAD_TIME = "yesterday"


def tables(store: PlaybookStore) -> dict[str, list[tuple[object, ...]]]:
    """Every row of every table a copy carries, in key order."""
    return {
        t: raw.rows(store, f"SELECT {', '.join(cols)} FROM {t} ORDER BY {', '.join(key)}")
        for t, (cols, key) in TABLES.items()
    }


@pytest.fixture
def source(tmp_path: Path) -> Path:
    path = tmp_path / "source.sqlite3"
    clock = Clock()
    with open_store(path, clock=clock) as store:
        history(store, clock)
    return path


@pytest.mark.postgres
def test_a_copy_has_the_catalog_of_a_new_playbook(
    source: Path, pg_url: str, pg_server: str, worker_id: str
) -> None:
    copy_playbook(source, pg_url)
    made = catalog(pg_url)
    assert made == catalog(fresh(pg_server, worker_id))
    assert any(kind == "index" and name == "feedback_bullet" for kind, _, name, _ in made)
    assert any(name == "feedback_bullet_id_fkey" for _, _, name, _ in made)
    assert not any(definition.endswith("(not valid)") for *_, definition in made)
    with open_store(source, mode="read") as a, open_store(pg_url, mode="read") as b:
        assert tables(b) == tables(a)


@pytest.mark.postgres
def test_set_aside_keeps_the_checks_and_drops_the_foreign_keys_and_plain_indexes(
    pg_url: str,
) -> None:
    """The checks stay while the rows go in: the server checks each row during the COPY
    (while the client reads the next ones) instead of reading every table again at the
    end. What is dropped is made again as it was."""
    constraints = (
        "SELECT contype, conname FROM pg_constraint "
        "WHERE connamespace = to_regnamespace(current_schema())"
    )
    indexes = "SELECT indexname FROM pg_indexes WHERE schemaname = current_schema()"
    with open_store(pg_url) as store:
        before = set(raw.rows(store, constraints)), set(raw.rows(store, indexes))
        with store.transaction():
            remake = loading.set_aside(store.sql, list(TABLES))
            during = {tuple(r) for r in store.sql.all(constraints)}
            kept = {tuple(r) for r in store.sql.all(indexes)}
            loading.make_again(store.sql, remake)
        after = set(raw.rows(store, constraints)), set(raw.rows(store, indexes))
    checks = {c for c in before[0] if c[0] == "c"}
    assert {("c", rule.name) for rule in all_rules()} <= checks <= during
    assert {c for c in before[0] if c[0] == "f"} and not {c for c in during if c[0] == "f"}
    assert ("feedback_bullet",) in before[1] - kept
    assert after == before


@pytest.mark.postgres
def test_a_copy_whose_keys_fail_at_the_end_leaves_the_destination_as_it_was(
    source: Path, pg_url: str, pg_server: str, worker_id: str
) -> None:
    """An event of a rule that is not there (SQLite without its foreign keys kept one):
    PostgreSQL finds it when the foreign key is made again, after every row went in; the
    copy fails and the destination is the new playbook it was, indexes and constraints
    included."""
    with open_store(source) as store:
        raw.run(store, "PRAGMA foreign_keys = OFF")
        bid = raw.value(store, "SELECT bullet_id FROM feedback LIMIT 1")
        raw.run(
            store,
            "INSERT INTO feedback (bullet_id, kind, at, recorded_at) "
            "SELECT 'b-nowhere', kind, at, recorded_at FROM feedback WHERE bullet_id = ? LIMIT 1",
            (bid,),
        )
    with open_store(pg_url):
        pass
    before = catalog(pg_url)
    with pytest.raises(ConstraintError, match="feedback"):
        copy_playbook(source, pg_url)
    with open_store(pg_url, mode="read") as store:
        assert all(rows == [] for t, rows in tables(store).items() if t != "meta")
    assert catalog(pg_url) == before == catalog(fresh(pg_server, worker_id))


@pytest.mark.postgres
def test_a_role_that_does_not_own_the_tables_copies_with_them_in_place(
    source: Path, pg_url: str, pg_server: str, worker_id: str
) -> None:
    with open_store(pg_url) as store:
        schema = raw.value(store, "SELECT current_schema()")
    role = f"copier_{schema}"
    owner = pg_support.with_schema(pg_server, schema)
    with open_store(owner) as store:
        for statement in (
            f"CREATE ROLE {role} LOGIN",
            f"GRANT USAGE ON SCHEMA {schema} TO {role}",
            f"GRANT SELECT, INSERT, UPDATE, DELETE ON ALL TABLES IN SCHEMA {schema} TO {role}",
            f"GRANT USAGE, SELECT, UPDATE ON ALL SEQUENCES IN SCHEMA {schema} TO {role}",
        ):
            raw.run(store, statement)
    try:
        parts = urlsplit(pg_url)
        as_role = urlunsplit(parts._replace(netloc=f"{role}@{parts.hostname}:{parts.port}"))
        copy_playbook(source, as_role)
        with open_store(source, mode="read") as a, open_store(pg_url, mode="read") as b:
            assert tables(b) == tables(a)
        assert catalog(pg_url) == catalog(fresh(pg_server, worker_id))
    finally:
        with open_store(owner) as store:
            raw.run(store, f"DROP OWNED BY {role}")
            raw.run(store, f"DROP ROLE {role}")


def _slip_in_a_bad_event(store: PlaybookStore) -> int:
    """An event with a malformed time, written behind the rules' back (the feedback rules
    dropped and made again, as an upgraded database has them: not vouching for it)."""
    rules, _ = RULES["feedback"]
    sqlite = store.sql.dialect == "sqlite"
    for rule in rules:
        if sqlite:
            raw.run(store, f"DROP TRIGGER {rule.name}")
        else:
            raw.run(store, f"ALTER TABLE feedback DROP CONSTRAINT {rule.name}")
    raw.run(
        store,
        "INSERT INTO feedback (bullet_id, kind, at, recorded_at) "
        "SELECT bullet_id, kind, ?, recorded_at FROM feedback LIMIT 1",
        (BAD_TIME,),
    )
    bad = int(raw.value(store, "SELECT MAX(id) FROM feedback"))
    if sqlite:
        for statement in sqlite_triggers():
            if " ON feedback " in statement:
                raw.run(store, statement)
        raw.run(store, "UPDATE meta SET value = ? WHERE key = 'rules_from:feedback'", (str(bad),))
    else:
        for rule in rules:
            raw.run(
                store,
                f"ALTER TABLE feedback ADD CONSTRAINT {rule.name} "
                f"CHECK {rule.postgres()} NOT VALID",
            )
    return bad


def test_rows_the_source_does_not_vouch_for_are_checked_and_a_bad_one_left_out(
    db_target: str | Path, clock: Clock, tmp_path: Path
) -> None:
    with open_store(db_target, clock=clock) as store:
        history(store, clock)
        assert vouched_tables(store.sql) == set(RULES)  # a new playbook's every table
        bad = _slip_in_a_bad_event(store)
        assert vouched_tables(store.sql) == set(RULES) - {"feedback"}
    copied = tmp_path / "copied.sqlite3"
    report = copy_playbook(db_target, copied)
    with open_store(copied, mode="read") as store:
        ids = [r[0] for r in raw.rows(store, "SELECT id FROM feedback ORDER BY id")]
    assert bad not in ids and len(ids) == report.counts["feedback"] == bad - 1


def test_a_sqlite_source_whose_rule_trigger_is_gone_vouches_for_none_of_that_table(
    source: Path,
) -> None:
    with open_store(source) as store:
        raw.run(store, f"DROP TRIGGER {RULES['decisions'][0][0].name}")
        assert "decisions" not in vouched_tables(store.sql)
        assert "feedback" in vouched_tables(store.sql)
