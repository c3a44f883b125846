"""The files a user names: written safely, read with a cap.

`write_file(path, data)` is the one way Playbook writes a file a person (or an agent)
named: an export, a policy file, an agent's settings, AGENTS.md. What it does depends on
what is at `path`:

* `-`: standard output;
* nothing, or a regular file: the data goes to a temporary file in the same folder, which
  then replaces it in one step (a reader never sees half a file, a failed write leaves the
  old one); a new file is made 0600, 0640 in a folder a group shares (set-group-ID) (a
  file meant for others, `private=False`: a project's AGENTS.md or its agent settings,
  0666 less the umask, as any program makes one), and a file replaced keeps its
  permissions and, where the writer may give it, its owner;
* a device, a FIFO or a socket (`/dev/null`, `/dev/stdout`, a named pipe): written
  through, never replaced: renaming a temporary file over `/dev/null` as root turns it
  into a regular file for the whole machine; a FIFO nothing reads is given up after
  `READER_WAIT` seconds, never waited on for ever;
* a symbolic link to a regular file in the link's own folder: that file is replaced and
  the link kept; one to a regular file elsewhere is refused (`UnsafePath`): following it
  silently would let a link planted in a shared folder overwrite any file of the user's;
* a folder, or a path whose folder does not exist: refused.

`write_target(path)` says where a write would go, and what is there, refusing as
`write_file` would: for a writer that reads the file first (a merge) or must check before
it writes anything.

`read_capped(source, max_bytes)` reads a file, `-` (standard input), a device or a pipe,
and stops as soon as more than `max_bytes` came: `/dev/zero`, `/dev/urandom` or a
1.4 GB stdin cost `max_bytes` of memory and a refusal, never an exhausted machine;
`Capped` does the same for a reader that reads a stream itself. `loads_json` reads JSON a
user gave, refusing an object that names one key twice (which one would win is a guess).
"""

from __future__ import annotations

import contextlib
import errno
import io
import json
import os
import stat
import sys
import time
from pathlib import Path
from typing import Any, BinaryIO, Protocol, TextIO

from .errors import InvalidInput, PlaybookError

CHUNK = 1 << 20


class UnsafePath(PlaybookError):
    """A path Playbook will not write or read as asked (a folder, a link out of its folder,
    a file too large): a user error, with the reason."""

    code = "file_error"


class TooLarge(InvalidInput):
    """An input over its `--max-size`: `size` bytes came (at least), `limit` allowed."""

    def __init__(self, message: str, size: int = 0, limit: int = 0) -> None:
        super().__init__(message)
        self.size = size
        self.limit = limit


def _shown(path: Path | str) -> str:
    from .inert import inert  # lazy: hook prompt

    return inert(str(path), one_line=True)


def write_file(
    path: str | os.PathLike[str], data: str | bytes, *, private: bool = True
) -> Path | None:
    """Write `data` (text as UTF-8) to `path` as the module's docstring says; returns the
    file written (the target of a link), or None for standard output."""
    raw = data.encode("utf-8") if isinstance(data, str) else data
    if str(path) == "-":
        sys.stdout.flush()
        sys.stdout.buffer.write(raw)
        sys.stdout.buffer.flush()
        return None
    target, info = write_target(path)
    if info is not None and not stat.S_ISREG(info.st_mode):
        _write_through(target, raw)  # a device, a FIFO, a socket: never replaced
        return target
    _replace(target, raw, info, private=private)
    return target


def write_target(path: str | os.PathLike[str]) -> tuple[Path, os.stat_result | None]:
    """The file `write_file(path, …)` would write (a link's target) and what is there now
    (None: nothing yet); `UnsafePath` for what it would refuse (a folder, a link out of its
    folder, a path it cannot look at)."""
    path = Path(path).expanduser()
    try:
        info: os.stat_result | None = path.lstat()
    except FileNotFoundError:
        info = None
    except OSError as exc:
        raise UnsafePath(f"cannot write {_shown(path)}: {exc.strerror or exc}") from None
    target = path
    if info is not None and stat.S_ISLNK(info.st_mode):
        target, info = _through_link(path)
    if info is not None and stat.S_ISDIR(info.st_mode):
        raise UnsafePath(f"{_shown(path)} is a folder; give a file name")
    return target, info


def _through_link(link: Path) -> tuple[Path, os.stat_result | None]:
    """The file a link leads to, and what it is; a regular file outside the link's own
    folder is refused."""
    target = Path(os.path.realpath(link))
    try:
        info: os.stat_result | None = target.stat()
    except FileNotFoundError:
        info = None
    except OSError as exc:
        raise UnsafePath(f"cannot write {_shown(link)}: {exc.strerror or exc}") from None
    if info is not None and not stat.S_ISREG(info.st_mode):
        return target, info  # a device or a pipe: written through below
    folder = Path(os.path.realpath(link.parent))
    if target.parent != folder and not target.parent.is_dir():
        raise UnsafePath(  # a link committed from its author's machine, say
            f"{_shown(link)} is a symbolic link to {_shown(target)}, in a folder this "
            "machine does not have: nothing written"
        )
    if target.parent != folder:
        raise UnsafePath(
            f"{_shown(link)} is a symbolic link to {_shown(target)}, outside its folder: not "
            "followed",
            hint="write to that path itself if it is the one you mean",
        )
    return target, info


