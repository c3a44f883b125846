"""One identity for a workspace, the same on every machine that cloned it.

A rule scoped to a repository (``scope = "workspace"``) carries this identity as its
``scope_key``. It is the repository's remote URL, normalised so that every way of writing it
gives one key: ``git@github.com:Org/Repo.git``, ``https://user:token@github.com/org/repo``
and ``ssh://git@github.com:22/org/repo/`` are all ``github.com/org/repo`` (host and path in
lower case, no user, password, port, scheme or ``.git``). The remote is ``origin``, else the
first one the repository's config names. A repository with no remote that names a host (none,
or a path on this machine) is known by its top folder's name, and so is a folder outside any
repository: both are what a teammate's clone is most likely called too.

The config is read as a file (no ``git`` process: a hook runs on every prompt), bounded in
size, and a worktree's or submodule's ``.git`` file is followed to the folder that holds it.
"""

from __future__ import annotations

import re
from functools import cache
from pathlib import Path

from ..core.record import FrozenRecord

__all__ = ["Workspace", "normalise_remote", "same_workspace", "workspace_of"]

MAX_CONFIG_BYTES = 256 << 10  # a git config larger than this is not read
_MAX_WALK = 64  # folders climbed looking for the repository's top

# A remote's URL, read when the config names one (compiled then: `_patterns`).
_SCP = r"^(?:[^@/\s]+@)?([A-Za-z0-9.-]+):(?!//)(.+)$"  # git@host:path
_URLISH = r"^([a-z][a-z0-9+.-]*)://([^/]*)(/.*)?$"


class Workspace(FrozenRecord):
    """`key`: the identity (``github.com/org/repo``, or a folder name); `name`: the folder's
    name; `source`: ``remote`` or ``folder``, how the key was found."""

    key: str
    name: str
    source: str

    def __init__(self, key: str, name: str, source: str) -> None:
        object.__setattr__(self, "key", key)
        object.__setattr__(self, "name", name)
        object.__setattr__(self, "source", source)


def normalise_remote(url: str) -> str | None:
    """``host/path`` for a remote URL that names a host, lower case, without credentials,
    port, scheme, ``.git`` or slashes at the ends; None for a local path or nonsense."""
    url = url.strip().strip('"')
    if not url or any(c.isspace() or ord(c) < 32 for c in url):
        return None
    urlish, scp = _patterns()
    m = urlish.match(url)
    if m:
        scheme, authority, path = m.group(1).lower(), m.group(2), m.group(3) or ""
        if scheme == "file" or not authority:
            return None
        host = authority.rpartition("@")[2]
        host = re.sub(r":\d*$", "", host)  # ssh://host:22/x
    else:
        m = scp.match(url)
        if not m or url.startswith(("/", ".", "~")):
            return None
        host, path = m.group(1), m.group(2)
    path = path.strip("/")
    if path.lower().endswith(".git"):
        path = path[:-4].rstrip("/")
    host = host.strip(".").lower()
    if not host or not path:
        return None
    return f"{host}/{path.lower()}"


@cache
def _patterns() -> tuple[re.Pattern[str], re.Pattern[str]]:
    return re.compile(_URLISH, re.IGNORECASE), re.compile(_SCP)


# A config's lines are read with string methods, not patterns: a hook reads the config on
# every prompt, and compiling the three patterns they replace cost more than the rest of
# `workspace_of` (about 4M instructions). Each says what its pattern said, which
# tests/test_workspace.py checks against the pattern:
#   _remote_section  ^\s*\[\s*remote\s+"((?:[^"\\]|\\.)*)"\s*\]
#   _is_section      ^\s*\[
#   _url_value       ^\s*url\s*=\s*(.*?)\s*$  (ignoring case)
# (`\s` and `str.strip` agree on what is white space.)


