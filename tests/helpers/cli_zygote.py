"""A process that has already imported the `playbook` command line and forks one child per
command: each child is a process of its own running the real entry point, as `python -c
"from playbook.cli import run; run()" ARGS` would, without paying the interpreter's start
and the imports again (about a quarter of a second of CPU per command, hundreds of times in
the suite).

Run as a script by `tests/helpers/cli.py`. Protocol, one JSON object per line: a request
on stdin (the `code` that `-c` would run, `argv`, `env`, `cwd`, and the paths for the
child's stdin, stdout and stderr); on stdout `{"pid": ...}` once the child runs, then
`{"rc": ...}` when it has ended.

The child replaces its environment, working directory, standard streams and `sys.argv`,
then runs the entry point and leaves the way a `python -c` process does: on `SystemExit`
(or the end of the code) with its exit status, non-daemon threads joined, its atexit
handlers run, every database connection and file it left open closed and its output
flushed (`_leave`: what the interpreter's finalisation does for a command, without
tearing down the heap inherited from the zygote, which cost more than the command); an
uncaught exception ends the interpreter as usual, its traceback on the child's stderr.
Tests that look at what a fresh interpreter imports run a real subprocess instead.
"""

from __future__ import annotations

import atexit
import builtins
import contextlib
import gc
import importlib
import io
import json
import os
import sqlite3
import sys
import threading
from typing import Any

# What the commands import between them; a child imports only what is missing.
PRELOAD = (
    "playbook.launcher",
    "playbook.cli.typer_app",
    "playbook.cli.fast",
    "playbook.cli.hot",
    "playbook.core.model",
    "playbook.curation",
    "playbook.review.queue",
    "playbook.reflection.session",
    "playbook.retrieval.query",
    "playbook.retrieval.vectors",
    "playbook.review",
    "playbook.interop.importing",
    "playbook.policy_eval",
    "playbook.hooks",
    "numpy",
    "pydantic",
    "yaml",
    "rapidfuzz",
    "sqlite_utils",
    "playbook.store.postgres.executor",  # psycopg, for the PostgreSQL half
)


def main() -> None:
    requests = os.dup(0)
    replies = os.dup(1)
    null = os.open(os.devnull, os.O_RDWR)
    os.dup2(null, 0)
    os.dup2(2, 1)  # a stray print while preloading must not reach the protocol
    os.close(null)
    for name in PRELOAD:
        with contextlib.suppress(ImportError):  # an extra not installed: the child fails then
            importlib.import_module(name)
    sys.path[0] = ""  # `python -c` puts the working directory first
    # Out of the collector's sight: a child's collections (at exit above all) would otherwise
    # touch every preloaded object and copy the whole heap page by page (0.2 s a command).
    gc.collect()
    gc.freeze()
    with os.fdopen(requests, "rb", buffering=0) as incoming:
        while line := _read_line(incoming):
            request = json.loads(line)
            pid = os.fork()
            if pid == 0:
                os.close(replies)
                incoming.close()
                _child(request)  # never returns
            _reply(replies, pid=pid)
            _, status = os.waitpid(pid, 0)
            _reply(replies, rc=os.waitstatus_to_exitcode(status))


def _reply(fd: int, **fields: int) -> None:
    os.write(fd, (json.dumps(fields) + "\n").encode())


def _read_line(stream: io.RawIOBase) -> bytes:
    """One request line (unbuffered, so nothing read ahead is left in a forked child)."""
    line = bytearray()
    while (byte := stream.read(1)) and byte != b"\n":
        line += byte
    return bytes(line)


def _child(request: dict[str, Any]) -> None:
    os.chdir(request["cwd"])
    os.environ.clear()
    os.environ.update(request["env"])
    for fd, path, flags in (
        (0, request["stdin"], os.O_RDONLY),
        (1, request["stdout"], os.O_WRONLY | os.O_CREAT | os.O_TRUNC),
        (2, request["stderr"], os.O_WRONLY | os.O_CREAT | os.O_TRUNC),
    ):
        opened = os.open(path, flags, 0o600)
        os.dup2(opened, fd)
        os.close(opened)
    # New stream objects on the new files, as a fresh interpreter makes them for pipes.
    encoding = sys.stdout.encoding
    sys.stdin = sys.__stdin__ = _text(0, "rb", encoding, "strict")
    sys.stdout = sys.__stdout__ = _text(1, "wb", encoding, "strict")
    sys.stderr = sys.__stderr__ = _text(2, "wb", encoding, "backslashreplace", line_buffering=True)
    sys.argv = ["-c", *request["argv"]]
    code = compile(request["code"], "<string>", "exec")
    try:
        exec(code, {"__name__": "__main__", "__builtins__": builtins})
    except SystemExit as exc:
        _leave(exc.code)
    _leave(None)


def _leave(code: object) -> None:
    """End the child as the interpreter ends a `python -c` process on `SystemExit(code)`,
    without its last step: tearing down the modules preloaded before the fork (about 20 ms
    a command, most of it the kernel copying each page of the inherited heap as its objects
    are freed). What that step does for a command is done here: non-daemon threads joined,
    the atexit handlers run, the standard streams flushed, every database connection and
    file still open closed (as freeing them would). An uncaught exception other than
    SystemExit takes the interpreter's own way out, traceback and all."""
    if code is None:
        status = 0
    elif isinstance(code, int):
        status = code
    else:
        print(code, file=sys.stderr)
        status = 1
    for thread in threading.enumerate():
        if thread is not threading.main_thread() and not thread.daemon:
            thread.join()
    atexit._run_exitfuncs()
    standard = [sys.stdin, sys.stdout, sys.stderr]
    for stream in standard[1:]:
        try:
            stream.flush()
        except Exception:
            status = 120  # as the interpreter exits when it cannot flush them
    keep = {id(s) for s in standard} | {id(getattr(s, "buffer", None)) for s in standard}
    closable = [sqlite3.Connection, io.IOBase]
    if "psycopg" in sys.modules:
        closable.append(sys.modules["psycopg"].Connection)
    for obj in gc.get_objects():  # (what was made after the fork: frozen objects are not listed)
        if isinstance(obj, tuple(closable)) and id(obj) not in keep:
            with contextlib.suppress(Exception):
                obj.close()
    os._exit(status)


def _text(fd: int, mode: str, encoding: str, errors: str, **kw: bool) -> io.TextIOWrapper:
    return io.TextIOWrapper(open(fd, mode, closefd=False), encoding, errors, **kw)


if __name__ == "__main__":
    main()
