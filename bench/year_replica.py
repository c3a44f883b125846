"""A primary and a streaming replica on this machine, 32 agents reading one and writing the
other (issue 31, "Past one machine"): replica lag, latencies, and that no read went wrong.

    python bench/year_replica.py [--agents 32] [--seconds 60] [--team-year] [--compare]

Two PostgreSQL servers of its own in a temporary folder (run as root, they run as the
`postgres` user): the primary (PostgreSQL's defaults: fsync on, synchronous commit, but
`shared_buffers` 256 MB and room for the agents) and a hot standby made from it with
`pg_basebackup -R` (asynchronous streaming, `hot_standby_feedback` on). A small year
(`year_plan.Spec`: 3k rules, 150k events; `--team-year`: 100k rules, 10M events, long) is
written on the primary, then the standby is made. The 32-agent load of `year_agents.py`
runs with `--db PRIMARY --read-db REPLICA`: each `hook prompt` reads the replica, each
`mark` and `outcome` writes the primary. Meanwhile the primary's `pg_stat_replication`
is sampled every half second (the bytes of WAL the standby has not replayed, and
`replay_lag`). Afterwards, once the standby has caught up:

- every mark and outcome the agents made is stored exactly once, on the primary and on the
  replica alike (`year_agents.check` on each);
- recall on both, in-process with the same clock, gives the same rules and scores (bit for
  bit) for 40 queries;
- the replica served the prompts: its transactions counted, and no hook fell back.

`--compare` runs the same load on a fresh copy of the year with every command on the
primary (no `--read-db`), for the latencies without a replica. The servers are stopped and
their folder removed at the end. The machine is shared: every figure says the load average.
"""

# bench: only when named, limit 3600 s

from __future__ import annotations

import argparse
import os
import random
import shutil
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import synth
import year_agents
import year_plan
from cli import command
from report import environment

SMALL = year_plan.Spec(rules=3_000, events=150_000, sessions=150)
SETTINGS = "-c shared_buffers=256MB -c max_connections=300 -c max_wal_size=4GB"


def load() -> str:
    return f"load {os.getloadavg()[0]:.1f}"


def say(text: str) -> None:
    print(text, file=sys.stderr, flush=True)


def figure(name: str, value: str, target: str = "-", verdict: str = "-") -> None:
    print(f"{name}\t{value}; {load()}\t{target}\t{verdict}", flush=True)


def pct(values: list[float], p: float) -> float:
    if not values:
        return float("nan")
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(p / 100 * (len(ordered) - 1)))]


class Pg:
    """One server in `folder/data` on a free loopback port (as `postgres` under root)."""

    def __init__(self, folder: Path, name: str) -> None:
        from playbook.store.postgres.cluster import binaries, free_port

        found = binaries()
        if found is None:
            raise SystemExit("no PostgreSQL server binaries: apt-get install postgresql")
        self.bin, self.folder, self.name = found, folder, name
        self.data = folder / name
        self.port = free_port()

    def url(self, database: str = "postgres") -> str:
        return f"postgresql://postgres@127.0.0.1:{self.port}/{database}"

    def run(self, tool: str, *args: str) -> str:
        from playbook.store.postgres.cluster import _as_server_user

        argv = _as_server_user([str(self.bin / tool), *args])
        out = subprocess.run(argv, capture_output=True, text=True, check=False, cwd="/")
        if out.returncode != 0:
            raise SystemExit(f"{tool} failed: {(out.stderr or out.stdout).strip()[-800:]}")
        return out.stdout

    def init(self) -> None:
        self.run("initdb", "-D", str(self.data), "-A", "trust", "-U", "postgres",
                 "-E", "UTF8", "--locale=C")  # fmt: skip

    def standby_of(self, primary: Pg) -> None:
        self.run("pg_basebackup", "-h", "127.0.0.1", "-p", str(primary.port), "-U", "postgres",
                 "-D", str(self.data), "-R", "-X", "stream", "-c", "fast")  # fmt: skip

    def start(self, extra: str = "") -> None:
        options = f"-p {self.port} -k {self.folder} -c listen_addresses=127.0.0.1 {SETTINGS}"
        log = str(self.folder / f"{self.name}.log")
        self.run("pg_ctl", "-D", str(self.data), "-o", f"{options} {extra}",
                 "-l", log, "-w", "-t", "120", "start")  # fmt: skip

    def stop(self) -> None:
        if (self.data / "postmaster.pid").exists():
            self.run("pg_ctl", "-D", str(self.data), "-m", "fast", "-w", "stop")

    def cpu(self) -> float:
        """Seconds of CPU (user + system) the server's processes have used, from /proc: the
        postmaster's own and its ended children's, and each live child's."""
        head = int((self.data / "postmaster.pid").read_text().split()[0])
        total = 0
        for entry in os.listdir("/proc"):
            if not entry.isdigit():
                continue
            try:
                fields = Path(f"/proc/{entry}/stat").read_text().rsplit(")", 1)[1].split()
            except OSError:
                continue
            if int(entry) == head:  # and the backends that ended (each CLI's does)
                total += sum(int(f) for f in fields[11:15])
            elif int(fields[1]) == head:
                total += int(fields[11]) + int(fields[12])
        return total / os.sysconf("SC_CLK_TCK")

    def sql(self, statement: str, database: str = "postgres") -> list[tuple[object, ...]]:
        import psycopg

        with psycopg.connect(self.url(database), autocommit=True) as conn:
            cur = conn.execute(statement)  # type: ignore[arg-type]
            return cur.fetchall() if cur.description else []


