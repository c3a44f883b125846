"""Read a cass-memory ``playbook.yaml`` into Playbook's neutral import records.

This module is a pure parser: bytes or text in, plain dataclasses out. It touches no
database, reads no clock and never writes; the store decides later how to persist what
it returns. Anything in the file that has no home in Playbook is reported, one plain line
each, in ``CassImport.unmapped`` instead of being dropped silently.

What cass-memory writes (the schema, as found)
==============================================

Source: ``Dicklesworthstone/cass_memory_system``:

* ``src/types.ts`` at 95d5b7beb46a0a676db15b26572879d3ecf8d870 (the zod schemas);
* ``src/playbook.ts`` at 26560da0a8575b3e8dd5e25b70c62232ff816592 (``createEmptyPlaybook``,
  ``loadPlaybook``, ``deprecateBullet``, ``getActiveBullets``, ``exportToMarkdown``);
* ``src/commands/context.ts`` at 178af69c79b9c9f1595e0d1e78f0a9857b3429fb (how
  ``deprecatedPatterns`` and ``isNegative`` are used).

Later versions seen in forks of the same repository (e.g. the ``types.ts`` that adds
``BulletSourceEnum``) add a bullet ``source`` field and drop the legacy per-type event lists.

* File: YAML written by the npm ``yaml`` package (YAML 1.2), read back with ``yaml.parse`` and
  validated by ``PlaybookSchema``.
* ``PlaybookSchema``: ``schema_version`` (number, default 2; ``createEmptyPlaybook`` writes 2),
  ``name`` (default "playbook"), ``description``, ``metadata`` {``createdAt``,
  ``lastReflection?``, ``totalReflections``, ``totalSessionsProcessed``},
  ``deprecatedPatterns`` (list, default []), ``bullets`` (list, default []).
* ``PlaybookBulletSchema``: ``id``, ``scope`` (global|workspace|language|framework|task,
  default global), ``scopeKey?``, ``workspace?``, ``category``, ``content``, ``source``
  (learned|community|manual|custom, newer versions only), ``searchPointer?``, ``type``
  (rule|anti-pattern, default rule), ``isNegative`` (default false), ``kind``
  (project_convention|stack_pattern|workflow_rule|anti_pattern, default stack_pattern),
  ``state`` (draft|active|retired, default draft), ``maturity``
  (candidate|established|proven|deprecated, default candidate), ``promotedAt?``,
  ``helpfulCount``/``harmfulCount`` (default 0), ``feedbackEvents`` (list),
  ``helpfulEvents``/``harmfulEvents`` (legacy lists, older versions only),
  ``lastValidatedAt?``, ``confidenceDecayHalfLifeDays`` (default 90), ``createdAt``,
  ``updatedAt``, ``pinned`` (default false), ``pinnedReason?``, ``deprecated`` (default
  false), ``replacedBy?``, ``deprecationReason?``, ``sourceSessions`` and ``sourceAgents``
  (lists), ``reasoning?``, ``tags`` (list), ``embedding?`` (numbers), ``effectiveScore?``,
  ``deprecatedAt?``.
* ``FeedbackEventSchema``: ``type`` (helpful|harmful), ``timestamp`` (ISO string),
  ``sessionPath?``, ``reason?`` (caused_bug|wasted_time|contradicted_requirements|
  wrong_context|outdated|other), ``context?``, ``decayedValue?``.
* ``DeprecatedPatternSchema``: ``pattern``, ``deprecatedAt``, ``reason``, ``replacement?``.
  cass-memory matches ``pattern`` as a case-insensitive regular expression against the task
  text and session history (``context.ts``); Playbook matches blocked patterns as text
  against new bullet content, so regex-looking patterns are flagged in ``unmapped``.
* ``deprecateBullet`` sets ``deprecated``, ``deprecatedAt``, ``deprecationReason``,
  ``replacedBy``, ``state: retired`` and ``maturity: deprecated`` together; a bullet counts as
  inactive if any of ``state == retired``, ``maturity == deprecated`` or ``deprecated`` holds.
  A bullet is an anti-pattern when ``type == "anti-pattern"`` or ``kind == "anti_pattern"``
  (``exportToMarkdown``) or ``isNegative`` is true (``context.ts`` splits rules from pitfalls
  on ``isNegative || kind == "anti_pattern"``); the import treats any of the three as one.

Mapping decisions (beyond the obvious renames)
==============================================

* Feedback is imported as events (weight 1.0); ``helpfulCount``/``harmfulCount`` are derived
  in Playbook, so a count that disagrees with the events is reported, not imported.
  ``decayedValue``, ``effectiveScore`` and ``embedding`` are derived and dropped with a note.
* Timestamps become aware UTC datetimes (naive ones are read as UTC). PyYAML reads unquoted
  ISO timestamps as ``datetime`` objects itself (YAML 1.1), so both forms are accepted. An
  unparseable event time falls back to the bullet's creation time; an unparseable
  ``createdAt`` falls back to the earliest other time known for the bullet, then to
  ``metadata.createdAt``, then to the Unix epoch, always with a note.
* ``valid_to`` is set only for retired bullets (``deprecatedAt``, else ``updatedAt``): in
  Playbook a closed interval means "retired", and a deprecated bullet that is not retired must
  stay visible to recall as a deprecation warning.
* ``confidenceDecayHalfLifeDays`` equal to cass-memory's default (90) becomes ``None`` (follow
  Playbook's policy): cass-memory writes the default on every bullet and never reads it, so it
  carries no user intent. Other positive values are kept.
* ``replacedBy`` becomes a ``supersedes`` edge only when the successor is in the file and the
  chain does not loop back on itself.
* Missing ``bullets`` is an error even though cass-memory defaults it to []: every file
  cass-memory writes has the key, so a mapping without it is not a cass-memory playbook.

Safety: input is capped at ``MAX_INPUT_BYTES`` and parsed with ``yaml.safe_load`` only. The
walk over the parsed document has a fixed depth and a global item budget
(``MAX_ITEMS``), so aliases that make one node appear many times ("billion laughs") cannot
make the walk blow up; self-referencing aliases are never recursed into.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, date, datetime
from typing import Any

import yaml

from ..errors import InvalidImportError

__all__ = [
    "MAX_INPUT_BYTES",
    "MAX_ITEMS",
    "CassImport",
    "CassImportError",
    "ImportedBlock",
    "ImportedBullet",
    "ImportedEdge",
    "ImportedEvent",
    "parse_cass_playbook",
]

MAX_INPUT_BYTES = 16 * 1024 * 1024
MAX_ITEMS = 500_000
SUPPORTED_SCHEMA_VERSION = 2
CASS_DEFAULT_HALF_LIFE_DAYS = 90

SCOPES = frozenset({"global", "workspace", "language", "framework", "task"})
STATES = frozenset({"draft", "active", "retired"})
MATURITIES = frozenset({"candidate", "established", "proven", "deprecated"})
HARMFUL_REASONS = frozenset(
    {"caused_bug", "wasted_time", "contradicted_requirements", "wrong_context", "outdated", "other"}
)
EPOCH = datetime(1970, 1, 1, tzinfo=UTC)

_TOP_LEVEL_KEYS = frozenset(
    {"schema_version", "name", "description", "metadata", "deprecatedPatterns", "bullets"}
)
# Keys this module reads or reports deliberately; anything else is "not in the schema".
_BULLET_KEYS = frozenset(
    {
        "id", "scope", "scopeKey", "workspace", "category", "content", "source",
        "searchPointer", "type", "isNegative", "kind", "state", "maturity", "promotedAt",
        "helpfulCount", "harmfulCount", "feedbackEvents", "helpfulEvents", "harmfulEvents",
        "lastValidatedAt", "confidenceDecayHalfLifeDays", "createdAt", "updatedAt", "pinned",
        "pinnedReason", "deprecated", "replacedBy", "deprecationReason", "sourceSessions",
        "sourceAgents", "reasoning", "tags", "embedding", "effectiveScore", "deprecatedAt",
    }
)  # fmt: skip
_EVENT_KEYS = frozenset({"type", "timestamp", "sessionPath", "reason", "context", "decayedValue"})
_PATTERN_KEYS = frozenset({"pattern", "deprecatedAt", "reason", "replacement"})
_REGEX_HINT = re.compile(r"[\\^$|*+?()\[\]{}]|\.\*")


@dataclass
class ImportedBullet:
    """One cass-memory bullet, in Playbook's field names (SPEC §3)."""

    source_id: str
    content: str
    category: str
    tags: list[str]
    scope: str
    scope_key: str | None
    type: str  # "rule" | "anti-pattern"
    kind: str
    state: str
    maturity: str
    pinned: bool
    pinned_reason: str | None
    half_life_days: float | None
    created_at: datetime
    valid_to: datetime | None  # retirement time, when the bullet is retired
    session_ref: str | None  # first source session, if any


