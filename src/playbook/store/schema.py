"""The schema of SPEC §3 as namespaced, versioned migrations (the SQLite DDL here; the
PostgreSQL DDL of the same steps, with the same numbers, in `store/postgres/schema.py`).

`run_migrations(executor, [memory_migration()])` brings the `memory` namespace up to the latest
version. Each step runs in its own transaction; a database whose namespace is newer than
this code knows is refused with `SchemaTooNewError` and not touched. Other namespaces in
the same file (a session graph, say) are left alone. A released step is never edited
(tests/test_store.py freezes them by digest): the schema changes by adding a step.

Steps: 1 — the tables of SPEC §3; 2 — an explicit insertion-order column (`seq`) for the
tables whose key is text (receipts, watermarks, proposals, blocked patterns), which were
ordered by SQLite's hidden `rowid` (VACUUM may renumber it; PostgreSQL has none); 3 — the
database refuses a malformed row (a timestamp that is not one, a weight that is infinite,
NaN or negative, detail that is not JSON: `store/checks.py`), since one such row in an
append-only table would stay there for good; 4 — the evidence cache's days
(`evidence_days`, `store/evidence_days.py`: per bullet and recorded day, its decayed sums
after that day) and an index of the log by `recorded_at`, so a read as of a moment sums days
instead of reading the whole log, and indexes of the decision log's pins and of the maturity
log by time (time travel reads them at every moment); the step builds the days from the
log (`STEP_BUILDS`), at the default half-life of the migrating process's policy; 5 — each
table read once for the rows that break a rule of step 3, so that `doctor` reads again only
what the database cannot vouch for (`store/vouch.py`).
"""

from __future__ import annotations

import sqlite3
from collections.abc import Callable, Sequence
from datetime import UTC, datetime
from typing import TYPE_CHECKING

from ..core.errors import SchemaError as SchemaError  # re-exported
from ..core.errors import SchemaTooNewError
from ..core.record import FrozenRecord
from . import vouch
from .checks import sqlite_step
from .evidence_days import SQLITE_DAYS, build_days
from .postgres.schema import MEMORY_STEPS as POSTGRES_STEPS

if TYPE_CHECKING:
    from ..core.policy import Policy
    from .executor import Executor

MIGRATIONS_TABLE = "_migrations"


class Migration(FrozenRecord):
    """Steps 1..`version` of one namespace. `steps[i]` brings version i to i + 1."""

    namespace: str
    version: int
    steps: tuple[tuple[str, ...], ...]  # SQLite
    postgres: tuple[tuple[str, ...], ...] | None  # the same steps for PostgreSQL

    def __init__(
        self,
        namespace: str,
        version: int,
        steps: tuple[tuple[str, ...], ...],
        postgres: tuple[tuple[str, ...], ...] | None = None,
    ) -> None:
        object.__setattr__(self, "namespace", namespace)
        object.__setattr__(self, "version", version)
        object.__setattr__(self, "steps", steps)
        object.__setattr__(self, "postgres", postgres)

    @property
    def latest(self) -> int:
        return len(self.steps)

    def steps_for(self, dialect: str) -> tuple[tuple[str, ...], ...]:
        """The steps written for the backend `dialect` ("sqlite" or "postgresql")."""
        if str(dialect) == "sqlite":
            return self.steps
        if self.postgres is None or len(self.postgres) != len(self.steps):
            raise SchemaError(
                f"the '{self.namespace}' schema has no PostgreSQL version of its steps"
            )
        return self.postgres


APPEND_ONLY = """
CREATE TRIGGER {table}_no_update BEFORE UPDATE ON {table}
BEGIN SELECT RAISE(ABORT, '{table} is append-only: rows cannot be updated'); END;
CREATE TRIGGER {table}_no_delete BEFORE DELETE ON {table}
BEGIN SELECT RAISE(ABORT, '{table} is append-only: rows cannot be deleted'); END;
"""