READER_WAIT = 10.0  # seconds a FIFO may go without a reader before the write gives up


def _write_through(path: Path, data: bytes) -> None:
    try:
        if stat.S_ISFIFO(path.stat().st_mode):
            fd = _reader_waiting(path)
        else:
            fd = os.open(path, os.O_WRONLY)  # no O_CREAT, no O_TRUNC: it is a device
        with open(fd, "wb", buffering=0) as fh:
            view = memoryview(data)
            while view:
                view = view[fh.write(view) :]
    except OSError as exc:
        raise UnsafePath(f"cannot write {_shown(path)}: {exc.strerror or exc}") from None


def _reader_waiting(path: Path) -> int:
    """The FIFO opened to write once something reads it (waiting up to READER_WAIT: a
    plain open would wait for ever), blocking again for the write itself."""
    deadline = time.monotonic() + READER_WAIT
    while True:
        try:
            fd = os.open(path, os.O_WRONLY | os.O_NONBLOCK)
        except OSError as exc:
            if exc.errno != errno.ENXIO:  # ENXIO: no reader yet
                raise
        else:
            os.set_blocking(fd, True)
            return fd
        if time.monotonic() > deadline:
            raise UnsafePath(
                f"nothing read the FIFO {_shown(path)} for {READER_WAIT:g} s: not written"
            )
        time.sleep(0.05)


def new_file_mode(folder: Path) -> int:
    """0600, or 0640 in a folder a group shares (its set-group-ID bit is on)."""
    try:
        shared = bool(folder.stat().st_mode & stat.S_ISGID)
    except OSError:
        shared = False
    return 0o640 if shared else 0o600


def private_folder(folder: Path) -> None:
    """Make `folder`, and each of its parents that is missing, this user's only (0700)."""
    missing = []
    for parent in (folder, *folder.parents):
        if parent.exists():
            break
        missing.append(parent)
    for parent in reversed(missing):
        parent.mkdir(mode=0o700, exist_ok=True)


def open_private(path: Path, flags: int = os.O_WRONLY | os.O_APPEND) -> int:
    """A descriptor on `path`, a file of Playbook's own (a log, a session's memory, a
    lock), opened with `flags`: made 0600 (0640 in a folder a group shares) if new, in a
    folder made 0700 (each missing parent too) if missing."""
    private_folder(path.parent)
    return os.open(path, flags | os.O_CREAT, new_file_mode(path.parent))


def open_append(path: Path, *, errors: str = "strict") -> TextIO:
    """`path` opened to append text (UTF-8), made as `open_private` says: a log or a
    session file of Playbook's own."""
    return os.fdopen(open_private(path), "a", encoding="utf-8", errors=errors)


def create_private(path: Path) -> None:
    """Make `path` an empty file readable by its owner alone (0640 in a folder a group
    shares), unless something is there already: a new database file, before SQLite opens
    it (SQLite gives its journal and WAL files the database file's permissions)."""
    with contextlib.suppress(FileExistsError):
        os.close(os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, new_file_mode(path.parent)))


def _replace(path: Path, data: bytes, old: os.stat_result | None, *, private: bool) -> None:
    import tempfile  # lazy: hook prompt (a hook that only appends to its log: nor shutil)

    folder = path.parent if str(path.parent) else Path(".")
    if not folder.is_dir():
        raise UnsafePath(f"no such folder: {_shown(folder)}")
    if old is not None:
        mode = stat.S_IMODE(old.st_mode)
    else:
        mode = new_file_mode(folder) if private else 0o666 & ~_umask()
    try:
        fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=folder)
    except OSError as exc:
        raise UnsafePath(f"cannot write in {_shown(folder)}: {exc.strerror or exc}") from None
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
            fh.flush()
            os.fsync(fh.fileno())
            os.fchmod(fh.fileno(), mode)
            if old is not None and (old.st_uid, old.st_gid) != (os.getuid(), os.getgid()):
                with contextlib.suppress(OSError):  # not ours to give: the writer's it is
                    os.fchown(fh.fileno(), old.st_uid, old.st_gid)
        os.replace(tmp, path)
    except BaseException as exc:
        Path(tmp).unlink(missing_ok=True)
        if isinstance(exc, OSError):
            raise UnsafePath(f"cannot write {_shown(path)}: {exc.strerror or exc}") from None
        raise
    with contextlib.suppress(OSError):  # the rename itself, on disk
        dir_fd = os.open(folder, os.O_RDONLY)
        try:
            os.fsync(dir_fd)
        finally:
            os.close(dir_fd)


