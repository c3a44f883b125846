"""The human actions on one bullet: restore, pin, unpin, deprecate, a mark, and making
drafts live (activate).

Each checks what it acts on inside the transaction that writes, so a second reviewer (the
workbench and a terminal at once) gets a clear refusal, never a double write.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ..core import scoring
from ..core.authority import require_human
from ..core.errors import NotFound
from ..core.limits import check
from ..core.policy import Policy
from ..core.record import FrozenRecord
from ..core.terms import EVIDENCE, HUMAN, DeltaType, Maturity
from ..curation import CurateResult, curate
from ..store import PlaybookStore, StoreError, new_batch_id
from .detail import require


class NotApplied(StoreError):
    """A change curation did not apply (refused, rejected): `status` and `reason` say why,
    `outcome` is the outcome's own code (`curation.results.CODES`: invalid, pinned...)."""

    code = "nothing_applied"

    def __init__(self, status: str, reason: str | None, outcome: str | None = None) -> None:
        super().__init__(f"{status}: {reason}" if reason else status)
        self.status = status
        self.reason = reason
        self.outcome = outcome


def curate_one(store: PlaybookStore, delta: dict[str, Any], actor: str, **kw: Any) -> CurateResult:
    """Curate one delta; NotFound / NotApplied when it changed nothing."""
    result = curate(store, [delta], actor=actor, **kw)
    o = result.outcomes[0]
    if result.nothing_applied:
        if o.code == "not_found":
            raise NotFound(o.reason or "no such bullet")
        raise NotApplied(o.status, o.reason, o.code)
    return result


class InvalidMark(StoreError):
    """A mark refused before anything is read: its kind, or a reason on a helpful mark."""


# A mark's parameters as the API names them; a surface passes its own spelling of them
# (the CLI's `ID`, `--context`...), so that the one message names what its user typed.
MARK_NAMES = {
    "bullet_id": "bullet_id",
    "kind": "kind",
    "reason": "reason",
    "context": "context",
    "session_ref": "session_ref",
    "receipt": "receipt",
}


def check_mark(
    policy: Policy,
    bullet_id: str,
    kind: str,
    *,
    reason: str | None = None,
    context: str | None = None,
    session_ref: str | None = None,
    receipt: str | None = None,
    names: Mapping[str, str] = MARK_NAMES,
) -> None:
    """The one validation of a mark, before anything is opened or read: its kind, a reason
    only with harm, every text within its bound in `policy`, a receipt not blank. Raises
    InvalidMark or TooLong (code `invalid_input`). `mark` calls it; a surface may call it
    earlier (the CLI, before it opens the playbook) and translates the error by its code."""
    if kind not in EVIDENCE:
        raise InvalidMark(f"{names['kind']}: expected helpful or harmful, not {kind[:40]!r}")
    if reason and kind != DeltaType.HARMFUL:
        raise InvalidMark(f"{names['reason']} goes with a harmful mark only")
    check(
        policy,
        (
            (names["bullet_id"], bullet_id, "id"),
            (names["context"], context, "text"),
            (names["session_ref"], session_ref, "ref"),
            (names["receipt"], receipt, "id"),
        ),
    )
    if receipt is not None and not receipt.strip():
        raise InvalidMark(f"{names['receipt']} must not be blank")


def mark(
    store: PlaybookStore,
    bullet_id: str,
    kind: str,
    *,
    reason: str | None = None,
    context: str | None = None,
    provenance: dict[str, Any] | None = None,
    actor: str = HUMAN,
) -> CurateResult:
    """One helpful or harmful mark (`check_mark`), curated (harmful without a reason is
    "other")."""
    session = provenance.get("session_ref") if provenance else None
    check_mark(store.policy, bullet_id, kind, reason=reason, context=context, session_ref=session)
    return curate_one(
        store,
        mark_delta(bullet_id, kind, reason=reason, context=context),
        actor,
        provenance=provenance,
    )


def mark_delta(
    bullet_id: str, kind: str, *, reason: str | None = None, context: str | None = None
) -> dict[str, Any]:
    """The delta of one helpful or harmful mark `check_mark` accepted (harmful without a
    reason is "other")."""
    delta: dict[str, Any] = {"type": kind, "bullet_id": bullet_id}
    if context:
        delta["context"] = context
    if kind == "harmful":
        delta["reason"] = reason or "other"
    return delta