@dataclass
class ImportedEvent:
    """One feedback event; ``kind`` is helpful or harmful, ``reason`` only for harmful."""

    source_id: str
    kind: str
    at: datetime
    weight: float
    reason: str | None
    context: str | None
    session_ref: str | None


@dataclass
class ImportedEdge:
    """A lineage edge between two imported bullets (cass-memory's ``replacedBy``)."""

    kind: str  # "supersedes"
    successor_source_id: str
    original_source_id: str


@dataclass
class ImportedBlock:
    """A blocked pattern (cass-memory's ``deprecatedPatterns`` entry)."""

    pattern: str
    reason: str
    at: datetime | None


@dataclass
class CassImport:
    """Everything read from one playbook.yaml, plus what could not be mapped."""

    bullets: list[ImportedBullet] = field(default_factory=list)
    events: list[ImportedEvent] = field(default_factory=list)
    edges: list[ImportedEdge] = field(default_factory=list)
    blocks: list[ImportedBlock] = field(default_factory=list)
    unmapped: list[str] = field(default_factory=list)


class CassImportError(InvalidImportError):
    """The input is not a cass-memory playbook we can read; the message is one line."""


_Note = Callable[[str], None]


class _Budget:
    """Counts items visited so an alias-amplified document cannot make the walk explode."""

    def __init__(self, limit: int) -> None:
        self.left = limit

    def take(self, n: int = 1) -> None:
        self.left -= n
        if self.left < 0:
            raise CassImportError(
                f"playbook has more than {MAX_ITEMS} items once aliases are expanded; refusing it"
            )


