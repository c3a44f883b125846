"""A team's year on one PostgreSQL (issue 31): every figure of the issue's table, with its target.

    python bench/team_year.py [--runs 7] [--only NAME,...] [--dir CACHE] [--build]
    just bench team-year

The worlds (`year_plan.py`, `year_world.py`; built once and kept, `year_cache.py`):

- team-year: 100k rules, 10M feedback events over 12 months from 5,000 sessions, on
  SQLite and on PostgreSQL (the benches' own server, defaults but shared_buffers 512 MB);
- heavy user: 10k rules, 1M events, 500 sessions, on SQLite;
- fresh: `synth.py`'s 10k-rule playbook (about 10 events a rule), on SQLite.

Figures (whole process unless said, the median of `--runs` runs taken round-robin, the
fastest after it, and the load average when the figure was taken). `--only` picks groups:

- `cli`: `recall --json` and `hook prompt` on the PostgreSQL team-year (<= 0.25 s) and on
  the SQLite heavy user (<= 0.15 s); `mark` on the PostgreSQL team-year (<= 0.15 s; on a
  copy) and in-process (<= 5 ms, median of 200); `recall --json` and `mark` on the fresh
  10k SQLite playbook (<= 65 ms each);
- `agents`: 32 agents for 5 minutes on a copy of the PostgreSQL team-year
  (`year_agents.py`): p50 / p99 of `hook prompt` (<= 0.3 / 1 s) and `mark` (<= 0.2 / 0.8 s),
  errors (0), events not stored exactly once (0);
- `tui`: the workbench on the PostgreSQL team-year, in-process (`year_tui.py`): first paint,
  a week back, a month back, then-vs-now (<= 1.5 / 1 / 1 / 2 s);
- `policy`: `policy eval --json` on the SQLite team-year (10M events, the 15-candidate
  grid; <= 5 min, <= 4 GB peak), and on the heavy user (1M) for an extrapolation;
- `copy`: `playbook copy` of the SQLite team-year into a new PostgreSQL database (<= 5 min);
- `doctor`: `playbook doctor` on the team-year, both backends (<= 30 s);
- `world`: how long each world took to generate (<= 10 min for the team-year), from the
  cache's `builds.log`: the last generation at this version, not an upgrade by `migrate`;
- `same`: the team-year on both backends, row for row in every table, and recall's
  answers to 40 queries (0 differing).

A figure that takes longer than its limit (`LIMITS`) is stopped and reported as
"> limit" (a miss), so one slow figure does not hold the rest. The PostgreSQL server is
stopped at the end. The machine is shared: figures move with the load printed beside them.
"""

# bench: only when named, limit 14400 s

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import backends
import synth
import year_agents
import year_cache
import year_plan
import year_replica
import year_verify
from cli import command, hook_input
from report import environment, fmt

QUERY = "npm lockfile release job"
LIMITS = {"policy": 900.0, "copy": 900.0, "doctor": 300.0, "tui": 300.0}
CAP_MB = 8192  # policy eval's address space, on a machine shared with other work
GROUPS = ("cli", "agents", "tui", "policy", "copy", "doctor", "world", "same")


def load() -> float:
    return os.getloadavg()[0]


def figure(
    name: str,
    value: float | None,
    unit: str,
    target: float | None,
    *,
    low: float | None = None,
    limit: float | None = None,
    at_least: bool = False,
    failed: str | None = None,
    at_load: str | None = None,
) -> None:
    """One figure line; `value` None means it ran past `limit`, or `failed` says why
    there is none (a miss when it has a target). `at_load`: the load it was taken at,
    when not now."""
    goal = "-" if target is None else f"{'≥' if at_least else '≤'} {fmt(target, unit)}"
    if value is None:
        shown = failed or f"> {fmt(limit or 0, unit)} (stopped)"
        verdict = "-" if target is None else "miss"
    else:
        shown = fmt(value, unit) + (f" (min {fmt(low, unit)})" if low is not None else "")
        ok = target is None or (value >= target if at_least else value <= target)
        verdict = "-" if target is None else ("pass" if ok else "miss")
    print(f"{name}\t{shown}; load {at_load or f'{load():.1f}'}\t{goal}\t{verdict}", flush=True)


def note(text: str) -> None:
    print(text, file=sys.stderr, flush=True)


