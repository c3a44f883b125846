"""The reflection loop of SPEC §7: `reflect_session(store, session_ref, diary, reflector)`.

The one stage that may call a model. A `Reflector` (see `playbook.reflection.reflectors`)
reads the part of a session diary past the session's watermark and proposes deltas; this
module runs it up to `Policy.reflect_max_iterations` times, feeding back the growing
playbook and the deltas proposed so far, validates every item, and then, in one
transaction, either stages the deltas in the review queue (the default) or curates them
(`apply=True`), and advances the watermark.

Guarantees:

- Provenance is ours: each delta is recorded with the session ref and the byte offset of the
  passage the reflector matched it to (`ProposedItem.offset`, decided from the diary). An item
  that carries provenance fields of its own is rejected.
- Invalid items land in `rejected` with a plain reason; they are never raised.
- The reflector is called with no transaction open (a model may take minutes; other writers
  are not blocked meanwhile). If it fails in any iteration, nothing is stored and the
  watermark does not move: the error is in `errors`, and the next run reads the same text.
- Re-running on the same diary proposes nothing twice: text before the watermark is not
  read again, and the queue does not stage a delta that is already pending. A transcript
  that copies a session already reflected (a fork, a resume written to a new file) is read
  from past the last record a reflection read (`copies`).
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..core.deltas import InvalidDelta
from ..core.model import Bullet, Provenance
from ..core.text import core_tokens, normalize, query_tokens, strip_avoid
from ..curation import curate
from ..review.agent import curate_as_agent
from ..review.queue import stage, validate_proposal
from ..store import PlaybookStore
from .copies import mark_read, unread
from .diaries import Diary, read_diary
from .reflectors import ProposedItem, Reflector
from .result import (
    STOP_ERROR,
    STOP_MAX_DELTAS,
    STOP_MAX_ITERATIONS,
    STOP_NOTHING_NEW,
    ProposedDelta,
    ReflectionResult,
    RejectedItem,
)

if TYPE_CHECKING:
    from ..core.files import Readable

__all__ = [
    "PLAYBOOK_LIMIT",
    "ProposedDelta",
    "ReflectionResult",
    "RejectedItem",
    "reflect_session",
]

# At most this many existing bullets are shown to a reflector: a model prompt cannot hold a
# 10k-bullet playbook. Beyond it, the bullets sharing the most words with the diary are kept.
PLAYBOOK_LIMIT = 300


def reflect_session(
    store: PlaybookStore,
    session_ref: str,
    diary: Diary | str | Path | Readable,
    reflector: Reflector,
    *,
    apply: bool = False,
    playbook_limit: int = PLAYBOOK_LIMIT,
    origin: str = "reflection",
    as_agent: bool = False,
) -> ReflectionResult:
    """Reflect on a session diary from its watermark on; stage (or curate) what it teaches.

    `diary` is a path or an open binary file, a pipe included (read from the session's
    watermark with `read_diary`; a missing file raises OSError), or a `Diary` already read
    (the text before the watermark is ignored). Transcript records that a reflection
    already read, in this file or a copy of the session, are left out
    (`copies.unread`; `already_read` counts them). Up to
    `Policy.reflect_max_iterations` calls of `reflector.propose(diary, playbook, prior)`,
    where `playbook` lists the existing bullets (at most `playbook_limit`) followed by
    the adds proposed so far (ids `proposed-1`, …, not real bullets), and `prior` is the
    validated deltas proposed so far. The loop stops when an iteration proposes no new
    valid delta, or when `Policy.reflect_max_deltas` deltas have been proposed. Deltas are
    the same when their type, target bullets and normalized content are (so one vote per
    bullet per session).

    Then one transaction: by default `queue.stage` (with `origin`), otherwise `curate`
    once per diary offset (input order), each with provenance (session_ref, offset), and the
    watermark moved past what was read. With `as_agent` (an agent's login), applying is
    `curate_as_agent`: replace, merge and deprecate are staged for a person instead.
    When the delta cap left deltas out, only what comes before the first of them in the
    diary is stored and the watermark stops there, so the next run goes on from it
    (`truncated` counts what is left for it). Any exception raised by the reflector is
    reported in `errors` and nothing is stored.
    """
    if not session_ref or not session_ref.strip():
        raise ValueError("reflection needs a session ref")
    before = store.watermark(session_ref)
    diary = diary.since(before) if isinstance(diary, Diary) else read_diary(diary, start=before)
    diary, already_read = unread(store, diary)
    result = ReflectionResult(session_ref, apply, before, before)
    result.already_read = already_read
    result.unfinished = diary.unfinished
    after = max(before, diary.end)

    if diary.passages:
        intake, overflow = _loop(store, diary, reflector, result, playbook_limit)
        if result.errors:
            result.stopped = STOP_ERROR
            return result
        if overflow:
            after = _resume_point(intake, overflow, before, after)

    with store.transaction():
        if store.watermark(session_ref) != before:
            # Another reflection of this session finished while the reflector ran; storing
            # ours too would propose the same text twice.
            result.errors.append(
                f"the watermark of {session_ref} moved while reflecting "
                f"({before} -> {store.watermark(session_ref)}); nothing stored, run again"
            )
            result.stopped = STOP_ERROR
            return result
        if result.proposed:
            if apply:
                _curate(store, session_ref, result, origin if as_agent else None)
            else:
                _stage(store, session_ref, result, origin)
        if after != before:
            store.set_watermark(session_ref, after)
            mark_read(store, diary, after)
    result.watermark_after = after
    return result


@dataclass
class _Intake:
    """Validates a reflector's items one by one into `result`: each valid delta once, each
    refused item reported once however often it comes back."""

    store: PlaybookStore
    result: ReflectionResult
    seen: set[tuple[str, ...]] = field(default_factory=set)
    refused: set[str] = field(default_factory=set)

    def take(self, item: object, offset: int | None, iteration: int) -> bool:
        """Whether `item` is a new valid delta (then it is added to `result.proposed`)."""
        try:
            delta = validate_proposal(self.store, item)
        except InvalidDelta as exc:
            again = _canonical(item)
            if again not in self.refused:
                self.refused.add(again)
                self.result.rejected.append(RejectedItem(iteration, item, str(exc), offset))
            return False
        key = _key(delta)
        if key in self.seen:
            return False
        self.seen.add(key)
        self.result.proposed.append(ProposedDelta(delta, offset, iteration))
        return True


# An item left out by the delta cap, not validated: (item, offset, iteration).
_Overflow = tuple[object, int | None, int]


def _loop(
    store: PlaybookStore,
    diary: Diary,
    reflector: Reflector,
    result: ReflectionResult,
    playbook_limit: int,
) -> tuple[_Intake, list[_Overflow]]:
    """Run the reflector's iterations; the items that came past the cap are returned."""
    policy = store.policy
    existing = _playbook(store, diary, playbook_limit)
    intake = _Intake(store, result)
    offsets = diary.line_offsets()
    overflow: list[_Overflow] = []
    for iteration in range(1, policy.reflect_max_iterations + 1):
        playbook = existing + [
            {
                "id": f"proposed-{n}",
                "content": p.delta["content"],
                "type": p.delta.get("bullet_type") or _implied_type(p.delta["content"]),
                "maturity": "candidate",
                "tags": p.delta.get("tags", []),
            }
            for n, p in enumerate((p for p in result.proposed if p.delta["type"] == "add"), 1)
        ]
        prior = [dict(p.delta) for p in result.proposed]
        result.iterations = iteration
        try:
            items = list(reflector.propose(diary, playbook, prior))
        except Exception as exc:  # any failure of the reflector is reported, never raised
            result.errors.append(f"iteration {iteration}: {_describe(exc)}")
            return intake, []
        new = 0
        for raw in items:
            item, offset = _unpack(raw, offsets)
            if len(result.proposed) >= policy.reflect_max_deltas:
                overflow.append((item, offset, iteration))  # validated when read again
            elif intake.take(item, offset, iteration):
                new += 1
        if len(result.proposed) >= policy.reflect_max_deltas:
            result.stopped = STOP_MAX_DELTAS
            return intake, overflow
        if new == 0:
            result.stopped = STOP_NOTHING_NEW
            return intake, overflow
    result.stopped = STOP_MAX_ITERATIONS
    return intake, overflow


def _resume_point(intake: _Intake, overflow: list[_Overflow], before: int, after: int) -> int:
    """Where the next run must start when the delta cap left `overflow` out.

    The watermark stops at the first line holding a left-out item; what was proposed from
    that line on is not stored now (it is proposed again next time), so nothing is stored
    twice and nothing is skipped. A line at the watermark itself would stop all progress:
    its items are all taken, over the cap. Left-out items with no place in the diary cannot
    be resumed: they are counted in `unplaced`.
    """
    result = intake.result
    for item, offset, iteration in overflow:
        if offset == before:
            intake.take(item, offset, iteration)
    overflow = [o for o in overflow if o[1] != before]
    placed = [offset for _, offset, _ in overflow if offset is not None]
    result.unplaced = len(overflow) - len(placed)
    if not placed:
        result.truncated = result.unplaced
        return after
    cut = min(placed)
    kept = [p for p in result.proposed if p.byte_offset is None or p.byte_offset < cut]
    result.truncated = len(overflow) + len(result.proposed) - len(kept)
    result.proposed = kept
    result.rejected = [r for r in result.rejected if r.byte_offset is None or r.byte_offset < cut]
    return cut


def _implied_type(content: str) -> str:
    """The type curation will give an add without `bullet_type`."""
    return "anti-pattern" if strip_avoid(content) != content else "rule"


def _unpack(raw: object, offsets: set[int]) -> tuple[object, int | None]:
    """The item and its offset; an offset that is not where one of the diary's passages or
    lines starts is dropped (a reflector may only point at text it was given)."""
    if isinstance(raw, ProposedItem):
        offset = raw.offset if isinstance(raw.offset, int) and raw.offset in offsets else None
        return raw.item, offset
    return raw, None


def _canonical(item: object) -> str:
    try:
        return json.dumps(item, sort_keys=True, default=repr)
    except (TypeError, ValueError, RecursionError):
        return repr(item)


def _describe(exc: BaseException) -> str:
    text = " ".join(str(exc).split())
    return text or type(exc).__name__


def _key(delta: dict[str, Any]) -> tuple[str, ...]:
    """What makes two proposals the same: type, target bullets and normalized content."""
    ids = delta.get("bullet_ids")
    return (
        str(delta["type"]),
        str(delta.get("bullet_id") or ""),
        ",".join(sorted(ids)) if isinstance(ids, list) else "",
        normalize(str(delta.get("content") or "")),
    )


def _playbook(store: PlaybookStore, diary: Diary, limit: int) -> list[dict[str, Any]]:
    """The non-retired bullets a reflector sees, in creation order.

    Over `limit`, keep the ones sharing the most subject words with the diary (ties: older
    first), so a large playbook still gives a prompt of bounded size.
    """
    bullets = store.bullets()
    if len(bullets) > limit:
        words = set(query_tokens(" ".join(p.text for p in diary.passages)))
        order = {b.id: i for i, b in enumerate(bullets)}
        ranked = sorted(bullets, key=lambda b: (-len(core_tokens(b.content) & words), order[b.id]))
        bullets = sorted(ranked[: max(0, limit)], key=lambda b: order[b.id])
    return [_bullet_dict(b) for b in bullets]


def _bullet_dict(b: Bullet) -> dict[str, Any]:
    return {
        "id": b.id,
        "content": b.content,
        "type": str(b.type),
        "maturity": str(b.maturity),
        "tags": list(b.tags),
    }


def _provenance(session_ref: str, offset: int | None) -> Provenance:
    return Provenance(session_ref=session_ref, byte_offset=offset)


def _stage(store: PlaybookStore, session_ref: str, result: ReflectionResult, origin: str) -> None:
    staged = stage(
        store,
        result.deltas,
        origin=origin,
        provenance=Provenance(session_ref=session_ref),
        provenances=[_provenance(session_ref, p.byte_offset) for p in result.proposed],
    )
    result.staged = staged.staged
    result.duplicates = [result.proposed[i] for i in staged.duplicates]
    for i, reason in staged.rejected:  # state changed since validation (e.g. a new block)
        p = result.proposed[i]
        result.rejected.append(RejectedItem(p.iteration, p.delta, reason, p.byte_offset))


def _curate(
    store: PlaybookStore, session_ref: str, result: ReflectionResult, agent_origin: str | None
) -> None:
    """Curate the proposed deltas, one batch per diary offset; for an agent (`agent_origin`
    set), `curate_as_agent`, whose staged proposals join `result.staged`."""
    groups: dict[int | None, list[dict[str, Any]]] = {}
    for p in result.proposed:
        groups.setdefault(p.byte_offset, []).append(p.delta)
    for offset, deltas in groups.items():
        prov = _provenance(session_ref, offset)
        if agent_origin is None:
            result.curated.append(curate(store, deltas, provenance=prov, actor="agent"))
            continue
        done = curate_as_agent(store, deltas, prov, origin=agent_origin)
        if done.curated is not None:
            result.curated.append(done.curated)
        result.staged += list(done.proposals.values())
