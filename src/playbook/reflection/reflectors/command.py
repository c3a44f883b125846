"""The command reflector: runs a program with the prompt on stdin, reads JSON deltas back."""

from __future__ import annotations

import contextlib
import io
import math
import os
import shlex
import signal
import subprocess
import threading
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from .base import ProposedItem, ReflectorError
from .lenient_json import parse_deltas
from .offsets import best_offset, passage_index
from .prompt import build_prompt

if TYPE_CHECKING:
    from playbook.reflection.diaries import Diary

__all__ = ["CommandReflector"]

_STDERR_TAIL = 4096  # bytes of stderr kept for error messages
MAX_TIMEOUT = 86400.0  # a day: a reflector that runs longer is stuck
_READ_CHUNK = 65536


class CommandReflector:
    """Runs a program with the reflection prompt on stdin and reads JSON deltas from stdout.

    ``command`` is an argument list, or a string split with ``shlex.split``; it is run
    directly (``shell=False``), so nothing in the command or the diary is ever interpreted by
    a shell. The prompt is ``build_prompt(diary, playbook, prior)``; the output is parsed with
    ``parse_deltas``; each item's offset comes from ``match_offset``.

    ``max_prompt_chars`` bounds the prompt (`Policy.reflect_prompt_chars`: the diary goes
    in as a digest, see `build_prompt`); None sends the whole diary.
    ``timeout`` (seconds) bounds the whole run and ``max_output`` (bytes) bounds stdout: past
    either, the program (with its process group, on POSIX) is killed and ``ReflectorError``
    raised. So is a missing program, a non-zero exit (with the tail of stderr), or output
    with no JSON deltas in it. ``env`` replaces the environment, as in ``subprocess``.
    """

    def __init__(
        self,
        command: str | Sequence[str],
        *,
        timeout: float = 120,
        max_output: int = 1_000_000,
        env: Mapping[str, str] | None = None,
        max_prompt_chars: int | None = None,
    ) -> None:
        args = shlex.split(command) if isinstance(command, str) else [str(a) for a in command]
        if not args:
            raise ValueError("CommandReflector needs a command to run")
        if not (math.isfinite(timeout) and 0 < timeout <= MAX_TIMEOUT):
            raise ValueError(
                f"the timeout is a number of seconds above 0 and at most {MAX_TIMEOUT:g}, "
                f"not {timeout!r}"
            )
        if max_output <= 0:
            raise ValueError("max_output must be positive")
        if max_prompt_chars is not None and max_prompt_chars <= 0:
            raise ValueError("max_prompt_chars must be positive")
        self.args = args
        self.timeout = timeout
        self.max_output = max_output
        self.env = dict(env) if env is not None else None
        self.max_prompt_chars = max_prompt_chars

    def __repr__(self) -> str:
        return f"CommandReflector({shlex.join(self.args)!r}, timeout={self.timeout})"

    def propose(
        self, diary: Diary, playbook: list[dict[str, Any]], prior: list[dict[str, Any]]
    ) -> list[ProposedItem]:
        prompt = build_prompt(diary, playbook, prior, self.max_prompt_chars)
        output, stderr = self._run(prompt)
        items = parse_deltas(output)
        if items is None:
            head = " ".join(output.split())[:80]
            detail = f", starting {head!r}" if head else ""
            tail = f"; stderr: {stderr}" if stderr else ""
            raise ReflectorError(
                f"{self._name} printed no JSON deltas ({len(output)} characters{detail}){tail}"
            )
        index = passage_index(diary)
        return [ProposedItem(item, best_offset(item, index)) for item in items]

    @property
    def _name(self) -> str:
        return os.path.basename(self.args[0]) or self.args[0]

    def run(self, prompt: str) -> str:
        """Run the program with ``prompt`` on stdin and return its stdout as text."""
        return self._run(prompt)[0]

    def _run(self, prompt: str) -> tuple[str, str]:
        """(stdout, the tail of stderr on one line); ReflectorError on any failure."""
        try:
            proc = subprocess.Popen(
                self.args,
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                shell=False,
                env=self.env,
                start_new_session=os.name == "posix",
            )
        except FileNotFoundError:
            raise ReflectorError(f"reflector command not found: {self.args[0]}") from None
        except PermissionError:
            raise ReflectorError(f"reflector command not executable: {self.args[0]}") from None
        except OSError as exc:
            raise ReflectorError(f"could not start {self.args[0]}: {exc}") from None

        out = bytearray()
        err = bytearray()
        overflow = threading.Event()

        def feed() -> None:
            assert proc.stdin is not None
            try:
                proc.stdin.write(prompt.encode("utf-8", errors="replace"))
            except OSError:
                pass  # the program exited or closed stdin without reading it all
            finally:
                with contextlib.suppress(OSError):
                    proc.stdin.close()

        def read_stdout() -> None:
            assert isinstance(proc.stdout, io.BufferedReader)  # a PIPE, buffered: read1
            while chunk := proc.stdout.read1(_READ_CHUNK):
                out.extend(chunk)
                if len(out) > self.max_output:
                    overflow.set()
                    _kill(proc)
                    return

        def read_stderr() -> None:
            assert isinstance(proc.stderr, io.BufferedReader)
            while chunk := proc.stderr.read1(_READ_CHUNK):
                err.extend(chunk)
                del err[:-_STDERR_TAIL]

        threads = [
            threading.Thread(target=fn, name=f"reflector-{fn.__name__}", daemon=True)
            for fn in (feed, read_stdout, read_stderr)
        ]
        for t in threads:
            t.start()
        timed_out = False
        try:
            proc.wait(timeout=self.timeout)
        except subprocess.TimeoutExpired:
            timed_out = True
            _kill(proc)
            proc.wait()
        except BaseException:  # interrupted (Ctrl-C): never leave the program running
            _kill(proc)
            raise
        for t in threads[1:]:
            t.join(timeout=2.0)  # a stray grandchild may hold the pipes; don't wait forever

        if overflow.is_set():
            raise ReflectorError(
                f"{self._name} printed more than {self.max_output} bytes; stopped and killed it"
            )
        if timed_out:
            raise ReflectorError(f"{self._name} timed out after {self.timeout:g}s; killed it")
        if proc.returncode != 0:
            how = (
                f"was killed by signal {-proc.returncode}"
                if proc.returncode < 0
                else f"exited with status {proc.returncode}"
            )
            tail = _tail(bytes(err))
            raise ReflectorError(f"{self._name} {how}" + (f": {tail}" if tail else ""))
        return bytes(out).decode("utf-8", errors="replace"), _tail(bytes(err))


def _kill(proc: subprocess.Popen[bytes]) -> None:
    """Kill the program and, on POSIX, everything it started in its session."""
    if os.name == "posix":
        try:
            os.killpg(proc.pid, signal.SIGKILL)
            return
        except (ProcessLookupError, PermissionError):
            pass
    with contextlib.suppress(ProcessLookupError):
        proc.kill()


def _tail(stderr: bytes, limit: int = 200) -> str:
    """The last non-blank lines of stderr, on one line, at most ``limit`` characters."""
    lines = [ln.strip() for ln in stderr.decode("utf-8", errors="replace").splitlines()]
    text = " | ".join(ln for ln in lines if ln)
    return text if len(text) <= limit else "…" + text[-(limit - 1) :]