# ----------------------------------------------------------------- running commands
_MEASURE = """
import json, os, resource, subprocess, sys, time
limit, cap = float(sys.argv[1]), int(sys.argv[2])
def capped():
    if cap:
        resource.setrlimit(resource.RLIMIT_AS, (cap << 20, cap << 20))
data = sys.stdin.buffer.read()
t = time.perf_counter()
p = subprocess.Popen(sys.argv[3:], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                     stderr=subprocess.PIPE, preexec_fn=capped)
try:
    out, err = p.communicate(data, timeout=limit)
    stopped = False
except subprocess.TimeoutExpired:
    p.kill()
    out, err = p.communicate()
    stopped = True
wall = time.perf_counter() - t
peak = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024
print(json.dumps([wall, peak, p.returncode, stopped, out.decode(errors="replace")[-4000:],
                  err.decode(errors="replace")[-800:]]))
"""


def run(
    argv: list[str], env: dict[str, str], *, stdin: bytes = b"", limit: float = 600, cap_mb: int = 0
) -> dict:
    """One run of `argv` in a small process of its own (so the peak is the command's):
    wall seconds, peak MB, exit code, whether it was stopped at `limit`, output. `cap_mb`:
    its address space is limited to that (a command that would take the shared machine's
    memory fails instead)."""
    done = subprocess.run(
        [sys.executable, "-c", _MEASURE, str(limit), str(cap_mb), *argv],
        input=stdin, capture_output=True, env=env, check=False,
    )  # fmt: skip
    if done.returncode != 0:
        raise SystemExit(f"measuring {' '.join(argv)} failed: {done.stderr.decode()[-500:]}")
    wall, peak, rc, stopped, out, err = json.loads(done.stdout)
    return {"wall": wall, "peak": peak, "rc": rc, "stopped": stopped, "out": out, "err": err}


def timed(cases: dict[str, tuple[list[str], bool]], runs: int, env: dict[str, str]) -> dict:
    """Wall times per case (argv, is a hook), round-robin after one warm-up round."""
    walls: dict[str, list[float]] = {name: [] for name in cases}
    for r in range(runs + 1):
        for name, (argv, hook) in cases.items():
            got = run(argv, env, stdin=hook_input() if hook else b"", limit=120)
            if got["rc"] != 0 or (hook and not got["out"].strip()):
                raise SystemExit(f"{name} failed (exit {got['rc']}): {got['err']}")
            if r:
                walls[name].append(got["wall"])
    return walls


def report_walls(name: str, walls: list[float], target: float) -> None:
    figure(name, statistics.median(walls), "s", target, low=min(walls))