def deprecate(
    store: PlaybookStore, bullet_id: str, reason: str, *, actor: str = HUMAN
) -> CurateResult:
    """Deprecate a bullet (a human may deprecate a pinned one)."""
    return curate_one(store, {"type": "deprecate", "bullet_id": bullet_id, "reason": reason}, actor)


def pin(store: PlaybookStore, bullet_id: str, reason: str, *, actor: str = HUMAN) -> bool:
    """Pin a live bullet: its maturity never moves and agents cannot retire it. Returns
    whether it was pinned already (the reason is replaced)."""
    if not reason.strip():
        raise StoreError("a pin needs a reason")
    with store.transaction():
        bullet = require(store, bullet_id)
        if bullet.state == "retired":
            raise StoreError(f"{bullet_id} is retired; pin its successor instead")
        store.pin(bullet_id, reason, actor=actor)
    return bullet.pinned


def unpin(store: PlaybookStore, bullet_id: str, *, actor: str = HUMAN) -> bool:
    """Unpin a bullet: its maturity follows its evidence again. Returns whether it was
    pinned (unpinning an unpinned bullet changes nothing)."""
    with store.transaction():
        bullet = require(store, bullet_id)
        if bullet.pinned:
            store.unpin(bullet_id, actor=actor)
    return bullet.pinned


class Activated(FrozenRecord):
    activated: list[str]  # drafts made live, in the order given
    already: list[str]  # live already: left as they were

    def __init__(
        self,
        activated: list[str],
        already: list[str],
    ) -> None:
        object.__setattr__(self, "activated", activated)
        object.__setattr__(self, "already", already)

    def to_dict(self) -> dict[str, Any]:
        return {"activated": self.activated, "already_active": self.already}


def activate(store: PlaybookStore, bullet_ids: list[str], *, actor: str = HUMAN) -> Activated:
    """Make drafts live: from now on agents are shown them (SessionStart, the AGENTS.md
    export, recall). A human decision, each logged; all or none: an unknown or retired id
    refuses the whole request before anything is written."""
    done: list[str] = []
    already: list[str] = []
    with store.transaction():
        for bid in dict.fromkeys(bullet_ids):
            (done if store.activate(bid, actor=actor) else already).append(bid)
    return Activated(done, already)


def restore_target(helpful: float, harmful: float, policy: Policy) -> str:
    """The rung a restored bullet returns to: what its evidence earns now, at least
    candidate. (If its score is still negative, the next maturity pass moves it again: a
    restore is a second chance, not an override; pin it to make it stick.)"""
    earned = scoring.earned_rung(helpful, harmful, policy)
    return str(Maturity.CANDIDATE if earned is Maturity.DEPRECATED else earned)


class Restored(FrozenRecord):
    bullet_id: str
    maturity: str  # the rung it returned to
    batch_id: str

    def __init__(
        self,
        bullet_id: str,
        maturity: str,
        batch_id: str,
    ) -> None:
        object.__setattr__(self, "bullet_id", bullet_id)
        object.__setattr__(self, "maturity", maturity)
        object.__setattr__(self, "batch_id", batch_id)

    def to_dict(self) -> dict[str, Any]:
        return {
            "bullet_id": self.bullet_id,
            "from": "deprecated",
            "to": self.maturity,
            "batch_id": self.batch_id,
        }


def restore(
    store: PlaybookStore, bullet_id: str, reason: str | None = None, *, actor: str = HUMAN
) -> Restored:
    """Undo a deprecation: maturity back to the earned rung (at least candidate), logged as
    a human decision. Only a human restores; a retired bullet cannot be restored."""
    require_human(actor, "restore a bullet")
    batch = new_batch_id()
    with store.transaction():
        bullet = require(store, bullet_id)
        if bullet.state == "retired":
            raise StoreError(f"{bullet_id} is retired (superseded); it cannot be restored")
        if bullet.maturity != "deprecated":
            raise StoreError(f"{bullet_id} is {bullet.maturity}, not deprecated")
        score = store.score(bullet_id)
        target = restore_target(score.helpful, score.harmful, store.policy)
        store.set_maturity(bullet_id, target, batch_id=batch)
        store.log_decision(
            batch,
            actor,
            "restore",
            bullet_id,
            "applied",
            reason or None,
            {"from": "deprecated", "to": target},
        )
    return Restored(bullet_id, target, batch)
