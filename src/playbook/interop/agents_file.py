"""Writing the playbook's block into a project's AGENTS.md (or CLAUDE.md) that people edit.

The block sits between two marker lines (`agents_md.BEGIN`, `agents_md.END`). Writing it:

- into a file without markers appends it (after a blank line); into a file with them
  replaces what is between them, markers included. Every other byte of the file stays as it
  was: a byte-order mark, the line endings (the block takes the file's own: CRLF in a CRLF
  file), a last line without a line ending, text that is not UTF-8;
- a file that does not exist is created, holding the block;
- markers that cannot be paired (a begin without an end, two begins, an end before its
  begin) are an error naming their lines, and nothing is written. Markers inside a fenced
  code block (a README showing them, say) are text, not markers;
- the file is written by `playbook.core.files.write_file`, the one writer of the files a person
  names: a regular file is replaced atomically (a reader sees the old file or the new one,
  never half of one, and a failed write leaves the old one), keeping its permission bits
  and, where allowed, its owner; a new one is made as any program makes a file (0666 less
  the umask): a project's AGENTS.md is for the team. A symbolic link to a file in its own
  folder is written through and stays a link (CLAUDE.md -> AGENTS.md writes AGENTS.md);
  one out of its folder is refused, never followed silently. A device or a pipe
  (`-o /dev/stdout`) gets the block alone, never replaced by a regular file; a FIFO that
  nothing reads is given up after a few seconds; a folder or anything else is an error.
"""

from __future__ import annotations

import os
import re
import stat
from dataclasses import dataclass, field
from pathlib import Path

from ..core.errors import PlaybookError
from ..core.files import write_file, write_target

__all__ = ["AgentsFileError", "Written", "find_block", "merge", "write_block"]

MAX_FILE_BYTES = 16 << 20  # an AGENTS.md this large is not merged into
_BEGIN = re.compile(r"^[ \t]*<!--[ \t]*playbook:begin\b.*-->[ \t]*$")
_END = re.compile(r"^[ \t]*<!--[ \t]*playbook:end\b.*-->[ \t]*$")
_FENCE = re.compile(r"^ {0,3}(`{3,}|~{3,})(.*)$")
_WIDE_BOMS = (b"\xff\xfe", b"\xfe\xff", b"\x00\x00\xfe\xff")


class AgentsFileError(PlaybookError):
    """The file cannot take the block (broken markers, not a file, too large); nothing was
    written."""

    code = "file_error"


@dataclass
class Written:
    """What writing the block did: `how` is created, appended, replaced, unchanged or
    streamed (a device or pipe); `path` is where it went (a link's target), `size` the
    file's bytes after, `notes` anything a person should know."""

    path: Path
    how: str
    size: int
    via: Path | None = None  # the link that was followed
    notes: list[str] = field(default_factory=list)


def newline_of(data: bytes) -> str:
    """The file's line ending: that of its first line (LF when it has none)."""
    i = data.find(b"\n")
    if i == -1:
        return "\r" if b"\r" in data else "\n"
    return "\r\n" if i > 0 and data[i - 1 : i] == b"\r" else "\n"


def _fence(fence: str | None, line: str) -> str | None:
    """The fenced code block open after `line` (its opening fence), given the one open
    before it (CommonMark: three or more backticks or tildes, indented three spaces at most;
    closed by a fence of the same character, at least as long, with nothing after it)."""
    found = _FENCE.match(line)
    if found is None:
        return fence
    marks, rest = found.group(1), found.group(2)
    if fence is None:
        return None if marks[0] == "`" and "`" in rest else marks
    closes = marks[0] == fence[0] and len(marks) >= len(fence) and not rest.strip()
    return None if closes else fence


