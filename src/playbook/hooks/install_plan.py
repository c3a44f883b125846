"""What an install or an uninstall does to one file (`Plan`), and doing it (`apply`):
written by `playbook.core.files.write_file` (a regular file replaced atomically, keeping its
mode and owner; a symbolic link in the file's own folder written through and kept, one out
of it refused), the original kept under the state folder (mode 0600) so that an uninstall
can give the file back byte for byte. `check` refuses, before anything is written, a plan
that `write_file` would refuse: an install changes all its files or none."""

from __future__ import annotations

import contextlib
import difflib
import hashlib
import json
import stat
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..core.files import TooLarge, private_folder, read_capped, write_file, write_target
from .state import state_dir

__all__ = ["InstallError", "Plan", "apply", "check", "load_backup", "read_text", "restored"]

MAX_SETTINGS_BYTES = 16 << 20  # an agent's settings file: kilobytes, never this


class InstallError(ValueError):
    """A settings file that cannot be edited safely (not JSON, wrong shape), or an install
    that cannot be done as asked."""


@dataclass
class Plan:
    """An edit of one file: its text before (None: no file) and after, and notes."""

    path: Path
    before: str | None
    after: str | None
    notes: list[str] = field(default_factory=list)
    restore: bool = False  # an uninstall putting back the original bytes

    @property
    def changes(self) -> bool:
        return self.before != self.after

    def diff(self) -> str:
        lines = difflib.unified_diff(
            (self.before or "").splitlines(keepends=True),
            (self.after or "").splitlines(keepends=True),
            fromfile=f"{self.path} (now)" if self.before is not None else "/dev/null",
            tofile=f"{self.path} (after)" if self.after is not None else "/dev/null",
        )
        return "".join(line if line.endswith("\n") else line + "\n" for line in lines)


def restored(path: Path) -> Plan | None:
    """The plan that gives `path` back as it was before the install, when the file is still
    as the install left it (else None)."""
    before = read_text(path)
    saved = load_backup(path)
    if saved is not None and before is not None and _digest(before) == saved.get("installed"):
        return Plan(path, before, saved.get("original"), restore=True)
    return None


def check(plans: list[Plan]) -> None:
    """`UnsafePath` for the first plan whose file `write_file` would refuse (a link out of
    its folder, a folder): raised before any of them is written."""
    for plan in plans:
        if plan.changes and plan.after is not None:
            write_target(plan.path)


def apply(plan: Plan, *, installing: bool) -> None:
    """Write the plan and keep what an uninstall needs to restore the file."""
    if not plan.changes:
        return
    if plan.after is None:
        plan.path.unlink(missing_ok=True)
        for folder in load_backup(plan.path, {}).get("created", []):
            with contextlib.suppress(OSError):  # only if Playbook made it and it is empty again
                Path(folder).rmdir()
    else:
        created = [str(p) for p in _missing_parents(plan.path)]
        plan.path.parent.mkdir(parents=True, exist_ok=True)
        write_file(plan.path, plan.after, private=False)  # the agent's file, as it makes one
        if installing:
            saved = load_backup(plan.path) or {"original": plan.before, "created": created}
            saved["installed"] = _digest(plan.after)
            _save_backup(plan.path, saved)
            return
    _backup_path(plan.path).unlink(missing_ok=True)


def _missing_parents(path: Path) -> list[Path]:
    missing = []
    for folder in path.parents:
        if folder.exists():
            break
        missing.append(folder)
    return missing  # innermost first: the order they can be removed in


def read_text(path: Path) -> str | None:
    """The settings file's text (None: there is none); `InstallError` for one that is not
    a regular file (a FIFO would wait for a writer), too large, or not UTF-8."""
    try:
        if not stat.S_ISREG(path.stat().st_mode):
            raise InstallError(f"{path} is not a regular file; an agent's settings file is")
        data = read_capped(path, MAX_SETTINGS_BYTES, "the settings file", option="")
        return data.decode("utf-8")
    except FileNotFoundError:
        return None
    except (OSError, UnicodeDecodeError, TooLarge) as exc:
        raise InstallError(f"cannot read {path}: {exc}") from None


def _digest(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def _backup_path(path: Path) -> Path:
    key = hashlib.sha256(str(path.resolve()).encode("utf-8", "surrogatepass")).hexdigest()[:24]
    return state_dir() / "installs" / f"{key}.json"


def load_backup(path: Path, default: Any = None) -> Any:
    try:
        saved = json.loads(_backup_path(path).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return default
    return saved if isinstance(saved, dict) else default


def _save_backup(path: Path, saved: dict[str, Any]) -> None:
    target = _backup_path(path)
    private_folder(target.parent)
    write_file(target, json.dumps({"path": str(path.resolve()), **saved}))
