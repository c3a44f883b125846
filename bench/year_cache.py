"""The generated years, kept on disk so a bench run builds each once (`year_world.build`).

(`python bench/team_year.py --build` builds them without measuring anything.)
The folder is `--dir`, else `$PLAYBOOK_BENCH_CACHE`, else `$XDG_CACHE_HOME/playbook-bench`
(`~/.cache/playbook-bench`); never inside the repository. A world is named by its spec
and by the code that made it (the schema version, the maturity pass's rules and policy,
and `GENERATOR`): a change to any of them builds it anew, and the old one stays until
removed by hand.

- SQLite: one file per world, built under a temporary name and renamed when complete.
- PostgreSQL: a server of its own, kept in the folder (`pg/`, started when a bench needs
  it, stopped by `stop` or at the end of `bench/team_year.py`), one database per world,
  marked complete by a comment once built. It runs with PostgreSQL's defaults (fsync on,
  synchronous commit) but for `shared_buffers` (512 MB; the default is 128 MB) and room
  for the 32-agent load (`max_connections`). Benches that write work on a copy
  (`CREATE DATABASE ... TEMPLATE`), so the world stays as built.
- A world kept from an older schema only (the same spec, generator and maturity rules) is
  not generated again: a copy of it is upgraded by `playbook migrate`, as a team's own
  playbook is when Playbook is upgraded (`$PLAYBOOK_BENCH_FRESH=1` generates it anew).
"""

from __future__ import annotations

import os
import re
import shutil
import sqlite3
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import synth
from year_plan import Spec

GENERATOR = 2  # bump when the generator writes a different year for the same spec
SERVER_SETTINGS = (
    "-c shared_buffers=512MB -c max_connections=200 -c max_wal_size=4GB -c checkpoint_timeout=15min"
)


def folder(given: str | Path | None = None) -> Path:
    if given:
        return Path(given).expanduser().absolute()
    if os.environ.get("PLAYBOOK_BENCH_CACHE"):
        return Path(os.environ["PLAYBOOK_BENCH_CACHE"]).expanduser().absolute()
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "playbook-bench"


def version() -> str:
    return f"{synth._code_version()}-g{GENERATOR}"


def world_name(spec: Spec) -> str:
    return f"{spec.name}-{version()}"


def say(text: str) -> None:
    print(text, file=sys.stderr, flush=True)


# ----------------------------------------------------------------- SQLite
def sqlite_world(spec: Spec, where: Path | None = None) -> Path:
    """The world's SQLite file, built first if it is not there."""
    import year_world

    base = folder(where)
    base.mkdir(parents=True, exist_ok=True)
    path = base / f"{world_name(spec)}.sqlite3"
    if path.exists():
        return path
    tmp = path.with_suffix(f".building-{os.getpid()}")
    for p in (tmp, Path(f"{tmp}-wal"), Path(f"{tmp}-shm")):
        p.unlink(missing_ok=True)
    older = _older(spec, [p.name.removesuffix(".sqlite3") for p in base.glob("*.sqlite3")])
    started = time.perf_counter()
    if older is not None:
        say(f"upgrading a copy of {older}.sqlite3 to {path.name} (playbook migrate) ...")
        source = sqlite3.connect(base / f"{older}.sqlite3")
        with sqlite3.connect(tmp) as target:
            source.backup(target)
        source.close()
        migrate(str(tmp))
        counts = {"migrated from": older}
    else:
        say(f"building {path.name} (SQLite) ...")
        counts = year_world.build(tmp, spec, progress=lambda s: say(f"  {s}"))
    tmp.rename(path)
    took = time.perf_counter() - started
    say(f"built {path.name} in {took:.0f} s: {counts}")
    _log_build(base, path.name, took, counts)
    return path


def _older(spec: Spec, names: list[str], *, database: bool = False) -> str | None:
    """The newest of `names` (files', or with `database` PostgreSQL databases') that is
    this world at an older schema (the same spec, maturity rules and generator), unless
    `$PLAYBOOK_BENCH_FRESH` asks for a world generated anew."""
    if os.environ.get("PLAYBOOK_BENCH_FRESH"):
        return None
    schema, rules = synth._code_version().split("-", 1)
    form = _db if database else str
    found = []
    for name in names:
        m = re.fullmatch(rf"{re.escape(form(spec.name))}.s(\d+).(.+).g(\d+)", name)
        if m and m[2] == form(rules) and int(m[3]) == GENERATOR and int(m[1]) < int(schema[1:]):
            found.append((int(m[1]), name))
    return max(found)[1] if found else None


