"""The project's playbook: a small committed file says where a repository's playbook is.

A ``.playbook.toml`` in the repository (or a ``[tool.playbook]`` table in its
``pyproject.toml``) names it one of two ways:

    db = ".playbook/playbook.sqlite3"   # a file inside the repository, relative to it
    db_env = "TEAM_PLAYBOOK_URL"        # an environment variable holding a postgresql:// URL

The file is committed and read by every teammate's agent, so it never holds a location an
agent's prompts could be sent to, nor a secret: ``db`` is a relative path that stays inside
the repository once resolved (no absolute path, no ``..`` or link out of it, no URL), and a
server's URL, with its password, stays in each machine's environment. Anything else (an
unknown key, a value of the wrong type, both keys, a variable that is unset or not a
``postgresql://`` URL, a file over `MAX_CONFIG_BYTES`) is a `ProjectConfigError`, never a
silent fall back to another playbook.

The file is looked for from the working folder up to the repository's top (the nearest
folder holding ``.git``), ``.playbook.toml`` before ``pyproject.toml`` in each folder.

`locate_playbook` is the one order every command and hook follows: ``--db``, then
``$PLAYBOOK_DB``, then the project's config, then the default file
``$XDG_DATA_HOME/playbook/state.sqlite3``.
"""

from __future__ import annotations

import os
import re
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from ..core.record import FrozenRecord

__all__ = [
    "CONFIG_NAME",
    "Located",
    "ProjectConfig",
    "ProjectConfigError",
    "default_playbook_path",
    "find_project_config",
    "locate_playbook",
]

CONFIG_NAME = ".playbook.toml"
PYPROJECT = "pyproject.toml"
MAX_CONFIG_BYTES = 64 << 10  # a .playbook.toml larger than this is not a config
MAX_PYPROJECT_BYTES = 1 << 20
_MAX_WALK = 64  # folders climbed looking for the config
_ENV_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]{0,127}")
_SCHEME = re.compile(r"^[A-Za-z][A-Za-z0-9+.-]*:")
_KEYS = ("db", "db_env")


class ProjectConfigError(ValueError):
    """A project config that cannot be used; the message names the file and says why."""


class ProjectConfig(FrozenRecord):
    """`path`: the file read; `target`: the playbook it names (a file path, or the URL
    taken from the environment); `how`: ``db = …`` or ``db_env = NAME``, for messages."""

    path: Path
    target: str
    how: str

    def __init__(self, path: Path, target: str, how: str) -> None:
        object.__setattr__(self, "path", path)
        object.__setattr__(self, "target", target)
        object.__setattr__(self, "how", how)

    @property
    def root(self) -> Path:
        return self.path.parent


class Located(FrozenRecord):
    """Where the playbook is (`target`: a path or a URL) and why (`source`)."""

    target: str
    source: str  # "--db", "$PLAYBOOK_DB", "project", "default"
    config: ProjectConfig | None

    def __init__(self, target: str, source: str, config: ProjectConfig | None = None) -> None:
        object.__setattr__(self, "target", target)
        object.__setattr__(self, "source", source)
        object.__setattr__(self, "config", config)

    def describe(self) -> str:
        if self.config is not None:
            return f"{self.config.path}: {self.config.how}"
        return {"--db": "--db", "$PLAYBOOK_DB": "$PLAYBOOK_DB"}.get(self.source, "the default")


def default_playbook_path(env: Mapping[str, str] | None = None) -> Path:
    env = os.environ if env is None else env
    base = env.get("XDG_DATA_HOME") or str(Path.home() / ".local" / "share")
    return Path(base) / "playbook" / "state.sqlite3"


def locate_playbook(
    given: str | None,
    cwd: str | Path | None,
    env: Mapping[str, str] | None = None,
) -> Located:
    """The playbook a command run in `cwd` uses: `given` (``--db``), else ``$PLAYBOOK_DB``
    (set, even empty: the caller refuses an empty one), else the project's config found
    from `cwd`, else the default file. `ProjectConfigError` for an unusable config."""
    env = os.environ if env is None else env
    if given is not None:
        return Located(given, "--db")
    if "PLAYBOOK_DB" in env:
        return Located(env["PLAYBOOK_DB"], "$PLAYBOOK_DB")
    config = find_project_config(cwd, env) if cwd else None
    if config is not None:
        return Located(config.target, "project", config)
    return Located(str(default_playbook_path(env)), "default")


