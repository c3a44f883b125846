"""The store's records: timestamps as stored, rows as models, and the small result types.

Pure code (no SQL): every aggregate module of the store turns its rows into these.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from datetime import UTC, datetime, timedelta
from typing import TYPE_CHECKING, Any, NamedTuple

from ..core.record import NEW, FrozenRecord
from ..core.scoring import days
from .checks import is_time, is_weight, note_malformed, parsed_time

if TYPE_CHECKING:
    from ..core.model import Bullet, FeedbackEvent

ISO = "%Y-%m-%dT%H:%M:%S.%fZ"
EPOCH = datetime(1970, 1, 1, tzinfo=UTC)  # what a malformed stored time reads as
BULLET_COLUMNS = (
    "id, content, category, tags, scope, scope_key, type, kind, source, state, maturity, "
    "pinned, pinned_reason, half_life_days, session_ref, byte_offset, created_at, valid_from, "
    "valid_to, content_hash"
)
EVENT_COLUMNS = (
    "id, bullet_id, kind, at, recorded_at, weight, reason, context, session_ref, byte_offset, "
    "actor, receipt"
)


def where_equal(**columns: Any) -> tuple[str, list[Any]]:
    """(" WHERE a = ? AND b = ?", [a, b]) for the columns whose value is not None."""
    given = {c: v for c, v in columns.items() if v is not None}
    if not given:
        return "", []
    return " WHERE " + " AND ".join(f"{c} = ?" for c in given), list(given.values())


def iso(t: datetime) -> str:
    if t.tzinfo is None:
        raise ValueError("timestamps must be timezone-aware")
    return t.astimezone(UTC).strftime(ISO)


def parse_iso(s: str) -> datetime:
    t = datetime.fromisoformat(s)
    return t if t.tzinfo else t.replace(tzinfo=UTC)


def stored_time(text: object, table: str = "", key: object = None) -> datetime | None:
    """A timestamp read back from the database, or None for one that is not a time of the
    years a row may name (written before the database checked them: `store/checks.py`);
    such a row is noted for the command to report (`checks.note_malformed`)."""
    if not is_time(text):
        note_malformed(table, key)
        return None
    return parse_iso(text)


def event_point(
    key: object, at: object, weight: object, recorded_at: object
) -> tuple[float, float] | None:
    """(observation time in epoch days, weight) of a stored feedback event, or None for a
    malformed one (noted, and counted as no event by every reader alike, the database's
    own fold included: `store/postgres/scoring_sql.py`)."""
    if is_weight(weight):
        t = parsed_time(at)  # (`recorded_at` is most often the same text: checked once)
        if t is not None and (recorded_at == at or is_time(recorded_at)):
            return days(t), float(weight)
    note_malformed("feedback", key)
    return None


def stored_json(text: object, table: str, key: object, default: Any) -> Any:
    """JSON read back from the database; `default` (and a note) for text that is not (or
    for a value that is no text at all, which `json.loads` refuses with a TypeError)."""
    if isinstance(text, (str, bytes, bytearray)):
        try:
            return json.loads(text)
        except ValueError:
            pass
    note_malformed(table, key)
    return default


def bullet_of(row: Sequence[Any]) -> Bullet:
    """A row of BULLET_COLUMNS as a Bullet, without re-validating what the schema checked."""
    from ..core.model import Bullet, Provenance  # lazy: pydantic: mark, recall, every hook

    return Bullet.model_construct(
        id=row[0],
        content=row[1],
        category=row[2],
        tags=stored_json(row[3], "bullets", row[0], []),
        scope=row[4],
        scope_key=row[5],
        type=row[6],
        kind=row[7],
        source=row[8],
        state=row[9],
        maturity=row[10],
        pinned=bool(row[11]),
        pinned_reason=row[12],
        half_life_days=row[13],
        provenance=Provenance.model_construct(session_ref=row[14], byte_offset=row[15]),
        created_at=stored_time(row[16], "bullets", row[0]) or EPOCH,
        valid_from=stored_time(row[17], "bullets", row[0]) or EPOCH,
        valid_to=(stored_time(row[18], "bullets", row[0]) or EPOCH) if row[18] else None,
        content_hash=row[19],
    )


class BulletRecord(NamedTuple):
    """A bullet's stored row (BULLET_COLUMNS, tags as JSON text, times as stored): what a
    reader that needs no `Bullet` model gets (`store.bullet_records`)."""

    id: str
    content: str
    category: str
    tags: str
    scope: str
    scope_key: str | None
    type: str
    kind: str
    source: str
    state: str
    maturity: str
    pinned: int
    pinned_reason: str | None
    half_life_days: float | None
    session_ref: str | None
    byte_offset: int | None
    created_at: str
    valid_from: str
    valid_to: str | None
    content_hash: str


def bullet_json(row: Sequence[Any]) -> dict[str, Any]:
    """What `bullet_of(row).model_dump(mode="json")` gives, without pydantic: a one-shot
    `playbook recall --json` prints its bullets without building their models."""
    return {
        "id": row[0],
        "content": row[1],
        "category": row[2],
        "tags": stored_json(row[3], "bullets", row[0], []),
        "scope": row[4],
        "scope_key": row[5],
        "type": row[6],
        "kind": row[7],
        "source": row[8],
        "state": row[9],
        "maturity": row[10],
        "pinned": bool(row[11]),
        "pinned_reason": row[12],
        "half_life_days": row[13],
        "provenance": {"session_ref": row[14], "byte_offset": row[15]},
        "created_at": json_time(row[16], row[0]),
        "valid_from": json_time(row[17], row[0]),
        "valid_to": json_time(row[18], row[0]) if row[18] else None,
        "content_hash": row[19],
    }


def json_time(stored: str, key: object = None) -> str:
    """A stored timestamp as pydantic writes a datetime in JSON (ISO 8601, "Z" for UTC,
    no fraction when the microseconds are 0); the epoch for a malformed one (noted)."""
    t = stored_time(stored, "bullets", key) or EPOCH
    text = t.isoformat()
    return text[:-6] + "Z" if t.utcoffset() == _ZERO and text.endswith("+00:00") else text


_ZERO = timedelta(0)


def event_of(row: Sequence[Any]) -> FeedbackEvent:
    from ..core.model import FeedbackEvent, Provenance  # lazy: pydantic: mark, recall, every hook

    return FeedbackEvent.model_construct(
        id=row[0],
        bullet_id=row[1],
        kind=row[2],
        at=parse_iso(row[3]),
        recorded_at=parse_iso(row[4]),
        weight=row[5],
        reason=row[6],
        context=row[7],
        provenance=Provenance.model_construct(session_ref=row[8], byte_offset=row[9]),
        actor=row[10],
        receipt=row[11],
    )


class BulletState(NamedTuple):
    """A bullet's lifecycle facts, without its text (what the maturity pass reads)."""

    state: str
    maturity: str
    pinned: bool
    type: str
    maturity_due: float | None = None  # when the maturity pass must look at it again


