"""The store kit: the one way in (`open_store`), namespaced migrations, and the PlaybookStore.

Every SQL statement of Playbook lives in this package; no module outside it imports
`sqlite3` or sees a connection (tests/test_layers.py checks). `open_database`,
`run_migrations`, `memory_migration` and `PlaybookStore(db, policy=, clock=)` are the
SPEC §2 API; `open_store(target, policy, clock, mode=...)` is what every surface uses.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..core.errors import (
    DatabaseOpenError,
    NotFound,
    PlaybookError,
    SchemaError,
    SchemaTooNewError,
    StoreError,
)
from ..core.lazy import lazy_exports
from . import schema as _schema
from .backends import executor_of
from .schema import MEMORY_LATEST, Migration, memory_migration
from .sqlite import BUSY_TIMEOUT_MS, connect
from .sqlite import driver_error as _sqlite_error
from .store import (
    BlockedPattern,
    Conflict,
    Decision,
    Evidence,
    Lineage,
    PlaybookStore,
    iso,
    new_batch_id,
    parse_iso,
)
from .target import (
    Target,
    holds_playbook,
    open_executor,
    open_store,
    remove_playbook_file,
    resolve_target,
)

if TYPE_CHECKING:
    from sqlite_utils import Database

    from ..core.policy import Policy
    from .copying import CopyReport, copy_playbook
    from .doctor import Diagnosis, diagnose

# `playbook doctor` and `playbook copy` only: loaded on first use, so opening a store does
# not pay for them.
__getattr__ = lazy_exports(
    __name__,
    {
        "Diagnosis": ".doctor",
        "diagnose": ".doctor",
        "CopyReport": ".copying",
        "copy_playbook": ".copying",
    },
)


def driver_error(exc: BaseException) -> PlaybookError | None:
    """The Playbook error for a database driver's exception that escaped the store (SQLite
    or PostgreSQL), or None."""
    from .postgres.dialect import driver_error as postgres_error  # lazy: mark, recall, every hook

    return _sqlite_error(exc) or postgres_error(exc)


def run_migrations(
    db: Any, migrations: Sequence[Migration], *, policy: Policy | None = None
) -> list[tuple[str, int]]:
    """Apply what is missing of each migration to `db` (a `sqlite_utils.Database`, a
    `sqlite3.Connection` or an executor); return the (namespace, version) applied
    (`store/schema.py`). `policy`: the one the playbook is read with (what is derived from
    the log is built at its half-life; None: the defaults)."""
    return _schema.run_migrations(executor_of(db), migrations, policy=policy)


def schema_version(db: Any, namespace: str = "memory") -> int:
    """The version of `namespace` that `db` holds (0 when absent)."""
    return _schema.schema_version(executor_of(db), namespace)


def open_database(path: str | Path) -> Database:
    """Open (or create) a playbook file as a `sqlite_utils.Database` (WAL, busy timeout,
    foreign keys on). `open_store` is the way in that also takes URLs."""
    from sqlite_utils import Database  # lazy: sqlite-utils: every command (open_store needs none)

    return Database(connect(path), execute_plugins=False)


__all__ = [
    "BUSY_TIMEOUT_MS",
    "MEMORY_LATEST",
    "BlockedPattern",
    "Conflict",
    "CopyReport",
    "DatabaseOpenError",
    "Decision",
    "Diagnosis",
    "Evidence",
    "Lineage",
    "Migration",
    "NotFound",
    "PlaybookStore",
    "SchemaError",
    "SchemaTooNewError",
    "StoreError",
    "Target",
    "connect",
    "copy_playbook",
    "diagnose",
    "driver_error",
    "holds_playbook",
    "iso",
    "memory_migration",
    "new_batch_id",
    "open_database",
    "open_executor",
    "open_store",
    "parse_iso",
    "remove_playbook_file",
    "resolve_target",
    "run_migrations",
    "schema_version",
]
