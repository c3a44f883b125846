"""Plain text and Markdown diaries: passages are paragraphs, read by whole lines."""

from __future__ import annotations

from .base import BOM, Diary, Passage, decode


def read_text_diary(data: bytes, *, start: int = 0, ref: str = "") -> Diary:
    """Plain text or Markdown: passages are paragraphs separated by blank lines.

    Reading begins at byte ``start``. Each passage's offset is the byte offset of its first
    line in ``data``, ``line_starts`` those of each of its lines, and its text is that
    paragraph as written (trailing whitespace removed), so ``data[offset:]`` starts with the
    passage's UTF-8 bytes whenever they are valid. A last line without its newline is still
    being written: it is not read, and ``end`` stops before it.
    """
    return read_text_from(data, start=start, ref=ref, base=0)


def read_text_from(data: bytes, *, start: int, ref: str, base: int) -> Diary:
    """``read_text_diary`` over ``data`` = the file from byte ``base`` on (``base <= start``)."""
    size = len(data)
    pos = min(max(start - base, 0), size)
    if base + pos == 0 and data.startswith(BOM):
        pos = len(BOM)
    passages: list[Passage] = []
    lines: list[int] = []  # where the lines of the paragraph being read start, in `data`
    para_end = pos
    while pos < size:
        nl = data.find(b"\n", pos)
        if nl == -1:
            break  # an incomplete last line: leave it for the next read
        if data[pos:nl].strip():
            lines.append(pos)
            para_end = nl
        elif lines:
            passages.append(_text_passage(data, lines, para_end, base))
            lines = []
        pos = nl + 1
    if lines:
        passages.append(_text_passage(data, lines, para_end, base))
    return Diary(ref=ref, passages=passages, end=max(start, base + pos), unfinished=size - pos)


def _text_passage(data: bytes, lines: list[int], end: int, base: int) -> Passage:
    return Passage(
        offset=base + lines[0],
        text=decode(data[lines[0] : end]).rstrip(),
        role=None,
        line_starts=tuple(base + i for i in lines),
    )
