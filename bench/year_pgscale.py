"""What PgBouncer (transaction mode) changes, and what LISTEN/NOTIFY costs with 32 listeners
(issue 31, "Past one machine"), on a small year on a server of this bench's own.

    python bench/year_pgscale.py [--agents 32] [--seconds 60] [--only bouncer,notify]

`bouncer` (needs `pgbouncer`; run as root without it, the bench installs Debian's package
with apt-get: a bench's tool, never CI's), PgBouncer in front of the server, pool_mode =
transaction, 10 server connections a database:

- whether Playbook connects through it, PgBouncer's configuration left as it is (no
  `ignore_startup_parameters`): with a plain URL, Playbook sends its session settings
  (`lock_timeout`, `jit`, read-only for reads) in the startup packet's `options`, which
  PgBouncer refuses; with `?pool=transaction` (`store/postgres/pooling.py`) it sends them
  in every transaction instead, and what a transaction through the pool then has
  (`lock_timeout`, `transaction_read_only` for a read-only opening);
- prepared statements: psycopg prepares a statement run 5 times on one connection, and
  PgBouncer 1.18 keeps a server connection's prepared statements when its client goes; 4
  long-lived writers (as MCP servers and workbenches are) each mark 100 times through the
  pool, twice (`pool=transaction` prepares nothing);
- the 32-agent load of `year_agents.py` through the pool (`?pool=transaction`) and
  straight to the server: p50 / p99 of `hook prompt` and `mark`, the most server backends
  seen at once, and the server's CPU per agent loop.

`notify`: every commit of a playbook sends a NOTIFY on its channel (the workbench's
watcher LISTENs). One writer marks in-process (100 marks a round) while nothing else is
connected, while 32 connections LISTEN on the channel, and while 32 connections poll the
commit counter once a second (what a watcher on a replica does); rounds alternate twice.
Per round: mark p50 and p99, the server's CPU time per mark (all its processes, from
/proc), and for listeners the delay from commit to notification.

Every figure says the load average (the machine has 2 cores and is shared).
"""

# bench: only when named, limit 3600 s

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import threading
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import synth
import year_agents
import year_world
from cli import command
from report import environment
from year_replica import SMALL, Pg, figure, load, pct, popular_ids, say, workspace


def pgbouncer() -> str:
    found = shutil.which("pgbouncer") or shutil.which("pgbouncer", path="/usr/sbin")
    if found:
        return found
    if os.geteuid() != 0:
        raise SystemExit("no pgbouncer: apt-get install -y pgbouncer")
    say("installing pgbouncer (Debian's package) for this bench ...")
    quiet = {**os.environ, "DEBIAN_FRONTEND": "noninteractive"}
    subprocess.run(["apt-get", "install", "-y", "-q", "pgbouncer"], check=True,
                   capture_output=True, env=quiet)  # fmt: skip
    found = shutil.which("pgbouncer") or shutil.which("pgbouncer", path="/usr/sbin")
    if not found:
        raise SystemExit("pgbouncer did not install")
    return found


class Bouncer:
    """PgBouncer on a free port in front of `server`, in transaction mode."""

    def __init__(self, server: Pg, folder: Path, *, ignore_options: bool) -> None:
        from playbook.store.postgres.cluster import _as_server_user, free_port

        self.port = free_port()
        ini = folder / f"pgbouncer-{self.port}.ini"
        users = folder / "userlist.txt"
        users.write_text('"postgres" ""\n')
        ignored = "extra_float_digits" + (",options" if ignore_options else "")
        ini.write_text(
            f"[databases]\n* = host=127.0.0.1 port={server.port}\n[pgbouncer]\n"
            f"listen_addr = 127.0.0.1\nlisten_port = {self.port}\nunix_socket_dir =\n"
            f"auth_type = trust\nauth_file = {users}\npool_mode = transaction\n"
            "max_client_conn = 1000\ndefault_pool_size = 10\n"
            f"ignore_startup_parameters = {ignored}\nlogfile = {folder}/pgbouncer.log\n"
        )
        if os.geteuid() == 0:
            for path in (ini, users):
                shutil.chown(path, "postgres", "postgres")
        argv = _as_server_user([pgbouncer(), str(ini)])
        self.proc = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        time.sleep(1.0)

    def url(self, database: str) -> str:
        return f"postgresql://postgres@127.0.0.1:{self.port}/{database}"

    def close(self) -> None:
        self.proc.terminate()
        try:
            self.proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.proc.kill()


