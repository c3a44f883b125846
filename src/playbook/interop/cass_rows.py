"""The rows a cass-memory import writes, one imported item at a time: a bullet, its
maturity entry, a feedback event, a deprecation decision, a block (what `cass_import`
decided to write: which ids, which events are new, which blocks are not there yet)."""

from __future__ import annotations

from datetime import datetime
from typing import TYPE_CHECKING, Any

from ..core.text import content_hash, normalize
from ..store import iso
from ..store.store import new_id
from .notes import Note

if TYPE_CHECKING:
    from ..store import PlaybookStore
    from .cass import ImportedBlock, ImportedBullet, ImportedEvent


def _stamp(t: datetime) -> str:
    """`store.iso` for the UTC datetimes the parser gives, four times faster: a large
    import formats a million timestamps."""
    if t.utcoffset() or t.year < 1000:
        return iso(t)
    return t.replace(tzinfo=None).isoformat(timespec="microseconds") + "Z"


def _state(b: ImportedBullet) -> str:
    """A cass-memory draft is live there (its active set is "not retired, not
    deprecated"), so it comes in active: what agents are shown. `playbook activate` is for
    drafts made here."""
    return "active" if b.state == "draft" else b.state


def _bullet_row(b: ImportedBullet, ids: dict[str, str], batch: str | None) -> dict[str, Any]:
    return {
        "id": ids[b.source_id],
        "content": b.content,
        "category": b.category,
        "tags": list(dict.fromkeys(t.strip() for t in b.tags if t.strip())),
        "scope": b.scope,
        "scope_key": b.scope_key,
        "type": b.type,
        "kind": b.kind,
        "source": "imported",
        "state": _state(b),
        "maturity": b.maturity,
        "pinned": b.pinned,
        "pinned_reason": b.pinned_reason if b.pinned else None,
        "half_life_days": b.half_life_days,
        "session_ref": b.session_ref,
        "byte_offset": None,
        "created_at": _stamp(b.created_at),
        "valid_from": _stamp(b.created_at),
        "valid_to": _stamp(b.valid_to) if b.valid_to else None,
        "content_hash": content_hash(b.content),
        "batch_id": batch,
    }


def _maturity_row(b: ImportedBullet, ids: dict[str, str], batch: str | None) -> dict[str, Any]:
    return {
        "id": None,
        "bullet_id": ids[b.source_id],
        "at": _stamp(b.created_at),
        "maturity": b.maturity,
        "batch_id": batch,
    }


def _identity(e: ImportedEvent, ids: dict[str, str]) -> tuple[Any, ...]:
    reason = e.reason if e.kind == "harmful" else None
    return (ids[e.source_id], e.kind, _stamp(e.at), reason, e.context, e.session_ref)


def _event_row(
    e: ImportedEvent, ids: dict[str, str], now: datetime, batch: str | None
) -> tuple[Any, ...]:
    """A feedback row in `EVENT_COLUMNS` order. Knowledge time is observation time (the
    event was appended in cass-memory when it happened), capped at now."""
    reason = e.reason if e.kind == "harmful" else None
    at = _stamp(e.at)
    recorded = at if e.at <= now else _stamp(now)
    return (ids[e.source_id], e.kind, at, recorded, e.weight, reason,
            e.context, e.session_ref, None, "agent", None, batch)  # fmt: skip


def _deprecations(
    new: list[ImportedBullet], ids: dict[str, str], now: datetime, actor: str, batch: str | None
) -> list[dict[str, Any]]:
    """A `deprecate` decision per imported bullet that cass-memory deprecated with a
    reason: the reason, and when and for what, as cass-memory recorded them."""
    rows = []
    for b in new:
        if b.deprecation_reason is None:
            continue
        detail: dict[str, Any] = {"source": "cass-memory"}
        if b.deprecated_at is not None:
            detail["deprecated_at"] = _stamp(b.deprecated_at)
        if b.replaced_by:
            detail["replaced_by"] = ids.get(b.replaced_by, b.replaced_by)
        rows.append(
            {
                "id": None,
                "at": _stamp(now),
                "batch_id": batch,
                "actor": actor,
                "action": "deprecate",
                "bullet_id": ids[b.source_id],
                "status": "applied",
                "reason": b.deprecation_reason,
                "detail": detail,
            }
        )
    return rows


def _block_rows(
    store: PlaybookStore,
    blocks: list[ImportedBlock],
    now: datetime,
    notes: list[Note],
    empty: bool,
) -> list[dict[str, Any]]:
    have = set() if empty else store.bulk.blocked_normalized()
    rows: list[dict[str, Any]] = []
    for blk in blocks:
        normalized = normalize(blk.pattern)
        if not normalized:
            notes.append(
                Note(
                    "blocked pattern",
                    f"{blk.pattern!r} has no words to match; not blocked",
                    "patterns without words to match not blocked",
                )
            )
            continue
        if normalized in have:
            continue
        have.add(normalized)
        rows.append(
            {
                "id": new_id("p"),
                "pattern": blk.pattern,
                "normalized": normalized,
                "reason": blk.reason,
                "actor": "human",
                "created_at": _stamp(blk.at or now),
                "active": True,
                "unblocked_at": None,
                "source": blk.source_id,  # not a column: for the decision log
            }
        )
    return rows