def _umask() -> int:
    """The process's umask: read where Linux says it (setting it to read it back, the
    fallback, is not safe while other threads create files)."""
    with (
        contextlib.suppress(OSError, ValueError, StopIteration),
        open("/proc/self/status", encoding="ascii", errors="replace") as fh,
    ):
        return int(next(line for line in fh if line.startswith("Umask:")).split()[1], 8)
    mask = os.umask(0o022)
    os.umask(mask)
    return mask


def read_capped(
    source: str | os.PathLike[str], max_bytes: int, what: str = "input", option: str = "--max-size"
) -> bytes:
    """The bytes of `source` (`-`: standard input; a file, a device or a pipe), refused with
    `TooLarge` as soon as more than `max_bytes` arrived. `FileNotFoundError` and
    `IsADirectoryError` pass through for the caller to word."""
    if str(source) == "-":
        stdin = getattr(sys.stdin, "buffer", None)  # a text stream of tests and embedders
        if stdin is None:
            stdin = io.BytesIO(sys.stdin.read(max_bytes + 1).encode("utf-8", "surrogateescape"))
        return _capped(stdin, max_bytes, f"{what} on stdin", option)
    path = Path(source).expanduser()
    with open(path, "rb") as fh:
        info = os.fstat(fh.fileno())
        if stat.S_ISREG(info.st_mode) and info.st_size > max_bytes:
            raise TooLarge(
                _too_large(f"{what} {_shown(path)}", info.st_size, max_bytes, option),
                info.st_size,
                max_bytes,
            )
        return _capped(fh, max_bytes, f"{what} {_shown(path)}", option)


def _capped(fh: BinaryIO, max_bytes: int, label: str, option: str) -> bytes:
    parts: list[bytes] = []
    size = 0
    read = fh.read
    while True:
        chunk = read(min(CHUNK, max_bytes + 1 - size))
        if not chunk:
            return b"".join(parts)
        parts.append(chunk)
        size += len(chunk)
        if size > max_bytes:
            raise TooLarge(_too_large(label, size, max_bytes, option, more=True), size, max_bytes)


def _too_large(label: str, size: int, limit: int, option: str, *, more: bool = False) -> str:
    got = f"more than {limit:,} bytes" if more else f"{size:,} bytes"
    return f"{label} is {got}, over the {limit:,}-byte limit" + (f" ({option})" if option else "")


class Readable(Protocol):
    """What a reader of an open binary source uses: a file, a pipe, or a `Capped` one."""

    def read(self, size: int = -1, /) -> bytes: ...
    def seekable(self) -> bool: ...
    def seek(self, offset: int, whence: int = 0, /) -> int: ...


class Capped:
    """A binary reader over `raw` that raises `TooLarge` once more than `max_bytes` were
    read through it (seeking, where `raw` can, moves without counting)."""

    def __init__(self, raw: BinaryIO, max_bytes: int, label: str) -> None:
        self.raw = raw
        self.max_bytes = max_bytes
        self.label = label
        self.name = getattr(raw, "name", "")
        self.count = 0

    def read(self, size: int = -1) -> bytes:
        if size is None or size < 0:
            parts = []
            while chunk := self.read(CHUNK):
                parts.append(chunk)
            return b"".join(parts)
        if size == 0:
            return b""
        chunk = self.raw.read(min(size, self.max_bytes + 1 - self.count))
        self.count += len(chunk)
        if self.count > self.max_bytes:
            raise TooLarge(
                _too_large(self.label, self.count, self.max_bytes, "--max-size", more=True)
            )
        return chunk

    def seekable(self) -> bool:
        return self.raw.seekable()

    def seek(self, offset: int, whence: int = 0) -> int:
        return self.raw.seek(offset, whence)

    def close(self) -> None:
        self.raw.close()

    def __enter__(self) -> Capped:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


class DuplicateKey(ValueError):
    """A JSON object that names one key twice."""


def _no_repeats(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for key, value in pairs:
        if key in out:
            raise DuplicateKey(f"the key {key[:40]!r} appears twice in one object")
        out[key] = value
    return out


def loads_json(text: str | bytes) -> Any:
    """`json.loads`, refusing an object with a repeated key (`DuplicateKey`, a ValueError)
    and the non-JSON constants NaN and Infinity."""

    def constant(name: str) -> Any:
        raise ValueError(f"{name} is not JSON")

    return json.loads(text, object_pairs_hook=_no_repeats, parse_constant=constant)


TOML_MAX = 1 << 20  # a policy or candidates file: settings, never megabytes


def read_toml(path: str | os.PathLike[str], max_bytes: int = TOML_MAX) -> dict[str, Any]:
    """A TOML file a user named, read up to `max_bytes`; `tomllib.TOMLDecodeError` for one
    that is not UTF-8 or not TOML (`FileNotFoundError` and `TooLarge` as `read_capped`)."""
    import tomllib  # lazy: hook prompt

    data = read_capped(path, max_bytes, "the TOML file", option="")
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise tomllib.TOMLDecodeError(f"not UTF-8 text (byte {exc.start})") from None
    return tomllib.loads(text)
