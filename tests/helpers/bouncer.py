"""PgBouncer in transaction mode in front of the test server, for tests/test_pg_pool.py.

Its configuration is PgBouncer's defaults but for the pool mode (no
`ignore_startup_parameters`: it refuses a connection that sends `options`) and a pool of 2
server connections, so that consecutive transactions of one client land on different
server connections and a statement prepared on one is met by the next client. Skips
without a `pgbouncer` binary (Debian's package `pgbouncer`; CI does not install it).
"""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from urllib.parse import unquote, urlsplit

import pytest

POOL_SIZE = 2


def binary() -> str | None:
    return shutil.which("pgbouncer") or shutil.which("pgbouncer", path="/usr/sbin:/usr/bin")


@contextmanager
def bouncer(server_url: str) -> Iterator[str]:
    """PgBouncer before `server_url`'s server; yields its URL for the same database and user
    (the server's `options`, if any, left out: a test adds its own)."""
    from playbook.store.postgres.cluster import _as_server_user, free_port

    found = binary()
    if found is None:
        pytest.skip("no pgbouncer on this machine (apt-get install pgbouncer)")
    server = urlsplit(server_url)
    user, password = unquote(server.username or "postgres"), unquote(server.password or "")
    database = server.path.lstrip("/") or user
    folder = Path(tempfile.mkdtemp(prefix="playbook-bouncer-"))
    port = free_port()
    secret = f" password={password}" if password else ""
    (folder / "users.txt").write_text(f'"{user}" "{password}"\n')
    (folder / "bouncer.ini").write_text(
        f"[databases]\n{database} = host={server.hostname} port={server.port}{secret}\n"
        f"[pgbouncer]\nlisten_addr = 127.0.0.1\nlisten_port = {port}\nunix_socket_dir =\n"
        f"auth_type = trust\nauth_file = {folder}/users.txt\npool_mode = transaction\n"
        f"default_pool_size = {POOL_SIZE}\nmax_client_conn = 100\n"
        f"logfile = {folder}/bouncer.log\n"
    )
    if os.geteuid() == 0:  # PgBouncer refuses to run as root
        for path in (folder, *folder.iterdir()):
            shutil.chown(path, "postgres", "postgres")
    proc = subprocess.Popen(
        _as_server_user([found, str(folder / "bouncer.ini")]),
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        _wait_listening(port, proc)
        yield f"postgresql://{user}@127.0.0.1:{port}/{database}"
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
        shutil.rmtree(folder, ignore_errors=True)


def _wait_listening(port: int, proc: subprocess.Popen[bytes], timeout: float = 10.0) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            pytest.fail(f"pgbouncer exited at once (status {proc.returncode})")
        try:
            socket.create_connection(("127.0.0.1", port), timeout=0.5).close()
            return
        except OSError:
            time.sleep(0.05)
    pytest.fail(f"pgbouncer did not listen on port {port} within {timeout:.0f} s")
