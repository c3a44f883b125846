"""The evaluation's result: per candidate and metric, the verdict, and how to print them."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from .bootstrap import Estimate
from .candidates import Candidate

PRIMARY = "log_loss"
METRICS = {
    "log_loss": "held-out log-loss of a logistic link fitted on the training span (nats per "
    "event, lower is better)",
    "auc": "AUC of the effective score just before each mark, helpful vs harmful",
    "recall_at_k": "share of helpful marks with a context whose bullet was in the top k",
    "harm_at_k": "share of harmful marks with a context whose bullet was in the top k "
    "(lower is better)",
}


@dataclass(frozen=True)
class LogSummary:
    first: str | None  # recording time of the first and last mark
    last: str | None
    split_at: str | None  # held out: marks recorded at or after this
    events: int
    training_events: int
    heldout_events: int
    heldout_sessions: int
    helpful: int
    harmful: int
    split: float
    k: int
    replicates: int
    seed: int
    ranked_events: int = 0  # held-out marks with a context that has query words

    @property
    def span(self) -> str:
        if not self.first or not self.last:
            return "empty log"
        return f"{self.first[:10]} .. {self.last[:10]}"


@dataclass(frozen=True)
class Row:
    candidate: Candidate
    training_log_loss: float | None
    metrics: dict[str, Estimate] = field(default_factory=dict)


@dataclass(frozen=True)
class Verdict:
    status: str  # "recommended" | "inert"
    challenger: str | None  # the registered challenger's name, when there was one
    reason: str


@dataclass(frozen=True)
class EvalReport:
    at: datetime  # when the evaluation ran (the store's clock)
    log: LogSummary
    rows: list[Row]  # rows[0] is the current policy
    verdict: Verdict

    @property
    def recommended(self) -> Row | None:
        if self.verdict.status != "recommended":
            return None
        return next(r for r in self.rows if r.candidate.name == self.verdict.challenger)

    def row(self, name: str | None) -> Row | None:
        return next((r for r in self.rows if r.candidate.name == name), None)

    def line(self) -> str:
        """The one-line verdict."""
        v = self.verdict
        challenger = self.row(v.challenger)
        if challenger is None or PRIMARY not in challenger.metrics:
            return f"inert: keep the current policy — {v.reason}"
        est = challenger.metrics[PRIMARY]
        evidence = (
            f"held-out log-loss gain {est.diff:+z.4f} nats per event "
            f"[95% CI {est.lo:+z.4f}, {est.hi:+z.4f}], MDE {est.mde:.4f}, "
            f"over {est.events:,} events in {est.sessions:,} sessions"
        )
        if v.status == "recommended":
            return (
                f"recommended: {v.challenger} ({changes_text(challenger.candidate)}) — {evidence}"
            )
        return (
            f"inert: keep the current policy — {v.reason} for the registered challenger "
            f"{v.challenger} ({changes_text(challenger.candidate)}): {evidence}"
        )

    def to_dict(self) -> dict[str, Any]:
        log = self.log
        return {
            "verdict": {
                "status": self.verdict.status,
                "challenger": self.verdict.challenger,
                "reason": self.verdict.reason,
                "line": self.line(),
            },
            "primary_metric": PRIMARY,
            "metrics": METRICS,
            "evaluated_at": self.at.isoformat(),
            "log": {
                "first": log.first,
                "last": log.last,
                "split_at": log.split_at,
                "events": log.events,
                "training_events": log.training_events,
                "heldout_events": log.heldout_events,
                "heldout_sessions": log.heldout_sessions,
                "heldout_with_context": log.ranked_events,
                "helpful": log.helpful,
                "harmful": log.harmful,
            },
            "settings": {
                "split": log.split,
                "k": log.k,
                "bootstrap": {"replicates": log.replicates, "seed": log.seed, "unit": "session"},
                "maturity": "held at its logged values",
            },
            "candidates": [
                {
                    "name": r.candidate.name,
                    "current": i == 0,
                    "registered_challenger": r.candidate.name == self.verdict.challenger,
                    "changes": r.candidate.changes,
                    "half_life_days": r.candidate.policy.half_life_days,
                    "harm_multiplier": r.candidate.policy.harm_multiplier,
                    "training_log_loss": r.training_log_loss,
                    "metrics": {m: e.to_dict() for m, e in r.metrics.items()},
                }
                for i, r in enumerate(self.rows)
            ],
        }

    def text(self) -> str:
        log = self.log
        out = [
            f"policy eval: {log.events:,} events, {log.span}; held out from "
            f"{(log.split_at or '')[:10]} ({1 - log.split:.0%} of the span): "
            f"{log.heldout_events:,} events in {log.heldout_sessions:,} sessions",
            "primary metric: held-out log-loss of a logistic link fitted on the training span."
            " Δ = improvement over the current policy,",
            f"95% interval from {log.replicates:,} session-bootstrap replicates (seed "
            f"{log.seed}); * = the registered challenger (best on the training span).",
            "",
        ]
        out.extend(table(self))
        out += ["", self.line()]
        return "\n".join(out)


def changes_text(c: Candidate) -> str:
    if not c.changes:
        return "no change"
    return ", ".join(f"{k} {_num(v)}" for k, v in c.changes.items())


def _num(v: Any) -> str:
    return f"{v:g}" if isinstance(v, float) else str(v)


def _cell(e: Estimate | None, width: int = 4) -> tuple[str, str]:
    if e is None or e.events == 0:
        return "—", ""
    value = f"{e.value:.{width}f}"
    if e.diff == 0 and e.lo == 0 and e.hi == 0:
        return value, "—"
    if e.lo != e.lo:
        return value, f"{e.diff:+z.{width}f}"
    return value, f"{e.diff:+z.{width}f} [{e.lo:+z.{width}f}, {e.hi:+z.{width}f}]"


def table_cells(report: EvalReport) -> tuple[list[str], list[list[str]]]:
    """The candidates table as text cells: (header, one row per candidate)."""
    k = report.log.k
    head = ["candidate", "half-life", "harm", "log-loss", "Δ [95% CI]", "MDE", "AUC",
            "Δ AUC [95% CI]", f"recall@{k}", f"Δ recall@{k} [95% CI]"]  # fmt: skip
    rows = []
    for i, r in enumerate(report.rows):
        p = r.candidate.policy
        name = r.candidate.name + (" *" if r.candidate.name == report.verdict.challenger else "")
        ll, dll = _cell(r.metrics.get("log_loss"))
        au, dau = _cell(r.metrics.get("auc"), 3)
        rk, drk = _cell(r.metrics.get("recall_at_k"), 3)
        primary = r.metrics.get("log_loss")
        mde = f"{primary.mde:.4f}" if primary and i and primary.mde == primary.mde else ""
        rows.append(
            [name, f"{p.half_life_days:g}", f"{p.harm_multiplier:g}", ll, dll, mde, au, dau,
             rk, drk]
        )  # fmt: skip
    return head, rows


def table(report: EvalReport) -> list[str]:
    head, body = table_cells(report)
    rows = [head, *body]
    widths = [max(len(row[j]) for row in rows) for j in range(len(head))]
    return ["  ".join(cell.ljust(widths[j]) for j, cell in enumerate(row)).rstrip() for row in rows]
