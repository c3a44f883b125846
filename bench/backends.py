"""PostgreSQL beside SQLite: recall, mark and curate on the same synthetic playbook.

    python bench/backends.py [SIZE ...]        # default: 10000 100000

Each size's synthetic playbook (`synth.py`) is measured as a SQLite file and, moved with
`copy_playbook` (what `playbook copy` runs), as a schema of a PostgreSQL database: the
server in $PLAYBOOK_TEST_PG when it is set (its bench schemas are dropped at the end), or
a throwaway local cluster this script starts and stops (`playbook.store.postgres.cluster`:
the server package's initdb and pg_ctl, run as the postgres user when root). The server is
on this machine, over loopback TCP: a team's server across a network adds its round trip
to every statement a command sends.

Figures, in-process, per backend and size: keyword recall (median over repeated queries
on a warm store), a mark (one helpful vote through `curate`, median of 200), and at 10k a
batch of 100 adds + 100 helpful (median of 5); the copy's time is shown too. Targets
(issue 16): PostgreSQL's recall within 2x of SQLite's; a mark ≤ 5 ms; the batch ≤ 150 ms.

Then `playbook pg roles` is run on the 10k schema and the mark and the batch are measured
again, by the owner, logged in as a reviewer's role (row-level security on, with a policy
that lets it do everything: the targets hold) and as an agent's (every row it writes
checked by the database, the fold and the maturity pass run by the database: shown,
without a target), the batches in turn so that the playbook grows alike under each. The
agent's store runs on the real clock, which the database checks its timestamps against.
"""

from __future__ import annotations

import os
import random
import statistics
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import synth
from curate import batch_median  # the same batch as bench/curate.py
from recall import QUERIES  # the same queries as bench/recall.py
from report import figure, note

from playbook.curation import curate
from playbook.retrieval.query import recall
from playbook.store import PlaybookStore, copy_playbook, open_store

MARK_MS = 5.0
BATCH_MS = 150.0
RECALL_RATIO = 2.0
NAMES = {"sqlite": "SQLite", "postgresql": "PostgreSQL"}


def k(n: int) -> str:
    return f"{n // 1000}k"


@contextmanager
def server() -> Iterator[str]:
    """The URL of a PostgreSQL database the bench may create schemas in."""
    given = os.environ.get("PLAYBOOK_TEST_PG")
    if given:
        note(f"PostgreSQL: {given} ($PLAYBOOK_TEST_PG)")
        yield given
        return
    from playbook.store.postgres.cluster import Cluster, ClusterError

    folder = Path(tempfile.mkdtemp(prefix="playbook-bench-pg-"))
    cluster = Cluster(folder)
    try:
        url = cluster.start(owner_pid=os.getpid())
    except ClusterError as exc:
        cluster.stop()
        raise SystemExit(f"bench/backends.py: could not start PostgreSQL: {exc}") from None
    note(f"PostgreSQL: a throwaway cluster at {url}")
    try:
        yield url
    finally:
        cluster.stop()


def in_schema(url: str, schema: str) -> str:
    from urllib.parse import parse_qsl, urlencode, urlsplit, urlunsplit

    parts = urlsplit(url)
    query = dict(parse_qsl(parts.query))
    query["options"] = (query.get("options", "") + f" -csearch_path={schema}").strip()
    return urlunsplit(parts._replace(query=urlencode(query)))


def drop_schemas(url: str, schemas: list[str]) -> None:
    import psycopg
    from psycopg import sql

    with psycopg.connect(url, autocommit=True) as conn:
        for schema in schemas:
            conn.execute(sql.SQL("DROP SCHEMA IF EXISTS {} CASCADE").format(sql.Identifier(schema)))


def opened(target: str | Path) -> PlaybookStore:
    if isinstance(target, str) and "_agent_login@" in target:
        return open_store(target)  # the database checks an agent's timestamps: real time
    return open_store(target, clock=lambda: synth.NOW)


def recall_ms(target: str | Path, repeats: int = 5) -> float:
    """Median keyword recall, in-process, after a first one (which loads the rank table)."""
    with opened(target) as store:
        recall(store, QUERIES[0])
        times = []
        for _ in range(repeats):
            for q in QUERIES:
                t = time.perf_counter()
                recall(store, q)
                times.append(time.perf_counter() - t)
    return statistics.median(times) * 1000


def mark_ms(target: str | Path, marks: int = 200) -> float:
    with opened(target) as store:
        ids = [b.id for b in store.bullets(state="active")]
        rng = random.Random(5)
        curate(store, [{"type": "helpful", "bullet_id": ids[0]}])  # warm up
        times = []
        for _ in range(marks):
            delta = {"type": "helpful", "bullet_id": rng.choice(ids)}
            t = time.perf_counter()
            curate(store, [delta])
            times.append(time.perf_counter() - t)
    return statistics.median(times) * 1000