def workspace() -> Path:
    """A folder the `postgres` user may enter (not under /root)."""
    folder = Path(tempfile.mkdtemp(prefix="playbook-replica-", dir="/var/tmp"))
    if os.geteuid() == 0:
        shutil.chown(folder, "postgres", "postgres")
    return folder


class Lag:
    """The primary's view of its standby, sampled every `every` seconds in a thread."""

    def __init__(self, primary: Pg, every: float = 0.5) -> None:
        self.primary, self.every = primary, every
        self.bytes: list[float] = []
        self.seconds: list[float] = []
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._sample, daemon=True)

    def __enter__(self) -> Lag:
        self._thread.start()
        return self

    def __exit__(self, *_: object) -> None:
        self._stop.set()
        self._thread.join()

    def _sample(self) -> None:
        import psycopg

        with psycopg.connect(self.primary.url(), autocommit=True) as conn:
            while not self._stop.wait(self.every):
                row = conn.execute(
                    "SELECT pg_wal_lsn_diff(pg_current_wal_lsn(), replay_lsn), "
                    "EXTRACT(EPOCH FROM replay_lag) FROM pg_stat_replication"
                ).fetchone()
                if row is not None:
                    self.bytes.append(float(row[0] or 0))
                    self.seconds.append(float(row[1] or 0))


def caught_up(primary: Pg, replica: Pg, timeout: float = 60) -> float:
    """Seconds until the replica has replayed all the primary had written when asked."""
    started = time.monotonic()
    target = primary.sql("SELECT pg_current_wal_lsn()::text")[0][0]
    while time.monotonic() - started < timeout:
        done = replica.sql(f"SELECT pg_last_wal_replay_lsn() >= '{target}'::pg_lsn")[0][0]
        if done:
            return time.monotonic() - started
        time.sleep(0.05)
    raise SystemExit(f"the replica did not catch up within {timeout:.0f} s")


def popular_ids(url: str, n: int) -> list[str]:
    from playbook.store import open_store

    with open_store(url, mode="read") as store:
        return store.sql.column(
            "SELECT e.bullet_id FROM evidence e JOIN bullets b ON b.id = e.bullet_id "
            "WHERE b.state = 'active' ORDER BY e.count DESC LIMIT ?",
            (n,),
        )


def same_recall(primary_url: str, replica_url: str, queries: int = 40) -> tuple[int, int]:
    """(queries whose answers differ, queries asked): in-process, one clock for both."""
    from datetime import UTC, datetime

    from playbook import recall
    from playbook.store import open_store

    now = datetime.now(UTC)
    rng = random.Random(7)
    asked = [" ".join(rng.sample(synth.TERMS, 2)) for _ in range(queries)]

    def answers(url: str) -> list[list[tuple[str, float]]]:
        with open_store(url, mode="read", clock=lambda: now) as store:
            return [
                [(i.record.id, i.final_score) for i in recall(store, q, limit=10).bullets]
                for q in asked
            ]

    mine, theirs = answers(primary_url), answers(replica_url)
    return sum(1 for a, b in zip(mine, theirs, strict=True) if a != b), len(asked)


def replica_transactions(replica: Pg, database: str) -> int:
    found = replica.sql(
        f"SELECT xact_commit + xact_rollback FROM pg_stat_database WHERE datname = '{database}'"
    )
    return int(found[0][0]) if found else 0  # type: ignore[call-overload]


def run_load(
    primary: Pg, replica: Pg | None, database: str, args: argparse.Namespace, state: Path
) -> year_agents.Load:
    url = primary.url(database)
    base = [*command(), "--db", url]
    if replica is not None:
        base += ["--read-db", replica.url(database)]
    env = environment(XDG_STATE_HOME=str(state))
    for name in ("PLAYBOOK_DB", "PLAYBOOK_POLICY", "PLAYBOOK_READ_DB"):
        env.pop(name, None)
    ids = popular_ids(url, 500)
    return year_agents.run(base, env, ids, synth.TERMS, args.agents, args.seconds)


def report(what: str, got: year_agents.Load) -> None:
    say(f"{what}: {got.loops} loops, {len(got.prompt)} prompts, {len(got.mark)} marks, "
        f"{len(got.outcome)} outcomes; first errors: {got.errors[:3]}")  # fmt: skip
    for name, walls in (("hook prompt", got.prompt), ("mark", got.mark)):
        figure(f"{what}: {name} p50 / p99", f"{pct(walls, 50):.3f} / {pct(walls, 99):.3f} s")
    figure(f"{what}: errors", str(len(got.errors)), "0", "pass" if not got.errors else "miss")


