"""Task outcomes as feedback (SPEC §8, after seed 001).

`apply_outcome` turns a report (`success | failure | partial`, citing bullet ids) into
feedback: each cited bullet once per report, a receipt applied at most once, receipt and
events in one transaction, unknown ids counted as skips.
"""

from __future__ import annotations

from datetime import datetime
from typing import TYPE_CHECKING, Any

from ..core.errors import InvalidInput
from ..core.limits import TooLong, check, problem
from ..core.origin import Origin, PlainOrigin, plain_text
from ..core.policy import DEFAULT_POLICY, Policy
from ..core.record import NEW, FrozenRecord, Record
from ..core.terms import OUTCOMES, Actor, FutureTimestamp, OutcomeName, refuse_future
from ..store import PlaybookStore, new_batch_id
from . import invert_harmed, run_maturity_pass
from .pipeline import provenance_of

if TYPE_CHECKING:
    from ..core.model import Provenance
    from .outcome_report import OutcomeReport

Outcome = OutcomeName
_FIELDS = frozenset(("outcome", "bullet_ids", "receipt", "context", "at"))


class PlainReport(FrozenRecord):
    """A report read without pydantic: the fields `OutcomeReport` has, as it has them."""

    outcome: str
    bullet_ids: list[str]
    receipt: str | None
    context: str | None
    at: datetime | None

    def __init__(
        self,
        outcome: str,
        bullet_ids: list[str],
        receipt: str | None,
        context: str | None,
        at: datetime | None = None,
    ) -> None:
        object.__setattr__(self, "outcome", outcome)
        object.__setattr__(self, "bullet_ids", bullet_ids)
        object.__setattr__(self, "receipt", receipt)
        object.__setattr__(self, "context", context)
        object.__setattr__(self, "at", at)


def plain_report(value: object) -> PlainReport | None:
    """The report `value` is when `OutcomeReport.model_validate` would take it unchanged
    (a dict of plain strings: a one-shot `playbook outcome`'s), else None (validate it with
    the model, which says what is wrong). A time of its own (`at`) goes to the model."""
    if type(value) is not dict or not value.keys() <= _FIELDS or value.get("at") is not None:
        return None
    outcome, ids = value.get("outcome"), value.get("bullet_ids", [])
    receipt, context = value.get("receipt"), value.get("context")
    if type(outcome) is not str or outcome not in OUTCOMES or type(ids) is not list:
        return None
    if not all(plain_text(i) for i in ids):
        return None
    if receipt is not None and not (plain_text(receipt) and receipt.strip()):
        return None
    if context is not None and not plain_text(context):
        return None
    return PlainReport(outcome, list(ids), receipt, context)


class OutcomeResult(Record):
    outcome: str
    applied: list[str]
    skipped: list[str]  # unknown or retired ids
    duplicate_citations: int
    replayed: bool  # the receipt was seen before: nothing applied
    batch_id: str | None
    inversions: list[tuple[str, str]]
    maturity_changes: list[tuple[str, str, str]]

    def __init__(
        self,
        outcome: str,
        applied: list[str] = NEW,
        skipped: list[str] = NEW,
        duplicate_citations: int = 0,
        replayed: bool = False,
        batch_id: str | None = None,
        inversions: list[tuple[str, str]] = NEW,
        maturity_changes: list[tuple[str, str, str]] = NEW,
    ) -> None:
        self.outcome = outcome
        self.applied = [] if applied is NEW else applied
        self.skipped = [] if skipped is NEW else skipped
        self.duplicate_citations = duplicate_citations
        self.replayed = replayed
        self.batch_id = batch_id
        self.inversions = [] if inversions is NEW else inversions
        self.maturity_changes = [] if maturity_changes is NEW else maturity_changes

    def to_dict(self) -> dict[str, Any]:
        return {
            "outcome": self.outcome,
            "applied": self.applied,
            "skipped": self.skipped,
            "skipped_count": len(self.skipped),
            "duplicate_citations": self.duplicate_citations,
            "replayed": self.replayed,
            "batch_id": self.batch_id,
            "inversions": [list(p) for p in self.inversions],
            "maturity_changes": [list(c) for c in self.maturity_changes],
        }


class InvalidOutcome(InvalidInput):
    pass