def batch_ms(target: str | Path, rounds: int = 5, label: str = "Batch") -> float:
    with opened(target) as store:
        return batch_median(store, rounds, label) * 1000


def measure(n: int, targets: dict[str, str | Path]) -> None:
    recalls: dict[str, float] = {}
    for backend, target in targets.items():
        recalls[backend] = recall_ms(target)
        figure(f"recall keyword in-process at {k(n)}, {NAMES[backend]}", recalls[backend], "ms")
    ratio = recalls["postgresql"] / recalls["sqlite"]
    figure(f"recall at {k(n)}, PostgreSQL / SQLite", ratio, "x", RECALL_RATIO)
    for backend, target in targets.items():
        figure(f"mark in-process at {k(n)}, {NAMES[backend]}", mark_ms(target), "ms", MARK_MS)
    if n == 10_000:
        for backend, target in targets.items():
            figure(
                f"curate 100 adds + 100 helpful at 10k, {NAMES[backend]}",
                batch_ms(target),
                "ms",
                BATCH_MS,
            )
        owner = str(targets["postgresql"])
        with logins(owner) as (human, agent):
            logins_by_role = {"owner": owner, "reviewer's role": human, "agent's role": agent}
            for role, url in logins_by_role.items():
                target = MARK_MS if role != "agent's role" else None
                figure(f"mark in-process at 10k, PostgreSQL, roles made, {role}", mark_ms(url),
                       "ms", target)  # fmt: skip
            # One batch each in turn, five times: the playbook grows alike under each.
            times: dict[str, list[float]] = {role: [] for role in logins_by_role}
            for r in range(5):
                for role, url in logins_by_role.items():
                    times[role].append(batch_ms(url, rounds=1, label=f"{role[:5]}{r}"))
            for role, values in times.items():
                target = BATCH_MS if role != "agent's role" else None
                figure(f"curate 100 adds + 100 helpful at 10k, PostgreSQL, roles made, {role}",
                       statistics.median(values), "ms", target)  # fmt: skip


@contextmanager
def logins(url: str) -> Iterator[tuple[str, str]]:
    """`playbook pg roles` on the playbook at `url` (its owner's login), and the URLs of a
    login in each role; the roles are dropped afterwards."""
    import psycopg

    tag = f"bench{os.getpid()}"
    names = {"agent": f"{tag}_agent", "human": f"{tag}_human"}
    with opened(url) as owner:
        owner.roles.install(names["agent"], names["human"])
    conninfo = url.split("?", 1)[0]
    with psycopg.connect(conninfo, autocommit=True) as conn:
        for group in names.values():
            conn.execute(f"CREATE ROLE {group}_login LOGIN IN ROLE {group}")
    rest = url.split("://", 1)[1].split("@", 1)[1]
    try:
        yield (
            f"postgresql://{names['human']}_login@{rest}",
            f"postgresql://{names['agent']}_login@{rest}",
        )
    finally:
        with psycopg.connect(conninfo, autocommit=True) as conn:
            for group in names.values():
                conn.execute(f"DROP ROLE IF EXISTS {group}_login")
                conn.execute(f"DROP OWNED BY {group}")
                conn.execute(f"DROP ROLE IF EXISTS {group}")


def timed(what: Callable[[], object]) -> float:
    t = time.perf_counter()
    what()
    return time.perf_counter() - t


def main() -> int:
    sizes = [int(a) for a in sys.argv[1:]] or [10_000, 100_000]
    for n in sizes:
        synth.playbook(n)
    note("(one machine shared with other work: figures move by tens of percent between runs)")
    with tempfile.TemporaryDirectory() as tmp, server() as url:
        schemas: list[str] = []
        try:
            for n in sizes:
                path = synth.copy_of(n, Path(tmp) / f"pb-{n}.sqlite3")
                opened(path).close()  # brought to the current schema version, as a user's is
                schema = f"bench_{n}_{os.getpid()}"
                schemas.append(schema)
                pg = in_schema(url, schema)
                took = timed(lambda p=path, u=pg: copy_playbook(p, u))  # type: ignore[misc]
                figure(f"playbook copy SQLite to PostgreSQL at {k(n)}", took, "s")
                measure(n, {"sqlite": path, "postgresql": pg})
                path.unlink()
        finally:
            if os.environ.get("PLAYBOOK_TEST_PG"):
                drop_schemas(url, schemas)
    return 0


if __name__ == "__main__":
    sys.exit(main())