MEMORY_V1 = f"""
CREATE TABLE bullets (
    seq INTEGER PRIMARY KEY,
    id TEXT NOT NULL UNIQUE,
    content TEXT NOT NULL,
    category TEXT NOT NULL DEFAULT 'general',
    tags TEXT NOT NULL DEFAULT '[]',
    scope TEXT NOT NULL DEFAULT 'global'
        CHECK (scope IN ('global','workspace','language','framework','task')),
    scope_key TEXT,
    type TEXT NOT NULL DEFAULT 'rule' CHECK (type IN ('rule','anti-pattern')),
    kind TEXT NOT NULL DEFAULT 'workflow_rule',
    source TEXT NOT NULL DEFAULT 'learned'
        CHECK (source IN ('learned','manual','imported','inverted','merged')),
    state TEXT NOT NULL DEFAULT 'active' CHECK (state IN ('draft','active','retired')),
    maturity TEXT NOT NULL DEFAULT 'candidate'
        CHECK (maturity IN ('candidate','established','proven','deprecated')),
    pinned INTEGER NOT NULL DEFAULT 0,
    pinned_reason TEXT,
    half_life_days REAL CHECK (half_life_days IS NULL OR half_life_days > 0),
    session_ref TEXT,
    byte_offset INTEGER,
    created_at TEXT NOT NULL,
    valid_from TEXT NOT NULL,
    valid_to TEXT,
    content_hash TEXT NOT NULL,
    batch_id TEXT,
    maturity_due REAL,
    rev INTEGER NOT NULL DEFAULT 0
);
CREATE INDEX bullets_state ON bullets(state, maturity);
CREATE INDEX bullets_hash ON bullets(content_hash);
CREATE INDEX bullets_due ON bullets(maturity_due) WHERE maturity_due IS NOT NULL;
CREATE INDEX bullets_rev ON bullets(rev);

CREATE TABLE bullet_tokens (
    token TEXT NOT NULL,
    seq INTEGER NOT NULL REFERENCES bullets(seq),
    PRIMARY KEY (token, seq)
) WITHOUT ROWID;
CREATE TABLE vocab (token TEXT PRIMARY KEY, df INTEGER NOT NULL DEFAULT 0) WITHOUT ROWID;
CREATE TABLE bullet_tags (
    tag TEXT NOT NULL,
    seq INTEGER NOT NULL REFERENCES bullets(seq),
    PRIMARY KEY (tag, seq)
) WITHOUT ROWID;

CREATE TABLE feedback (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    bullet_id TEXT NOT NULL REFERENCES bullets(id),
    kind TEXT NOT NULL CHECK (kind IN ('helpful','harmful')),
    at TEXT NOT NULL,
    recorded_at TEXT NOT NULL,
    weight REAL NOT NULL DEFAULT 1.0 CHECK (weight >= 0),
    reason TEXT CHECK (reason IS NULL OR reason IN
        ('caused_bug','wasted_time','contradicted_requirements','wrong_context','outdated','other')),
    context TEXT,
    session_ref TEXT,
    byte_offset INTEGER,
    actor TEXT NOT NULL DEFAULT 'agent' CHECK (actor IN ('agent','human')),
    receipt TEXT,
    batch_id TEXT
);
CREATE INDEX feedback_bullet ON feedback(bullet_id, id);
{APPEND_ONLY.format(table="feedback")}

CREATE TABLE receipts (
    receipt TEXT PRIMARY KEY,
    recorded_at TEXT NOT NULL,
    outcome TEXT NOT NULL,
    batch_id TEXT
);
{APPEND_ONLY.format(table="receipts")}

CREATE TABLE evidence (
    bullet_id TEXT PRIMARY KEY REFERENCES bullets(id),
    half_life REAL NOT NULL,
    ref REAL NOT NULL,
    helpful REAL NOT NULL,
    harmful REAL NOT NULL,
    count INTEGER NOT NULL,
    last_at REAL NOT NULL,
    last_event_id INTEGER NOT NULL
);

CREATE TABLE edges (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    kind TEXT NOT NULL CHECK (kind IN ('supersedes','inverts')),
    src TEXT NOT NULL REFERENCES bullets(id),
    dst TEXT NOT NULL REFERENCES bullets(id),
    at TEXT NOT NULL,
    batch_id TEXT
);
CREATE INDEX edges_src ON edges(src);
CREATE INDEX edges_dst ON edges(dst);
{APPEND_ONLY.format(table="edges")}

CREATE TABLE maturity_log (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    bullet_id TEXT NOT NULL REFERENCES bullets(id),
    at TEXT NOT NULL,
    maturity TEXT NOT NULL,
    batch_id TEXT
);
CREATE INDEX maturity_log_bullet ON maturity_log(bullet_id, at);
{APPEND_ONLY.format(table="maturity_log")}

CREATE TABLE cache_blob (
    key TEXT PRIMARY KEY,
    embedder_id TEXT NOT NULL,
    content_hash TEXT NOT NULL,
    dims INTEGER NOT NULL,
    value BLOB NOT NULL,
    created_at TEXT NOT NULL
);
CREATE INDEX cache_blob_embedder ON cache_blob(embedder_id);

CREATE TABLE watermarks (
    session_ref TEXT PRIMARY KEY,
    byte_offset INTEGER NOT NULL,
    updated_at TEXT NOT NULL
);

CREATE TABLE blocked_patterns (
    id TEXT PRIMARY KEY,
    pattern TEXT NOT NULL,
    normalized TEXT NOT NULL,
    reason TEXT NOT NULL,
    actor TEXT NOT NULL,
    created_at TEXT NOT NULL,
    active INTEGER NOT NULL DEFAULT 1,
    unblocked_at TEXT
);

CREATE TABLE proposals (
    id TEXT PRIMARY KEY,
    delta TEXT NOT NULL,
    session_ref TEXT,
    byte_offset INTEGER,
    status TEXT NOT NULL DEFAULT 'pending' CHECK (status IN ('pending','approved','rejected')),
    origin TEXT NOT NULL DEFAULT 'reflection',
    created_at TEXT NOT NULL,
    decided_at TEXT,
    decided_by TEXT,
    reason TEXT,
    edited_delta TEXT,
    result TEXT
);
CREATE INDEX proposals_status ON proposals(status, created_at);

CREATE TABLE conflicts (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    a TEXT NOT NULL REFERENCES bullets(id),
    b TEXT NOT NULL REFERENCES bullets(id),
    reason TEXT NOT NULL,
    created_at TEXT NOT NULL,
    status TEXT NOT NULL DEFAULT 'open' CHECK (status IN ('open','resolved')),
    resolved_at TEXT,
    resolution TEXT,
    batch_id TEXT
);
CREATE INDEX conflicts_status ON conflicts(status);

CREATE TABLE decisions (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    at TEXT NOT NULL,
    batch_id TEXT,
    actor TEXT NOT NULL,
    action TEXT NOT NULL,
    bullet_id TEXT,
    status TEXT NOT NULL,
    reason TEXT,
    detail TEXT
);
CREATE INDEX decisions_bullet ON decisions(bullet_id, id);
CREATE INDEX decisions_batch ON decisions(batch_id);
{APPEND_ONLY.format(table="decisions")}

CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
"""