def parse_cass_playbook(data: bytes | str) -> CassImport:
    """Parse a cass-memory ``playbook.yaml`` (schema_version 2) into import records.

    Raises ``CassImportError`` (and nothing else) when the input cannot be read as a
    cass-memory playbook at all; problems inside single bullets, events or patterns are
    reported in ``CassImport.unmapped`` and the rest is still imported.
    """
    doc = _load(data)
    out = CassImport()
    budget = _Budget(MAX_ITEMS)

    for key in doc:
        if key not in _TOP_LEVEL_KEYS:
            out.unmapped.append(
                f"playbook: field {_show(key)} is not in cass-memory's schema; dropped"
            )

    version = doc.get("schema_version")
    if "schema_version" not in doc:
        out.unmapped.append("playbook: no schema_version; read as 2 (cass-memory's default)")
    elif not _is_number(version) or version != SUPPORTED_SCHEMA_VERSION:
        raise CassImportError(
            f"unsupported cass-memory schema_version {_show(version)} "
            f"(only {SUPPORTED_SCHEMA_VERSION} is known)"
        )

    raw_bullets = doc.get("bullets")
    if not isinstance(raw_bullets, list):
        if "bullets" not in doc:
            raise CassImportError("not a cass-memory playbook: no 'bullets' list")
        raise CassImportError(
            f"not a cass-memory playbook: 'bullets' is {_type_name(raw_bullets)}, not a list"
        )

    metadata = doc.get("metadata")
    meta_created: datetime | None = None
    if isinstance(metadata, dict):
        meta_created = _parse_time(metadata.get("createdAt"))
    dropped_top = [k for k in ("name", "description", "metadata") if k in doc]
    if dropped_top:
        names = ", ".join(f"'{k}'" for k in dropped_top)
        out.unmapped.append(f"playbook: {names} not imported (Playbook has one store, no titles)")

    seen_ids: set[str] = set()
    replaced_by: list[tuple[str, Any]] = []
    events: list[tuple[datetime, int, ImportedEvent]] = []
    for index, raw in enumerate(raw_bullets):
        budget.take()
        parsed = _parse_bullet(index, raw, seen_ids, meta_created, out.unmapped, budget)
        if parsed is None:
            continue
        bullet, bullet_events, successor = parsed
        seen_ids.add(bullet.source_id)
        out.bullets.append(bullet)
        events.extend((ev.at, len(events), ev) for ev in bullet_events)
        if successor is not None:
            replaced_by.append((bullet.source_id, successor))

    # Chronological order, so ids assigned on insert follow observation time.
    out.events = [ev for _, _, ev in sorted(events, key=lambda t: (t[0], t[1]))]
    out.edges = _edges(replaced_by, seen_ids, out.unmapped)
    out.blocks = _blocks(doc.get("deprecatedPatterns"), "deprecatedPatterns" in doc, out, budget)
    return out