def migrate(target: str) -> None:
    """`playbook migrate` on `target`, as a person upgrading a playbook runs it."""
    done = subprocess.run(
        [sys.executable, "-m", "playbook", "--db", target, "migrate"],
        capture_output=True,
        text=True,
        check=False,
    )
    if done.returncode != 0:
        raise SystemExit(f"playbook migrate failed: {(done.stderr or done.stdout)[-800:]}")


def generated(base: Path, name: str) -> tuple[float, float, str] | None:
    """The last generation of world `name` (a SQLite file's name, a database's) logged in
    `base/builds.log`: (seconds, load average at its end, when); None when it was only
    upgraded from an older schema (`migrate`), or never built there."""
    found = None
    try:
        lines = (base / "builds.log").read_text().splitlines()
    except FileNotFoundError:
        return None
    for line in lines:
        parts = line.split("\t")
        if len(parts) == 5 and parts[1] == name and "migrated from" not in parts[4]:
            seconds, load = parts[2].removesuffix(" s"), parts[3].removeprefix("load ")
            found = (float(seconds), float(load), parts[0])
    return found


def pg_name(spec: Spec) -> str:
    """The database that holds `spec`'s world on the benches' server."""
    return _db(world_name(spec))


def _log_build(base: Path, name: str, seconds: float, counts: dict[str, object]) -> None:
    with (base / "builds.log").open("a") as f:
        load = os.getloadavg()[0]
        f.write(
            f"{time.strftime('%Y-%m-%d %H:%M')}\t{name}\t{seconds:.0f} s\t"
            f"load {load:.1f}\t{counts}\n"
        )


# ----------------------------------------------------------------- PostgreSQL
class Server:
    """The benches' own PostgreSQL server, kept in `folder/pg` between runs."""

    def __init__(self, where: Path | None = None) -> None:
        self.folder = self._place(folder(where) / "pg")
        self.data = self.folder / "data"
        self.port = 0

    @staticmethod
    def _place(wanted: Path) -> Path:
        """Run as root, the server runs as `postgres`, which must reach its folder: under a
        home it cannot enter (/root), the server lives in /var/tmp instead."""
        if os.geteuid() != 0:
            return wanted
        probe = subprocess.run(
            ["runuser", "-u", "postgres", "--", "test", "-x", str(wanted.parent.parent)],
            capture_output=True,
            check=False,
        )
        return wanted if probe.returncode == 0 else Path("/var/tmp/playbook-bench-pg")

    def url(self, database: str = "postgres") -> str:
        return f"postgresql://postgres@127.0.0.1:{self.port}/{database}"

    def start(self) -> str:
        from playbook.store.postgres.cluster import _as_server_user, binaries, free_port

        bindir = binaries()
        if bindir is None:
            raise SystemExit(
                "no PostgreSQL server binaries (initdb, pg_ctl): apt-get install postgresql"
            )
        pid = self.data / "postmaster.pid"
        if pid.exists():
            lines = pid.read_text().splitlines()
            if (
                len(lines) > 3
                and subprocess.run(["kill", "-0", lines[0]], capture_output=True).returncode == 0
            ):
                self.port = int(lines[3])
                return self.url()
        self.folder.mkdir(parents=True, exist_ok=True)
        if os.geteuid() == 0:
            shutil.chown(self.folder, "postgres", "postgres")
        if not (self.data / "PG_VERSION").exists():
            self._run(
                _as_server_user(
                    [
                        str(bindir / "initdb"),
                        "-D",
                        str(self.data),
                        "-A",
                        "trust",
                        "-U",
                        "postgres",
                        "-E",
                        "UTF8",
                        "--locale=C",
                    ]
                )
            )
        self.port = free_port()
        options = f"-p {self.port} -k {self.folder} -c listen_addresses=127.0.0.1 {SERVER_SETTINGS}"
        self._run(
            _as_server_user(
                [
                    str(bindir / "pg_ctl"),
                    "-D",
                    str(self.data),
                    "-o",
                    options,
                    "-l",
                    str(self.folder / "log"),
                    "-w",
                    "-t",
                    "120",
                    "start",
                ]
            )
        )
        return self.url()

    def stop(self) -> None:
        from playbook.store.postgres.cluster import _as_server_user, binaries

        bindir = binaries()
        if bindir is not None and (self.data / "postmaster.pid").exists():
            self._run(
                _as_server_user(
                    [str(bindir / "pg_ctl"), "-D", str(self.data), "-m", "fast", "-w", "stop"]
                )
            )

    @staticmethod
    def _run(argv: list[str]) -> None:
        out = subprocess.run(argv, capture_output=True, text=True, check=False, cwd="/")
        if out.returncode != 0:
            raise SystemExit(
                f"{Path(argv[0]).name} failed: {(out.stderr or out.stdout).strip()[-800:]}"
            )

    def version(self) -> int:
        """The server's major version."""
        return int(self.sql("SHOW server_version_num")[0][0]) // 10000

    def sql(self, statement: str, params: tuple[object, ...] = ()) -> list[tuple[object, ...]]:
        import psycopg

        with psycopg.connect(self.url(), autocommit=True) as conn:
            cur = conn.execute(statement, params)  # type: ignore[arg-type]
            return cur.fetchall() if cur.description else []