def _split(script: str) -> tuple[str, ...]:
    """Split a script into statements, keeping trigger bodies whole."""
    out: list[str] = []
    buf = ""
    for line in script.splitlines(keepends=True):
        buf += line
        if sqlite3.complete_statement(buf):
            if buf.strip():
                out.append(buf.strip())
            buf = ""
    if buf.strip():
        out.append(buf.strip())
    return tuple(out)


def _order_column(table: str, *, append_only: bool = False) -> str:
    """Step 2 for one table: `seq`, its insertion order, filled from the rowid (in the
    order the rows were inserted); new rows take `MAX(seq) + 1` under the write lock."""
    fill = f"UPDATE {table} SET seq = rowid;"
    if append_only:  # the trigger refuses the one UPDATE that fills the new column
        trigger = APPEND_ONLY.split("CREATE TRIGGER {table}_no_delete")[0].format(table=table)
        fill = f"DROP TRIGGER {table}_no_update;\n{fill}\n{trigger.strip()}"
    return (
        f"ALTER TABLE {table} ADD COLUMN seq INTEGER;\n{fill}\n"
        f"CREATE UNIQUE INDEX {table}_seq ON {table}(seq);\n"
    )


MEMORY_V2 = "".join(
    _order_column(t, append_only=t == "receipts")
    for t in ("receipts", "watermarks", "proposals", "blocked_patterns")
)

