"""`playbook --help` printed from the text typer printed last time, while nothing it was
made from has changed.

To print the top-level help, typer imports every command module and inspects every
command's signature: about 0.1 s of a `playbook --help` that would otherwise start in a
few tens of milliseconds. The text depends only on the code that made it and on the
terminal's width, so the launcher keeps typer's own output in a small cache file, with the
path, modification time and size of every module loaded to make it. When any of them
changed (an edit, an upgrade of typer or of Python) or the width differs, typer renders the
help again and the file is rewritten. The file lives in `$XDG_CACHE_HOME/playbook` (else
`~/.cache/playbook`), one per environment, installation and width; when it cannot be read
or written, the help is simply rendered, as without it.
"""

from __future__ import annotations

import io
import json
import os
import shutil
import sys
import zlib
from contextlib import redirect_stdout
from pathlib import Path

from . import main

FORMAT = 1


def cache_file(width: int) -> Path:
    """Where the help for this environment, this installation and `width` is kept."""
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    where = zlib.crc32(f"{sys.prefix}\0{__file__}\0{width}".encode())
    return Path(base) / "playbook" / f"help-{width}-{where:08x}.json"


def _stamp(path: str) -> list[object] | None:
    try:
        st = os.stat(path)
    except OSError:
        return None
    return [path, st.st_mtime_ns, st.st_size]


def cached(width: int) -> str | None:
    """The help kept for `width`, if every file it was made from is as it was then."""
    try:
        with open(cache_file(width), encoding="utf-8") as f:
            kept = json.load(f)
        if kept["format"] != FORMAT or kept["version"] != sys.version:
            return None
        for stamp in kept["files"]:
            if _stamp(stamp[0]) != stamp:
                return None
        text = kept["text"]
    except (OSError, ValueError, KeyError, TypeError, IndexError):
        return None
    return text if isinstance(text, str) and text else None


def remember(width: int, text: str) -> None:
    """Keep `text`, made by the modules loaded now, for `width` (silently, if at all)."""
    files = sorted(
        {
            f
            for m in list(sys.modules.values())
            if isinstance(f := getattr(m, "__file__", None), str)
        }
    )
    stamps = [s for f in files if (s := _stamp(f)) is not None]
    path = cache_file(width)
    kept = {"format": FORMAT, "version": sys.version, "files": stamps, "text": text}
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        partial = path.with_name(f"{path.name}.{os.getpid()}.tmp")
        partial.write_text(json.dumps(kept), encoding="utf-8")
        os.replace(partial, path)
    except OSError:
        pass


def show_help() -> int:
    """Print the top-level help (`playbook --help`); the exit status."""
    width = shutil.get_terminal_size().columns  # what typer's formatter reads
    text = cached(width)
    if text is None:
        out = io.StringIO()
        with redirect_stdout(out):
            status = main(["--help"])
        text = out.getvalue()
        if status != 0 or not text:
            sys.stdout.write(text)
            return status
        remember(width, text)
    sys.stdout.write(text)
    sys.stdout.flush()  # as click's echo does: a closed pipe is an error here, not at exit
    return 0
