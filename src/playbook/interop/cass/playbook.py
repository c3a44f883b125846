"""A whole cass-memory ``playbook.yaml``: top-level fields, bullets, lineage, patterns."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from ..formats import DEFAULT_MAX_BYTES, too_large
from .bullets import BulletReader
from .records import CassImport, CassImportError, ImportedBlock, ImportedEdge, ImportedEvent
from .schema import PATTERN_KEYS, REGEX_HINT, SUPPORTED_SCHEMA_VERSION, TOP_LEVEL_KEYS
from .values import Budget, is_number, parse_time, show, type_name
from .yamlstream import OnProgress, stream_document

MAX_ITEMS = 500_000  # the walk budget's floor; it grows with the file (see `Budget`)


def parse_cass_playbook(
    data: bytes | str,
    *,
    max_bytes: int = DEFAULT_MAX_BYTES,
    progress: OnProgress | None = None,
) -> CassImport:
    """Parse a cass-memory ``playbook.yaml`` (schema_version 2) into import records.

    Raises ``CassImportError`` (and nothing else) when the input cannot be read as a
    cass-memory playbook at all; problems inside single bullets, events or patterns are
    notes (``CassImport.notes``) and the rest is still imported. The file is read once,
    and each bullet is mapped as soon as the reader has it.
    """
    if not isinstance(data, bytes | bytearray | memoryview | str):
        raise CassImportError(f"expected bytes or str, got {type_name(data)}")
    if isinstance(data, bytearray | memoryview):
        data = bytes(data)
    if len(data) > max_bytes:  # before anything is parsed
        raise CassImportError(too_large(len(data), max_bytes))
    out = CassImport()
    budget = Budget(max(MAX_ITEMS, len(data) // 2))
    reader = BulletReader(out.notes, budget)
    meta: dict[str, datetime | None] = {}
    replaced_by: list[tuple[str, Any]] = []
    events: list[ImportedEvent] = []

    deferred: list[tuple[int, int, Any]] = []  # (position, index, raw)

    def on_bullet(index: int, raw: Any, top: dict[Any, Any]) -> None:
        if "created" not in meta and "metadata" in top:
            meta["created"] = _meta_created(top)
        no_time = isinstance(raw, dict) and parse_time(raw.get("createdAt")) is None
        if "created" not in meta and no_time:
            # It may need metadata.createdAt, further down this file: read it then.
            deferred.append((len(out.bullets), index, raw))
            return
        read(index, raw, None)

    def read(index: int, raw: Any, position: int | None) -> None:
        parsed = reader.read(index, raw, meta.get("created"))
        if parsed is None:
            return
        bullet, bullet_events = parsed
        if position is None:
            out.bullets.append(bullet)
        else:
            out.bullets.insert(position, bullet)
        events.extend(bullet_events)
        if raw.get("replacedBy") is not None:
            replaced_by.append((bullet.source_id, raw["replacedBy"]))

    if not data.strip():
        raise CassImportError("the file is empty")
    stream = stream_document(data, "bullets", on_bullet, progress=progress)
    doc = stream.doc
    if doc is None:
        raise CassImportError("the file is empty")
    if not isinstance(doc, dict):
        raise CassImportError(f"not a cass-memory playbook: top level is {type_name(doc)}")

    if deferred:
        meta["created"] = _meta_created(doc)
        for position, index, raw in reversed(deferred):
            read(index, raw, position)
    top_notes = out.notes.items
    out.notes.items = []
    _top_level(doc, out)
    out.notes.items.extend(top_notes)  # playbook-level notes first, then the bullets'

    # Chronological order (stable), so ids assigned on insert follow observation time.
    events.sort(key=lambda ev: ev.at)
    out.events = events
    out.edges = _edges(replaced_by, reader.seen_ids, out)
    out.blocks = _blocks(doc.get("deprecatedPatterns"), out, budget)
    return out


def _meta_created(top: dict[Any, Any]) -> datetime | None:
    metadata = top.get("metadata")
    return parse_time(metadata.get("createdAt")) if isinstance(metadata, dict) else None


def _top_level(doc: dict[Any, Any], out: CassImport) -> None:
    note = out.notes.add
    for key in doc:
        if key not in TOP_LEVEL_KEYS:
            note("playbook", f"field {show(key)} is not in cass-memory's schema; dropped")
    version = doc.get("schema_version")
    if "schema_version" not in doc:
        note("playbook", "no schema_version; read as 2 (cass-memory's default)")
    elif not is_number(version) or version != SUPPORTED_SCHEMA_VERSION:
        raise CassImportError(
            f"unsupported cass-memory schema_version {show(version)} "
            f"(only {SUPPORTED_SCHEMA_VERSION} is known)"
        )
    bullets = doc.get("bullets")
    if not isinstance(bullets, list):
        if "bullets" not in doc:
            raise CassImportError("not a cass-memory playbook: no 'bullets' list")
        raise CassImportError(
            f"not a cass-memory playbook: 'bullets' is {type_name(bullets)}, not a list"
        )
    dropped = [k for k in ("name", "description", "metadata") if k in doc]
    if dropped:
        names = ", ".join(f"'{k}'" for k in dropped)
        note("playbook", f"{names} not imported (Playbook has one store, no titles)")


def _edges(
    replaced_by: list[tuple[str, Any]], known: set[str], out: CassImport
) -> list[ImportedEdge]:
    note = out.notes.add
    successor: dict[str, str] = {}
    for original, succ in replaced_by:
        if not isinstance(succ, str) or not succ.strip():
            note(original, f"replacedBy {show(succ)} is not a bullet id; no lineage edge")
        elif succ.strip() == original:
            note(original, "replacedBy points at itself; no lineage edge")
        elif succ.strip() not in known:
            note(
                original,
                f"replacedBy {show(succ)} is not in this playbook; no lineage edge",
                "replacedBy names a bullet that is not in this playbook; no lineage edge",
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
            note(original, f"replacedBy {succ} forms a cycle; no lineage edge", "replacedBy cycles")
            continue
        edges.append(ImportedEdge("supersedes", succ, original))
    return edges


def _blocks(raw: Any, out: CassImport, budget: Budget) -> list[ImportedBlock]:
    if raw is None:
        return []
    note = out.notes.add
    if not isinstance(raw, list):
        note("deprecatedPatterns", f"is {type_name(raw)}, not a list; no blocks")
        return []
    blocks: list[ImportedBlock] = []
    for i, item in enumerate(raw):
        budget.take()
        where = f"deprecatedPatterns[{i}]"
        if not isinstance(item, dict):
            note(where, f"skipped, it is {type_name(item)}, not a mapping", "patterns skipped")
            continue
        pattern = item.get("pattern")
        if not isinstance(pattern, str) or not pattern.strip():
            what = "missing" if pattern is None else "empty" if isinstance(pattern, str) else None
            what = what or f"{type_name(pattern)}, not text"
            note(where, f"skipped, 'pattern' is {what}", "patterns without a pattern skipped")
            continue
        for key in item:
            if key not in PATTERN_KEYS:
                note(where, f"field {show(key)} is not in cass-memory's schema")
        reason = item.get("reason")
        if not isinstance(reason, str) or not reason.strip():
            note(where, "no reason given; recorded as 'imported from cass-memory'")
            reason = "imported from cass-memory"
        replacement = item.get("replacement")
        if isinstance(replacement, str) and replacement.strip():
            reason = f"{reason} (use instead: {replacement})"
        elif replacement is not None:
            note(where, f"replacement {show(replacement)} is not text; dropped")
        at = parse_time(item.get("deprecatedAt"))
        if at is None and item.get("deprecatedAt") is not None:
            note(where, f"deprecatedAt {show(item.get('deprecatedAt'))} is not a timestamp")
        if REGEX_HINT.search(pattern):
            note(
                where,
                f"{show(pattern)} looks like a regular expression; cass-memory matched "
                "it as a regex, Playbook matches blocked patterns as text",
                "patterns that look like regular expressions are matched as text",
            )
        blocks.append(ImportedBlock(pattern=pattern, reason=reason, at=at))
    return blocks
