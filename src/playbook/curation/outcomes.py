"""Task outcomes as feedback (SPEC §8, after seed 001).

`apply_outcome` turns a report (`success | failure | partial`, citing bullet ids) into
feedback: each cited bullet once per report, a receipt applied at most once, receipt and
events in one transaction, unknown ids counted as skips.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from ..core.errors import InvalidInput
from ..core.limits import TooLong, check, problem
from ..core.model import Actor, FutureTimestamp, Provenance, StorableText, invalid, refuse_future
from ..core.policy import DEFAULT_POLICY, Policy
from ..store import PlaybookStore, new_batch_id
from . import invert_harmed, run_maturity_pass

Outcome = Literal["success", "failure", "partial"]


class OutcomeReport(BaseModel):
    model_config = ConfigDict(extra="forbid", defer_build=True)

    outcome: Outcome
    bullet_ids: list[StorableText] = Field(default_factory=list)
    receipt: StorableText | None = None
    context: StorableText | None = None
    at: datetime | None = None  # when it happened (observation time); default now

    @field_validator("receipt")
    @classmethod
    def _receipt(cls, value: str | None) -> str | None:
        if value is not None and not value.strip():
            raise invalid("a receipt is not empty (leave it out for none)")
        return value

    @field_validator("at")
    @classmethod
    def _aware(cls, value: datetime | None) -> datetime | None:
        if value is not None and value.tzinfo is None:
            raise invalid("must include a timezone (e.g. 2026-03-01T12:00:00Z)")
        return value


@dataclass
class OutcomeResult:
    outcome: str
    applied: list[str] = field(default_factory=list)
    skipped: list[str] = field(default_factory=list)  # unknown or retired ids
    duplicate_citations: int = 0
    replayed: bool = False  # the receipt was seen before: nothing applied
    batch_id: str | None = None
    inversions: list[tuple[str, str]] = field(default_factory=list)
    maturity_changes: list[tuple[str, str, str]] = field(default_factory=list)

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
    if not isinstance(report, OutcomeReport):
        try:
            report = OutcomeReport.model_validate(report)
        except ValidationError as exc:
            first = exc.errors(include_url=False)[0]
            loc = ".".join(str(p) for p in first["loc"])
            raise InvalidOutcome(f"invalid outcome report: {loc}: {first['msg']}") from None
    policy = store.policy
    try:
        check(
            policy,
            [
                ("bullet_ids", report.bullet_ids, "id"),
                ("receipt", report.receipt, "id"),
                ("context", report.context, "text"),
            ],
        )
    except TooLong as exc:
        raise InvalidOutcome(f"invalid outcome report: {exc}") from None
    if len(report.bullet_ids) > policy.max_batch:
        raise InvalidOutcome(
            f"invalid outcome report: bullet_ids has {len(report.bullet_ids):,} ids; the "
            f"maximum is {policy.max_batch:,} (Policy.max_batch)"
        )
    if report.at is not None:
        try:
            refuse_future(report.at, store.now(), "an outcome")
        except FutureTimestamp as exc:
            raise InvalidOutcome(str(exc)) from None
    prov = (
        provenance
        if isinstance(provenance, Provenance)
        else Provenance.model_validate(provenance or {})
    )
    too_long = problem(policy, "session_ref", prov.session_ref, "ref")
    if too_long:
        raise InvalidOutcome(f"invalid outcome report: {too_long}")
    kind, weight = {
        "success": ("helpful", policy.outcome_success_weight),
        "failure": ("harmful", policy.outcome_failure_weight),
        "partial": ("helpful", policy.outcome_partial_weight),
    }[report.outcome]
    cited = list(dict.fromkeys(report.bullet_ids))
    result = OutcomeResult(report.outcome, duplicate_citations=len(report.bullet_ids) - len(cited))
    with store.transaction():
        if report.receipt is not None and store.has_receipt(report.receipt):
            result.replayed = True
            return result
        batch = new_batch_id()
        result.batch_id = batch
        bullets = store.get_bullets(cited)
        for bid in cited:
            b = bullets.get(bid)
            if b is None or b.state == "retired":
                result.skipped.append(bid)
                continue
            store.record_feedback(
                bid,
                kind,
                weight=weight,
                reason="other" if kind == "harmful" else None,
                context=report.context or f"task {report.outcome}",
                provenance=prov,
                actor=actor,
                receipt=report.receipt,
                at=report.at,
                batch_id=batch,
            )
            result.applied.append(bid)
        if report.receipt is not None and result.applied:  # spent only by one that applied
            store.add_receipt(report.receipt, report.outcome, batch)
        store.log_decision(
            batch,
            actor,
            "outcome",
            None,
            "applied",
            report.outcome,
            {"applied": result.applied, "skipped": result.skipped, "receipt": report.receipt},
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
