"""Every table of the playbook, with its columns and the key it is read in order of: what
`playbook copy` moves and `store.tables.append_rows` checks a caller's columns against."""

from __future__ import annotations

# table -> (its columns, the key it is read in order of), in the order they are written:
# each table after the ones it references. Every column of schema version 2.
TABLES: dict[str, tuple[tuple[str, ...], tuple[str, ...]]] = {
    "bullets": (
        ("seq", "id", "content", "category", "tags", "scope", "scope_key", "type", "kind",
         "source", "state", "maturity", "pinned", "pinned_reason", "half_life_days",
         "session_ref", "byte_offset", "created_at", "valid_from", "valid_to",
         "content_hash", "batch_id", "maturity_due", "rev"),
        ("seq",),
    ),
    "bullet_tokens": (("token", "seq"), ("token", "seq")),
    "vocab": (("token", "df"), ("token",)),
    "bullet_tags": (("tag", "seq"), ("tag", "seq")),
    "feedback": (
        ("id", "bullet_id", "kind", "at", "recorded_at", "weight", "reason", "context",
         "session_ref", "byte_offset", "actor", "receipt", "batch_id"),
        ("id",),
    ),
    "receipts": (("receipt", "recorded_at", "outcome", "batch_id", "seq"), ("seq",)),
    "evidence": (
        ("bullet_id", "half_life", "ref", "helpful", "harmful", "count", "last_at",
         "last_event_id"),
        ("bullet_id",),
    ),
    "evidence_days": (
        ("bullet_id", "day", "half_life", "ref", "helpful", "harmful", "count", "last_at",
         "last_event_id"),
        ("bullet_id", "day"),
    ),
    "edges": (("id", "kind", "src", "dst", "at", "batch_id"), ("id",)),
    "maturity_log": (("id", "bullet_id", "at", "maturity", "batch_id"), ("id",)),
    "cache_blob": (
        ("key", "embedder_id", "content_hash", "dims", "value", "created_at"), ("key",)
    ),
    "watermarks": (("session_ref", "byte_offset", "updated_at", "seq"), ("seq",)),
    "blocked_patterns": (
        ("id", "pattern", "normalized", "reason", "actor", "created_at", "active",
         "unblocked_at", "seq"),
        ("seq",),
    ),
    "proposals": (
        ("id", "delta", "session_ref", "byte_offset", "status", "origin", "created_at",
         "decided_at", "decided_by", "reason", "edited_delta", "result", "seq"),
        ("seq",),
    ),
    "conflicts": (
        ("id", "a", "b", "reason", "created_at", "status", "resolved_at", "resolution",
         "batch_id"),
        ("id",),
    ),
    "decisions": (
        ("id", "at", "batch_id", "actor", "action", "bullet_id", "status", "reason", "detail"),
        ("id",),
    ),
    "meta": (("key", "value"), ("key",)),
}  # fmt: skip

PAGE = 5000  # rows read and written at a time