def backends(server: Pg, stop: threading.Event, seen: list[int]) -> None:
    import psycopg

    with psycopg.connect(server.url(), autocommit=True) as conn:
        while not stop.wait(0.25):
            n = conn.execute(
                "SELECT count(*) FROM pg_stat_activity WHERE backend_type = 'client backend'"
            ).fetchone()
            seen.append(int(n[0]) - 1 if n else 0)


def agents(
    server: Pg, url: str, args: argparse.Namespace, state: Path
) -> tuple[object, int, float]:
    env = environment(XDG_STATE_HOME=str(state))
    for name in ("PLAYBOOK_DB", "PLAYBOOK_POLICY", "PLAYBOOK_READ_DB"):
        env.pop(name, None)
    ids = popular_ids(server.url(url.rsplit("/", 1)[1].split("?")[0]), 500)
    stop, seen = threading.Event(), []
    watch = threading.Thread(target=backends, args=(server, stop, seen))
    watch.start()
    cpu = server.cpu()
    try:
        got = year_agents.run([*command(), "--db", url], env, ids, synth.TERMS, args.agents,
                              args.seconds)  # fmt: skip
    finally:
        stop.set()
        watch.join()
    return got, max(seen, default=0), server.cpu() - cpu


def writers(url: str, ids: list[str], *, n: int = 4, marks: int = 100) -> int:
    """Errors of `n` long-lived writers marking `marks` times each through `url`."""
    from playbook.curation import curate
    from playbook.store import open_store

    errors: list[str] = []

    def one(k: int) -> None:
        try:
            store = open_store(url, mode="write")
        except Exception as exc:
            errors.append(f"open: {exc}")
            return
        with store:
            for i in range(marks):
                vote = {"type": "helpful", "bullet_id": ids[(k + i) % len(ids)]}
                try:
                    outcome = curate(store, [vote]).outcomes[0]
                except Exception as exc:
                    errors.append(" ".join(str(exc).split())[:160])
                else:
                    if outcome.status != "applied":
                        errors.append(f"{outcome.status}: {outcome.reason}")

    threads = [threading.Thread(target=one, args=(k,)) for k in range(n)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    if errors:
        say(f"  first error: {errors[0]}")
    return len(errors)


def bouncer(server: Pg, folder: Path, args: argparse.Namespace) -> None:
    from playbook.store import open_store

    pool = Bouncer(server, folder, ignore_options=False)
    pooled = f"{pool.url('year')}?pool=transaction"
    try:
        try:
            open_store(pool.url("year"), mode="read").close()
            verdict = "connects"
        except Exception as exc:
            verdict = f"refused: {' '.join(str(exc).split())[:120]}"
        figure("PgBouncer 1.18 transaction mode, as configured by default: Playbook, plain URL",
               verdict)  # fmt: skip
        with open_store(pooled, mode="read") as store:
            shown = [store.sql.scalar(f"SHOW {name}") for name in
                     ("lock_timeout", "transaction_read_only", "jit")]  # fmt: skip
        figure("through it with ?pool=transaction, read-only opening: lock_timeout / "
               "transaction_read_only / jit", " / ".join(map(str, shown)))  # fmt: skip
        ids = popular_ids(server.url("year"), 200)
        bad = [writers(pooled, ids) for _ in range(2)]
        figure("4 long-lived writers × 100 marks through PgBouncer, ?pool=transaction: errors, "
               "first / second round", f"{bad[0]} / {bad[1]}")  # fmt: skip
        runs = (("PgBouncer", f"{pool.url('run_a')}?pool=transaction"),
                ("straight", server.url("run_b")))  # fmt: skip
        for name, url in runs:
            say(f"{args.agents} agents for {args.seconds:.0f} s, {name}, {load()}")
            got, peak, cpu = agents(server, url, args, folder / f"state-{name}")
            what = f"{args.agents} agents × {args.seconds:.0f} s, {name}"
            for label, walls in (("hook prompt", got.prompt), ("mark", got.mark)):  # type: ignore[attr-defined]
                figure(f"{what}: {label} p50 / p99",
                       f"{pct(walls, 50):.3f} / {pct(walls, 99):.3f} s")  # fmt: skip
            figure(f"{what}: errors", str(len(got.errors)))  # type: ignore[attr-defined]
            for kind in sorted({e.split(" (", 1)[0] for e in got.errors}):  # type: ignore[attr-defined]
                first = next(e for e in got.errors if e.startswith(kind))  # type: ignore[attr-defined]
                say(f"  first {kind} error: {' '.join(first.split())[:300]}")
            figure(f"{what}: most server backends at once", str(peak))
            loops = max(got.loops, 1)  # type: ignore[attr-defined]
            figure(f"{what}: server CPU per agent loop ({load()})",
                   f"{cpu / loops * 1000:.0f} ms")  # fmt: skip
    finally:
        pool.close()


def notify(server: Pg, args: argparse.Namespace) -> None:
    from playbook.store.postgres.statements import channel_of

    channel = channel_of("public")
    ids = popular_ids(server.url("year"), 200)
    for mode in ["none", "listen", "poll"] * 2:
        one_round(server, args, mode, ids, channel)


def one_round(
    server: Pg, args: argparse.Namespace, mode: str, ids: list[str], channel: str
) -> None:
    import psycopg

    from playbook.curation import curate
    from playbook.store import open_store
    from playbook.store.postgres.statements import quoted

    stop, conns = threading.Event(), []
    arrived: list[list[float]] = []  # per listener, in order

    def listener(conn: psycopg.Connection[object]) -> None:
        mine: list[float] = []
        arrived.append(mine)
        while not stop.is_set():
            for _ in conn.notifies(timeout=0.2):
                mine.append(time.perf_counter())

    def poller(conn: psycopg.Connection[object]) -> None:
        while not stop.wait(1.0):
            conn.execute("SELECT n FROM _playbook_changes").fetchone()

    threads = []
    for _ in range(args.agents if mode != "none" else 0):
        conn = psycopg.connect(server.url("year"), autocommit=True)
        conns.append(conn)
        if mode == "listen":
            conn.execute(f"LISTEN {quoted(channel)}")
        work = listener if mode == "listen" else poller
        threads.append(threading.Thread(target=work, args=(conn,)))
    for t in threads:
        t.start()
    time.sleep(1.0)
    walls, commits = [], []
    cpu, started = server.cpu(), time.perf_counter()
    with open_store(server.url("year"), mode="write") as store:
        for i in range(100):
            t = time.perf_counter()
            curate(store, [{"type": "helpful", "bullet_id": ids[i % len(ids)]}])
            commits.append(time.perf_counter())
            walls.append(commits[-1] - t)
            time.sleep(0.02)
    cpu = server.cpu() - cpu
    time.sleep(0.5)
    stop.set()
    for t in threads:
        t.join()
    for conn in conns:
        conn.close()
    what = {"none": "no one else connected", "listen": f"{args.agents} listeners",
            "poll": f"{args.agents} pollers at 1/s"}[mode]  # fmt: skip
    figure(f"100 marks in-process, {what}: mark p50 / p99",
           f"{pct(walls, 50) * 1000:.2f} / {pct(walls, 99) * 1000:.2f} ms")  # fmt: skip
    figure(f"100 marks in-process, {what}: server CPU", f"{cpu * 10:.1f} ms a mark "
           f"({cpu / (commits[-1] - started) * 1000:.0f} ms a second)")  # fmt: skip
    if mode == "listen":
        delays = [got - at for mine in arrived for got, at in zip(mine, commits, strict=False)]
        received = sum(len(mine) for mine in arrived)
        figure(f"100 marks, {what}: notifications received / commit-to-listener p50, p99",
               f"{received} / {pct(delays, 50) * 1000:.2f}, "
               f"{pct(delays, 99) * 1000:.2f} ms")  # fmt: skip


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--agents", type=int, default=32)
    ap.add_argument("--seconds", type=float, default=60)
    ap.add_argument("--only", default="bouncer,notify")
    args = ap.parse_args()
    folder = workspace()
    server = Pg(folder, "primary")
    try:
        server.init()
        server.start()
        server.sql("CREATE DATABASE year")
        year_world.build(server.url("year"), SMALL, progress=None)
        server.sql("VACUUM (ANALYZE)", "year")
        for name in ("run_a", "run_b"):
            server.sql(f"CREATE DATABASE {name} TEMPLATE year")
        say(f"{SMALL.name} written, {load()}")
        if "bouncer" in args.only:
            bouncer(server, folder, args)
        if "notify" in args.only:
            notify(server, args)
    finally:
        try:
            server.stop()
        except SystemExit as exc:
            say(f"stopping the server: {exc}")
        shutil.rmtree(folder, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