def _db(name: str) -> str:
    return re.sub(r"[^a-z0-9_]", "_", name.lower())[:63]


def pg_world(spec: Spec, server: Server, where: Path | None = None) -> str:
    """The URL of the world's database on `server`, built first if it is not complete
    (and logged in the cache folder `where`, `folder`'s choice when None)."""
    import year_world

    name = pg_name(spec)
    done = server.sql(
        "SELECT shobj_description(oid, 'pg_database') FROM pg_database WHERE datname = %s", (name,)
    )
    if done and done[0][0] == "complete":
        return server.url(name)
    server.sql(f'DROP DATABASE IF EXISTS "{name}"')
    kept = server.sql(
        "SELECT datname FROM pg_database WHERE shobj_description(oid, 'pg_database') = 'complete'"
    )
    older = _older(spec, [str(n) for (n,) in kept], database=True)
    started = time.perf_counter()
    if older is not None:
        say(f"upgrading a copy of {older} to {name} (playbook migrate) ...")
        server.sql(f'CREATE DATABASE "{name}" TEMPLATE "{older}"')
        migrate(server.url(name))
        counts: dict[str, object] = {"migrated from": older}
    else:
        server.sql(f'CREATE DATABASE "{name}"')
        say(f"building {name} (PostgreSQL) ...")
        counts = year_world.build(server.url(name), spec, progress=lambda s: say(f"  {s}"))
    vacuum(server.url(name))  # what autovacuum does to a table over its first hours
    server.sql(f"COMMENT ON DATABASE \"{name}\" IS 'complete'")
    took = time.perf_counter() - started
    say(f"built {name} in {took:.0f} s: {counts}")
    _log_build(folder(where), name, took, counts)
    return server.url(name)


def vacuum(url: str) -> None:
    import psycopg

    with psycopg.connect(url, autocommit=True) as conn:
        conn.execute("VACUUM (ANALYZE)")


@contextmanager
def pg_copy(server: Server, url: str) -> Iterator[str]:
    """A copy of the world at `url` (a database made from it as a template), dropped after.

    Copied file by file (`STRATEGY = FILE_COPY`), then checkpointed: PostgreSQL 15's
    default copy writes every page of the template through the WAL (gigabytes for the
    team-year), whose checkpoints and writes then ran during the figures taken on the copy
    (the 32 agents' p99s, the marks)."""
    source = url.rsplit("/", 1)[1]
    name = _db(f"run_{os.getpid()}_{source}")
    server.sql(f'DROP DATABASE IF EXISTS "{name}"')
    strategy = " STRATEGY = FILE_COPY" if server.version() >= 15 else ""
    server.sql(f'CREATE DATABASE "{name}" TEMPLATE "{source}"{strategy}')
    server.sql("CHECKPOINT")
    try:
        yield server.url(name)
    finally:
        server.sql(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
