"""Where a playbook is, and the one way in: `open_store(target, policy, clock, mode=...)`.

A target is a file path (SQLite, the default) or a `postgresql://` URL (the PostgreSQL
backend, `store/postgres/`). A URL is never taken for a path; any other `scheme://` and
an empty target are usage errors.

Modes (see `store/sqlite/` and `store/postgres/opening.py`):

* `"create"` (default) — make the folder and the file if needed, migrate.
* `"write"`  — an existing playbook; upgrade an older schema; a database without a playbook
               (another program's file) is refused untouched (`NotAPlaybook`).
* `"read"`   — an existing playbook, read only: never creates, never migrates, never
               switches the journal mode; works on read-only files, folders and mounts.

`upgrade=False` (with `"write"` or `"create"`): an existing playbook at an older schema is
refused (`SchemaTooOld`) instead of upgraded. For a surface on a time budget (the agent's
hooks): an upgrade reads every row, minutes on a large playbook, and one cut off at a
deadline rolls back and starts again at the next open. `playbook migrate` upgrades it.
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING, Literal

from ..core import errors, terms
from ..core.policy import DEFAULT_POLICY
from ..core.record import FrozenRecord
from .postgres import open_postgres
from .schema import MEMORY_LATEST, MEMORY_READABLE, check_version, memory_migration, schema_version
from .sqlite import MODES, Mode, open_sqlite
from .store import PlaybookStore
from .urls import masked

if TYPE_CHECKING:
    from ..core.policy import Policy
    from .executor import Executor

POSTGRES_SCHEMES = ("postgresql", "postgres")
UPGRADE_HINT = "run 'playbook migrate' to upgrade it"
_SCHEME = re.compile(r"^([A-Za-z][A-Za-z0-9+.-]*)://")


class Target(FrozenRecord):
    backend: Literal["sqlite", "postgresql"]
    location: str  # a path (expanded) or a URL

    def __init__(self, backend: Literal["sqlite", "postgresql"], location: str) -> None:
        object.__setattr__(self, "backend", backend)
        object.__setattr__(self, "location", location)

    @property
    def path(self) -> Path:
        """The file (SQLite only: a URL is never a path)."""
        if self.backend != "sqlite":
            raise ValueError(f"{self} is a database URL, not a file")
        return Path(self.location)

    @property
    def is_file(self) -> bool:
        return self.backend == "sqlite"

    def exists(self) -> bool:
        """Whether a playbook could be there already: the file exists (a URL: always
        True; whether it holds a playbook is known only by connecting)."""
        return self.backend != "sqlite" or self.location == ":memory:" or self.path.exists()

    def __str__(self) -> str:
        return self.location if self.backend == "sqlite" else masked(self.location)


def resolve_target(target: str | os.PathLike[str] | Target) -> Target:
    """A path or URL as a `Target`; `UsageError` for an empty one or an unknown scheme."""
    if isinstance(target, Target):
        return target
    if isinstance(target, os.PathLike):
        target = os.fspath(target)
    if not isinstance(target, str):
        raise TypeError(f"a playbook target is a path or a URL, not {type(target).__name__}")
    if not target.strip():
        raise errors.UsageError(
            "the playbook location is empty: give a file path (or unset $PLAYBOOK_DB for "
            "the default)"
        )
    match = _SCHEME.match(target)
    if match:
        scheme = match.group(1).lower()
        if scheme in POSTGRES_SCHEMES:
            return Target("postgresql", target)
        raise errors.UsageError(
            f"unknown database URL scheme {scheme + '://'!r}: give a file path "
            "(or a postgresql:// URL)"
        )
    if target == ":memory:":
        return Target("sqlite", target)
    return Target("sqlite", str(Path(target).expanduser()))


def open_store(
    target: str | os.PathLike[str] | Target,
    policy: Policy | None = None,
    clock: Callable[[], datetime] | None = None,
    *,
    mode: Mode = "create",
    upgrade: bool = True,
) -> PlaybookStore:
    """The playbook at `target`, opened in `mode`. Close it (or use it as a context
    manager) when done. Raises a `playbook.core.errors.PlaybookError` for every way the target
    can be wrong: `UsageError`, `NoDatabase`, `NotAPlaybook`, `CannotOpen`, ...
    `upgrade=False`: an older schema is `SchemaTooOld`, never migrated (module doc)."""
    where = resolve_target(target)
    ex = open_executor(where, mode)
    try:
        version = schema_version(ex)
        if mode != "create" and version == 0:
            raise errors.NotAPlaybook(f"{where} is not a playbook database")
        migration = memory_migration(MEMORY_LATEST)
        check_version(ex, migration, version)
        if mode == "read" and version < MEMORY_READABLE:
            raise errors.SchemaTooOld(
                f"{where} holds a playbook of an older schema (version {version}) that must "
                "be upgraded before it can be read",
                hint=UPGRADE_HINT,
            )
        if mode != "read" and not upgrade and 0 < version < MEMORY_LATEST:
            raise errors.SchemaTooOld(
                f"the playbook at {where} is at schema version {version}, older than this "
                f"Playbook's {MEMORY_LATEST}",
                hint=UPGRADE_HINT,
            )
        return PlaybookStore(  # at the latest version already: no migration to look for
            ex,
            policy=policy or DEFAULT_POLICY,
            clock=clock or terms.utcnow,  # looked up at each open (a test pins terms.utcnow)
            migrate=mode != "read" and version < MEMORY_LATEST,
        )
    except BaseException:
        ex.close()
        raise


def remove_playbook_file(where: Target) -> None:
    """Remove a playbook file (and its journal files) that a failed command created; a
    database on a server is left as it is (the failed write was one transaction)."""
    if not where.is_file or where.location == ":memory:":
        return
    for suffix in ("", "-wal", "-shm", "-journal"):
        Path(f"{where.path}{suffix}").unlink(missing_ok=True)


def holds_playbook(target: str | os.PathLike[str] | Target) -> bool:
    """Whether there is a playbook at `target` already (a database URL: by connecting)."""
    where = resolve_target(target)
    if where.is_file:
        return where.exists() and where.location != ":memory:"
    try:
        ex = open_executor(where, "read")
    except (errors.NoDatabase, errors.NotAPlaybook):
        return False
    try:
        return schema_version(ex) > 0
    finally:
        ex.close()


def open_executor(target: str | os.PathLike[str] | Target, mode: Mode = "create") -> Executor:
    """The executor on `target` in `mode`, without the version checks of `open_store`."""
    where = resolve_target(target)
    if where.backend == "postgresql":
        if mode not in MODES:
            raise ValueError(f"mode must be one of {', '.join(MODES)}, not {mode!r}")
        return open_postgres(where.location, mode, str(where))
    if mode == "create" and where.location != ":memory:":
        path = where.path
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise errors.CannotOpen(
                f"cannot create the folder {path.parent} ({exc.strerror or exc})"
            ) from None
    return open_sqlite(where.location, mode)