# --------------------------------------------------------------------------- loading


def _load(data: bytes | str) -> dict[Any, Any]:
    if isinstance(data, bytes | bytearray | memoryview):
        raw = bytes(data)
        if len(raw) > MAX_INPUT_BYTES:
            raise CassImportError(f"playbook is larger than {MAX_INPUT_BYTES} bytes; refusing it")
        try:
            text = raw.decode("utf-8-sig")
        except UnicodeDecodeError as exc:
            raise CassImportError(f"playbook is not UTF-8 text (byte {exc.start})") from None
    elif isinstance(data, str):
        text = data
        if len(text) > MAX_INPUT_BYTES:
            raise CassImportError(f"playbook is larger than {MAX_INPUT_BYTES} characters")
    else:
        raise CassImportError(f"expected bytes or str, got {_type_name(data)}")

    try:
        doc = yaml.safe_load(text)
    except yaml.YAMLError as exc:
        first = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        raise CassImportError(f"playbook is not valid YAML: {first}") from None
    except RecursionError:
        raise CassImportError("playbook YAML is nested too deeply") from None
    except (ValueError, TypeError, OverflowError, MemoryError) as exc:
        # SafeConstructor raises these for values it recognises but cannot build,
        # e.g. the timestamp 2024-13-45 or an out-of-range date.
        raise CassImportError(f"playbook YAML has a value that cannot be read: {exc}") from None

    if doc is None:
        raise CassImportError("playbook is empty")
    if not isinstance(doc, dict):
        raise CassImportError(f"not a cass-memory playbook: top level is {_type_name(doc)}")
    return doc


# --------------------------------------------------------------------------- bullets