MEMORY_STEPS: tuple[tuple[str, ...], ...] = (
    _split(MEMORY_V1),
    _split(MEMORY_V2),
    sqlite_step(),
    _split(SQLITE_DAYS),
    vouch.sqlite_step(),
)
MEMORY_LATEST = len(MEMORY_STEPS)
# The oldest version a read-only open reads as it is: step 3 adds only checks on writes.
MEMORY_READABLE = 2
ORDERED_TABLES = ("receipts", "watermarks", "proposals", "blocked_patterns")  # step 2


def next_seq(table: str) -> str:
    """The `seq` of a new row of an ORDERED_TABLES table (writers run one at a time)."""
    return f"(SELECT COALESCE(MAX(seq), 0) + 1 FROM {table})"


def memory_migration(version: int = MEMORY_LATEST) -> Migration:
    """The playbook's own tables (namespace `memory`), up to `version`."""
    if not 1 <= version <= MEMORY_LATEST:
        raise ValueError(f"memory schema version must be 1..{MEMORY_LATEST}, not {version}")
    return Migration("memory", version, MEMORY_STEPS, POSTGRES_STEPS)


def _ensure_table(ex: Executor) -> None:
    ex.execute(
        f"CREATE TABLE IF NOT EXISTS {MIGRATIONS_TABLE} (namespace TEXT NOT NULL, "
        "version INTEGER NOT NULL, applied_at TEXT NOT NULL, PRIMARY KEY (namespace, version))"
    )


def schema_version(ex: Executor, namespace: str = "memory") -> int:
    """The version of `namespace` the database holds (0 when absent)."""
    if ex.one(ex.dialect.table_exists, (MIGRATIONS_TABLE,)) is None:
        return 0
    return int(
        ex.scalar(f"SELECT MAX(version) FROM {MIGRATIONS_TABLE} WHERE namespace=?", (namespace,), 0)
    )


def check_version(ex: Executor, migration: Migration, current: int | None = None) -> int:
    """The namespace's version (`current` when the caller has just read it); refused when
    it is newer than this Playbook understands."""
    if current is None:
        current = schema_version(ex, migration.namespace)
    if current > migration.latest:
        raise SchemaTooNewError(
            f"this database's '{migration.namespace}' schema is version {current}, newer than "
            f"this Playbook understands ({migration.latest}); upgrade Playbook to open it"
        )
    return current


# What a step computes after its statements, in its transaction: (namespace, version) ->
# a function of the executor and the migrating process's policy (None: the defaults; the
# statements stay plain SQL, frozen by digest).
STEP_BUILDS: dict[tuple[str, int], Callable[[Executor, Policy | None], None]] = {
    ("memory", 4): build_days
}


def run_migrations(
    ex: Executor, migrations: Sequence[Migration], *, policy: Policy | None = None
) -> list[tuple[str, int]]:
    """Apply what is missing of each migration; return the (namespace, version) applied.

    Each version step is one transaction, and records itself in `_migrations`
    (namespace, version, applied_at) in the same transaction. `policy`: the one the
    playbook is read with (step 4 folds its days at its default half-life; None: the
    defaults).
    """
    for m in migrations:  # refuse before touching anything
        check_version(ex, m)
    applied: list[tuple[str, int]] = []
    for m in migrations:
        current = check_version(ex, m)
        steps = m.steps_for(ex.dialect.name) if current < m.version else ()
        for version in range(current + 1, m.version + 1):
            with ex.transaction():
                _ensure_table(ex)
                # Re-read inside the write lock: another process may have just migrated.
                if schema_version(ex, m.namespace) >= version:
                    continue
                for statement in steps[version - 1]:
                    ex.execute(statement)
                build = STEP_BUILDS.get((m.namespace, version))
                if build is not None:
                    build(ex, policy)
                ex.execute(
                    f"INSERT INTO {MIGRATIONS_TABLE} VALUES (?, ?, ?)",
                    (m.namespace, version, datetime.now(UTC).isoformat()),
                )
            applied.append((m.namespace, version))
    return applied