def check_stored(url: str, got: year_agents.Load) -> int:
    from playbook.store import open_store

    with open_store(url, mode="read") as store:
        wrong, extra = year_agents.check(store, got)
    return wrong + extra


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--agents", type=int, default=32)
    ap.add_argument("--seconds", type=float, default=60)
    ap.add_argument("--team-year", action="store_true", help="the 100k-rule, 10M-event year")
    ap.add_argument("--compare", action="store_true", help="also the load on the primary alone")
    args = ap.parse_args()
    spec = year_plan.team_year() if args.team_year else SMALL
    folder = workspace()
    primary, replica = Pg(folder, "primary"), Pg(folder, "replica")
    try:
        primary.init()
        primary.start()
        primary.sql("CREATE DATABASE year")
        import year_world

        started = time.perf_counter()
        counts = year_world.build(primary.url("year"), spec, progress=say)
        primary.sql("VACUUM (ANALYZE)", "year")
        for name in ("run_replica", "run_primary"):
            primary.sql(f"CREATE DATABASE {name} TEMPLATE year")
        say(f"{spec.name} written in {time.perf_counter() - started:.0f} s: {counts}")
        started = time.perf_counter()
        replica.standby_of(primary)
        replica.start("-c hot_standby_feedback=on")
        say(f"standby made and started in {time.perf_counter() - started:.1f} s")
        caught_up(primary, replica)
        before = replica_transactions(replica, "run_replica")
        state = folder / "state"
        say(f"{args.agents} agents for {args.seconds:.0f} s, prompts on the replica, {load()}")
        cpu = primary.cpu(), replica.cpu()
        with Lag(primary) as lag:
            got = run_load(primary, replica, "run_replica", args, state / "replica")
        used = primary.cpu() - cpu[0], replica.cpu() - cpu[1]
        what = f"{args.agents} agents × {args.seconds:.0f} s, {spec.name}, replica reads"
        report(what, got)
        per = max(got.loops, 1)
        figure(f"{what}: server CPU per agent loop (prompt, 3 marks, outcome), primary / replica",
               f"{used[0] / per * 1000:.0f} / {used[1] / per * 1000:.0f} ms")  # fmt: skip
        figure(f"{what}: replica lag (WAL bytes not replayed) p50 / p99 / max",
               f"{pct(lag.bytes, 50):.0f} / {pct(lag.bytes, 99):.0f} / "
               f"{max(lag.bytes, default=0):.0f} B ({len(lag.bytes)} samples)")  # fmt: skip
        figure(f"{what}: replay_lag p50 / p99 / max",
               f"{pct(lag.seconds, 50) * 1000:.1f} / {pct(lag.seconds, 99) * 1000:.1f} / "
               f"{max(lag.seconds, default=0) * 1000:.1f} ms")  # fmt: skip
        figure(f"{what}: catch-up after the load", f"{caught_up(primary, replica):.3f} s")
        served = replica_transactions(replica, "run_replica") - before
        log = state / "replica" / "playbook" / "hooks.log"
        fell_back = log.read_text().count("read replica") if log.exists() else 0
        figure(f"{what}: transactions the replica served", str(served))
        figure(f"{what}: hooks that fell back to the primary", str(fell_back), "0",
               "pass" if fell_back == 0 else "miss")  # fmt: skip
        for side, server in (("primary", primary), ("replica", replica)):
            bad = check_stored(server.url("run_replica"), got)
            figure(f"{what}: events not stored exactly once, read on the {side}", str(bad),
                   "0", "pass" if bad == 0 else "miss")  # fmt: skip
        differ, asked = same_recall(primary.url("run_replica"), replica.url("run_replica"))
        figure(f"{what}: recall answers that differ, primary vs replica ({asked} queries)",
               str(differ), "0", "pass" if differ == 0 else "miss")  # fmt: skip
        if args.compare:
            say(f"the same load with every command on the primary, {load()}")
            cpu = primary.cpu(), replica.cpu()
            alone = run_load(primary, None, "run_primary", args, state / "primary")
            used = primary.cpu() - cpu[0], replica.cpu() - cpu[1]
            what = f"{args.agents} agents × {args.seconds:.0f} s, {spec.name}, primary only"
            report(what, alone)
            per = max(alone.loops, 1)
            figure(f"{what}: server CPU per agent loop, primary (replica replaying)",
                   f"{used[0] / per * 1000:.0f} ms ({used[1] / per * 1000:.0f} ms)")  # fmt: skip
    finally:
        for server in (replica, primary):
            try:
                server.stop()
            except SystemExit as exc:
                say(f"stopping the {server.name}: {exc}")
        shutil.rmtree(folder, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
