"""The engine's own curation in a generated year (`year_world.World`'s daily steps):
replaces, merges, deprecations, adds that conflict with a rule or hit a blocked pattern
(all through `curate`), proposals staged, approved and rejected (`queue`), blocks, pins
and conflicts resolved by a human. Each picks its rules the way people and agents would
(the popular more likely), and tells the world what the engine did (`_adopt`)."""

from __future__ import annotations

from datetime import timedelta
from typing import TYPE_CHECKING, Any

import numpy as np

from playbook.core.text import strip_avoid
from playbook.curation import curate
from playbook.review import queue

if TYPE_CHECKING:
    from year_world import World

BLOCKS = (
    "force push to main",
    "commit the secrets file",
    "disable certificate verification",
    "skip code review for hotfixes",
    "chmod 777 the deploy directory",
    "delete the staging database",
)


class CurationSteps:
    """The `_op_*` steps `World.day` runs on the days its schedule says."""

    def _some(self: World, d: int, *, rule_only: bool = False, k: int = 1) -> list[int]:
        """`k` distinct live rules, the popular more likely (and not new today)."""
        n = len(self.ids)
        w = self.pop[:n] * self.alive[:n] * (self.created_day[:n] < d) * ~self.deprecated[:n]
        if rule_only:
            w = w * self.is_rule[:n]
        live = np.flatnonzero(w)
        if live.size < k:
            return []
        picked = self.plan.rng.choice(live, size=k, replace=False, p=w[live] / w[live].sum())
        return [int(i) for i in picked]

    def _curate(
        self,
        d: int,
        deltas: list[dict[str, Any]],
        *,
        actor: str = "agent",
        parent: int | None = None,
    ) -> Any:
        session, offset = self._session(self.plan.session_on(d))
        result = curate(self.store, deltas, {"session_ref": session, "byte_offset": offset}, actor)
        self._adopt(result, d, parent)
        return result

    def _adopt(self: World, result: Any, d: int, parent: int | None) -> None:
        for bid in result.added:
            if bid not in self.index:
                bullet = self.store.get_bullet(bid)
                self._new_index(bid, bullet.content if bullet else "", d, parent)
        for old, _ in result.inversions:
            self._retired(old)
        self._maturity(result.maturity_changes)
        for o in result.outcomes:
            self._count(f"curate {o.type or '?'}: {o.status}")

    def _op_replace(self: World, d: int) -> None:
        for i in self._some(d):
            delta = {"type": "replace", "bullet_id": self.ids[i], "content": self.plan.sentence(),
                     "reason": "clearer wording"}  # fmt: skip
            self._curate(d, [delta], parent=i)
            self._check_retired([i])

    def _op_merge(self: World, d: int) -> None:
        picked = self._some(d, rule_only=True, k=2)
        if picked:
            delta = {
                "type": "merge",
                "bullet_ids": [self.ids[i] for i in picked],
                "content": self.plan.sentence(),
                "reason": "the same advice twice",
            }
            self._curate(d, [delta], parent=picked[0])
            self._check_retired(picked)

    def _op_deprecate(self: World, d: int) -> None:
        for i in self._some(d):
            delta = {
                "type": "deprecate",
                "bullet_id": self.ids[i],
                "reason": "the toolchain moved on",
            }
            self._curate(d, [delta])

    def _op_conflict(self: World, d: int) -> None:
        for i in self._some(d, rule_only=True):
            bullet = self.store.get_bullet(self.ids[i])
            assert bullet is not None
            self._curate(
                d, [{"type": "add", "content": f"AVOID: {strip_avoid(bullet.content)}"}], parent=i
            )

    def _op_propose(self: World, d: int) -> None:
        session, offset = self._session(self.plan.session_on(d))
        delta = {"type": "add", "content": self.plan.sentence(), "category": "general"}
        staged = queue.stage(
            self.store, [delta], provenance={"session_ref": session, "byte_offset": offset}
        )
        for pid in staged.staged:
            when = d + self.pick.randint(1, 5)
            verdict = self.pick.choices(["approve", "reject", "leave"], [0.6, 0.3, 0.1])[0]
            if verdict != "leave" and when < self.spec.days:
                self.later.setdefault(when, []).append((verdict, pid))
        self._count("proposals staged", len(staged.staged))

    def _op_approve(self: World, d: int, pid: str) -> None:
        result = queue.approve(self.store, pid, actor="human")
        self._adopt(result, d, None)
        self._count("proposals approved")

    def _op_reject(self: World, d: int, pid: str) -> None:
        queue.reject(self.store, pid, "too specific to one task", actor="human")
        self._count("proposals rejected")

    def _op_block(self: World, d: int) -> None:
        taken = {b.pattern for b in self.store.blocked()}
        free = [p for p in BLOCKS if p not in taken]
        if free:
            self.store.block(free[0], "never do this here", actor="human")
            when = d + self.pick.randint(1, 10)
            if when < self.spec.days:
                self.later.setdefault(when, []).append(("blocked_add", free[0]))
            self._count("blocks")

    def _op_blocked_add(self: World, d: int, pattern: str) -> None:
        self._curate(d, [{"type": "add", "content": f"{pattern.capitalize()}."}])

    def _op_pin(self: World, d: int) -> None:
        for i in self._some(d):
            self.store.pin(self.ids[i], "a team standard", actor="human")
            self._count("pins")

    def _op_resolve(self: World, d: int) -> None:
        cutoff = self.store.now() - timedelta(days=3)
        for c in self.store.conflicts():
            if c.created_at <= cutoff and self.pick.random() < 0.7:
                self.store.resolve_conflict(c.id, "both hold, in different contexts", actor="human")
                self._count("conflicts resolved")

    def _check_retired(self: World, indexes: list[int]) -> None:
        states = self.store.bullet_states([self.ids[i] for i in indexes])
        for i in indexes:
            if states[self.ids[i]].state == "retired":
                self.alive[i] = False
