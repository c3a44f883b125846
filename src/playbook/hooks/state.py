"""What hooks keep between runs, outside the playbook: their log, and per-session memory.

Everything lives under one folder, ``$XDG_STATE_HOME/playbook`` (``~/.local/state/playbook``
when unset): the hook log ``hooks.log`` (one line per problem a hook met), the detached
reflections' log ``reflect.log``, and under ``sessions/`` one small file per agent session
listing the bullet ids already given to it (so a rule is not repeated in one session), and
one empty file per notice the session was given (so it is given once).

They say what the user asked and worked on, so they are the user's alone: the folders are
made with mode 0700 and the files with 0600, 0640 in a folder a group shares
(`playbook.core.files.open_append`, the one maker of Playbook's own files).
"""

from __future__ import annotations

import os
import time
from collections.abc import Iterable
from datetime import UTC, datetime
from pathlib import Path

from ..core.files import open_append, open_private
from ..core.text import sha256_hex

__all__ = [
    "SessionMemory",
    "log_line",
    "reflect_log_path",
    "state_dir",
]

SESSION_MEMORY_DAYS = 7  # a session's memory older than this is deleted at a session start
TOLD = ".told"  # a session's note that it was told something (`SessionMemory.first_time`)
_LINE_MAX = 1000  # characters of one log line


def state_dir() -> Path:
    base = os.environ.get("XDG_STATE_HOME") or str(Path.home() / ".local" / "state")
    return Path(base) / "playbook"


def hook_log_path() -> Path:
    return state_dir() / "hooks.log"


def reflect_log_path() -> Path:
    return state_dir() / "reflect.log"


def log_line(message: str, path: Path | None = None) -> None:
    """Append one line (time stamped, on one line, bounded) to the hook log. Never raises:
    a hook that cannot even log must still not break the agent."""
    text = " ".join(message.split())
    if len(text) > _LINE_MAX:
        text = text[: _LINE_MAX - 1] + "…"
    stamp = datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
    target = path or hook_log_path()
    try:
        with open_append(target, errors="replace") as f:
            f.write(f"{stamp} {text}\n")
    except OSError:
        pass


def session_key(session_id: str) -> str:
    """A file name for a session id, whatever characters the agent put in it: the start of
    its SHA-256 digest."""
    return sha256_hex(session_id.encode("utf-8", "surrogatepass"))[:24]


class SessionMemory:
    """The bullet ids already given to one session: a file of ids, one a line, appended to.

    Reading costs one small file; nothing is written to the playbook on a prompt.
    """

    def __init__(self, session_id: str, folder: Path | None = None) -> None:
        self.path = (folder or state_dir() / "sessions") / f"{session_key(session_id)}.seen"

    def seen(self) -> set[str]:
        try:
            return set(self.path.read_text(encoding="utf-8").split())
        except (OSError, UnicodeDecodeError):
            return set()

    def remember(self, ids: Iterable[str]) -> None:
        lines = "".join(f"{i}\n" for i in ids)
        if not lines:
            return
        with open_append(self.path, errors="replace") as f:
            f.write(lines)

    def forget(self) -> None:
        """Forget the rules given (the context that held them is gone); what the session
        was told (`first_time`) stays told."""
        self.path.unlink(missing_ok=True)

    def first_time(self, topic: str) -> bool:
        """Whether the session hears of `topic` for the first time; it is then noted, in a
        file made only if absent, so two hooks at once tell it once. True when the note
        cannot be written: a notice said twice is better than one never said."""
        told = self.path.with_name(f"{self.path.stem}.{topic}{TOLD}")
        try:
            os.close(open_private(told, os.O_WRONLY | os.O_EXCL))
        except FileExistsError:
            return False
        except OSError:
            return True
        return True


def prune_sessions(folder: Path | None = None, days: float = SESSION_MEMORY_DAYS) -> None:
    """Delete session memories not touched for `days` (their sessions are long over)."""
    folder = folder or state_dir() / "sessions"
    cutoff = time.time() - days * 86400
    try:
        entries = list(folder.iterdir())
    except OSError:
        return
    for entry in entries:
        try:
            if entry.suffix in (".seen", TOLD) and entry.stat().st_mtime < cutoff:
                entry.unlink()
        except OSError:
            pass