class Evidence(FrozenRecord):
    """A bullet's decayed evidence (its own events plus its supersedes-ancestors')."""

    helpful: float
    harmful: float
    last_activity: float  # epoch days of the latest event or of creation
    pending_until: float | None  # epoch days of an event still in the future

    def __init__(
        self,
        helpful: float,
        harmful: float,
        last_activity: float,
        pending_until: float | None = None,
    ) -> None:
        object.__setattr__(self, "helpful", helpful)
        object.__setattr__(self, "harmful", harmful)
        object.__setattr__(self, "last_activity", last_activity)
        object.__setattr__(self, "pending_until", pending_until)


class BlockedPattern(FrozenRecord):
    id: str
    pattern: str
    reason: str
    actor: str
    created_at: datetime
    active: bool
    unblocked_at: datetime | None

    def __init__(
        self,
        id: str,
        pattern: str,
        reason: str,
        actor: str,
        created_at: datetime,
        active: bool,
        unblocked_at: datetime | None,
    ) -> None:
        object.__setattr__(self, "id", id)
        object.__setattr__(self, "pattern", pattern)
        object.__setattr__(self, "reason", reason)
        object.__setattr__(self, "actor", actor)
        object.__setattr__(self, "created_at", created_at)
        object.__setattr__(self, "active", active)
        object.__setattr__(self, "unblocked_at", unblocked_at)


class Conflict(FrozenRecord):
    id: int
    a: str
    b: str
    reason: str
    created_at: datetime
    status: str
    resolution: str | None

    def __init__(
        self,
        id: int,
        a: str,
        b: str,
        reason: str,
        created_at: datetime,
        status: str,
        resolution: str | None,
    ) -> None:
        object.__setattr__(self, "id", id)
        object.__setattr__(self, "a", a)
        object.__setattr__(self, "b", b)
        object.__setattr__(self, "reason", reason)
        object.__setattr__(self, "created_at", created_at)
        object.__setattr__(self, "status", status)
        object.__setattr__(self, "resolution", resolution)


class Lineage(FrozenRecord):
    predecessors: list[tuple[str, str]]  # (kind, bullet id) this bullet came from
    successors: list[tuple[str, str]]  # (kind, bullet id) that came from this bullet

    def __init__(
        self, predecessors: list[tuple[str, str]], successors: list[tuple[str, str]]
    ) -> None:
        object.__setattr__(self, "predecessors", predecessors)
        object.__setattr__(self, "successors", successors)


class Decision(FrozenRecord):
    id: int
    at: datetime
    batch_id: str | None
    actor: str
    action: str
    bullet_id: str | None
    status: str
    reason: str | None
    detail: dict[str, Any]

    def __init__(
        self,
        id: int,
        at: datetime,
        batch_id: str | None,
        actor: str,
        action: str,
        bullet_id: str | None,
        status: str,
        reason: str | None,
        detail: dict[str, Any] = NEW,
    ) -> None:
        object.__setattr__(self, "id", id)
        object.__setattr__(self, "at", at)
        object.__setattr__(self, "batch_id", batch_id)
        object.__setattr__(self, "actor", actor)
        object.__setattr__(self, "action", action)
        object.__setattr__(self, "bullet_id", bullet_id)
        object.__setattr__(self, "status", status)
        object.__setattr__(self, "reason", reason)
        object.__setattr__(self, "detail", {} if detail is NEW else detail)
