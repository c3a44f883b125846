"""Playbook's own export format (JSON or YAML): the whole database's facts, ids kept.

A snapshot holds every fact table (SPEC §3): bullets with every field, the full feedback log
(observation and knowledge time, weight, reason, context, provenance, actor, receipt), the
`supersedes`/`inverts` edges, the maturity history, blocked patterns (inactive ones too),
outcome receipts, the review queue, conflict flags, the decision log and the session
watermarks. Derived data is left out and rebuilt on import: the recall index, the evidence
cache, embeddings.

Exporting is a pure read and deterministic: the same database gives the same bytes (there is
no "exported at" stamp), so exports diff cleanly and a restored copy exports identically.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from datetime import datetime
from typing import TYPE_CHECKING, Annotated, Any, Literal

from pydantic import (
    AfterValidator,
    BaseModel,
    ConfigDict,
    Field,
    ValidationError,
)

from ..errors import InvalidImportError
from ..inert import dumps, inert
from ..model import (
    ActorName,
    BulletTypeName,
    FeedbackKindName,
    HarmReasonName,
    MaturityName,
    ScopeName,
    SourceName,
    StateName,
)
from ..store import iso, parse_iso
from ..store.interchange import ORDER, read_table
from ..store.schema import MEMORY_LATEST

if TYPE_CHECKING:
    from ..store import PlaybookStore

FORMAT = "playbook-export"
VERSION = 1
MAX_INPUT_BYTES = 512 * 1024 * 1024

# Sections of the document, in order, and the table each comes from.
SECTIONS: dict[str, str] = {
    "bullets": "bullets",
    "feedback": "feedback",
    "edges": "edges",
    "maturity_log": "maturity_log",
    "blocked_patterns": "blocked_patterns",
    "receipts": "receipts",
    "proposals": "proposals",
    "conflicts": "conflicts",
    "decisions": "decisions",
    "watermarks": "watermarks",
}
assert tuple(SECTIONS.values()) == ORDER

_PROVENANCE_TABLES = {"bullets", "feedback", "proposals"}


class SnapshotError(InvalidImportError):
    """The input is not a Playbook export we can read; the message is one line."""


# --------------------------------------------------------------------------- export


def _out_row(table: str, row: dict[str, Any]) -> dict[str, Any]:
    """A table row in document shape: provenance nested as in the Python models."""
    if table not in _PROVENANCE_TABLES:
        return row
    out: dict[str, Any] = {}
    for key, value in row.items():
        if key == "session_ref":
            out["provenance"] = {"session_ref": value, "byte_offset": row["byte_offset"]}
        elif key != "byte_offset":
            out[key] = value
    return out


def export_snapshot(store: PlaybookStore) -> dict[str, Any]:
    """The database's facts as one plain document (see the module docstring)."""
    doc: dict[str, Any] = {
        "format": FORMAT,
        "version": VERSION,
        "schema": {"memory": MEMORY_LATEST},
    }
    for section, table in SECTIONS.items():
        doc[section] = [_out_row(table, r) for r in read_table(store, table)]
    return doc


def counts(doc: dict[str, Any] | Snapshot) -> dict[str, int]:
    if isinstance(doc, Snapshot):
        return {s: len(getattr(doc, s)) for s in SECTIONS}
    return {s: len(doc.get(s, [])) for s in SECTIONS}


def to_json(doc: dict[str, Any]) -> str:
    """Indented JSON; C0/C1 and bidi controls escaped so a terminal shows them as text."""
    return dumps(doc, indent=2) + "\n"


def to_yaml(doc: dict[str, Any]) -> str:
    import yaml

    base = getattr(yaml, "CSafeDumper", yaml.SafeDumper)

    class _Dumper(base):  # type: ignore[misc,valid-type]
        def ignore_aliases(self, data: Any) -> bool:  # no anchors: plain, diffable text
            return True

    return yaml.dump(
        doc, Dumper=_Dumper, sort_keys=False, allow_unicode=True, default_flow_style=False
    )


# --------------------------------------------------------------------------- validation


def _stamp(value: str) -> str:
    """A timestamp in the store's canonical form (naive ones are read as UTC)."""
    try:
        return iso(parse_iso(value))
    except (ValueError, TypeError):
        raise ValueError(f"not an ISO 8601 timestamp: {value!r}") from None


Stamp = Annotated[str, AfterValidator(_stamp)]


class _Row(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=False, allow_inf_nan=False)


class ProvenanceRow(_Row):
    session_ref: str | None = None
    byte_offset: int | None = Field(default=None, ge=0)


