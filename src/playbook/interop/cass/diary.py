"""A cass-memory diary: what one session taught, as cass-memory's reflector wrote it down.

``cm diary … --save`` (and ``cm reflect``) write one JSON file per session,
``~/.cass-memory/diary/<id>.json``, validated by ``DiaryEntrySchema`` (``src/types.ts`` of
``Dicklesworthstone/cass_memory_system``): ``id``, ``sessionPath``, ``timestamp``, ``agent``,
``workspace?``, ``duration?``, ``status`` (success|failure|mixed), and lists of text:
``accomplishments``, ``decisions``, ``challenges``, ``preferences``, ``keyLearnings``,
``relatedSessions`` (objects), ``tags``, ``searchAnchors``.

cass-memory turns a diary into rules with a model (``cm reflect``). Playbook keeps the three
lists that are lessons, ``keyLearnings``, ``preferences`` and ``decisions``, as proposals a
person reviews (origin ``cass-diary``), so nothing is lost and nothing becomes a rule unseen.
``accomplishments`` and ``challenges`` say what happened, not what to do: they are noted,
not proposed. A pure reader, like the rest of this package.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from typing import Any

from ..notes import Notes
from .records import CassImportError
from .values import show, type_name

__all__ = ["LESSONS", "CassDiary", "DiaryItem", "looks_like_diary", "parse_diary"]

# The lists that become proposals, each with the kind and category its rules get.
LESSONS = {
    "keyLearnings": ("key_learning", "learning"),
    "preferences": ("preference", "preference"),
    "decisions": ("decision", "decision"),
}
NOT_LESSONS = ("accomplishments", "challenges")
DIARY_KEYS = frozenset(
    {
        "id", "sessionPath", "timestamp", "agent", "workspace", "duration", "status",
        "accomplishments", "decisions", "challenges", "preferences", "keyLearnings",
        "relatedSessions", "tags", "searchAnchors",
    }
)  # fmt: skip
MAX_ITEMS = 10_000  # lessons in one diary; cass-memory's reflector writes a handful
_HEAD_KEYS = re.compile(rb'"(?:keyLearnings|preferences|decisions|accomplishments)"\s*:')
_SESSION = re.compile(rb'"sessionPath"\s*:')


@dataclass(frozen=True, slots=True)
class DiaryItem:
    section: str  # keyLearnings, preferences or decisions
    index: int  # its place in that list
    text: str


@dataclass
class CassDiary:
    """One diary: its lessons in file order, the session and workspace they came from."""

    id: str
    session_path: str | None
    workspace: str | None
    agent: str | None
    timestamp: str | None
    tags: list[str] = field(default_factory=list)
    items: list[DiaryItem] = field(default_factory=list)
    notes: Notes = field(default_factory=Notes)
    kind: str = "diary"


def looks_like_diary(head: bytes) -> bool:
    """Whether a JSON object's first bytes look like a cass-memory diary."""
    return bool(_SESSION.search(head)) and bool(_HEAD_KEYS.search(head))


def parse_diary(data: bytes | str) -> CassDiary:
    """Read one diary; CassImportError when it is not a diary at all. Problems inside it
    (an entry that is not text, an unknown field) are notes."""
    try:
        text = bytes(data).decode("utf-8-sig") if not isinstance(data, str) else data
    except UnicodeDecodeError as exc:
        raise CassImportError(f"not UTF-8 text (byte {exc.start})") from None
    try:
        doc: Any = json.loads(text)
    except (ValueError, RecursionError) as exc:
        raise CassImportError(f"not a cass-memory diary: not valid JSON ({exc})") from None
    if not isinstance(doc, dict):
        raise CassImportError(f"not a cass-memory diary: top level is {type_name(doc)}")
    if not any(k in doc for k in LESSONS) or "sessionPath" not in doc:
        raise CassImportError(
            "not a cass-memory diary: no sessionPath with keyLearnings, preferences or decisions"
        )
    diary_id = doc.get("id")
    where = diary_id.strip() if isinstance(diary_id, str) and diary_id.strip() else "diary"
    notes = Notes()
    diary = CassDiary(
        id=where,
        session_path=_text(doc, "sessionPath", notes, where),
        workspace=_text(doc, "workspace", notes, where),
        agent=_text(doc, "agent", notes, where),
        timestamp=_text(doc, "timestamp", notes, where),
        tags=[t for _, t in _texts(doc, "tags", notes, where)],
        notes=notes,
    )
    note = notes.add
    for key in doc:
        if key not in DIARY_KEYS:
            note(where, f"field {show(key)} is not in cass-memory's diary schema; dropped")
    for section in LESSONS:
        for index, item in _texts(doc, section, diary.notes, where):
            if len(diary.items) >= MAX_ITEMS:
                raise CassImportError(f"the diary holds more than {MAX_ITEMS:,} lessons")
            diary.items.append(DiaryItem(section, index, item))
    for section in NOT_LESSONS:
        n = len(_texts(doc, section, diary.notes, where))
        if n:
            note(
                f"{where}.{section}",
                f"{n} entr(ies) not proposed: they say what happened, not what to do",
                f"diary {section} not proposed (what happened, not what to do)",
            )
    related = doc.get("relatedSessions")
    if isinstance(related, list) and related:
        note(
            f"{where}.relatedSessions",
            f"{len(related)} related session(s) dropped; provenance is this diary's session",
            "diary relatedSessions dropped",
        )
    return diary


def _text(doc: dict[str, Any], key: str, notes: Notes, where: str) -> str | None:
    value = doc.get(key)
    if value is None:
        return None
    if isinstance(value, str) and value.strip():
        return value.strip()
    if not isinstance(value, str):
        notes.add(f"{where}.{key}", f"is {type_name(value)}, not text; dropped", f"{key} not text")
    return None


def _texts(doc: dict[str, Any], key: str, notes: Notes, where: str) -> list[tuple[int, str]]:
    """(index, text) of the non-empty strings in list `key`; the rest noted."""
    value = doc.get(key)
    if value is None:
        return []
    if not isinstance(value, list):
        notes.add(f"{where}.{key}", f"is {type_name(value)}, not a list; dropped", f"{key} no list")
        return []
    out = [(i, v.strip()) for i, v in enumerate(value) if isinstance(v, str) and v.strip()]
    if len(out) != len(value):
        notes.add(
            f"{where}.{key}",
            f"{len(value) - len(out)} entr(ies) are not text; dropped",
            f"diary {key} entries that are not text dropped",
        )
    return out
