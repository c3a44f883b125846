"""A task outcome's report as the model reads it: the contract `apply_outcome` holds a
report to (`curation/outcomes.py` reads a plain one without it, as this model would)."""

from __future__ import annotations

from datetime import datetime

from pydantic import BaseModel, ConfigDict, Field, field_validator

from ..core.model import StorableText, invalid
from ..core.terms import OutcomeName


class OutcomeReport(BaseModel):
    model_config = ConfigDict(extra="forbid", defer_build=True)

    outcome: OutcomeName
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
