"""Read cass-memory's files into Playbook's neutral import records.

A pure parser: bytes or text in, plain records out. It touches no database, reads no clock
and never writes; `playbook.interop.cass_import` decides how to persist what it returns.
Anything in the file that has no home in Playbook is a note (`CassImport.notes`), never
dropped silently. `schema` describes cass-memory's files as found and each mapping decision.

- `playbook`: a whole `playbook.yaml` (`parse_cass_playbook`);
- `bullets`, `events`: one bullet and its feedback;
- `blocked_log`: the `blocked.log` of rules `cm forget` took out (`parse_blocked_log`);
- `yamlstream`: the one-pass YAML reader (libyaml events, a bullet at a time);
- `records`, `values`, `schema`: the records, value helpers and the schema as found.
"""

from __future__ import annotations

from ..formats import DEFAULT_MAX_BYTES as MAX_INPUT_BYTES
from .blocked_log import looks_like_blocked_log, parse_blocked_log
from .playbook import MAX_ITEMS, parse_cass_playbook
from .records import (
    CassImport,
    CassImportError,
    ImportedBlock,
    ImportedBullet,
    ImportedEdge,
    ImportedEvent,
)

__all__ = [
    "MAX_INPUT_BYTES",
    "MAX_ITEMS",
    "CassImport",
    "CassImportError",
    "ImportedBlock",
    "ImportedBullet",
    "ImportedEdge",
    "ImportedEvent",
    "looks_like_blocked_log",
    "parse_blocked_log",
    "parse_cass_playbook",
]
