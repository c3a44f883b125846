"""The demo playbook, built once per version and demo content and kept in the user's cache.

`playbook demo` opens a copy of it, so the first screen does not wait for nine months of
history to be replayed. The cached demo lives in `$XDG_CACHE_HOME/playbook/demo-<key>/`
(`~/.cache/playbook/...` without it), where the key hashes Playbook's version and the demo's
own code and content: a new version or new content builds a new one (and older ones are
removed). A demo older than `MAX_AGE` is rebuilt too: its history is dated relative to when
it was built, and "proposed 40 minutes ago" should not read "proposed three weeks ago".

No Textual here: this module is part of the core.
"""

from __future__ import annotations

import os
import shutil
import time
from collections.abc import Mapping
from dataclasses import replace
from pathlib import Path

from .build import DIARY_NAME, DemoPlaybook, Progress, build_demo
from .template import demo_key, instantiate

DEMO_FILE = "demo.sqlite3"
MAX_AGE_SECONDS = 7 * 24 * 3600


def cache_root(env: Mapping[str, str] | None = None) -> Path:
    """Playbook's folder in the user's cache (XDG: a relative $XDG_CACHE_HOME is ignored)."""
    env = os.environ if env is None else env
    base = env.get("XDG_CACHE_HOME", "")
    root = Path(base) if base and Path(base).is_absolute() else Path.home() / ".cache"
    return root / "playbook"


def demo_folder(root: Path) -> Path:
    return root / f"demo-{demo_key()}"


def cached_demo(root: Path, *, now: float | None = None) -> Path | None:
    """The cached demo for this version and content, if there is one young enough."""
    path = demo_folder(root) / DEMO_FILE
    try:
        built = path.stat().st_mtime
    except OSError:
        return None
    if (time.time() if now is None else now) - built > MAX_AGE_SECONDS:
        return None
    return path


def make_demo(
    path: Path, progress: Progress | None = None, *, replay: bool = False
) -> DemoPlaybook:
    """A new demo at `path`: the build shipped with the package, dated now (under a
    second), or, with `replay` or when the shipped one is not this demo's, a build that
    replays the history through the API (seconds)."""
    info = None
    if not replay:
        if progress is not None:
            progress(0.0, "restoring the demo shipped with Playbook")
        info = instantiate(path)
    return info or build_demo(path, progress=progress)


def build_cached_demo(
    root: Path, progress: Progress | None = None, *, replay: bool = False
) -> DemoPlaybook:
    """Make the demo in the cache (its diary beside it; see `make_demo`) and return it.

    The file is made under a name of its own and renamed into place when complete, so a
    reader never sees half a demo and two builds at once do not collide; demos of other
    versions or content are removed."""
    folder = demo_folder(root)
    folder.mkdir(parents=True, exist_ok=True)
    partial = folder / f"{DEMO_FILE}.{os.getpid()}.partial"
    for leftover in folder.glob(f"{partial.name}*"):
        leftover.unlink()
    info = make_demo(partial, progress, replay=replay)
    final = folder / DEMO_FILE
    os.replace(partial, final)
    for old in root.glob("demo-*"):
        if old.is_dir() and old != folder:
            shutil.rmtree(old, ignore_errors=True)
    return replace(info, path=final, diary_path=folder / DIARY_NAME)


def copy_demo(source: Path, target: Path) -> Path:
    """A working copy of a built demo (the workbench writes to it; the cache stays as built)."""
    shutil.copyfile(source, target)
    return target