def _parse_bullet(
    index: int,
    raw: Any,
    seen_ids: set[str],
    meta_created: datetime | None,
    notes: list[str],
    budget: _Budget,
) -> tuple[ImportedBullet, list[ImportedEvent], Any] | None:
    where = f"bullets[{index}]"
    if not isinstance(raw, dict):
        notes.append(f"{where}: skipped, it is {_type_name(raw)}, not a mapping")
        return None

    bid = raw.get("id")
    if isinstance(bid, int) and not isinstance(bid, bool):
        bid = str(bid)
    if not isinstance(bid, str) or not bid.strip():
        notes.append(f"{where}: skipped, no string 'id'")
        return None
    bid = bid.strip()
    if bid in seen_ids:
        notes.append(f"{bid}: skipped {where}, the id was already used by an earlier bullet")
        return None

    content = raw.get("content")
    if not isinstance(content, str) or not content.strip():
        what = "missing" if "content" not in raw else f"{_type_name(content)}, not text"
        if isinstance(content, str):
            what = "empty"
        notes.append(f"{bid}: skipped, 'content' is {what}")
        return None

    def note(msg: str) -> None:
        notes.append(f"{bid}: {msg}")

    for key in raw:
        if key not in _BULLET_KEYS:
            note(f"field {_show(key)} is not in cass-memory's schema; dropped")

    category = raw.get("category")
    if not isinstance(category, str) or not category.strip():
        note(f"'category' is {_describe(raw, 'category')}; imported as 'uncategorized'")
        category = "uncategorized"

    tags = _string_list(raw, "tags", note, budget)

    scope = raw.get("scope", "global")
    if not _member(scope, SCOPES):
        note(f"scope {_show(scope)} is unknown; imported as 'global'")
        scope = "global"
    scope_key = _opt_str(raw, "scopeKey", note)
    workspace = _opt_str(raw, "workspace", note)
    if scope == "global":
        if scope_key is not None:
            note(f"scopeKey {_show(scope_key)} dropped (scope is global)")
            scope_key = None
    elif scope_key is None and scope == "workspace" and workspace is not None:
        scope_key, workspace = workspace, None
    if workspace is not None:
        note(f"field 'workspace' ({_show(workspace)}) dropped; Playbook scopes by scope/scope_key")

    kind = raw.get("kind", "stack_pattern")
    if not isinstance(kind, str) or not kind.strip():
        note(f"kind {_show(kind)} is not a label; imported as 'stack_pattern'")
        kind = "stack_pattern"

    btype = raw.get("type", "rule")
    if btype not in ("rule", "anti-pattern"):
        note(f"type {_show(btype)} is unknown; imported as 'rule'")
        btype = "rule"
    # cass-memory has three spellings of "anti-pattern" and reads them with OR: playbook.ts
    # (exportToMarkdown) checks type/kind, commands/context.ts checks isNegative/kind.
    if kind == "anti_pattern" or raw.get("isNegative") is True:
        btype = "anti-pattern"

    state = raw.get("state", "draft")
    if not _member(state, STATES):
        note(f"state {_show(state)} is unknown; imported as 'draft' (cass-memory's default)")
        state = "draft"

    maturity = raw.get("maturity", "candidate")
    if not _member(maturity, MATURITIES):
        note(f"maturity {_show(maturity)} is unknown; imported as 'candidate'")
        maturity = "candidate"
    deprecated_flag = raw.get("deprecated", False)
    if not isinstance(deprecated_flag, bool):
        note(f"deprecated {_show(deprecated_flag)} is not true/false; ignored")
        deprecated_flag = False
    if deprecated_flag:
        maturity = "deprecated"

    pinned = raw.get("pinned", False)
    if not isinstance(pinned, bool):
        note(f"pinned {_show(pinned)} is not true/false; imported as not pinned")
        pinned = False
    pinned_reason = _opt_str(raw, "pinnedReason", note)
    if pinned_reason is not None and not pinned:
        note("pinnedReason dropped (bullet is not pinned)")
        pinned_reason = None

    half_life: float | None = None
    hl = raw.get("confidenceDecayHalfLifeDays")
    if hl is not None:
        if _is_number(hl) and 0 < hl < float("inf"):
            half_life = None if hl == CASS_DEFAULT_HALF_LIFE_DAYS else float(hl)
        else:
            note(
                f"confidenceDecayHalfLifeDays {_show(hl)} is not a positive number; "
                "policy default used"
            )

    sessions = _string_list(raw, "sourceSessions", note, budget)
    session_ref = sessions[0] if sessions else None
    if len(sessions) > 1:
        note(f"{len(sessions) - 1} further source session(s) dropped; provenance keeps the first")

    # Times: parse what we can first, so fallbacks have something to fall back to.
    other_times: list[datetime] = []
    times: dict[str, datetime | None] = {}
    for key in ("updatedAt", "promotedAt", "lastValidatedAt", "deprecatedAt"):
        if key in raw and raw[key] is not None:
            t = _parse_time(raw[key])
            if t is None:
                note(f"{key} {_show(raw[key])} is not a timestamp; ignored")
            else:
                other_times.append(t)
            times[key] = t
        else:
            times[key] = None

    raw_events = _collect_raw_events(raw, note, budget)
    event_times = [_parse_time(ev.get("timestamp")) for ev, _ in raw_events]
    other_times.extend(t for t in event_times if t is not None)

    created = _parse_time(raw.get("createdAt"))
    if created is None:
        if other_times:
            created, source = min(other_times), "its earliest other timestamp"
        elif meta_created is not None:
            created, source = meta_created, "the playbook's metadata.createdAt"
        else:
            created, source = EPOCH, "1970-01-01T00:00:00Z"
        shown = "missing" if raw.get("createdAt") is None else _show(raw.get("createdAt"))
        note(f"createdAt {shown} is not a timestamp; used {source}")

    valid_to: datetime | None = None
    if state == "retired":
        valid_to = times["deprecatedAt"] or times["updatedAt"]
        if valid_to is None:
            note("retired, but no deprecatedAt or updatedAt; retirement time unknown")
        elif times["deprecatedAt"] is None:
            note("retired without deprecatedAt; retirement time taken from updatedAt")
        if valid_to is not None and valid_to < created:
            valid_to = created
    elif times["deprecatedAt"] is not None:
        note(f"deprecatedAt {_fmt(times['deprecatedAt'])} kept only as this note (not retired)")
    if times["promotedAt"] is not None:
        note("promotedAt dropped (maturity changes are recomputed from feedback)")
    if times["lastValidatedAt"] is not None:
        note("lastValidatedAt dropped (staleness is derived from feedback and creation)")

    for key, why in (
        ("deprecationReason", "no deprecation-reason field"),
        ("reasoning", "no reasoning field"),
        ("searchPointer", "no search-pointer field"),
    ):
        value = _opt_str(raw, key, note)
        if value is not None:
            note(f"field '{key}' ({_show(value)}) dropped; {why}")
    agents = _string_list(raw, "sourceAgents", note, budget)
    if agents:
        note(f"field 'sourceAgents' ({', '.join(agents[:5])}) dropped; provenance is per session")
    source = raw.get("source")
    if source is not None and source != "learned":
        note(f"source {_show(source)} dropped; imported bullets are 'imported'")
    if raw.get("embedding") is not None:
        note("field 'embedding' dropped (vectors are recomputed)")
    if raw.get("effectiveScore") is not None:
        note("field 'effectiveScore' dropped (scores are derived at read time)")

    events = _events(bid, raw_events, event_times, created, note)
    _check_counts(raw, events, note)

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
        half_life_days=half_life,
        created_at=created,
        valid_to=valid_to,
        session_ref=session_ref,
    )
    return bullet, events, raw.get("replacedBy")


