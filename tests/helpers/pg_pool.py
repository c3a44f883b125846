"""Schemas handed from one PostgreSQL test to the next, emptied in between.

A test that takes the `store` fixture gets a playbook that is already made, so it does
not matter to it whether its schema was created a moment ago or emptied: either way it is
the schema a first open makes, with no rows. Creating one costs ~180 DDL statements (about
0.15-0.2 s of the server's CPU, for each of ~300 tests); emptying one costs one round trip
(a few ms). A test that needs a schema nobody has made yet (`pg_url` alone) still gets a
new name.

A schema goes back to the pool only when nothing can tell it from a new one:

* no connection the test opened is still open (every connection to a leased schema
  carries its name as `application_name`, which Playbook leaves alone when the URL sets
  it);
* its catalog (tables, columns, triggers, functions, privileges, owner, policies) has the
  fingerprint it had right after it was made: a test that granted a role or damaged a
  table leaves its schema behind, as before;
* its migrations are the ones it was made with.

Emptying deletes every row and restarts every identity (as a new schema has them), in one
transaction in which the append-only trigger function is swapped for a permissive one and
back, so no other connection ever sees the rules lifted (it needs a superuser, as the run's
own server has). Any failure leaves the schema behind; the next test then gets a new one.
"""

from __future__ import annotations

import contextlib
from dataclasses import dataclass, field
from typing import Any

import pytest

from playbook.store.postgres.schema import APPEND_ONLY_FUNCTION

from . import pg as pg_support

_FINGERPRINT = """
SELECT md5(string_agg(x, ',' ORDER BY x)) FROM (
  SELECT concat_ws(':', 'rel', c.relname, c.relkind, c.relowner, c.relacl, c.relrowsecurity) AS x
    FROM pg_class c WHERE c.relnamespace = %(ns)s
  UNION ALL SELECT concat_ws(':', 'col', c.relname, a.attname, a.atttypid, a.attnotnull,
      a.atthasdef)
    FROM pg_attribute a JOIN pg_class c ON c.oid = a.attrelid
    WHERE c.relnamespace = %(ns)s AND a.attnum > 0 AND NOT a.attisdropped
  UNION ALL SELECT concat_ws(':', 'trg', t.tgname, t.tgenabled, t.tgfoid)
    FROM pg_trigger t JOIN pg_class c ON c.oid = t.tgrelid WHERE c.relnamespace = %(ns)s
  UNION ALL SELECT concat_ws(':', 'fn', p.proname, md5(p.prosrc), p.proacl, p.proowner)
    FROM pg_proc p WHERE p.pronamespace = %(ns)s
  UNION ALL SELECT concat_ws(':', 'ns', n.nspowner, n.nspacl)
    FROM pg_namespace n WHERE n.oid = %(ns)s
  UNION ALL SELECT concat_ws(':', 'dacl', d.defaclobjtype, d.defaclacl)
    FROM pg_default_acl d WHERE d.defaclnamespace = %(ns)s
  UNION ALL SELECT concat_ws(':', 'pol', p.polname)
    FROM pg_policy p JOIN pg_class c ON c.oid = p.polrelid WHERE c.relnamespace = %(ns)s
) parts
"""

_STATE = f"""
SELECT ({_FINGERPRINT}),
  (SELECT count(*) FROM pg_stat_activity
    WHERE application_name = %(name)s AND pid <> pg_backend_pid()),
  (SELECT string_agg(tablename, ',' ORDER BY tablename) FROM pg_tables
    WHERE schemaname = %(name)s),
  (SELECT string_agg(sequencename, ',' ORDER BY sequencename) FROM pg_sequences
    WHERE schemaname = %(name)s)
"""

# Tables a new schema holds rows in: its migrations (kept) and the commit counter (reset).
_KEPT = {"_migrations", "_playbook_changes"}

_PERMISSIVE = """
CREATE OR REPLACE FUNCTION {schema}.playbook_append_only() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
    IF TG_OP = 'DELETE' THEN RETURN OLD; END IF;
    RETURN NULL;
END
$$
"""


