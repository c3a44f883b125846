"""One curate batch (SPEC §5): parse and check the deltas, drop repeats, apply adds and
feedback, then structure (replace, merge, deprecate), then inversion and the maturity pass.
"""

from __future__ import annotations

from typing import Any

from ..deltas import (
    AddDelta,
    DeprecateDelta,
    HarmfulDelta,
    HelpfulDelta,
    InvalidDelta,
    MergeDelta,
    PlaybookDelta,
    ReplaceDelta,
    parse_delta,
)
from ..limits import PREVIEW, preview, problem
from ..model import Actor, Provenance
from ..policy import Policy
from ..store import PlaybookStore, new_batch_id
from ..text import normalize
from .batch import Batch
from .lifecycle import run_maturity_pass
from .results import CurateResult, DeltaOutcome


def _provenance(value: Provenance | dict[str, Any] | None) -> Provenance:
    if value is None:
        return Provenance.model_construct()  # empty: nothing to validate
    if isinstance(value, Provenance):
        return value
    return Provenance.model_validate(value)


def curate(
    store: PlaybookStore,
    deltas: object,
    provenance: Provenance | dict[str, Any] | None = None,
    actor: str = "agent",
    *,
    carry_pins: bool = True,
) -> CurateResult:
    """Apply a batch of deltas deterministically, in one transaction.

    `carry_pins=False`: a replace or merge leaves the successor unpinned even when an
    original it supersedes was pinned (a reviewer merging a conflict decides that).
    """
    actor = str(Actor(actor))
    prov = _provenance(provenance)
    result = CurateResult(batch_id=new_batch_id())
    refusal = batch_problem(store.policy, deltas, prov)
    if refusal is not None:  # the whole batch: one outcome says why, nothing is written
        result.outcomes.append(DeltaOutcome(0, "rejected-invalid", None, refusal))
        return result
    assert isinstance(deltas, list | tuple)
    with store.transaction():
        run = Batch(store, prov, actor, result)
        run.carry_pins = carry_pins
        parsed: list[tuple[int, PlaybookDelta]] = []
        for i, item in enumerate(deltas):
            try:
                delta = parse_delta(item)
            except InvalidDelta as exc:
                run.outcome(i, None, "rejected-invalid", _item_id(item), str(exc))
                continue
            problem = run.check(delta)
            if problem:
                run.result.outcomes.append(
                    DeltaOutcome(i, "rejected-invalid", _item_id(item), problem, delta.type)
                )
                continue
            parsed.append((i, delta))
        # Step 1: one vote per bullet per batch, one add per subject, no repeated delta.
        kept: list[tuple[int, PlaybookDelta]] = []
        votes: dict[str, int] = {}
        adds: dict[str, int] = {}
        seen: dict[str, int] = {}
        for i, delta in parsed:
            key = delta.model_dump_json()
            first = seen.setdefault(key, i)
            if first != i:
                run.outcome(
                    i, delta, "dropped-duplicate", _item_id(delta), f"repeats delta {first}"
                )
                continue
            if isinstance(delta, HelpfulDelta | HarmfulDelta):
                first = votes.setdefault(delta.bullet_id, i)
                if first != i:
                    run.outcome(
                        i,
                        delta,
                        "dropped-duplicate",
                        delta.bullet_id,
                        f"one vote per bullet per batch (delta {first} voted)",
                    )
                    continue
            if isinstance(delta, AddDelta):
                first = adds.setdefault(normalize(delta.content), i)
                if first != i:
                    run.outcome(
                        i, delta, "dropped-duplicate", None, f"same content as delta {first}"
                    )
                    continue
            kept.append((i, delta))
        # Steps 2-3: adds (blocked, folded, conflicting, zombie) and feedback, in input order.
        for i, delta in kept:
            if isinstance(delta, AddDelta):
                run.add(i, delta)
            elif isinstance(delta, HelpfulDelta):
                run.feedback(delta.bullet_id, "helpful", context=delta.context)
                run.outcome(i, delta, "applied", delta.bullet_id)
            elif isinstance(delta, HarmfulDelta):
                run.feedback(
                    delta.bullet_id,
                    "harmful",
                    reason=str(delta.reason or "other"),
                    context=delta.context,
                )
                run.outcome(i, delta, "applied", delta.bullet_id)
        # Step 4: replace, merge, deprecate.
        for i, delta in kept:
            if isinstance(delta, ReplaceDelta | MergeDelta | DeprecateDelta):
                run.structural(i, delta)
        if run.applied:
            run.invert()  # step 5
            run_maturity_pass(  # step 6
                store, touched=run.touched, batch_id=result.batch_id, actor=actor, result=result
            )
    result.outcomes.sort(key=lambda o: o.index)
    return result


def batch_problem(policy: Policy, deltas: object, provenance: Provenance) -> str | None:
    """Why a whole batch is refused before any delta is read, or None."""
    if not isinstance(deltas, list | tuple):
        return f"a batch must be a list of deltas, not {type(deltas).__name__}"
    if len(deltas) > policy.max_batch:
        return (
            f"the batch has {len(deltas):,} deltas; the maximum is {policy.max_batch:,} "
            "(Policy.max_batch)"
        )
    return problem(policy, "session_ref", provenance.session_ref, "ref")


def _item_id(item: object) -> str | None:
    """The id a rejected item names, for its outcome; an over-long one is shown as a
    prefix (the reason says how long it was)."""
    value = item.get("bullet_id") if isinstance(item, dict) else getattr(item, "bullet_id", None)
    if not isinstance(value, str):
        return None
    return value if len(value) <= PREVIEW else preview(value)
