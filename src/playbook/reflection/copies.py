"""A session is its records, not its file: a copy of a session is not reflected twice.

Claude Code writes a session's history again under a new session id and file when it is
forked (``--fork-session``) and on some resumes; Codex writes a forked thread's items into a
new rollout. Read from byte 0 of the new file, that history would be reflected a second
time: its citations counted again, its lessons staged again after a person approved them.

So every reflection remembers the last transcript record it read (`mark_read`: the record's
identity, `Passage.record`, which a copy keeps), and a diary is read from past the last
record some reflection already read, in whatever file (`unread`). A copy made after the
original was reflected starts past its copied part; what the original had not reflected
yet, and what was written in the copy since, is read as usual.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from .diaries import Diary

if TYPE_CHECKING:
    from ..store import PlaybookStore

__all__ = ["mark_read", "unread"]


def unread(store: PlaybookStore, diary: Diary) -> tuple[Diary, int]:
    """`diary` without its passages up to the last one whose record a reflection has read
    (in this file or a copy of it), and how many passages were left out."""
    records = [p.record for p in diary.passages if p.record]
    if not records:
        return diary, 0
    marked = store.marked_records(records)
    if not marked:
        return diary, 0
    last = max(i for i, p in enumerate(diary.passages) if p.record in marked)
    kept = diary.passages[last + 1 :]
    return Diary(diary.ref, kept, diary.end, diary.skipped, diary.unfinished), last + 1


def mark_read(store: PlaybookStore, diary: Diary, upto: int) -> None:
    """Remember the last record of `diary` read before byte `upto` (in the caller's
    transaction, with the watermark)."""
    for passage in reversed(diary.passages):
        if passage.offset < upto and passage.record:
            store.mark_record(passage.record, passage.offset)
            return
