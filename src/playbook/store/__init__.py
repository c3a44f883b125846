"""The store kit: the one way in (`open_store`), namespaced migrations, and the PlaybookStore.

Every SQL statement of Playbook lives in this package; no module outside it imports
`sqlite3` or sees a connection (tests/test_layers.py checks). `open_database`,
`run_migrations`, `memory_migration` and `PlaybookStore(db, policy=, clock=)` are the
SPEC §2 API; `open_store(target, policy, clock, mode=...)` is what every surface uses.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..errors import (
    DatabaseOpenError,
    NotFound,
    SchemaError,
    SchemaTooNewError,
    StoreError,
)
from .schema import (
    MEMORY_LATEST,
    Migration,
    memory_migration,
    run_migrations,
    schema_version,
)
from .sqlite import BUSY_TIMEOUT_MS, connect, driver_error
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
from .target import Target, open_store, resolve_target

if TYPE_CHECKING:
    from sqlite_utils import Database

    from .doctor import Diagnosis, diagnose

# `playbook doctor` only: loaded on first use, so opening a store does not pay for it.
_LAZY = {"Diagnosis": "doctor", "diagnose": "doctor"}


def __getattr__(name: str) -> Any:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    from importlib import import_module

    value = getattr(import_module(f"{__name__}.{module}"), name)
    globals()[name] = value
    return value


def open_database(path: str | Path) -> Database:
    """Open (or create) a playbook file as a `sqlite_utils.Database` (WAL, busy timeout,
    foreign keys on). `open_store` is the way in that also takes URLs."""
    from sqlite_utils import Database

    return Database(connect(path), execute_plugins=False)


__all__ = [
    "BUSY_TIMEOUT_MS",
    "MEMORY_LATEST",
    "BlockedPattern",
    "Conflict",
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
    "diagnose",
    "driver_error",
    "iso",
    "memory_migration",
    "new_batch_id",
    "open_database",
    "open_store",
    "parse_iso",
    "resolve_target",
    "run_migrations",
    "schema_version",
]