# --------------------------------------------------------------------------- events


def _collect_raw_events(
    raw: dict[Any, Any], note: _Note, budget: _Budget
) -> list[tuple[dict[Any, Any], str | None]]:
    """Event mappings with the kind implied by the list they came from (legacy lists)."""
    collected: list[tuple[dict[Any, Any], str | None]] = []
    primary_keys: set[tuple[Any, ...]] = set()
    duplicates = 0
    for key, implied in (
        ("feedbackEvents", None),
        ("helpfulEvents", "helpful"),
        ("harmfulEvents", "harmful"),
    ):
        items = raw.get(key)
        if items is None:
            continue
        if not isinstance(items, list):
            note(f"'{key}' is {_type_name(items)}, not a list; no events read from it")
            continue
        for i, ev in enumerate(items):
            budget.take()
            if not isinstance(ev, dict):
                note(f"{key}[{i}] skipped, it is {_type_name(ev)}, not a mapping")
                continue
            ident = _event_identity(ev, implied)
            if implied is None:
                primary_keys.add(ident)
            elif ident in primary_keys:
                duplicates += 1  # the legacy list repeats an event already in feedbackEvents
                continue
            collected.append((ev, implied))
    if duplicates:
        note(
            f"{duplicates} legacy helpfulEvents/harmfulEvents entries repeat "
            "feedbackEvents; read once"
        )
    return collected


def _event_identity(ev: dict[Any, Any], implied: str | None) -> tuple[Any, ...]:
    kind = ev.get("type", implied)
    return tuple(
        _show(v) for v in (kind, ev.get("timestamp"), ev.get("sessionPath"), ev.get("reason"))
    )


