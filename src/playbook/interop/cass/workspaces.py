"""Where a cass-memory workspace rule belongs here: the workspace identity of its repository.

cass-memory keeps a repository's own rules in the repository (``.cass/playbook.yaml``, scope
``workspace`` and no key: they apply where that file is) and keys the other workspace rules
by a path on the machine that wrote them (``workspace: /home/dev/app``). Playbook keys every
workspace rule by one identity (``playbook.project.workspace``: the normalised remote URL,
else the folder's name), the same on every clone, so both are mapped to it. Each rule is
mapped one way, and the import reports how many went which way:

- ``repository``: no key, in a repository's ``.cass/playbook.yaml`` (or a workspace given
  with ``--workspace``): that repository's identity. So do the file's global rules:
  cass-memory reads that file only in its repository, so "global" there means "everywhere
  in this repository" (``keep_global`` keeps them global);
- ``path``: a key that is a path to a folder on this machine: that folder's identity;
- ``folder-name``: a path that is not on this machine: its last folder's name (the
  identity of a clone without a remote, and most likely what a teammate's clone is called);
- ``kept``: a key that is not a path (a name, or an identity already): as written;
- ``unkeyed``: no key, and no repository known: left without one, so it shows in every
  workspace like any of Playbook's rules without a key (the import says so, and that
  ``--workspace`` scopes them).

This module reads the file system (``workspace_of`` reads a repository's git config); the
parser does not, so it stays pure.
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable, Iterable
from pathlib import Path, PurePosixPath, PureWindowsPath
from typing import Any

from ...project.workspace import Workspace, normalise_remote, workspace_of
from .records import ImportedBullet

__all__ = ["HOW", "assign_workspaces", "home_of", "identity_of", "workspace_key"]

# The ways a rule is mapped, in the order the report lists them.
HOW = ("repository", "path", "folder-name", "kept", "unkeyed")
MAX_PATH = 4096  # a longer key is not looked up on this machine
_WINDOWS = re.compile(r"^(?:[A-Za-z]:[\\/]|\\\\)")

Lookup = Callable[[str], Workspace | None]


def home_of(source: str | Path) -> Workspace | None:
    """The repository a cass-memory file belongs to: for ``<repo>/.cass/playbook.yaml``
    (or any file in a ``.cass`` folder), the identity of ``<repo>``; else None. The path
    is taken as named (a link is not followed): where the file sits is what it says."""
    path = Path(os.path.abspath(Path(source).expanduser()))
    if path.parent.name != ".cass":
        return None
    return workspace_of(path.parent.parent)


def workspace_key(value: str) -> str:
    """A workspace given on the command line: a folder here (its identity), a remote URL
    (normalised), or a key as written."""
    text = value.strip()
    try:
        if len(text) <= MAX_PATH and "\x00" not in text and Path(text).expanduser().is_dir():
            found = workspace_of(Path(text).expanduser())
            if found is not None:
                return found.key
    except OSError:
        pass
    return normalise_remote(text) or text


def _is_path(key: str) -> bool:
    return (
        key in (".", "..", "~")
        or key.startswith(("/", "~/", "./", "../"))
        or bool(_WINDOWS.match(key))
    )


def _last_folder(key: str) -> str:
    windows = bool(_WINDOWS.match(key)) or ("\\" in key and "/" not in key)
    pure = PureWindowsPath(key) if windows else PurePosixPath(key)
    return pure.name or key


def identity_of(key: str, lookup: Lookup = workspace_of) -> tuple[str, str]:
    """(identity, how) for a workspace key a cass-memory rule carries (see the module)."""
    if not _is_path(key):
        return normalise_remote(key) or key, "kept"
    if len(key) <= MAX_PATH and "\x00" not in key:
        try:
            here = Path(key).expanduser()
            found = lookup(str(here)) if here.exists() else None
        except OSError:
            found = None
        if found is not None:
            return found.key, "path"
    return _last_folder(key), "folder-name"


def assign_workspaces(
    bullets: Iterable[ImportedBullet],
    home: str | None,
    *,
    keep_global: bool = False,
    lookup: Lookup = workspace_of,
) -> dict[str, Any]:
    """Give each workspace rule its identity here (in place) and return what was mapped
    how: ``scopes`` (rules per scope, as imported), ``counts`` (workspace rules per way),
    ``mapped`` (each distinct mapping: the scope the file gave, from, to, how, rules) and
    ``repository`` (the identity the repository's rules took, or None).

    With a `home` (the file is a repository's), its global rules are that repository's too,
    unless `keep_global`: cass-memory reads a repository's ``.cass/playbook.yaml`` only in
    that repository, so a rule there is global to it, not to every project."""
    seen: dict[str, tuple[str, str]] = {}
    scopes: dict[str, int] = {}
    counts = dict.fromkeys(HOW, 0)
    mapped: dict[tuple[str, str | None, str | None, str], int] = {}
    for b in bullets:
        was = b.scope
        if was == "global" and home and not keep_global:
            b.scope, b.scope_key = "workspace", None
        scopes[b.scope] = scopes.get(b.scope, 0) + 1
        if b.scope != "workspace":
            continue
        original = b.scope_key
        if original is None or not original.strip():
            to, how = (home, "repository") if home else (None, "unkeyed")
        else:
            if original not in seen:
                seen[original] = identity_of(original, lookup)
            to, how = seen[original]
        b.scope_key = to
        counts[how] += 1
        key = (was, original, to, how)
        mapped[key] = mapped.get(key, 0) + 1

    def order(item: tuple[tuple[str, str | None, str | None, str], int]) -> tuple[Any, ...]:
        (was, src, _, how), n = item
        return HOW.index(how), was != "workspace", -n, str(src)

    return {
        "repository": home,
        "scopes": scopes,
        "counts": {how: n for how, n in counts.items() if n},
        "mapped": [
            {"scope": was, "from": src, "to": to, "how": how, "rules": n}
            for (was, src, to, how), n in sorted(mapped.items(), key=order)
        ],
    }
