"""Review that scales: decisions on many proposals at once.

`approve_many` and `reject_many` decide each proposal on its own, in its own transaction
(`queue.approve` / `queue.reject`): one bad id (unknown, decided already, stale, refused by
curation) is reported in its outcome and the others go on. Only a human decides; an agent
actor, or a rejection without a reason, is refused before anything is touched.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from ..core.errors import PlaybookError
from ..curation import CurateResult
from ..store import PlaybookStore
from . import queue


@dataclass(frozen=True)
class Decided:
    """What became of one proposal in `approve_many` / `reject_many`."""

    proposal_id: str
    ok: bool
    status: str  # approved | rejected | refused
    code: str | None = None  # the error code when refused (not_found, not_pending, ...)
    message: str | None = None
    result: CurateResult | None = None  # an approval's curation
    block_id: str | None = None  # a rejection's block

    def to_dict(self) -> dict[str, Any]:
        return {
            "proposal": self.proposal_id,
            "ok": self.ok,
            "status": self.status,
            "code": self.code,
            "message": self.message,
            "result": self.result.to_dict() if self.result is not None else None,
            "block_id": self.block_id,
        }


def approve_many(store: PlaybookStore, ids: Iterable[str], actor: str = "human") -> list[Decided]:
    """Approve each proposal on its own (`queue.approve`); one outcome per distinct id, in
    the order given."""
    queue.require_human(actor, "approve")
    out = []
    for pid in dict.fromkeys(ids):
        try:
            result = queue.approve(store, pid, actor=actor)
        except PlaybookError as exc:
            out.append(Decided(pid, False, "refused", exc.code, str(exc)))
            continue
        out.append(Decided(pid, True, "approved", result=result))
    return out


def reject_many(
    store: PlaybookStore,
    ids: Iterable[str],
    reason: str,
    block: bool = False,
    actor: str = "human",
) -> list[Decided]:
    """Reject each proposal on its own with one reason (`queue.reject`; `block` blocks each
    one's text as a pattern); one outcome per distinct id, in the order given."""
    queue.require_human(actor, "reject")
    if not reason.strip():
        raise queue.QueueError("a rejection needs a reason")
    out = []
    for pid in dict.fromkeys(ids):
        try:
            block_id = queue.reject(store, pid, reason, block=block, actor=actor)
        except PlaybookError as exc:
            out.append(Decided(pid, False, "refused", exc.code, str(exc)))
            continue
        out.append(Decided(pid, True, "rejected", block_id=block_id))
    return out
