"""One cass-memory bullet, read field group by field group into an `ImportedBullet`.

Every problem inside a bullet is a note (the bullet is still imported, with a documented
fallback), except a bullet without a usable id or content, which is skipped with a note.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from ..notes import Notes
from .events import check_counts, collect_raw_events, read_events
from .records import ImportedBullet, ImportedEvent
from .schema import BULLET_KEYS, CASS_DEFAULT_HALF_LIFE_DAYS, EPOCH, MATURITIES, SCOPES, STATES
from .values import (
    Budget,
    Note,
    describe,
    fmt,
    is_number,
    member,
    opt_str,
    parse_time,
    show,
    string_list,
    type_name,
)

_TIME_KEYS = ("updatedAt", "promotedAt", "lastValidatedAt", "deprecatedAt")


class BulletReader:
    """Reads the bullets of one file in order; remembers the ids already used."""

    def __init__(self, notes: Notes, budget: Budget) -> None:
        self.notes = notes
        self.budget = budget
        self.seen_ids: set[str] = set()

    def read(
        self, index: int, raw: Any, meta_created: datetime | None
    ) -> tuple[ImportedBullet, list[ImportedEvent]] | None:
        """The bullet and its events, or None (skipped, with a note)."""
        self.budget.take()
        found = self._identity(index, raw)
        if found is None:
            return None
        bid, content = found
        self.seen_ids.add(bid)
        add = self.notes.add

        def note(text: str, kind: str | None = None) -> None:
            add(bid, text, kind)

        for key in raw:
            if key not in BULLET_KEYS:
                note(f"field {show(key)} is not in cass-memory's schema; dropped")
        category = raw.get("category")
        if not isinstance(category, str) or not category.strip():
            note(
                f"'category' is {describe(raw, 'category')}; imported as 'uncategorized'",
                "bullets without a category imported as 'uncategorized'",
            )
            category = "uncategorized"
        tags = self._tags(raw, note)
        scope, scope_key = _scope(raw, note)
        btype, kind, state, maturity, deprecated = _classify(raw, note)
        pinned, pinned_reason = _pin(raw, note)
        sessions = string_list(raw, "sourceSessions", note, self.budget)
        if len(sessions) > 1:
            note(
                f"{len(sessions) - 1} further source session(s) dropped; provenance keeps the "
                "first",
                "further source sessions dropped (provenance keeps the first)",
            )

        times = _times(raw, note)
        raw_events = collect_raw_events(raw, note, self.budget)
        event_times = [parse_time(ev.get("timestamp")) for ev, _ in raw_events]
        created = _created(raw, times, event_times, meta_created, note)
        valid_to = _retired_at(state, times, created, note)
        reason = opt_str(raw, "deprecationReason", note)
        deprecated_at = times["deprecatedAt"]
        if deprecated_at is not None and not deprecated and state != "retired":
            note(
                f"deprecatedAt {fmt(deprecated_at)} dropped (the bullet is not deprecated)",
                "deprecatedAt on bullets that are not deprecated dropped",
            )
        if reason is not None and not deprecated:
            note(
                f"deprecationReason {show(reason)} dropped (the bullet is not deprecated)",
                "deprecationReason on bullets that are not deprecated dropped",
            )
            reason = None
        self._dropped(raw, times, note)

        events = read_events(bid, raw_events, event_times, created, note)
        check_counts(raw, events, note)
        successor = raw.get("replacedBy")
        bullet = ImportedBullet(
            source_id=bid,
            content=content,
            category=category,
            tags=tags,
            scope=scope,
            scope_key=scope_key,
            type=btype,
            kind=kind,
            state=state,
            maturity=maturity,
            pinned=pinned,
            pinned_reason=pinned_reason,
            half_life_days=_half_life(raw, note),
            created_at=created,
            valid_to=valid_to,
            session_ref=sessions[0] if sessions else None,
            deprecation_reason=reason,
            deprecated_at=deprecated_at if deprecated else None,
            replaced_by=successor if isinstance(successor, str) else None,
        )
        return bullet, events

    # ------------------------------------------------------------------ field groups

    def _identity(self, index: int, raw: Any) -> tuple[str, str] | None:
        where = f"bullets[{index}]"
        if not isinstance(raw, dict):
            self.notes.add(
                where,
                f"skipped, it is {type_name(raw)}, not a mapping",
                "bullets that are not mappings skipped",
            )
            return None
        bid = raw.get("id")
        if isinstance(bid, int) and not isinstance(bid, bool):
            bid = str(bid)
        if not isinstance(bid, str) or not bid.strip():
            self.notes.add(where, "skipped, no string 'id'", "bullets without an id skipped")
            return None
        bid = bid.strip()
        if bid in self.seen_ids:
            self.notes.add(
                bid,
                f"skipped {where}, the id was already used by an earlier bullet",
                "bullets whose id was already used skipped",
            )
            return None
        content = raw.get("content")
        if not isinstance(content, str) or not content.strip():
            what = "missing" if "content" not in raw else f"{type_name(content)}, not text"
            if isinstance(content, str):
                what = "empty"
            self.notes.add(bid, f"skipped, 'content' is {what}", "bullets without content skipped")
            return None
        return bid, content

    def _tags(self, raw: dict[Any, Any], note: Note) -> list[str]:
        tags = [t.strip() for t in string_list(raw, "tags", note, self.budget) if t.strip()]
        unique = list(dict.fromkeys(tags))
        if len(unique) != len(tags):
            twice = sorted({t for t in tags if tags.count(t) > 1})
            note(
                f"tag(s) {', '.join(show(t) for t in twice)} written more than once; kept once",
                "tags written more than once on a bullet kept once",
            )
        return unique

    def _dropped(self, raw: dict[Any, Any], times: dict[str, datetime | None], note: Note) -> None:
        """Fields that have no home in Playbook, one note each."""
        if times["promotedAt"] is not None:
            note(
                "promotedAt dropped (the maturity history starts at createdAt)",
                "promotedAt dropped (the maturity history starts at createdAt)",
            )
        if times["lastValidatedAt"] is not None:
            note(
                "lastValidatedAt dropped (staleness is derived from feedback and creation)",
                "lastValidatedAt dropped (staleness is derived from feedback and creation)",
            )
        for key, why in (("reasoning", "no reasoning field"), ("searchPointer", "no pointer")):
            value = opt_str(raw, key, note)
            if value is not None:
                note(f"field '{key}' ({show(value)}) dropped; {why}", f"'{key}' dropped; {why}")
        agents = string_list(raw, "sourceAgents", note, self.budget)
        if agents:
            note(
                f"field 'sourceAgents' ({', '.join(agents[:5])}) dropped; provenance is per "
                "session",
                "field 'sourceAgents' dropped (provenance is per session)",
            )
        source = raw.get("source")
        if source is not None and source != "learned":
            note(
                f"source {show(source)} dropped; imported bullets are 'imported'",
                "sources other than 'learned' dropped; imported bullets are 'imported'",
            )
        if raw.get("embedding") is not None:
            note("field 'embedding' dropped (vectors are recomputed)")
        if raw.get("effectiveScore") is not None:
            note("field 'effectiveScore' dropped (scores are derived at read time)")


def _scope(raw: dict[Any, Any], note: Note) -> tuple[str, str | None]:
    scope = raw.get("scope", "global")
    if scope == "project":  # not in cass-memory's enum, but found in repositories' files
        note("scope 'project' read as 'workspace' (this project's rules)", "scope 'project'")
        scope = "workspace"
    if not member(scope, SCOPES):
        note(f"scope {show(scope)} is unknown; imported as 'global'", "unknown scopes -> global")
        scope = "global"
    scope_key = opt_str(raw, "scopeKey", note)
    workspace = opt_str(raw, "workspace", note)
    if scope == "global":
        if scope_key is not None:
            note(f"scopeKey {show(scope_key)} dropped (scope is global)", "scopeKey on global")
            scope_key = None
    elif scope_key is None and scope == "workspace" and workspace is not None:
        scope_key, workspace = workspace, None
    if workspace is not None:
        note(
            f"field 'workspace' ({show(workspace)}) dropped; Playbook scopes by scope/scope_key",
            "field 'workspace' dropped (Playbook scopes by scope/scope_key)",
        )
    return scope, scope_key


def _classify(raw: dict[Any, Any], note: Note) -> tuple[str, str, str, str, bool]:
    """type, kind, state, maturity, and whether cass-memory counts it as deprecated."""
    kind = raw.get("kind", "stack_pattern")
    if not isinstance(kind, str) or not kind.strip():
        note(f"kind {show(kind)} is not a label; imported as 'stack_pattern'", "kinds not labels")
        kind = "stack_pattern"
    btype = raw.get("type", "rule")
    if btype not in ("rule", "anti-pattern"):
        note(f"type {show(btype)} is unknown; imported as 'rule'", "unknown types -> rule")
        btype = "rule"
    # cass-memory has three spellings of "anti-pattern" and reads them with OR: playbook.ts
    # (exportToMarkdown) checks type/kind, commands/context.ts checks isNegative/kind.
    if kind == "anti_pattern" or raw.get("isNegative") is True:
        btype = "anti-pattern"
    state = raw.get("state", "draft")
    if not member(state, STATES):
        note(
            f"state {show(state)} is unknown; imported as 'draft' (cass-memory's default)",
            "unknown states -> draft",
        )
        state = "draft"
    maturity = raw.get("maturity", "candidate")
    if not member(maturity, MATURITIES):
        note(f"maturity {show(maturity)} is unknown; imported as 'candidate'", "bad maturities")
        maturity = "candidate"
    flag = raw.get("deprecated", False)
    if not isinstance(flag, bool):
        note(f"deprecated {show(flag)} is not true/false; ignored", "deprecated not true/false")
        flag = False
    if flag:
        maturity = "deprecated"
    return btype, kind, state, maturity, maturity == "deprecated"


def _pin(raw: dict[Any, Any], note: Note) -> tuple[bool, str | None]:
    pinned = raw.get("pinned", False)
    if not isinstance(pinned, bool):
        note(f"pinned {show(pinned)} is not true/false; imported as not pinned", "bad pinned")
        pinned = False
    reason = opt_str(raw, "pinnedReason", note)
    if reason is not None and not pinned:
        note("pinnedReason dropped (bullet is not pinned)")
        reason = None
    return pinned, reason


def _half_life(raw: dict[Any, Any], note: Note) -> float | None:
    hl = raw.get("confidenceDecayHalfLifeDays")
    if hl is None:
        return None
    if is_number(hl) and 0 < hl < float("inf"):
        return None if hl == CASS_DEFAULT_HALF_LIFE_DAYS else float(hl)
    note(
        f"confidenceDecayHalfLifeDays {show(hl)} is not a positive number; policy default used",
        "half-lives that are not positive numbers: policy default used",
    )
    return None


def _times(raw: dict[Any, Any], note: Note) -> dict[str, datetime | None]:
    times: dict[str, datetime | None] = {}
    for key in _TIME_KEYS:
        value = raw.get(key)
        t = None if value is None else parse_time(value)
        if value is not None and t is None:
            note(f"{key} {show(value)} is not a timestamp; ignored", f"{key} not a timestamp")
        times[key] = t
    return times


def _created(
    raw: dict[Any, Any],
    times: dict[str, datetime | None],
    event_times: list[datetime | None],
    meta_created: datetime | None,
    note: Note,
) -> datetime:
    created = parse_time(raw.get("createdAt"))
    if created is not None:
        return created
    others = [t for t in (*times.values(), *event_times) if t is not None]
    if others:
        created, source = min(others), "its earliest other timestamp"
    elif meta_created is not None:
        created, source = meta_created, "the playbook's metadata.createdAt"
    else:
        created, source = EPOCH, "1970-01-01T00:00:00Z"
    shown = "missing" if raw.get("createdAt") is None else show(raw.get("createdAt"))
    note(
        f"createdAt {shown} is not a timestamp; used {source}",
        "createdAt missing or not a timestamp; a fallback used",
    )
    return created


def _retired_at(
    state: str, times: dict[str, datetime | None], created: datetime, note: Note
) -> datetime | None:
    if state != "retired":
        return None
    valid_to = times["deprecatedAt"] or times["updatedAt"]
    if valid_to is None:
        note("retired, but no deprecatedAt or updatedAt; retirement time unknown")
        return None
    if times["deprecatedAt"] is None:
        note(
            "retired without deprecatedAt; retirement time taken from updatedAt",
            "retired without deprecatedAt; retirement time taken from updatedAt",
        )
    return max(valid_to, created)
