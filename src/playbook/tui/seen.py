"""When this reviewer last looked at the Proposals tab, per playbook: the "new" count.

Kept in a small per-user file, `$XDG_STATE_HOME/playbook/workbench.json`
(`~/.local/state/playbook/...`), keyed by the playbook's resolved path (or URL), and not
in the playbook itself: looking is a read, and a read never writes to the playbook (which
may be read-only); and on a playbook a team shares, "new since *you* last looked" belongs
to each person, not to the team.
"""

from __future__ import annotations

import json
import os
import tempfile
from datetime import datetime
from pathlib import Path

FILE = "workbench.json"


def state_file() -> Path:
    base = os.environ.get("XDG_STATE_HOME") or str(Path.home() / ".local" / "state")
    return Path(base) / "playbook" / FILE


def playbook_key(target: str | Path) -> str:
    text = str(target)
    if "://" in text:
        return text
    return str(Path(text).expanduser().resolve())


class LastLooked:
    """`get()` the moment this reviewer last looked at the Proposals tab of `target`, and
    `mark(at)` a new one. A missing or damaged file means "never looked"; a file that cannot
    be written is left as it is (the count is a convenience, never a failure)."""

    def __init__(self, target: str | Path, path: Path | None = None) -> None:
        self.key = playbook_key(target)
        self.path = path or state_file()

    def _read(self) -> dict[str, dict[str, str]]:
        try:
            doc = json.loads(self.path.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return {}
        return doc if isinstance(doc, dict) else {}

    def get(self) -> datetime | None:
        entry = self._read().get(self.key)
        raw = entry.get("proposals_seen") if isinstance(entry, dict) else None
        try:
            return datetime.fromisoformat(raw) if isinstance(raw, str) else None
        except ValueError:
            return None

    def mark(self, at: datetime) -> None:
        doc = self._read()
        entry = doc.get(self.key)
        entry = entry if isinstance(entry, dict) else {}
        entry["proposals_seen"] = at.isoformat()
        doc[self.key] = entry
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            with tempfile.NamedTemporaryFile(
                "w", dir=self.path.parent, delete=False, suffix=".tmp", encoding="utf-8"
            ) as tmp:
                json.dump(doc, tmp, indent=1, sort_keys=True)
            os.replace(tmp.name, self.path)
        except OSError:
            pass