# ----------------------------------------------------------------- the groups
class Bench:
    def __init__(self, args: argparse.Namespace) -> None:
        self.args = args
        self.base = command()
        self.env = environment()
        for name in ("PLAYBOOK_DB", "PLAYBOOK_POLICY"):
            self.env.pop(name, None)
        self.tmp = Path(tempfile.mkdtemp(prefix="playbook-team-year-"))
        self.env["XDG_STATE_HOME"] = str(self.tmp / "state")
        self.cache = year_cache.folder(args.dir)
        self.server = year_cache.Server(self.cache)
        self.team = year_plan.team_year()
        self.heavy = year_plan.heavy_user()
        if args.small:  # for trying the bench itself: seconds, not an hour
            self.team = year_plan.Spec(rules=3_000, events=150_000, sessions=150)
            self.heavy = year_plan.Spec(rules=1_000, events=30_000, sessions=30, seed=32)
        self._pg: str | None = None

    def team_sqlite(self) -> Path:
        return year_cache.sqlite_world(self.team, self.cache)

    def heavy_sqlite(self) -> Path:
        return year_cache.sqlite_world(self.heavy, self.cache)

    def team_pg(self) -> str:
        if self._pg is None:
            self.server.start()
            self._pg = year_cache.pg_world(self.team, self.server, self.cache)
        return self._pg

    def db(self, target: str | Path) -> list[str]:
        return [*self.base, "--db", str(target)]

    def popular_ids(self, target: str | Path, n: int = 50) -> list[str]:
        from playbook.store import open_store

        with open_store(target, mode="read") as store:
            return store.sql.column(
                "SELECT e.bullet_id FROM evidence e JOIN bullets b ON b.id = e.bullet_id "
                "WHERE b.state = 'active' ORDER BY e.count DESC LIMIT ?",
                (n,),
            )

    def cli(self) -> None:
        runs = self.args.runs
        pg = self.team_pg()
        heavy = self.heavy_sqlite()
        note(f"cli: {runs} runs each (median), load average {load():.1f}")
        walls = timed(
            {
                "pg recall": ([*self.db(pg), "recall", QUERY, "--json"], False),
                "pg hook": ([*self.db(pg), "hook", "prompt"], True),
                "heavy recall": ([*self.db(heavy), "recall", QUERY, "--json"], False),
                "heavy hook": ([*self.db(heavy), "hook", "prompt"], True),
            },
            runs,
            self.env,
        )
        report_walls("recall --json, PostgreSQL team-year", walls["pg recall"], 0.25)
        report_walls("hook prompt, PostgreSQL team-year", walls["pg hook"], 0.25)
        report_walls("recall --json, SQLite heavy user (1M events)", walls["heavy recall"], 0.15)
        report_walls("hook prompt, SQLite heavy user (1M events)", walls["heavy hook"], 0.15)
        with year_cache.pg_copy(self.server, pg) as copy:
            ids = self.popular_ids(copy, 200)
            mark = [*self.db(copy), "mark", ids[len(ids) // 2], "helpful"]
            walls = timed({"mark": (mark, False)}, runs, self.env)
            report_walls("mark, PostgreSQL team-year", walls["mark"], 0.15)
            figure("mark in-process, PostgreSQL team-year (median of 200)",
                   backends.mark_ms(copy), "ms", 5.0)  # fmt: skip
        fresh = synth.copy_of(10_000, self.tmp / "fresh-10k.sqlite3")
        bid = synth.some_id(fresh)
        walls = timed(
            {
                "recall": ([*self.db(fresh), "recall", QUERY, "--json"], False),
                "mark": ([*self.db(fresh), "mark", bid, "helpful"], False),
            },
            runs,
            self.env,
        )
        report_walls("recall --json, fresh 10k SQLite", walls["recall"], 0.065)
        report_walls("mark, fresh 10k SQLite", walls["mark"], 0.065)

    def agents(self) -> None:
        pg = self.team_pg()
        with year_cache.pg_copy(self.server, pg) as copy:
            ids = self.popular_ids(copy, 500)
            n, seconds = self.args.agents, self.args.agent_seconds
            note(f"agents: {n} for {seconds:.0f} s on a copy of the team-year, load {load():.1f}")
            got = year_agents.run(self.db(copy), self.env, ids, synth.TERMS, n, seconds)
            from playbook.store import open_store

            with open_store(copy, mode="read") as store:
                wrong, extra = year_agents.check(store, got)
        note(
            f"agents: {got.loops} loops, {len(got.prompt)} prompts, {len(got.mark)} marks, "
            f"{len(got.outcome)} outcomes; first errors: {got.errors[:3]}"
        )
        what = f"{n} agents × {seconds / 60:.0f} min, PostgreSQL team-year"
        figure(f"{what}: hook prompt p50", pct(got.prompt, 50), "s", 0.3)
        figure(f"{what}: hook prompt p99", pct(got.prompt, 99), "s", 1.0)
        figure(f"{what}: mark p50", pct(got.mark, 50), "s", 0.2)
        figure(f"{what}: mark p99", pct(got.mark, 99), "s", 0.8)
        figure(f"{what}: outcome p50", pct(got.outcome, 50), "s", None)
        figure(f"{what}: errors", len(got.errors), "", 0)
        figure(f"{what}: events not stored exactly once", wrong + extra, "", 0)

    def tui(self) -> None:
        limit = LIMITS["tui"]
        pg = self.team_pg()
        argv = [sys.executable, str(Path(__file__).with_name("year_tui.py")), pg, "--limit",
                str(limit / 2)]  # fmt: skip
        got = run(argv, self.env, limit=limit)
        lines = got["out"].strip().splitlines()
        result = json.loads(lines[-1]) if lines else {}
        if got["rc"] != 0 and not got["stopped"]:
            note(f"workbench failed (exit {got['rc']}): {got['err']}")
        what = "workbench on the PostgreSQL team-year (in-process)"
        for key, label, target in (
            ("first_paint", "first paint", 1.5),
            ("week_back", "a week back", 1.0),
            ("month_back", "a month back", 1.0),
            ("then_vs_now", "then-vs-now", 2.0),
        ):
            figure(f"{what}: {label}", result.get(key), "s", target, limit=limit / 2)

    def policy(self) -> None:
        limit = LIMITS["policy"]
        for label, path, target in (
            ("heavy user, 1M events", self.heavy_sqlite(), None),
            ("team-year, 10M events", self.team_sqlite(), 300.0),
        ):
            argv = [*self.db(path), "policy", "eval", "--json"]
            got = run(argv, self.env, limit=limit, cap_mb=CAP_MB)
            what = f"policy eval, {label}, 15 candidates"
            failed = got["rc"] != 0 and not got["stopped"]
            if failed:
                note(
                    f"{what} failed (exit {got['rc']}; memory capped at {CAP_MB} MB): {got['err']}"
                )
            value = None if got["stopped"] or failed else got["wall"]
            why = f"failed (exit {got['rc']}, {CAP_MB} MB cap)" if failed else None
            figure(what, value, "s", target, limit=limit, failed=why)
            figure(f"{what}: peak memory", got["peak"], "MB", None if target is None else 4096)

    def copy(self) -> None:
        limit = LIMITS["copy"]
        source = self.team_sqlite()
        self.server.start()
        name = f"copy_{os.getpid()}"
        self.server.sql(f'CREATE DATABASE "{name}"')
        try:
            got = run(
                [*self.base, "copy", str(source), self.server.url(name)], self.env, limit=limit
            )
            if got["rc"] != 0 and not got["stopped"]:
                note(f"copy failed (exit {got['rc']}): {got['err']}")
            figure("playbook copy, SQLite team-year to PostgreSQL",
                   None if got["stopped"] else got["wall"], "s", 300.0, limit=limit)  # fmt: skip
        finally:
            self.server.sql(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')

    def doctor(self) -> None:
        limit = LIMITS["doctor"]
        for label, target in (("SQLite", self.team_sqlite()), ("PostgreSQL", self.team_pg())):
            got = run([*self.db(target), "doctor", "--json"], self.env, limit=limit)
            healthy = got["rc"] == 0 and json.loads(got["out"])["data"]["healthy"]
            if not got["stopped"] and not healthy:
                note(f"doctor on the {label} team-year: not healthy: {got['out'][-400:]}")
            figure(f"doctor, {label} team-year", None if got["stopped"] else got["wall"], "s",
                   30.0, limit=limit)  # fmt: skip

    def world(self) -> None:
        """How long the worlds took to generate, from the cache's log (`year_cache`): the
        last generation at this version, with the load average at its end. A world only
        upgraded from an older schema has no figure here (`--dir` elsewhere, or
        `$PLAYBOOK_BENCH_FRESH=1`, generates it anew)."""
        for label, name, target in (
            ("team-year, SQLite", f"{year_cache.world_name(self.team)}.sqlite3", 600.0),
            ("team-year, PostgreSQL", year_cache.pg_name(self.team), 600.0),
            ("heavy user, SQLite", f"{year_cache.world_name(self.heavy)}.sqlite3", None),
        ):
            got = year_cache.generated(self.cache, name)
            what = f"world generated: {label}"
            if got is None:
                figure(what, None, "s", target, failed="not generated at this version")
            else:
                seconds, at_load, when = got
                figure(what, seconds, "s", target, at_load=f"{at_load:.1f}, {when}")

    def same(self) -> None:
        """The team-year on both backends: the same rows in every table, and the same
        answers from recall (40 queries in-process, one clock for both: rules and scores,
        bit for bit). tests/test_team_year.py checks a small year so; this, the big one."""
        lite, pg = self.team_sqlite(), self.team_pg()
        differ = year_verify.tables_differ(lite, pg)
        if differ:
            note(f"tables that differ: {', '.join(differ)}")
        figure("team-year, SQLite against PostgreSQL: tables whose rows differ", len(differ),
               "", 0)  # fmt: skip
        wrong, asked = year_replica.same_recall(str(lite), pg)
        figure(f"team-year, SQLite against PostgreSQL: recall answers that differ (of {asked})",
               wrong, "", 0)  # fmt: skip


def pct(values: list[float], p: float) -> float:
    if not values:
        return float("nan")
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(p / 100 * (len(ordered) - 1)))]


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--runs", type=int, default=7)
    ap.add_argument("--only", default=",".join(GROUPS), help=f"groups: {', '.join(GROUPS)}")
    ap.add_argument("--dir", default=None, help="the cache folder of the worlds")
    ap.add_argument("--agents", type=int, default=32)
    ap.add_argument("--agent-seconds", type=float, default=300)
    ap.add_argument("--build", action="store_true", help="build the worlds, measure nothing")
    ap.add_argument("--small", action="store_true", help="small worlds, to try the bench")
    ap.add_argument("--keep-server", action="store_true", help="leave PostgreSQL running")
    args = ap.parse_args()
    bench = Bench(args)
    try:
        if args.build:
            for path in (bench.team_sqlite(), bench.heavy_sqlite(), bench.team_pg()):
                note(f"ready: {path}")
            return 0
        for group in args.only.split(","):
            if group not in GROUPS:
                raise SystemExit(f"no group {group!r}: {', '.join(GROUPS)}")
            started = time.perf_counter()
            getattr(bench, group)()
            note(f"({group}: {time.perf_counter() - started:.0f} s)")
    finally:
        if not args.keep_server:
            bench.server.stop()
    return 0  # misses are rows of the table, not a failure of the script


if __name__ == "__main__":
    sys.exit(main())
