"""What every part of the store shares: the executor, the policy, the clock, the meta table.

`PlaybookStore` (store.py) is this base plus one mixin per aggregate (bullets, feedback,
evidence, review, blobs); each mixin runs its SQL through `self.sql`, the executor, and
never sees a connection.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Hashable
from contextlib import AbstractContextManager
from dataclasses import dataclass
from datetime import UTC, datetime
from types import TracebackType
from typing import TYPE_CHECKING, Any, Self

from ..core import scoring
from ..core.policy import DEFAULT_POLICY, Policy
from ..core.terms import Actor, utcnow
from ..core.text import content_hash
from .backends import executor_of
from .records import iso
from .schema import MEMORY_LATEST, memory_migration, run_migrations

if TYPE_CHECKING:
    from ..core.model import Bullet
    from .executor import Executor
    from .ranking import RankTable


@dataclass
class RankCache:
    """What recall keeps between queries on one store (see `store/ranking.py`)."""

    table: RankTable | None = None
    wanted: bool = False  # a second query came: load the whole table next time


class StoreBase:
    """The store's shared state. Construct `PlaybookStore`, not this."""

    sql: Executor

    def __init__(
        self,
        db: Any,
        *,
        policy: Policy = DEFAULT_POLICY,
        clock: Callable[[], datetime] = utcnow,
        migrate: bool = True,
    ) -> None:
        self.sql = executor_of(db)
        self.policy = policy
        self.clock = clock
        self.rank_cache = RankCache()
        if migrate:
            run_migrations(self.sql, [memory_migration(MEMORY_LATEST)])

    # ---------------------------------------------------------------- lifetime
    def close(self) -> None:
        """Close the connection (the store cannot be used afterwards)."""
        self.sql.close()

    def __enter__(self) -> Self:
        return self

    def __exit__(
        self,
        kind: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()

    @property
    def read_only(self) -> bool:
        """Opened for reading only (`open_store(..., mode="read")`, or a read-only file)."""
        return self.sql.read_only

    @property
    def derived_by_database(self) -> bool:
        """The connection may not write what is derived from the log (the evidence cache, a
        rule's maturity): the database computes it (PostgreSQL's agent role, `pg roles`), so
        the maturity pass and step 5's test are asked of it."""
        return self.sql.derived_by_database

    @property
    def location(self) -> str:
        """Where the playbook is (a path, or a URL without its password), for messages."""
        return self.sql.label

    # ---------------------------------------------------------------- time & transactions
    def now(self) -> datetime:
        t = self.clock()
        if t.tzinfo is None:
            raise ValueError("the store's clock must return timezone-aware datetimes")
        return t.astimezone(UTC)

    def transaction(self) -> AbstractContextManager[None]:
        """One write transaction (re-entrant: an inner block joins the outer one)."""
        return self.sql.transaction()

    def change_token(self) -> Hashable:
        """Changes whenever anyone commits to the playbook: compare two for live refresh."""
        return self.sql.change_token()

    def listen(self) -> None:
        """Make `change_token()` follow other connections' commits without asking the
        database each time, where the backend can push them (PostgreSQL's LISTEN/NOTIFY; a
        SQLite token is free to read already). For a long-lived watcher."""
        self.sql.listen()

    def half_life(self, bullet: Bullet | None = None, value: float | None = None) -> float:
        if bullet is not None:
            value = bullet.half_life_days
        return float(value) if value else self.policy.half_life_days

    # ---------------------------------------------------------------- meta
    def _meta(self, key: str) -> str | None:
        return self.sql.scalar("SELECT value FROM meta WHERE key = ?", (key,))

    def _set_meta(self, key: str, value: str) -> None:
        self.sql.later(
            "INSERT INTO meta (key, value) VALUES (?, ?) "
            "ON CONFLICT(key) DO UPDATE SET value = excluded.value",
            [(key, value)],
        )

    # ---------------------------------------------------------------- decision log (writes)
    def log_decision(
        self,
        batch_id: str | None,
        actor: str,
        action: str,
        bullet_id: str | None,
        status: str,
        reason: str | None,
        detail: dict[str, Any] | None = None,
    ) -> None:
        """Append one decision to the audit trail (every aggregate writes here)."""
        self.sql.later(
            "INSERT INTO decisions (at, batch_id, actor, action, bullet_id, status, reason, "
            "detail) VALUES (?,?,?,?,?,?,?,?)",
            [
                (
                    iso(self.now()),
                    batch_id,
                    str(Actor(actor)),
                    action,
                    bullet_id,
                    status,
                    reason,
                    json.dumps(detail or {}, ensure_ascii=False),
                )
            ],
        )

    def policy_fingerprint(self) -> str:
        """Identifies the policy's values (cheap: no serializer schema is built)."""
        return content_hash(repr(sorted(self.policy.values().items())))

    def maturity_policy_changed(self) -> bool:
        return self._meta("maturity_policy") != self.policy_fingerprint() + scoring.PASS_RULES

    def record_maturity_policy(self) -> None:
        self._set_meta("maturity_policy", self.policy_fingerprint() + scoring.PASS_RULES)