def _report(report: OutcomeReport | dict[str, Any]) -> OutcomeReport | PlainReport:
    plain = plain_report(report)
    if plain is not None:
        return plain
    from pydantic import ValidationError  # lazy: a report that is not plain (outcome's fast path)

    from .outcome_report import OutcomeReport  # lazy: pydantic, as above

    if isinstance(report, OutcomeReport):
        return report
    try:
        return OutcomeReport.model_validate(report)
    except ValidationError as exc:
        first = exc.errors(include_url=False)[0]
        loc = ".".join(str(p) for p in first["loc"])
        raise InvalidOutcome(f"invalid outcome report: {loc}: {first['msg']}") from None


def apply_outcome(
    store: PlaybookStore,
    report: OutcomeReport | dict[str, Any],
    *,
    provenance: Provenance | dict[str, Any] | None = None,
    actor: str = "agent",
) -> OutcomeResult:
    """Record a task outcome as feedback on the bullets it cites.

    success → helpful, failure → harmful (reason "other"), partial → helpful at
    `Policy.outcome_partial_weight` (⅓). Each cited id counts once; unknown or retired ids are
    skipped and counted; a receipt seen before makes the whole report a no-op (`replayed`).
    The receipt, the events, any inversion and the maturity pass are one transaction.
    """
    actor = str(Actor(actor))
    read = _report(report)
    policy = store.policy
    try:
        check(
            policy,
            [
                ("bullet_ids", read.bullet_ids, "id"),
                ("receipt", read.receipt, "id"),
                ("context", read.context, "text"),
            ],
        )
    except TooLong as exc:
        raise InvalidOutcome(f"invalid outcome report: {exc}") from None
    if len(read.bullet_ids) > policy.max_batch:
        raise InvalidOutcome(
            f"invalid outcome report: bullet_ids has {len(read.bullet_ids):,} ids; the "
            f"maximum is {policy.max_batch:,} (Policy.max_batch)"
        )
    if read.at is not None:
        try:
            refuse_future(read.at, store.now(), "an outcome")
        except FutureTimestamp as exc:
            raise InvalidOutcome(str(exc)) from None
    prov: Origin = provenance_of(provenance) or PlainOrigin()  # none: an empty one, as before
    too_long = problem(policy, "session_ref", prov.session_ref, "ref")
    if too_long:
        raise InvalidOutcome(f"invalid outcome report: {too_long}")
    kind, weight = {
        "success": ("helpful", policy.outcome_success_weight),
        "failure": ("harmful", policy.outcome_failure_weight),
        "partial": ("helpful", policy.outcome_partial_weight),
    }[read.outcome]
    cited = list(dict.fromkeys(read.bullet_ids))
    result = OutcomeResult(read.outcome, duplicate_citations=len(read.bullet_ids) - len(cited))
    with store.transaction():
        if read.receipt is not None and store.has_receipt(read.receipt):
            result.replayed = True
            return result
        batch = new_batch_id()
        result.batch_id = batch
        states = store.bullet_states(cited)
        for bid in cited:
            b = states.get(bid)
            if b is None or b.state == "retired":
                result.skipped.append(bid)
                continue
            store.record_feedback(
                bid,
                kind,
                weight=weight,
                reason="other" if kind == "harmful" else None,
                context=read.context or f"task {read.outcome}",
                provenance=prov,
                actor=actor,
                receipt=read.receipt,
                at=read.at,
                batch_id=batch,
            )
            result.applied.append(bid)
        if read.receipt is not None and result.applied:  # spent only by one that applied
            store.add_receipt(read.receipt, read.outcome, batch)
        store.log_decision(
            batch,
            actor,
            "outcome",
            None,
            "applied",
            read.outcome,
            {"applied": result.applied, "skipped": result.skipped, "receipt": read.receipt},
        )
        touched = dict.fromkeys(result.applied)
        if kind == "harmful":
            result.inversions = invert_harmed(
                store, result.applied, batch_id=batch, actor=actor, provenance=prov, touched=touched
            )
        result.maturity_changes = run_maturity_pass(
            store, touched=touched, batch_id=batch, actor=actor
        )
    return result


def project_outcome_confidence(
    confidence: float | None, outcome: Outcome, policy: Policy = DEFAULT_POLICY
) -> float:
    """Seed 001's arithmetic: start at 0.5 when absent, +0.15 / −0.25 / +0.05, clamp [0.1, 1]."""
    start = policy.confidence_start if confidence is None else confidence
    delta = {
        "success": policy.confidence_success,
        "failure": policy.confidence_failure,
        "partial": policy.confidence_partial,
    }[outcome]
    return min(policy.confidence_max, max(policy.confidence_min, start + delta))