def find_block(data: bytes) -> tuple[int, int] | None:
    """(start, end) byte offsets of the block: from the start of the begin marker's line to
    the end of the end marker's line, its line ending left out; None when the file has no
    markers. AgentsFileError when they cannot be paired."""
    begins: list[tuple[int, int]] = []  # (line number, offset)
    ends: list[tuple[int, int]] = []
    fence: str | None = None
    offset = 0
    for number, raw in enumerate(data.splitlines(keepends=True), start=1):
        content = raw.rstrip(b"\r\n")
        bom = 3 if number == 1 and content.startswith(b"\xef\xbb\xbf") else 0
        text = content[bom:].decode("utf-8", "replace")
        inside = fence is not None
        fence = _fence(fence, text)
        if inside or fence is not None:
            pass  # a line of a fenced code block (its fences included) is text
        elif _BEGIN.match(text):
            begins.append((number, offset + bom))
        elif _END.match(text):
            ends.append((number, offset + len(content)))
        offset += len(raw)
    if not begins and not ends:
        return None
    if len(begins) == 1 and len(ends) == 1 and begins[0][1] < ends[0][1]:
        return begins[0][1], ends[0][1]
    where = ", ".join(
        [f"playbook:begin on line {n}" for n, _ in begins]
        + [f"playbook:end on line {n}" for n, _ in ends]
    )
    raise AgentsFileError(
        f"the playbook markers cannot be paired ({where}); "
        "leave one begin and one end after it, or remove both, and export again"
    )


def merge(existing: bytes | None, block: list[str]) -> tuple[bytes, str]:
    """The file's new bytes with `block` (lines without endings) in it, and how: created,
    appended or replaced (see the module)."""
    if existing is None:
        return ("\n".join(block) + "\n").encode("utf-8"), "created"
    if existing.startswith(_WIDE_BOMS):
        raise AgentsFileError(
            "the file is UTF-16 or UTF-32 text; the block is UTF-8 and would not mix with it"
        )
    if b"\x00" in existing:
        raise AgentsFileError("the file holds NUL bytes: it is not a text file")
    nl = newline_of(existing)
    body = nl.join(block).encode("utf-8")
    found = find_block(existing)
    if found is not None:
        start, end = found
        return existing[:start] + body + existing[end:], "replaced"
    sep = nl.encode()
    head = existing
    if head.strip(b"\xef\xbb\xbf \t\r\n"):
        if not head.endswith((b"\n", b"\r")):
            head += sep
        if not head.endswith(sep + sep):
            head += sep  # a blank line before the block
    elif head.strip(b"\xef\xbb\xbf") and not head.endswith((b"\n", b"\r")):
        head += sep  # only white space, no line ending: the block starts a line of its own
    return head + body + sep, "appended"


def write_block(path: str | Path, block: list[str]) -> Written:
    """Write `block` into the file at `path` (see the module)."""
    path = Path(path).expanduser()
    target, st = write_target(path)  # UnsafePath: a link out of its folder, a folder
    via = path if target != path else None
    if st is None:
        data, how = merge(None, block)
        write_file(path, data, private=False)
        return Written(target, how, len(data), via)
    if stat.S_ISCHR(st.st_mode) or stat.S_ISFIFO(st.st_mode):
        data = ("\n".join(block) + "\n").encode("utf-8")
        write_file(path, data)  # written through: a FIFO nothing reads is given up
        return Written(target, "streamed", len(data), via)
    if not stat.S_ISREG(st.st_mode):
        raise AgentsFileError(f"{target} is not a regular file, a device or a pipe")
    if st.st_size > MAX_FILE_BYTES:
        raise AgentsFileError(
            f"{target} is {st.st_size:,} bytes; the block is merged into files up to "
            f"{MAX_FILE_BYTES:,}"
        )
    if not os.access(target, os.W_OK):
        raise AgentsFileError(f"{target} is not writable")
    existing = target.read_bytes()
    data, how = merge(existing, block)
    written = Written(target, how, len(data), via)
    if data == existing:
        written.how = "unchanged"
        return written
    write_file(path, data, private=False)
    if st.st_nlink > 1:
        written.notes.append(
            f"{target} had {st.st_nlink} hard links; the new file is a file of its own"
        )
    return written
