"""One cass-memory bullet's feedback events (`feedbackEvents` and the legacy per-type lists)."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from .records import ImportedEvent
from .schema import EVENT_KEYS, HARMFUL_REASONS
from .values import Budget, Note, is_number, show, type_name

RawEvents = list[tuple[dict[Any, Any], str | None]]  # (mapping, kind implied by its list)


def collect_raw_events(raw: dict[Any, Any], note: Note, budget: Budget) -> RawEvents:
    """Event mappings with the kind implied by the list they came from (legacy lists)."""
    collected: RawEvents = []
    primary_keys: set[tuple[Any, ...]] = set()
    duplicates = 0
    legacy = raw.get("helpfulEvents") is not None or raw.get("harmfulEvents") is not None
    for key, implied in (
        ("feedbackEvents", None),
        ("helpfulEvents", "helpful"),
        ("harmfulEvents", "harmful"),
    ):
        items = raw.get(key)
        if items is None:
            continue
        if not isinstance(items, list):
            note(
                f"'{key}' is {type_name(items)}, not a list; no events read from it",
                f"'{key}' is not a list; no events read from it",
            )
            continue
        for i, ev in enumerate(items):
            budget.take()
            if not isinstance(ev, dict):
                note(
                    f"{key}[{i}] skipped, it is {type_name(ev)}, not a mapping",
                    f"{key} entries that are not mappings skipped",
                )
                continue
            if implied is None:
                if legacy:
                    primary_keys.add(_identity(ev, implied))
            elif _identity(ev, implied) in primary_keys:
                duplicates += 1  # the legacy list repeats an event already in feedbackEvents
                continue
            collected.append((ev, implied))
    if duplicates:
        note(
            f"{duplicates} legacy helpfulEvents/harmfulEvents entries repeat "
            "feedbackEvents; read once",
            "legacy helpfulEvents/harmfulEvents entries that repeat feedbackEvents read once",
        )
    return collected


def _identity(ev: dict[Any, Any], implied: str | None) -> tuple[Any, ...]:
    kind = ev.get("type", implied)
    return tuple(
        show(v) for v in (kind, ev.get("timestamp"), ev.get("sessionPath"), ev.get("reason"))
    )


def read_events(
    bid: str,
    raw_events: RawEvents,
    event_times: list[datetime | None],
    created: datetime,
    note: Note,
) -> list[ImportedEvent]:
    events: list[ImportedEvent] = []
    decayed = 0
    for n, ((ev, implied), at) in enumerate(zip(raw_events, event_times, strict=True)):
        label = f"feedback event {n + 1}"
        kind = ev.get("type", implied)
        if kind not in ("helpful", "harmful"):
            note(
                f"{label} skipped, type {show(kind)} is neither helpful nor harmful",
                "feedback events that are neither helpful nor harmful skipped",
            )
            continue
        for key in ev:
            if key not in EVENT_KEYS:
                text = f"field {show(key)} is not in cass-memory's schema; dropped"
                note(f"{label}: {text}", f"feedback event {text}")
        if at is None:
            shown = "missing" if ev.get("timestamp") is None else show(ev.get("timestamp"))
            note(
                f"{label}: timestamp {shown} is not a timestamp; used the bullet's createdAt",
                "feedback event timestamps that are not timestamps: the bullet's createdAt used",
            )
            at = created
        if "decayedValue" in ev:
            decayed += 1
        context = ev.get("context")
        if context is not None and not isinstance(context, str):
            note(f"{label}: context {show(context)} is not text; dropped", "contexts not text")
            context = None
        session = ev.get("sessionPath")
        if session is not None and not isinstance(session, str):
            note(
                f"{label}: sessionPath {show(session)} is not text; dropped",
                "sessionPaths not text",
            )
            session = None
        reason, context = _reason(kind, ev.get("reason"), context, label, note)
        events.append(ImportedEvent(bid, kind, at, 1.0, reason, context, session))
    if decayed:
        note(
            f"'decayedValue' dropped from {decayed} feedback event(s) "
            "(decay is derived at read time)",
            "'decayedValue' dropped (decay is derived at read time)",
        )
    return events


def _reason(
    kind: str, raw_reason: Any, context: str | None, label: str, note: Note
) -> tuple[str | None, str | None]:
    """A harmful event's reason (one of SPEC §3's), and the context with any text kept."""
    if raw_reason is None:
        return None, context
    if kind == "helpful":
        note(
            f"{label}: reason {show(raw_reason)} dropped (reasons are for harmful events)",
            "reasons on helpful events dropped",
        )
        return None, context
    if isinstance(raw_reason, str) and raw_reason in HARMFUL_REASONS:
        return raw_reason, context
    if not isinstance(raw_reason, str):
        note(
            f"{label}: reason {show(raw_reason)} is not text; imported as 'other'",
            "harm reasons that are not text imported as 'other'",
        )
        return "other", context
    kept = f"reason: {raw_reason}"
    note(
        f"{label}: reason {show(raw_reason)} is unknown; imported as 'other', text kept in context",
        "unknown harm reasons imported as 'other', text kept in context",
    )
    return "other", kept if not context else f"{kept}; {context}"


def check_counts(raw: dict[Any, Any], events: list[ImportedEvent], note: Note) -> None:
    for key, kind in (("helpfulCount", "helpful"), ("harmfulCount", "harmful")):
        if key not in raw or raw[key] is None:
            continue
        have = sum(1 for ev in events if ev.kind == kind)
        count = raw[key]
        if not is_number(count):
            note(
                f"{key} {show(count)} is not a number; ignored (counts are derived from events)",
                f"{key} not a number; ignored",
            )
        elif count != have:
            note(
                f"{key} is {show(count)} but {have} {kind} event(s) were imported; "
                "the events are kept and counts are derived from them",
                f"{key} disagrees with the events; the events are kept",
            )