class BulletRow(_Row):
    id: str = Field(min_length=1)
    content: str
    category: str = "general"
    tags: list[str] = Field(default_factory=list)
    scope: ScopeName = "global"
    scope_key: str | None = None
    type: BulletTypeName = "rule"
    kind: str = "workflow_rule"
    source: SourceName = "learned"
    state: StateName = "active"
    maturity: MaturityName = "candidate"
    pinned: bool = False
    pinned_reason: str | None = None
    half_life_days: float | None = Field(default=None, gt=0)
    provenance: ProvenanceRow = Field(default_factory=ProvenanceRow)
    created_at: Stamp
    valid_from: Stamp | None = None  # defaults to created_at
    valid_to: Stamp | None = None
    content_hash: str | None = None  # derived: recomputed on import
    batch_id: str | None = None


class FeedbackRow(_Row):
    id: int = Field(ge=1)
    bullet_id: str
    kind: FeedbackKindName
    at: Stamp
    recorded_at: Stamp
    weight: float = Field(default=1.0, ge=0)
    reason: HarmReasonName | None = None
    context: str | None = None
    provenance: ProvenanceRow = Field(default_factory=ProvenanceRow)
    actor: ActorName = "agent"
    receipt: str | None = None
    batch_id: str | None = None


class EdgeRow(_Row):
    id: int = Field(ge=1)
    kind: Literal["supersedes", "inverts"]
    src: str
    dst: str
    at: Stamp
    batch_id: str | None = None


class MaturityRow(_Row):
    id: int = Field(ge=1)
    bullet_id: str
    at: Stamp
    maturity: MaturityName
    batch_id: str | None = None


class BlockRow(_Row):
    id: str = Field(min_length=1)
    pattern: str
    normalized: str | None = None  # derived: recomputed on import
    reason: str
    actor: ActorName = "human"
    created_at: Stamp
    active: bool = True
    unblocked_at: Stamp | None = None


class ReceiptRow(_Row):
    receipt: str
    recorded_at: Stamp
    outcome: str
    batch_id: str | None = None


class ProposalRow(_Row):
    id: str = Field(min_length=1)
    delta: dict[str, Any]
    provenance: ProvenanceRow = Field(default_factory=ProvenanceRow)
    status: Literal["pending", "approved", "rejected"] = "pending"
    origin: str = "reflection"
    created_at: Stamp
    decided_at: Stamp | None = None
    decided_by: str | None = None
    reason: str | None = None
    edited_delta: dict[str, Any] | None = None
    result: dict[str, Any] | None = None


class ConflictRow(_Row):
    id: int = Field(ge=1)
    a: str
    b: str
    reason: str
    created_at: Stamp
    status: Literal["open", "resolved"] = "open"
    resolved_at: Stamp | None = None
    resolution: str | None = None
    batch_id: str | None = None


class DecisionRow(_Row):
    id: int = Field(ge=1)
    at: Stamp
    batch_id: str | None = None
    actor: ActorName
    action: str
    bullet_id: str | None = None
    status: str
    reason: str | None = None
    detail: dict[str, Any] = Field(default_factory=dict)


class WatermarkRow(_Row):
    session_ref: str
    byte_offset: int = Field(ge=0)
    updated_at: Stamp


class Snapshot(_Row):
    """A validated export document."""

    format: Literal["playbook-export"]
    version: int
    schema_: dict[str, int] = Field(default_factory=dict, alias="schema")
    bullets: list[BulletRow] = Field(default_factory=list)
    feedback: list[FeedbackRow] = Field(default_factory=list)
    edges: list[EdgeRow] = Field(default_factory=list)
    maturity_log: list[MaturityRow] = Field(default_factory=list)
    blocked_patterns: list[BlockRow] = Field(default_factory=list)
    receipts: list[ReceiptRow] = Field(default_factory=list)
    proposals: list[ProposalRow] = Field(default_factory=list)
    conflicts: list[ConflictRow] = Field(default_factory=list)
    decisions: list[DecisionRow] = Field(default_factory=list)
    watermarks: list[WatermarkRow] = Field(default_factory=list)

    def rows(self, section: str) -> Iterator[dict[str, Any]]:
        """One section as table rows (provenance flattened, derived columns filled)."""
        from ..text import content_hash, normalize

        for item in getattr(self, section):
            row = item.model_dump(by_alias=False)
            prov = row.pop("provenance", None)
            if prov is not None:
                row["session_ref"] = prov["session_ref"]
                row["byte_offset"] = prov["byte_offset"]
            if section == "bullets":
                row["valid_from"] = row["valid_from"] or row["created_at"]
                row["content_hash"] = content_hash(row["content"])
                row["tags"] = list(dict.fromkeys(t.strip() for t in row["tags"] if t.strip()))
            elif section == "blocked_patterns":
                row["normalized"] = normalize(row["pattern"])
            yield row


