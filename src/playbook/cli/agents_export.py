"""`playbook export --format agents-md`: the playbook's block for a project's AGENTS.md.

With `-o FILE` the block is merged into the file (`interop.agents_file`: the rest of it
kept byte for byte); without, it is printed. The rules are those of the workspace the file
is in (its repository's identity; `--workspace` names another), within a byte budget.
"""

from __future__ import annotations

import os
import stat
import sys
from pathlib import Path
from typing import Any

from ..core.files import TooLarge, read_capped
from ..interop.agents_file import MAX_FILE_BYTES, newline_of, write_block
from ..interop.agents_md import DEFAULT_MAX_BYTES, BudgetTooSmall, build_store
from ..interop.cass.workspaces import workspace_key
from ..project.workspace import workspace_of
from .common import CliError, emit, note, open_store

CODEX_LIMIT = 32 * 1024  # Codex reads this much of a project's docs, all files together
_VERB = {
    "created": "created {path} with the playbook block",
    "appended": "added the playbook block to {path} (the rest of the file is as it was)",
    "replaced": "replaced the playbook block in {path} (the rest of the file is as it was)",
    "unchanged": "{path} already holds this block: nothing written",
    "streamed": "wrote the playbook block to {path}",
}


def _newline(path: Path) -> str:
    """The line ending the block will take in the file (a regular file's own, else LF)."""
    try:
        real = Path(os.path.realpath(path))
        if not stat.S_ISREG(os.stat(real).st_mode):
            return "\n"
        with real.open("rb") as f:
            return newline_of(f.read(64 * 1024))
    except OSError:
        return "\n"


def _workspace(workspace: str | None, path: Path | None) -> str | None:
    if workspace is not None:
        return workspace_key(workspace)
    found = workspace_of(Path(os.path.abspath(path)).parent if path else Path.cwd())
    return found.key if found else None


def _notes(path: Path, size: int) -> None:
    if size > CODEX_LIMIT:
        note(
            f"playbook: {path.name} is now {size:,} bytes; Codex reads at most 32 KiB of a "
            "project's docs (all its AGENTS.md files together) and ignores the rest"
        )
    if path.name == "AGENTS.md":
        claude = path.parent / "CLAUDE.md"
        try:
            same = os.path.realpath(claude) == os.path.realpath(path)  # a link to it
            imports = same or (
                stat.S_ISREG(claude.stat().st_mode)  # a FIFO would wait for a writer
                and b"@AGENTS.md" in read_capped(claude, MAX_FILE_BYTES, "CLAUDE.md")
            )
        except (OSError, TooLarge):
            imports = False
        if not imports:
            note(
                "playbook: Claude Code reads CLAUDE.md, not AGENTS.md: a line '@AGENTS.md' "
                "in CLAUDE.md makes it read this one"
            )


def export_agents_md(
    output: str | None,
    *,
    title: str,
    workspace: str | None,
    max_bytes: int | None,
    top: int | None,
    json_out: bool,
) -> None:
    path = Path(output).expanduser() if output not in (None, "-") else None
    key = _workspace(workspace, path)
    budget = DEFAULT_MAX_BYTES if max_bytes is None else max_bytes
    with open_store(read_only=True, replica=True) as store:
        try:
            block = build_store(
                store,
                title=title,
                workspace=key,
                max_bytes=budget,
                top=top,
                newline=_newline(path) if path else "\n",
            )
        except BudgetTooSmall as exc:
            raise CliError("invalid_input", str(exc)) from None
    data: dict[str, Any] = {
        "format": "agents-md",
        "workspace": key,
        "shown": block.shown,
        "eligible": block.total,
        "block_bytes": block.size,
        "max_bytes": budget,
    }
    if path is None:
        if json_out:
            emit({**data, "content": block.text()})
        else:
            sys.stdout.write(block.text())
        return
    written = write_block(path, block.lines)
    data |= {
        "path": str(written.path),
        "how": written.how,
        "bytes": written.size,
        "via": str(written.via) if written.via else None,
    }
    for line in written.notes:
        note(f"playbook: {line}")
    if written.how != "streamed":
        _notes(written.path, written.size)
    shown = str(written.path) + (f" (through {written.via})" if written.via else "")
    human = [_VERB[written.how].format(path=shown)]
    human.append(
        f"{block.shown} of {block.total} rules for {key or 'every workspace'} (live, and "
        f"not outweighed by harm), {block.size:,} of {budget:,} bytes"
    )
    emit(data, "\n".join(human))