def _events(
    bid: str,
    raw_events: list[tuple[dict[Any, Any], str | None]],
    event_times: list[datetime | None],
    created: datetime,
    note: _Note,
) -> list[ImportedEvent]:
    events: list[ImportedEvent] = []
    decayed = 0
    for n, ((ev, implied), at) in enumerate(zip(raw_events, event_times, strict=True)):
        label = f"feedback event {n + 1}"
        kind = ev.get("type", implied)
        if kind not in ("helpful", "harmful"):
            note(f"{label} skipped, type {_show(kind)} is neither helpful nor harmful")
            continue
        for key in ev:
            if key not in _EVENT_KEYS:
                note(f"{label}: field {_show(key)} is not in cass-memory's schema; dropped")
        if at is None:
            shown = "missing" if ev.get("timestamp") is None else _show(ev.get("timestamp"))
            note(f"{label}: timestamp {shown} is not a timestamp; used the bullet's createdAt")
            at = created
        if "decayedValue" in ev:
            decayed += 1
        context = ev.get("context")
        if context is not None and not isinstance(context, str):
            note(f"{label}: context {_show(context)} is not text; dropped")
            context = None
        session = ev.get("sessionPath")
        if session is not None and not isinstance(session, str):
            note(f"{label}: sessionPath {_show(session)} is not text; dropped")
            session = None

        reason: str | None = None
        raw_reason = ev.get("reason")
        if raw_reason is not None:
            if kind == "helpful":
                note(
                    f"{label}: reason {_show(raw_reason)} dropped (reasons are for harmful events)"
                )
            elif isinstance(raw_reason, str) and raw_reason in HARMFUL_REASONS:
                reason = raw_reason
            else:
                reason = "other"
                kept = f"reason: {raw_reason}" if isinstance(raw_reason, str) else None
                if kept is None:
                    note(f"{label}: reason {_show(raw_reason)} is not text; imported as 'other'")
                else:
                    context = kept if not context else f"{kept}; {context}"
                    note(
                        f"{label}: reason {_show(raw_reason)} is unknown; "
                        "imported as 'other', text kept in context"
                    )

        events.append(
            ImportedEvent(
                source_id=bid,
                kind=kind,
                at=at,
                weight=1.0,
                reason=reason,
                context=context,
                session_ref=session,
            )
        )
    if decayed:
        note(
            f"'decayedValue' dropped from {decayed} feedback event(s) "
            "(decay is derived at read time)"
        )
    return events


def _check_counts(raw: dict[Any, Any], events: list[ImportedEvent], note: _Note) -> None:
    for key, kind in (("helpfulCount", "helpful"), ("harmfulCount", "harmful")):
        if key not in raw or raw[key] is None:
            continue
        have = sum(1 for ev in events if ev.kind == kind)
        count = raw[key]
        if not _is_number(count):
            note(f"{key} {_show(count)} is not a number; ignored (counts are derived from events)")
        elif count != have:
            note(
                f"{key} is {_show(count)} but {have} {kind} event(s) were imported; "
                "the events are kept and counts are derived from them"
            )


# --------------------------------------------------------------------------- edges, blocks


def _edges(
    replaced_by: list[tuple[str, Any]], known: set[str], notes: list[str]
) -> list[ImportedEdge]:
    successor: dict[str, str] = {}
    for original, succ in replaced_by:
        if not isinstance(succ, str) or not succ.strip():
            notes.append(
                f"{original}: replacedBy {_show(succ)} is not a bullet id; no lineage edge"
            )
        elif succ.strip() == original:
            notes.append(f"{original}: replacedBy points at itself; no lineage edge")
        elif succ.strip() not in known:
            notes.append(
                f"{original}: replacedBy {_show(succ)} is not in this playbook; no lineage edge"
            )
        else:
            successor[original] = succ.strip()

    in_cycle: set[str] = set()
    for start in successor:
        seen = {start}
        node = successor.get(start)
        while node is not None and node not in seen:
            seen.add(node)
            node = successor.get(node)
        if node == start:
            in_cycle.add(start)
    edges: list[ImportedEdge] = []
    for original, succ in successor.items():
        if original in in_cycle:
            notes.append(f"{original}: replacedBy {succ} forms a cycle; no lineage edge")
            continue
        edges.append(
            ImportedEdge("supersedes", successor_source_id=succ, original_source_id=original)
        )
    return edges


