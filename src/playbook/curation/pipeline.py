"""One curate batch (SPEC §5): parse and check the deltas, drop repeats, apply adds and
feedback, then structure (replace, merge, deprecate), then inversion and the maturity pass.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ..core.errors import InvalidInput
from ..core.limits import PREVIEW, preview, problem
from ..core.origin import Origin, PlainOrigin, plain_origin
from ..core.terms import EVIDENCE, STRUCTURAL, Actor, DeltaType
from ..core.text import normalize
from ..store import PlaybookStore, new_batch_id
from .batch import Batch, Delta
from .lifecycle import run_maturity_pass
from .results import CurateResult, DeltaOutcome
from .votes import Vote, vote_of

if TYPE_CHECKING:
    from ..core.policy import Policy


def provenance_of(value: Origin | dict[str, Any] | None) -> Origin | None:
    """The batch's provenance, validated; None for none (nothing to validate). A plain
    one (`core.origin`) is read without the model."""
    if value is None or isinstance(value, PlainOrigin):
        return value
    plain = plain_origin(value)
    if plain is not None:
        return plain
    from ..core.model import Provenance  # lazy: the models load pydantic: mark, every typer command

    if isinstance(value, Provenance):
        return value
    return Provenance.model_validate(value)


def _parse(item: object) -> Delta:
    """One item as a delta: a plain vote directly, anything else through the union
    (raises `InvalidDelta` with a plain reason)."""
    vote = vote_of(item)
    if vote is not None:
        return vote
    from ..core.deltas import parse_delta  # lazy: pydantic: mark, every typer command

    return parse_delta(item)


def _key(delta: Delta) -> str:
    """What makes two deltas the same delta."""
    return delta.key() if isinstance(delta, Vote) else delta.model_dump_json()


def curate(
    store: PlaybookStore,
    deltas: object,
    provenance: Origin | dict[str, Any] | None = None,
    actor: str = "agent",
    *,
    carry_pins: bool = True,
) -> CurateResult:
    """Apply a batch of deltas deterministically, in one transaction.

    `carry_pins=False`: a replace or merge leaves the successor unpinned even when an
    original it supersedes was pinned (a reviewer merging a conflict decides that).
    """
    actor = str(Actor(actor))
    prov = provenance_of(provenance)
    result = CurateResult(batch_id=new_batch_id())
    refusal = batch_problem(store.policy, deltas, prov)
    if refusal is not None:  # the whole batch: one outcome says why, nothing is written
        result.outcomes.append(DeltaOutcome(0, "rejected-invalid", None, refusal))
        return result
    assert isinstance(deltas, list | tuple)
    with store.transaction():
        run = Batch(store, prov, actor, result)
        run.carry_pins = carry_pins
        run.read_states(deltas)
        parsed: list[tuple[int, Delta]] = []
        for i, item in enumerate(deltas):
            try:
                delta = _parse(item)
            except InvalidInput as exc:  # InvalidDelta
                run.outcome(i, None, "rejected-invalid", _item_id(item), str(exc))
                continue
            problem = run.check(delta)
            if problem:
                code, why = problem
                run.result.outcomes.append(
                    DeltaOutcome(i, "rejected-invalid", _item_id(item), why, delta.type, code)
                )
                continue
            parsed.append((i, delta))
        # Step 1: one vote per bullet per batch, one add per subject, no repeated delta.
        kept: list[tuple[int, Delta]] = []
        votes: dict[str | None, int] = {}
        adds: dict[str, int] = {}
        seen: dict[str, int] = {}
        for i, delta in parsed:
            key = _key(delta)
            first = seen.setdefault(key, i)
            if first != i:
                run.outcome(
                    i, delta, "dropped-duplicate", _item_id(delta), f"repeats delta {first}"
                )
                continue
            if delta.type in EVIDENCE:
                bid = getattr(delta, "bullet_id", None)  # every vote names one bullet
                first = votes.setdefault(bid, i)
                if first != i:
                    run.outcome(
                        i,
                        delta,
                        "dropped-duplicate",
                        bid,
                        f"one vote per bullet per batch (delta {first} voted)",
                    )
                    continue
            if delta.type == DeltaType.ADD:
                first = adds.setdefault(normalize(getattr(delta, "content", "")), i)
                if first != i:
                    run.outcome(
                        i, delta, "dropped-duplicate", None, f"same content as delta {first}"
                    )
                    continue
            kept.append((i, delta))
        # Steps 2-3: adds (blocked, folded, conflicting, zombie) and feedback, in input order;
        # step 4: the structural deltas (replace, merge, deprecate), in input order.
        for i, delta in kept:
            if delta.type not in STRUCTURAL:
                run.apply(i, delta)
        for i, delta in kept:
            if delta.type in STRUCTURAL:
                run.apply(i, delta)
        if run.applied:
            run.invert()  # step 5
            run_maturity_pass(  # step 6
                store, touched=run.touched, batch_id=result.batch_id, actor=actor, result=result
            )
    result.outcomes.sort(key=lambda o: o.index)
    return result


def batch_problem(policy: Policy, deltas: object, provenance: Origin | None) -> str | None:
    """Why a whole batch is refused before any delta is read, or None."""
    if not isinstance(deltas, list | tuple):
        return f"a batch must be a list of deltas, not {type(deltas).__name__}"
    if len(deltas) > policy.max_batch:
        return (
            f"the batch has {len(deltas):,} deltas; the maximum is {policy.max_batch:,} "
            "(Policy.max_batch)"
        )
    ref = provenance.session_ref if provenance is not None else None
    return problem(policy, "session_ref", ref, "ref")


def _item_id(item: object) -> str | None:
    """The id a rejected item names, for its outcome; an over-long one is shown as a
    prefix (the reason says how long it was)."""
    value = item.get("bullet_id") if isinstance(item, dict) else getattr(item, "bullet_id", None)
    if not isinstance(value, str):
        return None
    return value if len(value) <= PREVIEW else preview(value)