@dataclass
class _Schema:
    name: str
    url: str
    fingerprint: str | None = None  # right after the first open made it
    migrations: int = 0
    changes: int = 0


@dataclass
class Pool:
    """One worker's schemas for `store` tests."""

    free: list[_Schema] = field(default_factory=list)
    _conn: Any = None

    def _admin(self) -> Any:
        import psycopg

        if self._conn is None or self._conn.closed:
            self._conn = psycopg.connect(pg_support.server_url(), autocommit=True)
        return self._conn

    def lease(self, base: str, worker: str) -> _Schema:
        if self.free:
            return self.free.pop()
        name = pg_support.fresh_schema_name(worker)
        return _Schema(name, pg_support.with_schema(base, name, application_name=name))

    def made(self, schema: _Schema) -> None:
        """The test's first open has made the schema: remember how a new one looks."""
        if schema.fingerprint is not None:
            return
        conn = self._admin()
        fingerprint, _, tables, _ = self._state(conn, schema)
        s = f'"{schema.name}"'
        rows = [f"(SELECT count(*) FROM {s}.{t})" for t in tables.split(",") if t not in _KEPT]
        q = f"SELECT (SELECT count(*) FROM {s}._migrations), "
        q += f"(SELECT n FROM {s}._playbook_changes), {' + '.join(rows) or '0'}"
        schema.migrations, schema.changes, elsewhere = conn.execute(q).fetchone()
        if elsewhere:  # a new schema held rows emptying would lose: never pool it
            return
        schema.fingerprint = fingerprint

    def give_back(self, schema: _Schema) -> None:
        """Empty the schema and keep it for the next test, if nothing can tell it from new."""
        if schema.fingerprint is None:
            return
        with contextlib.suppress(Exception):  # any doubt: leave it behind
            if self._reset(schema):
                self.free.append(schema)

    def _state(self, conn: Any, schema: _Schema) -> tuple[str, int, str, str]:
        ns = conn.execute("SELECT to_regnamespace(%s)::oid", (f'"{schema.name}"',)).fetchone()[0]
        row = conn.execute(_STATE, {"ns": ns, "name": schema.name}).fetchone()
        return row[0], row[1], row[2] or "", row[3] or ""

    def _reset(self, schema: _Schema) -> bool:
        conn = self._admin()
        fingerprint, others, tables, sequences = self._state(conn, schema)
        if fingerprint != schema.fingerprint or others:
            return False
        s = f'"{schema.name}"'
        migrations = conn.execute(f"SELECT count(*) FROM {s}._migrations").fetchone()[0]
        if migrations != schema.migrations:
            return False
        steps = ["BEGIN", "SET LOCAL lock_timeout = '2s'", _PERMISSIVE.format(schema=s)]
        # Replica mode: foreign keys are not checked (every row goes, in any order); the
        # append-only triggers still fire (ALWAYS), hence the permissive function.
        steps.append("SET LOCAL session_replication_role = replica")
        steps += [f"DELETE FROM {s}.{t}" for t in tables.split(",") if t not in _KEPT]
        steps += [f"SELECT setval('{s}.{q}', 1, false)" for q in sequences.split(",") if q]
        steps.append(f"UPDATE {s}._playbook_changes SET n = {int(schema.changes)}")
        steps.append(
            APPEND_ONLY_FUNCTION.replace(
                "CREATE FUNCTION playbook_append_only",
                f"CREATE OR REPLACE FUNCTION {s}.playbook_append_only",
            )
        )
        steps.append("COMMIT")
        try:
            conn.execute(";\n".join(steps).encode())  # one round trip (simple protocol)
        except Exception:
            with contextlib.suppress(Exception):
                conn.execute(b"ROLLBACK")
            raise
        return self._state(conn, schema)[0] == schema.fingerprint


POOL = Pool()
LEASE = pytest.StashKey[_Schema]()  # the schema a test's `db_target` leased
