"""Which transcript files a hook or an agent may ask Playbook to read.

An agent names its transcript (``transcript_path`` in a hook's payload, a path given to the
MCP server); it is untrusted like everything an agent says. Playbook reads a transcript only
when it is a regular ``.jsonl`` file under one of the agents' own session folders:

- Claude Code: ``$CLAUDE_CONFIG_DIR/projects`` (else ``~/.claude/projects``);
- Codex: ``$CODEX_HOME/sessions`` and ``$CODEX_HOME/archived_sessions`` (else under ``~/.codex``);
- any folder listed in ``$PLAYBOOK_SESSION_DIRS`` (``os.pathsep``-separated), for an agent
  whose config keeps its sessions elsewhere.

The path is resolved first (symbolic links followed, ``..`` removed), so a link inside a
session folder that points at ``/etc/shadow`` is refused like the file itself.
"""

from __future__ import annotations

import os
import stat
from collections.abc import Mapping
from pathlib import Path

__all__ = ["TranscriptRefused", "check_transcript", "session_roots"]

SESSION_DIRS_ENV = "PLAYBOOK_SESSION_DIRS"


class TranscriptRefused(ValueError):
    """A path that is not an agent's transcript Playbook may read; the message says why."""


def session_roots(env: Mapping[str, str] | None = None, home: Path | None = None) -> list[Path]:
    """The folders transcripts may come from, resolved, in a fixed order."""
    env = os.environ if env is None else env
    home = Path.home() if home is None else home
    claude = Path(env.get("CLAUDE_CONFIG_DIR") or home / ".claude")
    codex = Path(env.get("CODEX_HOME") or home / ".codex")
    roots = [claude / "projects", codex / "sessions", codex / "archived_sessions"]
    roots += [Path(p) for p in (env.get(SESSION_DIRS_ENV) or "").split(os.pathsep) if p.strip()]
    out: list[Path] = []
    for root in roots:
        if not root.is_absolute():
            continue  # a relative folder would mean "wherever the hook happens to run"
        resolved = Path(os.path.realpath(root))
        if resolved not in out:
            out.append(resolved)
    return out


def check_transcript(
    path: str | Path, *, env: Mapping[str, str] | None = None, home: Path | None = None
) -> Path:
    """The resolved path of `path` when it is a transcript Playbook may read, else
    `TranscriptRefused` saying why (in one line, without reading the file)."""
    text = str(path)
    if not text or "\x00" in text or len(text) > 4096:
        raise TranscriptRefused("not a usable path")
    resolved = Path(os.path.realpath(text))
    roots = session_roots(env, home)
    if not any(resolved.is_relative_to(root) for root in roots):
        raise TranscriptRefused(
            f"{resolved} is not under an agent's session folder "
            f"({', '.join(str(r) for r in roots)}; more in ${SESSION_DIRS_ENV})"
        )
    if resolved.suffix != ".jsonl":
        raise TranscriptRefused(f"{resolved} is not a .jsonl transcript")
    try:
        mode = resolved.stat().st_mode
    except OSError as exc:
        raise TranscriptRefused(f"{resolved}: {exc.strerror or exc}") from None
    if not stat.S_ISREG(mode):
        raise TranscriptRefused(f"{resolved} is not a regular file")
    return resolved