def _blocks(raw: Any, present: bool, out: CassImport, budget: _Budget) -> list[ImportedBlock]:
    if raw is None:
        return []
    if not isinstance(raw, list):
        out.unmapped.append(f"deprecatedPatterns is {_type_name(raw)}, not a list; no blocks")
        return []
    blocks: list[ImportedBlock] = []
    for i, item in enumerate(raw):
        budget.take()
        where = f"deprecatedPatterns[{i}]"
        if not isinstance(item, dict):
            out.unmapped.append(f"{where}: skipped, it is {_type_name(item)}, not a mapping")
            continue
        pattern = item.get("pattern")
        if not isinstance(pattern, str) or not pattern.strip():
            out.unmapped.append(f"{where}: skipped, 'pattern' is {_describe(item, 'pattern')}")
            continue
        for key in item:
            if key not in _PATTERN_KEYS:
                out.unmapped.append(f"{where}: field {_show(key)} is not in cass-memory's schema")
        reason = item.get("reason")
        if not isinstance(reason, str) or not reason.strip():
            out.unmapped.append(
                f"{where}: no reason given; recorded as 'imported from cass-memory'"
            )
            reason = "imported from cass-memory"
        replacement = item.get("replacement")
        if isinstance(replacement, str) and replacement.strip():
            reason = f"{reason} (use instead: {replacement})"
        elif replacement is not None:
            out.unmapped.append(f"{where}: replacement {_show(replacement)} is not text; dropped")
        at = _parse_time(item.get("deprecatedAt"))
        if at is None and item.get("deprecatedAt") is not None:
            out.unmapped.append(
                f"{where}: deprecatedAt {_show(item.get('deprecatedAt'))} is not a timestamp"
            )
        if _REGEX_HINT.search(pattern):
            out.unmapped.append(
                f"{where}: {_show(pattern)} looks like a regular expression; cass-memory matched "
                "it as a regex, Playbook matches blocked patterns as text"
            )
        blocks.append(ImportedBlock(pattern=pattern, reason=reason, at=at))
    return blocks


# --------------------------------------------------------------------------- small helpers


def _parse_time(value: Any) -> datetime | None:
    """Aware UTC datetime from an ISO string, a YAML timestamp or a YAML date; else None."""
    try:
        if isinstance(value, datetime):
            dt = value
        elif isinstance(value, date):
            dt = datetime(value.year, value.month, value.day)
        elif isinstance(value, str) and 0 < len(value) <= 64:
            dt = datetime.fromisoformat(value.strip())
        else:
            return None
        if dt.tzinfo is None or dt.utcoffset() is None:
            return dt.replace(tzinfo=UTC)
        return dt.astimezone(UTC)
    except (ValueError, OverflowError, TypeError):
        return None


def _string_list(raw: dict[Any, Any], key: str, note: _Note, budget: _Budget) -> list[str]:
    value = raw.get(key)
    if value is None:
        return []
    if not isinstance(value, list):
        note(f"'{key}' is {_type_name(value)}, not a list; dropped")
        return []
    budget.take(len(value))
    kept = [v for v in value if isinstance(v, str) and v.strip()]
    if len(kept) != len(value):
        note(f"{len(value) - len(kept)} entr(ies) of '{key}' are not text; dropped")
    return kept


def _opt_str(raw: dict[Any, Any], key: str, note: _Note) -> str | None:
    value = raw.get(key)
    if value is None:
        return None
    if not isinstance(value, str):
        note(f"'{key}' is {_type_name(value)}, not text; dropped")
        return None
    return value if value.strip() else None


def _member(value: Any, allowed: frozenset[str]) -> bool:
    """``value in allowed`` that is safe for unhashable YAML values (lists, mappings)."""
    return isinstance(value, str) and value in allowed


def _is_number(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool)


def _type_name(value: Any) -> str:
    names = {dict: "a mapping", list: "a list", str: "text", bool: "a boolean", type(None): "null"}
    for kind, name in names.items():
        if isinstance(value, kind):
            return name
    if isinstance(value, int | float):
        return "a number"
    return f"a {type(value).__name__}"


def _describe(raw: dict[Any, Any], key: str) -> str:
    if key not in raw or raw[key] is None:
        return "missing"
    value = raw[key]
    return "empty" if isinstance(value, str) else f"{_type_name(value)}, not text"


def _show(value: Any, limit: int = 60) -> str:
    """A short, single-line rendering of a value for a human note."""
    if isinstance(value, str):
        text = value
    elif isinstance(value, dict | list):
        text = f"<{_type_name(value)}>"
    elif isinstance(value, datetime):
        text = _fmt(value)
    else:
        text = str(value)
    text = " ".join(text.split())
    if len(text) > limit:
        text = text[: limit - 1] + "…"
    return f"'{text}'" if isinstance(value, str) else text


def _fmt(value: datetime | None) -> str:
    return "none" if value is None else value.isoformat()