def _remote_section(line: str) -> str | None:
    """The name in a ``[remote "NAME"]`` line (escapes as written), else None."""
    rest = line.lstrip()
    if not rest.startswith("["):
        return None
    rest = rest[1:].lstrip()
    if not rest.startswith("remote"):
        return None
    after = rest[6:]
    quoted = after.lstrip()
    if len(quoted) == len(after) or not quoted.startswith('"'):
        return None  # no white space after `remote`, or no quote
    i = 1
    while i < len(quoted):
        c = quoted[i]
        if c == '"':
            break
        if c == "\\":
            if i + 1 >= len(quoted) or quoted[i + 1] == "\n":
                return None
            i += 2
        else:
            i += 1
    else:
        return None  # no closing quote
    return quoted[1:i] if quoted[i + 1 :].lstrip().startswith("]") else None


def _is_section(line: str) -> bool:
    return line.lstrip().startswith("[")


def _url_value(line: str) -> str | None:
    """The value of a ``url = VALUE`` line (the name in any case), else None."""
    name, eq, value = line.partition("=")
    name, value = name.strip(), value.strip()
    if not eq or "\n" in value:  # (never in a line of `str.splitlines`)
        return None
    return value if len(name) == 3 and name.lower() == "url" else None


def _top(start: Path) -> Path | None:
    """The nearest folder at or above `start` that holds ``.git``."""
    folder = start
    for _ in range(_MAX_WALK):
        try:
            if (folder / ".git").exists():
                return folder
        except OSError:
            return None
        if folder.parent == folder:
            return None
        folder = folder.parent
    return None


def _git_dir(top: Path) -> Path | None:
    """The folder holding the repository's config: ``.git`` itself, or where a worktree's
    or submodule's ``.git`` file points (a worktree's shared config is in its common dir)."""
    dot_git = top / ".git"
    if dot_git.is_dir():
        return dot_git
    try:
        with dot_git.open("rb") as f:
            first = f.read(4096).decode("utf-8", "replace").strip()
    except OSError:
        return None
    if not first.startswith("gitdir:"):
        return None
    target = Path(first[len("gitdir:") :].strip())
    gitdir = target if target.is_absolute() else top / target
    try:
        common = (gitdir / "commondir").read_text(encoding="utf-8", errors="replace").strip()
    except OSError:
        return gitdir
    common_dir = Path(common)
    return common_dir if common_dir.is_absolute() else gitdir / common_dir


def _remotes(config: Path) -> dict[str, str]:
    """Remote name -> URL, in the order the config names them (first URL of each)."""
    try:
        with config.open("rb") as f:
            text = f.read(MAX_CONFIG_BYTES).decode("utf-8", "replace")
    except OSError:
        return {}
    out: dict[str, str] = {}
    current: str | None = None
    for line in text.splitlines():
        section = _remote_section(line)
        if section is not None:
            current = section
            continue
        if _is_section(line):
            current = None
            continue
        url = _url_value(line) if current is not None and current not in out else None
        if url is not None and current is not None:
            out[current] = url
    return out


def workspace_of(cwd: str | Path | None) -> Workspace | None:
    """The workspace `cwd` is in, or None without a folder."""
    if cwd is None or str(cwd) == "":
        return None
    start = Path(cwd).absolute()
    top = _top(start)
    folder = top or start
    name = folder.name or str(folder)
    if top is not None:
        gitdir = _git_dir(top)
        remotes = _remotes(gitdir / "config") if gitdir else {}
        ordered = ([remotes["origin"]] if "origin" in remotes else []) + list(remotes.values())
        for url in ordered:
            key = normalise_remote(url)
            if key:
                return Workspace(key=key, name=name, source="remote")
    return Workspace(key=name, name=name, source="folder") if name else None


def same_workspace(scope_key: str | None, workspace: Workspace | str | None) -> bool:
    """Whether a rule keyed `scope_key` belongs to `workspace` (case does not matter)."""
    if scope_key is None or workspace is None:
        return False
    key = workspace.key if isinstance(workspace, Workspace) else workspace
    return scope_key.strip().lower() == key.strip().lower()
