"""A throwaway PostgreSQL server in a folder of its own: for the tests, the benches and CI.

    python -m playbook.store.postgres.cluster start DIR   # prints the URL
    python -m playbook.store.postgres.cluster stop DIR

`initdb` and `pg_ctl` come from the machine's PostgreSQL server package (Debian's
`postgresql` puts them in /usr/lib/postgresql/VERSION/bin). The server listens on a free
loopback port and a socket in DIR, trusts local logins (it holds nothing but test data),
and runs without fsync (a crash loses nothing anyone wants). Run as root, it runs as the
`postgres` user (PostgreSQL refuses to run as root), in a DIR that user owns.

`Cluster.start(..., owner_pid=N)` also starts a watchdog that stops the server when
process N is gone, so a killed test run leaves no server behind.
"""

from __future__ import annotations

import glob
import os
import shutil
import socket
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

SETTINGS = (
    "-c fsync=off -c synchronous_commit=off -c full_page_writes=off "
    "-c max_connections=300 -c shared_buffers=128MB -c max_locks_per_transaction=256"
)


class ClusterError(RuntimeError):
    """The server could not be started (say why, and what to install)."""


def binaries() -> Path | None:
    """The folder holding `initdb` and `pg_ctl`: the newest /usr/lib/postgresql/*/bin, or
    the one on PATH."""

    def version(initdb: str) -> int:
        name = Path(initdb).parent.parent.name
        return int(name) if name.isdigit() else 0

    found = sorted(glob.glob("/usr/lib/postgresql/*/bin/initdb"), key=version)
    if found:
        return Path(found[-1]).parent
    on_path = shutil.which("initdb")
    return Path(on_path).parent if on_path else None


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _as_server_user(args: list[str]) -> list[str]:
    """The command, run as `postgres` when we are root (PostgreSQL refuses root)."""
    if os.geteuid() != 0:
        return args
    if shutil.which("runuser"):
        return ["runuser", "-u", "postgres", "--", *args]
    return ["su", "postgres", "-s", "/bin/sh", "-c", " ".join(f"'{a}'" for a in args)]


@dataclass
class Cluster:
    folder: Path  # the cluster's own folder: data/, the socket, log, url
    port: int = 0

    @property
    def data(self) -> Path:
        return self.folder / "data"

    @property
    def url(self) -> str:
        return f"postgresql://postgres@127.0.0.1:{self.port}/playbook"

    def start(self, *, owner_pid: int | None = None) -> str:
        """Create and start the server; returns the URL of its `playbook` database."""
        bindir = binaries()
        if bindir is None:
            raise ClusterError(
                "no PostgreSQL server binaries (initdb, pg_ctl) found: install the server "
                "package (Debian: apt-get install postgresql)"
            )
        self.folder.mkdir(parents=True, exist_ok=True)
        if os.geteuid() == 0:
            shutil.chown(self.folder, "postgres", "postgres")
        self._run([str(bindir / "initdb"), "-D", str(self.data), "-A", "trust", "-U",
                   "postgres", "-N", "-E", "UTF8", "--locale=C"])  # fmt: skip
        last = ""
        for _ in range(5):  # a port taken between the check and the bind: try another
            self.port = free_port()
            options = f"-p {self.port} -k {self.folder} -c listen_addresses=127.0.0.1 {SETTINGS}"
            try:
                self._run([str(bindir / "pg_ctl"), "-D", str(self.data), "-o", options,
                           "-l", str(self.folder / "log"), "-w", "-t", "60", "start"])  # fmt: skip
                break
            except ClusterError as exc:
                last = str(exc)
        else:
            raise ClusterError(f"the server did not start: {last}")
        self._run([str(bindir / "createdb"), "-h", "127.0.0.1", "-p", str(self.port), "-U",
                   "postgres", "playbook"])  # fmt: skip
        (self.folder / "url").write_text(self.url)
        if owner_pid is not None:
            self._watchdog(owner_pid, bindir)
        return self.url

    def halt(self, *, immediate: bool = True) -> None:
        """Stop the server as a crash does (`-m immediate`: no checkpoint, every client cut
        off), keeping its data, for `resume` (the tests of a server that goes away)."""
        bindir = binaries()
        if bindir is None:
            raise ClusterError("no PostgreSQL server binaries")
        mode = "immediate" if immediate else "fast"
        self._run([str(bindir / "pg_ctl"), "-D", str(self.data), "-m", mode, "-w", "stop"])

    def resume(self) -> None:
        """Start the server `halt` stopped, on the same port."""
        bindir = binaries()
        if bindir is None:
            raise ClusterError("no PostgreSQL server binaries")
        options = f"-p {self.port} -k {self.folder} -c listen_addresses=127.0.0.1 {SETTINGS}"
        self._run([str(bindir / "pg_ctl"), "-D", str(self.data), "-o", options,
                   "-l", str(self.folder / "log"), "-w", "-t", "60", "start"])  # fmt: skip

    def stop(self) -> None:
        """Stop the server (fast shutdown) and remove its folder."""
        bindir = binaries()
        if bindir is not None and (self.data / "postmaster.pid").exists():
            pg_ctl = [str(bindir / "pg_ctl"), "-D", str(self.data), "-m", "fast", "-w", "stop"]
            subprocess.run(_as_server_user(pg_ctl), capture_output=True, check=False)
        shutil.rmtree(self.folder, ignore_errors=True)

    def _run(self, args: list[str]) -> None:
        out = subprocess.run(
            _as_server_user(args), capture_output=True, text=True, check=False, cwd="/"
        )
        if out.returncode != 0:
            log = self.folder / "log"
            tail = log.read_text(errors="replace")[-800:] if log.exists() else ""
            raise ClusterError(
                f"{Path(args[0]).name} failed: {(out.stderr or out.stdout).strip()}\n{tail}"
            )

    def _watchdog(self, owner_pid: int, bindir: Path) -> None:
        """A detached shell that stops the server once `owner_pid` has exited."""
        pg_ctl = [str(bindir / "pg_ctl"), "-D", str(self.data), "-m", "immediate", "stop"]
        stop = " ".join(_as_server_user(pg_ctl))
        script = (
            f"while kill -0 {owner_pid} 2>/dev/null; do sleep 1; done; "
            f"if [ -f '{self.data}/postmaster.pid' ]; then {stop} >/dev/null 2>&1; "
            f"rm -rf '{self.folder}'; fi"
        )
        subprocess.Popen(
            ["sh", "-c", script],
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            start_new_session=True,
            close_fds=True,
        )


def wait_ready(url: str, timeout: float = 30.0) -> None:
    """Wait until the server at `url` accepts connections."""
    import psycopg  # lazy: the postgres extra (`stop`, and the tests without it, need none)

    deadline = time.monotonic() + timeout
    while True:
        try:
            psycopg.connect(url, connect_timeout=2).close()
            return
        except psycopg.OperationalError:
            if time.monotonic() > deadline:
                raise
            time.sleep(0.1)


def main(argv: list[str]) -> int:
    if len(argv) != 2 or argv[0] not in ("start", "stop"):
        sys.stderr.write("usage: python -m playbook.store.postgres.cluster start|stop DIR\n")
        return 2
    cluster = Cluster(Path(argv[1]).absolute())
    if argv[0] == "stop":
        cluster.stop()
        return 0
    try:
        print(cluster.start())
    except ClusterError as exc:
        sys.stderr.write(f"could not start PostgreSQL: {exc}\n")
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
