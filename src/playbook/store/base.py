"""What the store's parts share: `Part` (the executor, the clock, the store's write
transaction), the meta table, and the decision log every part writes to.

`PlaybookStore` (store.py) is a façade composed of parts — repositories and read models —
each built with the executor and what it needs, never the store itself.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from contextlib import AbstractContextManager
from datetime import datetime
from typing import TYPE_CHECKING, Any, cast

from ..core import scoring
from ..core.policy import Policy
from ..core.terms import Actor
from ..core.text import content_hash
from .records import EPOCH, Decision, iso, stored_json, stored_time, where_equal

if TYPE_CHECKING:
    from .executor import Executor

Now = Callable[[], datetime]
Transaction = Callable[[], AbstractContextManager[None]]


class Part:
    """A repository or read model of the store: it runs SQL through `sql`, reads the time
    from `now` (the store's clock, as an aware UTC datetime) and writes inside
    `transaction()` (the store's: re-entrant, folding new feedback as it commits)."""

    def __init__(self, sql: Executor, now: Now, transaction: Transaction) -> None:
        self.sql = sql
        self.now = now
        self.transaction = transaction


class DecidingPart(Part):
    """A part whose human actions (pin, block, resolve, ...) are written to the decision
    log in the same transaction."""

    def __init__(
        self, sql: Executor, now: Now, transaction: Transaction, decisions: DecisionLog
    ) -> None:
        super().__init__(sql, now, transaction)
        self.decisions = decisions


class Meta:
    """The `meta` table: one text value per key."""

    def __init__(self, sql: Executor) -> None:
        self.sql = sql

    def get(self, key: str) -> str | None:
        # a row of the database: a TEXT column, or None (no such key)
        return cast("str | None", self.sql.scalar("SELECT value FROM meta WHERE key = ?", (key,)))

    def set(self, key: str, value: str) -> None:
        self.sql.later(
            "INSERT INTO meta (key, value) VALUES (?, ?) "
            "ON CONFLICT(key) DO UPDATE SET value = excluded.value",
            [(key, value)],
        )


class DecisionLog:
    """The audit trail (every part writes here; `store.decisions(...)` reads it), and the
    policy the maturity pass last ran with."""

    def __init__(self, sql: Executor, policy: Policy, now: Now, meta: Meta) -> None:
        self.sql = sql
        self.policy = policy
        self.now = now
        self.meta = meta

    # ---------------------------------------------------------------- decision log (writes)
    def log(
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
        return self.meta.get("maturity_policy") != self.policy_fingerprint() + scoring.PASS_RULES

    def record_maturity_policy(self) -> None:
        self.meta.set("maturity_policy", self.policy_fingerprint() + scoring.PASS_RULES)

    # ---------------------------------------------------------------- decision log (reads)
    def __call__(
        self, *, bullet_id: str | None = None, batch_id: str | None = None, limit: int = 200
    ) -> list[Decision]:
        where, args = where_equal(bullet_id=bullet_id, batch_id=batch_id)
        sql = "SELECT id, at, batch_id, actor, action, bullet_id, status, reason, detail "
        sql += f"FROM decisions{where} ORDER BY id DESC LIMIT ?"
        rows = self.sql.all(sql, [*args, limit])
        return [
            Decision(
                r[0],
                stored_time(r[1], "decisions", r[0]) or EPOCH,
                batch_id=r[2],
                actor=r[3],
                action=r[4],
                bullet_id=r[5],
                status=r[6],
                reason=r[7],
                detail=stored_json(r[8], "decisions", r[0], {}),
            )
            for r in reversed(rows)
        ]