def _first_error(exc: ValidationError) -> str:
    err = exc.errors(include_url=False)[0]
    loc = "".join(f"[{p}]" if isinstance(p, int) else f".{p}" for p in err["loc"]).lstrip(".")
    msg = str(err["msg"])
    if msg.startswith("Value error, "):
        msg = msg[len("Value error, ") :]
    more = len(exc.errors()) - 1
    tail = f" (and {more} more problem{'s' * (more > 1)})" if more else ""
    # A field name is the file's text: keep the message on one line whatever it holds.
    return inert(f"{loc or 'document'}: {msg}{tail}", one_line=True)


def _check_references(snap: Snapshot) -> None:
    def unique(section: str, key: Callable[[Any], Any]) -> None:
        seen: set[Any] = set()
        for i, item in enumerate(getattr(snap, section)):
            k = key(item)
            if k in seen:
                raise SnapshotError(f"{section}[{i}]: duplicate id {k!r}")
            seen.add(k)

    unique("bullets", lambda b: b.id)
    for section in ("feedback", "edges", "maturity_log", "conflicts", "decisions"):
        unique(section, lambda r: r.id)
    unique("blocked_patterns", lambda b: b.id)
    unique("proposals", lambda p: p.id)
    unique("receipts", lambda r: r.receipt)
    unique("watermarks", lambda w: w.session_ref)
    ids = {b.id for b in snap.bullets}

    def known(section: str, field: str) -> None:
        for i, item in enumerate(getattr(snap, section)):
            value = getattr(item, field)
            if value is not None and value not in ids:
                raise SnapshotError(f"{section}[{i}].{field}: no bullet with id {value!r}")

    known("feedback", "bullet_id")
    known("edges", "src")
    known("edges", "dst")
    known("maturity_log", "bullet_id")
    known("conflicts", "a")
    known("conflicts", "b")


def _reject_aliases(doc: Any) -> None:
    """Refuse YAML that shares one node in several places (anchors and aliases): our
    exports never do, and expanding them is how a small file becomes a huge one."""
    seen: set[int] = set()
    stack = [doc]
    while stack:
        node = stack.pop()
        if isinstance(node, dict | list):
            if id(node) in seen:
                raise SnapshotError("YAML anchors and aliases are not allowed in an export")
            seen.add(id(node))
            stack.extend(node.values() if isinstance(node, dict) else node)


def decode(data: bytes, fmt: str) -> Any:
    """Bytes to a plain document (`fmt` "json" or "yaml"), as a SnapshotError if unreadable."""
    if len(data) > MAX_INPUT_BYTES:
        raise SnapshotError(f"file is larger than {MAX_INPUT_BYTES} bytes; refusing it")
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise SnapshotError(f"not UTF-8 text (byte {exc.start})") from None
    if fmt == "json":
        try:
            return json.loads(text)
        except json.JSONDecodeError as exc:
            raise SnapshotError(f"not valid JSON ({exc.msg} at line {exc.lineno})") from None
        except RecursionError:
            raise SnapshotError("JSON is nested too deeply") from None
    import yaml

    loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
    try:
        doc = yaml.load(text, Loader=loader)
    except yaml.YAMLError as exc:
        first = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        raise SnapshotError(f"not valid YAML: {first}") from None
    except RecursionError:
        raise SnapshotError("YAML is nested too deeply") from None
    except (ValueError, TypeError, OverflowError) as exc:
        raise SnapshotError(f"YAML has a value that cannot be read: {exc}") from None
    _reject_aliases(doc)
    return doc


def _plain(value: Any) -> Any:
    """YAML 1.1 reads unquoted timestamps as datetimes; the model wants their text."""
    if isinstance(value, datetime):
        return value.isoformat()
    if isinstance(value, dict):
        return {k: _plain(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_plain(v) for v in value]
    return value


def is_snapshot(doc: Any) -> bool:
    return isinstance(doc, dict) and doc.get("format") == FORMAT


def validate(doc: Any) -> Snapshot:
    """A decoded document as a Snapshot, or SnapshotError naming the first problem."""
    if not isinstance(doc, dict):
        raise SnapshotError(f"not a Playbook export: top level is {type(doc).__name__}")
    if doc.get("format") != FORMAT:
        raise SnapshotError(f"not a Playbook export: 'format' is not {FORMAT!r}")
    version = doc.get("version")
    if not isinstance(version, int) or isinstance(version, bool):
        raise SnapshotError("not a Playbook export: no integer 'version'")
    if version > VERSION:
        raise SnapshotError(
            f"export format version {version} is newer than this Playbook reads ({VERSION}); "
            "upgrade Playbook"
        )
    try:
        snap = Snapshot.model_validate(_plain(doc))
    except ValidationError as exc:
        raise SnapshotError(_first_error(exc)) from None
    _check_references(snap)
    return snap


def total_rows(snap: Snapshot) -> int:
    return sum(counts(snap).values())
