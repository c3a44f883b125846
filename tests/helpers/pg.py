"""The PostgreSQL half of the suite: one server per run, one schema per test.

The controller process (the one pytest starts; with xdist, the workers are its children)
starts a throwaway server (`playbook.store.postgres.cluster`) while the workers start, and
passes its URL on (the first test that needs it waits for it); it stops it at the end (and
a watchdog stops it if the run is killed). $PLAYBOOK_TEST_PG set beforehand (by `.ci/run`,
or a developer's own server: a database where the tests may create schemas and roles) is
used as it is.

No server binaries: the PostgreSQL half is skipped, and the summary says why; with
$PLAYBOOK_REQUIRE_PG=1 (CI) every PostgreSQL test fails instead.
"""

from __future__ import annotations

import atexit
import contextlib
import itertools
import os
import secrets
import tempfile
import threading
import time
from pathlib import Path
from urllib.parse import parse_qsl, urlencode, urlsplit, urlunsplit

import pytest

ENV_URL = "PLAYBOOK_TEST_PG"
ENV_REQUIRE = "PLAYBOOK_REQUIRE_PG"
ENV_SKIP = "PLAYBOOK_TEST_PG_SKIP"  # why there is no server (set by the controller)
ENV_RUN = "PLAYBOOK_TEST_PG_RUN"  # a token naming this run's schemas
ENV_DIR = "PLAYBOOK_TEST_PG_DIR"  # the folder of the server the controller is starting

_cluster = None  # the server this process started, if any
_starting: threading.Thread | None = None  # starting it
_counter = itertools.count()


def configure(config: pytest.Config) -> None:
    """In the controller: start the run's server unless one is given or none is wanted.

    The server starts in the background (initdb and the start take seconds) while the
    workers start and collect; a test that needs it waits in `server_url`. The workers learn
    where it will say its URL, or why it did not start, from $PLAYBOOK_TEST_PG_DIR."""
    global _cluster, _starting
    if hasattr(config, "workerinput"):
        return  # a worker: the controller has set the environment
    os.environ.setdefault(ENV_RUN, secrets.token_hex(3))
    if os.environ.get(ENV_URL):
        return
    if "not postgres" in (config.getoption("markexpr", "") or "").replace("  ", " "):
        os.environ[ENV_SKIP] = "deselected with -m 'not postgres'"
        return
    from playbook.store.postgres.cluster import Cluster, ClusterError

    folder = Path(tempfile.mkdtemp(prefix="playbook-pg-"))
    cluster = Cluster(folder)

    def start() -> None:
        try:
            cluster.start(owner_pid=os.getpid())  # writes folder/url once it takes connections
        except ClusterError as exc:
            (folder / "failed").write_text(str(exc).splitlines()[0])

    _cluster = cluster
    atexit.register(cluster.stop)
    os.environ[ENV_DIR] = str(folder)
    _starting = threading.Thread(target=start, name="postgres-start", daemon=True)
    _starting.start()


def unconfigure(config: pytest.Config) -> None:
    global _cluster
    if _starting is not None:
        _starting.join()
    if _cluster is not None and not hasattr(config, "workerinput"):
        _cluster.stop()
        _cluster = None


def _await_server(timeout: float = 120.0) -> None:
    """Wait for the controller's server to start (or fail); then $PLAYBOOK_TEST_PG holds its
    URL, or $PLAYBOOK_TEST_PG_SKIP why there is none."""
    folder = os.environ.get(ENV_DIR)
    if folder is None or os.environ.get(ENV_URL) or os.environ.get(ENV_SKIP):
        return
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        for name, env in (("url", ENV_URL), ("failed", ENV_SKIP)):
            with contextlib.suppress(FileNotFoundError):
                if text := (Path(folder) / name).read_text().strip():
                    os.environ[env] = text
                    return
        time.sleep(0.05)
    os.environ[ENV_SKIP] = f"the server did not start within {timeout:.0f} s"


def summary_line() -> str:
    _await_server()
    url = os.environ.get(ENV_URL)
    if url:
        return f"PostgreSQL half: ran against {url}"
    reason = os.environ.get(ENV_SKIP, "no server")
    if os.environ.get(ENV_REQUIRE):
        return f"PostgreSQL half: FAILED, no server ({reason})"
    return f"PostgreSQL half: skipped ({reason})"


def server_url() -> str:
    """The run's server, or skip (fail under $PLAYBOOK_REQUIRE_PG) with the reason."""
    _await_server()
    url = os.environ.get(ENV_URL)
    if url:
        return url
    reason = os.environ.get(ENV_SKIP, "no PostgreSQL server for the tests")
    if os.environ.get(ENV_REQUIRE):
        pytest.fail(f"PostgreSQL is required ({ENV_REQUIRE}) but could not start: {reason}")
    pytest.skip(f"PostgreSQL half skipped: {reason}")


def with_schema(url: str, schema: str, application_name: str | None = None) -> str:
    """`url` with its search_path set to `schema` (a libpq `options` parameter, last)."""
    parts = urlsplit(url)
    query = dict(parse_qsl(parts.query))
    if application_name is not None:
        query["application_name"] = application_name
    options = (query.pop("options", "") + f" -csearch_path={schema}").strip()
    query["options"] = options
    return urlunsplit(parts._replace(query=urlencode(query)))


def fresh_schema_name(worker: str) -> str:
    return f"t{os.environ.get(ENV_RUN, 'x')}_{worker}_{next(_counter)}"


def fresh_target(base: str, worker: str) -> str:
    """A URL naming a schema no test has used (the first open in create mode makes it)."""
    return with_schema(base, fresh_schema_name(worker))


def deselect_sqlite_only(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Tests marked `sqlite_only` run only their SQLite variant (raw SQLite on purpose:
    file damage, WAL, schema upgrades of files)."""
    keep: list[pytest.Item] = []
    dropped: list[pytest.Item] = []
    for item in items:
        spec = getattr(item, "callspec", None)
        on_pg = spec is not None and spec.params.get("backend") == "postgresql"
        (dropped if on_pg and item.get_closest_marker("sqlite_only") else keep).append(item)
    if dropped:
        config.hook.pytest_deselected(items=dropped)
        items[:] = keep