def find_project_config(
    cwd: str | Path, env: Mapping[str, str] | None = None
) -> ProjectConfig | None:
    """The project config that applies in `cwd` (see the module doc), or None."""
    env = os.environ if env is None else env
    folder = Path(cwd).absolute()
    for _ in range(_MAX_WALK):
        for name, table in ((CONFIG_NAME, None), (PYPROJECT, ("tool", "playbook"))):
            path = folder / name
            try:
                if not path.is_file():
                    continue
            except OSError:
                continue
            values = _read(path, table)
            if values is not None:
                return _config(path, values, env)
        try:
            at_top = (folder / ".git").exists()
        except OSError:
            at_top = True
        if at_top or folder.parent == folder:
            return None
        folder = folder.parent
    return None


def _read(path: Path, table: tuple[str, ...] | None) -> dict[str, Any] | None:
    """The settings in `path` (its `table`, for pyproject.toml; None when it has none)."""
    import tomllib  # lazy: mark, recall

    limit = MAX_CONFIG_BYTES if table is None else MAX_PYPROJECT_BYTES
    try:
        with path.open("rb") as f:
            data = f.read(limit + 1)
    except OSError as exc:
        raise ProjectConfigError(f"cannot read {path}: {exc.strerror or exc}") from None
    if len(data) > limit:
        raise ProjectConfigError(f"{path} is over {limit:,} bytes: not a Playbook config")
    try:
        doc: Any = tomllib.loads(data.decode("utf-8"))
    except (UnicodeDecodeError, tomllib.TOMLDecodeError) as exc:
        raise ProjectConfigError(f"{path}: not valid TOML ({exc})") from None
    for key in table or ():
        doc = doc.get(key) if isinstance(doc, dict) else None
        if doc is None:
            return None
    if not isinstance(doc, dict):
        raise ProjectConfigError(f"{path}: [{'.'.join(table or ())}] must be a table")
    return doc


def _config(path: Path, values: dict[str, Any], env: Mapping[str, str]) -> ProjectConfig:
    unknown = sorted(set(values) - set(_KEYS))
    if unknown:
        raise ProjectConfigError(
            f"{path}: unknown setting {unknown[0]!r} (a project config has db or db_env)"
        )
    given = [k for k in _KEYS if k in values]
    if len(given) != 1:
        raise ProjectConfigError(f"{path}: give exactly one of db (a path) and db_env")
    (key,) = given
    value = values[key]
    if not isinstance(value, str) or not value.strip():
        raise ProjectConfigError(f"{path}: {key} must be a non-empty string")
    if key == "db":
        return ProjectConfig(path, str(_inside(path, value)), f"db = {value}")
    return ProjectConfig(path, _from_env(path, value, env), f"db_env = {value}")


def _inside(path: Path, value: str) -> Path:
    """The file `value` names, relative to the config's folder, which it must not leave."""
    if "\x00" in value or _SCHEME.match(value) or "://" in value:
        raise ProjectConfigError(
            f"{path}: db must be a path inside the repository, not a URL (name a server "
            "with db_env, the environment variable that holds its URL)"
        )
    relative = Path(value)
    if relative.is_absolute() or value.startswith("~"):
        raise ProjectConfigError(f"{path}: db must be a path relative to {path.parent}")
    root = Path(os.path.realpath(path.parent))
    target = Path(os.path.realpath(root / relative))
    if not target.is_relative_to(root):
        raise ProjectConfigError(f"{path}: db {value!r} leads out of {path.parent}")
    return target


def _from_env(path: Path, name: str, env: Mapping[str, str]) -> str:
    if not _ENV_NAME.fullmatch(name):
        raise ProjectConfigError(f"{path}: db_env must name an environment variable")
    url = env.get(name)
    if not url:
        raise ProjectConfigError(
            f"{path} takes the playbook's URL from ${name}, which is not set here"
        )
    if not url.lower().startswith(("postgresql://", "postgres://")):
        raise ProjectConfigError(f"${name} (named by {path}) is not a postgresql:// URL")
    return url
