"""Playbook's own export format (JSON or YAML): the whole database's facts, ids kept.

A snapshot holds every fact table (SPEC §3): bullets with every field, the full feedback log
(observation and knowledge time, weight, reason, context, provenance, actor, receipt), the
`supersedes`/`inverts` edges, the maturity history, blocked patterns (inactive ones too),
outcome receipts, the review queue, conflict flags, the decision log and the session
watermarks. Derived data is left out and rebuilt on import: the recall index, the evidence
cache, embeddings.

Exporting is a pure read and deterministic: the same database gives the same bytes (there is
no "exported at" stamp), so exports diff cleanly and a restored copy exports identically.
The row models that validate a document on import are in `snapshot_rows`.
"""

from __future__ import annotations

import json
from datetime import datetime
from typing import TYPE_CHECKING, Any

from pydantic import ValidationError

from ..core.files import loads_json
from ..core.inert import dumps
from ..store.interchange import ORDER
from ..store.schema import MEMORY_LATEST
from .snapshot_rows import Snapshot, SnapshotError, check_references, first_error

if TYPE_CHECKING:
    from ..store import PlaybookStore

FORMAT = "playbook-export"
VERSION = 1

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
        doc[section] = [_out_row(table, r) for r in store.bulk.read_table(table)]
    return doc


def counts(doc: dict[str, Any] | Snapshot) -> dict[str, int]:
    if isinstance(doc, Snapshot):
        return {s: len(getattr(doc, s)) for s in SECTIONS}
    return {s: len(doc.get(s, [])) for s in SECTIONS}


def to_json(doc: dict[str, Any]) -> str:
    """Indented JSON; C0/C1 and bidi controls escaped so a terminal shows them as text."""
    return dumps(doc, indent=2) + "\n"


class _NoAliases:
    """Mixed into a YAML dumper, first (its method wins): no anchors, plain diffable text."""

    def ignore_aliases(self, data: Any) -> bool:
        return True


def to_yaml(doc: dict[str, Any]) -> str:
    import yaml  # lazy: yaml, for the YAML format only

    dumper: type[_NoAliases]
    if yaml.__with_libyaml__:  # PyYAML built with libyaml: its emitter, in C

        class _LibDumper(_NoAliases, yaml.CSafeDumper):
            pass

        dumper = _LibDumper
    else:

        class _PureDumper(_NoAliases, yaml.SafeDumper):
            pass

        dumper = _PureDumper
    return yaml.dump(
        doc, Dumper=dumper, sort_keys=False, allow_unicode=True, default_flow_style=False
    )


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
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise SnapshotError(f"not UTF-8 text (byte {exc.start})") from None
    if fmt == "json":
        try:
            return loads_json(text)
        except json.JSONDecodeError as exc:
            raise SnapshotError(f"not valid JSON ({exc.msg} at line {exc.lineno})") from None
        except ValueError as exc:  # a key named twice, NaN, Infinity
            raise SnapshotError(f"not valid JSON: {exc}") from None
        except RecursionError:
            raise SnapshotError("JSON is nested too deeply") from None
    import yaml  # lazy: yaml, for the YAML format only

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
        raise SnapshotError(first_error(exc)) from None
    check_references(snap)
    return snap


def total_rows(snap: Snapshot) -> int:
    return sum(counts(snap).values())
