"""What happens to bullets after a batch's deltas: inversion (step 5 of SPEC §5) and the
maturity pass (step 6, SPEC §4)."""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING

from ..core import scoring
from ..core.terms import Maturity
from ..core.text import strip_avoid
from ..store import PlaybookStore
from .results import CurateResult

if TYPE_CHECKING:
    from ..core.origin import Origin


def invert_harmed(
    store: PlaybookStore,
    harmed: Iterable[str],
    *,
    batch_id: str | None,
    actor: str,
    provenance: Origin | None = None,
    result: CurateResult | None = None,
    touched: dict[str, None] | None = None,
) -> list[tuple[str, str]]:
    """Step 5: turn each harmed, non-pinned, non-retired rule whose decayed harm is at
    least 3 and more than twice its help into an `AVOID:` anti-pattern."""
    ids = list(dict.fromkeys(harmed))
    if not ids:
        return []
    policy = store.policy
    states = store.bullet_states(ids)
    evidence = store.evidence_many(ids)
    due = [
        bid
        for bid in ids
        if states[bid].type == "rule"
        and not states[bid].pinned
        and states[bid].state != "retired"
        and scoring.should_invert(evidence[bid].helpful, evidence[bid].harmful, policy)
    ]
    if store.derived_by_database:  # the database decides, with its own policy
        judged = store.database_should_invert(ids)
        due = [bid for bid in ids if bid in judged]
    bullets = store.get_bullets(due) if due else {}
    done: list[tuple[str, str]] = []
    for bid in due:
        b = bullets[bid]
        ev = evidence[bid]
        new = store.insert_bullet(
            f"AVOID: {strip_avoid(b.content)}",
            category=b.category,
            tags=b.tags,
            scope=str(b.scope),
            scope_key=b.scope_key,
            type="anti-pattern",
            kind="pitfall",
            source="inverted",
            half_life_days=b.half_life_days,
            provenance=provenance,
            batch_id=batch_id,
        )
        store.add_edge("inverts", new.id, b.id, batch_id=batch_id)
        store.retire(b.id)
        done.append((b.id, new.id))
        if result is not None:
            result.inversions.append((b.id, new.id))
            result.added.append(new.id)
        if touched is not None:
            touched[new.id] = None
        store.log_decision(
            batch_id,
            actor,
            "invert",
            b.id,
            "applied",
            f"decayed harm {ev.harmful:.2f} vs help {ev.helpful:.2f}",
            {"anti_pattern": new.id},
        )
    return done


def run_maturity_pass(
    store: PlaybookStore,
    *,
    touched: Iterable[str] = (),
    batch_id: str | None = None,
    actor: str = "agent",
    result: CurateResult | None = None,
) -> list[tuple[str, str, str]]:
    """The maturity pass of SPEC §4, after a batch: (id, from, to) of every move.

    It visits the bullets the batch touched and those still demoting (a negative score
    above candidate, recorded as due), nothing else: decay alone moves no rung, so an
    unrelated mark leaves every other bullet where it is. After a policy change every live
    bullet is visited once, since new constants can change any verdict.
    """
    if store.derived_by_database:  # the database runs the pass itself (roles.py)
        changes = store.database_maturity_pass(touched, batch_id)
        if result is not None:
            result.maturity_changes.extend(changes)
        return changes
    ids = dict.fromkeys(touched)
    full = store.maturity_policy_changed()
    now = scoring.days(store.now())
    ids.update(dict.fromkeys(store.active_ids() if full else store.due_for_maturity(now)))
    with store.transaction():
        changes = rerate(store, ids, batch_id=batch_id, actor=actor)
        if full:
            store.record_maturity_policy()
    if result is not None:
        result.maturity_changes.extend(changes)
    return changes


def rerate(
    store: PlaybookStore,
    ids: Iterable[str],
    *,
    batch_id: str | None = None,
    actor: str = "agent",
    reason: str | None = None,
) -> list[tuple[str, str, str]]:
    """One maturity pass over exactly `ids` (retired ones are skipped): (id, from, to) of
    every move, each written to the decision log (action "maturity", with the evidence and
    `reason` when given). For callers that choose the set themselves, such as an import
    that re-rates what it brought in (`--rerate`)."""
    ids = list(dict.fromkeys(ids))
    changes: list[tuple[str, str, str]] = []
    if not ids:
        return changes
    if store.derived_by_database:
        return store.database_maturity_pass(ids, batch_id)
    policy = store.policy
    now_t = store.now()
    now = scoring.days(now_t)
    moves: list[tuple[str, str]] = []  # written together, after the pass (one statement)
    dues: list[tuple[str, float | None]] = []
    with store.transaction():
        bullets = store.bullet_states(ids)
        evidence = store.evidence_many(list(bullets), at=now_t)
        for bid in ids:  # in the caller's order
            b = bullets.get(bid)
            if b is None:
                continue
            if b.state == "retired":
                if b.maturity_due is not None:
                    dues.append((bid, None))
                continue
            ev = evidence[bid]
            current = Maturity(b.maturity)
            new = scoring.next_maturity(current, ev.helpful, ev.harmful, b.pinned, policy)
            if new is not current:
                moves.append((bid, str(new)))
                why = f"evidence H={ev.helpful:.2f} X={ev.harmful:.2f}"
                store.log_decision(
                    batch_id,
                    actor,
                    "maturity",
                    bid,
                    "applied",
                    f"{reason}: {why}" if reason else why,
                    {"from": str(current), "to": str(new)},
                )
                changes.append((bid, str(current), str(new)))
            demoting = scoring.still_demoting(ev.helpful, ev.harmful, new, b.pinned, policy)
            due = now if demoting else None
            if ev.pending_until is not None and new is not Maturity.DEPRECATED and not b.pinned:
                # an event still in the future ages differently from the rest: look again then
                due = ev.pending_until if due is None else min(due, ev.pending_until)
            if due != b.maturity_due:  # most passes leave it as it was (None)
                dues.append((bid, due))
        store.set_maturities(moves, batch_id=batch_id)
        store.set_maturity_dues(dues)
    return changes
