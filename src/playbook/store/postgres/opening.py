"""Connecting to a PostgreSQL playbook in one of the three modes (see `store/target.py`).

A playbook lives in one schema of one database: the first schema of the connection's
`search_path` (`public` by default; another one with `?options=-csearch_path%3Dteam` in
the URL). `create` makes that schema when it does not exist yet (the user needs the
CREATE privilege on the database); `read` and `write` never create anything.
"""

from __future__ import annotations

import contextlib
import importlib.util
import os
import re
import sys
import types
from collections.abc import Callable
from typing import Any

from ...core import errors
from ..sqlite import Mode
from ..urls import scrub
from . import libpq, light
from .dialect import translate
from .executor import PostgresExecutor
from .pooling import option_settings, pool_mode, settings_statement
from .preference import light_preferred

BUSY_TIMEOUT = "30s"  # how long a writer waits for the write lock (SQLite: its busy timeout)
CONNECT_TIMEOUT = 10  # seconds, unless the URL says otherwise
RANDOM_PAGE_COST = 1.1  # the planner's cost of a page read out of order (see `connect`)


def _psycopg() -> Any:
    try:
        return import_psycopg()
    except ImportError:
        raise errors.BackendUnavailable(
            f"PostgreSQL playbooks need psycopg ({errors.install_hint('postgres')})"
        ) from None


# psycopg's and psycopg-binary's `version` modules, and the distributions they ask.
_VERSIONED = (("psycopg.version", "psycopg"), ("psycopg_binary.version", "psycopg_binary"))


def import_psycopg() -> Any:
    """`import psycopg`, without its cost of asking the installed distributions for their
    versions: its `version` module and psycopg-binary's import `importlib.metadata` (with
    `email`, `zipfile`, `csv`: ~35 ms of a hook's ~200 ms). Their one name, `__version__`,
    is read here from the `*.dist-info` folder's name beside the package instead. Should a
    later psycopg want more of them, the stand-ins are dropped and psycopg imported as it
    is; a psycopg already imported is returned as it is."""
    if "psycopg" in sys.modules:
        import psycopg  # lazy: PostgreSQL playbooks only (imported already: no stand-ins)

        return psycopg
    placed = [name for name, dist in _VERSIONED if _stand_in(name, dist)]
    try:
        import psycopg  # lazy: PostgreSQL playbooks only, after the stand-ins (above)
    except ImportError:
        for name in placed:
            sys.modules.pop(name, None)
        for name in [m for m in sys.modules if m == "psycopg" or m.startswith("psycopg.")]:
            sys.modules.pop(name, None)
        import psycopg  # lazy: PostgreSQL playbooks only (as it is: the stand-ins would not do)
    return psycopg


def _stand_in(module: str, dist: str) -> bool:
    """Put a `module` holding the installed `dist`'s `__version__` in `sys.modules`."""
    if module in sys.modules:
        return False
    try:
        spec = importlib.util.find_spec(dist)
    except (ImportError, ValueError):
        return False
    if spec is None or not spec.submodule_search_locations:
        return False
    site = os.path.dirname(next(iter(spec.submodule_search_locations)))
    prefix = dist.replace("_", "-").lower()
    try:
        names = os.listdir(site)
    except OSError:
        return False
    for name in names:
        stem, _, suffix = name.rpartition(".")
        base, _, version = stem.partition("-")
        if suffix == "dist-info" and base.replace("_", "-").lower() == prefix and version:
            stand_in = types.ModuleType(module)
            stand_in.__dict__["__version__"] = version  # its one name
            sys.modules[module] = stand_in
            return True
    return False


def connect(url: str, label: str, *, read_only: bool = False) -> Any:
    """A psycopg connection as the executor expects it (autocommit, timeouts set; through a
    transaction-mode pooler, no settings and no prepared statements: `pooling.py`)."""
    psycopg = _psycopg()
    url, options, _ = session(url, label, read_only=read_only)
    try:
        return psycopg.connect(url, **options)
    except psycopg.Error as exc:
        raise _connect_error(exc, label, url) from None


def session(
    url: str,
    label: str,
    *,
    read_only: bool = False,
    parse: Callable[[str], dict[str, str]] | None = None,
) -> tuple[str, dict[str, Any], str]:
    """(the URL for libpq, `psycopg.connect`'s other arguments, the statement that sets the
    session's settings in each transaction: "" when they go with the connection). `parse`
    reads the URL's keywords (psycopg's `conninfo_to_dict` unless given)."""
    url, pool = pool_mode(url)
    try:
        given = (parse or _conninfo_to_dict)(url)
    except ValueError as exc:
        detail = scrub(" ".join(str(exc).split()), url)
        raise errors.UsageError(f"not a valid PostgreSQL URL: {label} ({detail})") from None
    options: dict[str, Any] = {"autocommit": True}
    if "connect_timeout" not in given:
        options["connect_timeout"] = CONNECT_TIMEOUT
    if "application_name" not in given:
        options["application_name"] = "playbook"
    # The session's settings go with the connection request (no round trip of their own),
    # after the URL's own options, so that they win. No JIT: the store's statements are
    # short, and a plan whose cost estimate passes `jit_above_cost` (recall's one pass over
    # the evidence cache at 100k rules, `store.rank.first_worth`) spent more time compiling
    # than running (EXPLAIN ANALYZE on the team-year: JIT 287 ms of 989 ms).
    settings = [f"-c lock_timeout={BUSY_TIMEOUT}", "-c jit=off"]
    if read_only:
        settings.append("-c default_transaction_read_only=on")
    # Before the URL's own options (so that one can say otherwise): a playbook's tables
    # are small and read all the time, so they stay in the server's cache, where an index
    # look-up costs about what a sequential read does. With the default cost (4, for
    # spinning disks) recall's candidate reads at 100k rules hashed the whole evidence cache
    # for a batch of a few hundred rules (EXPLAIN ANALYZE on the team-year: 48 ms, against
    # 13 ms by index; recall in-process 470-490 -> 300-410 ms at a load of 13).
    tuned = [f"-c random_page_cost={RANDOM_PAGE_COST}"]
    own = str(given.get("options") or "")
    if pool is None:
        options["options"] = " ".join([*tuned, own, *settings]).strip()
        return url, options, ""
    try:
        pairs = option_settings(" ".join([*tuned, own, *settings]))
    except ValueError as exc:
        raise errors.UsageError(
            f"{label}: through a pool (pool=transaction) the URL's options can only set "
            f"settings (-c name=value), not {exc}"
        ) from None
    if read_only:  # each transaction itself: a default is read as the transaction begins
        pairs = [(k, v) for k, v in pairs if k != "default_transaction_read_only"]
        pairs.append(("transaction_read_only", "on"))
    options["options"] = ""  # nothing in the startup packet (not even $PGOPTIONS)
    options["prepare_threshold"] = None  # a pool's next server connection has none of them
    return url, options, settings_statement(pairs)


def _conninfo_to_dict(url: str) -> dict[str, Any]:
    psycopg = _psycopg()
    from psycopg.conninfo import conninfo_to_dict  # lazy: PostgreSQL only, after _psycopg()

    try:
        return conninfo_to_dict(url)
    except psycopg.ProgrammingError as exc:
        raise ValueError(str(exc)) from None


def _connect_error(exc: Exception, label: str, url: str) -> errors.PlaybookError:
    text = scrub(str(exc).strip(), url)
    reason = text.split("FATAL:", 1)[-1].strip().splitlines()[0] if text else type(exc).__name__
    if re.search(r'database ".*" does not exist', text):
        return errors.NoDatabase(
            f"no database at {label} ({reason})",
            hint="create it first (createdb NAME, or CREATE DATABASE in psql)",
        )
    return errors.CannotOpen(f"cannot connect to {label}: {reason}")


def playbook_schema(
    conn: Any, label: str, mode: Mode, settings: str = ""
) -> tuple[str, bool, bool]:
    """The schema the playbook lives in (made in `create` mode when it does not exist);
    whether the connection's role leaves what is derived from the log to the database: it
    may not write the evidence cache (the agent role of `playbook pg roles`); and whether
    the schema holds the commit counter (asked here, in the same round trip, rather than by
    the first commit: a one-shot `mark` saves one). `settings`: `session`'s statement."""
    current, path, restricted, counter = _with(
        conn,
        settings,
        "SELECT current_schema(), current_setting('search_path'), "
        "to_regclass('evidence') IS NOT NULL AND NOT has_table_privilege('evidence', 'INSERT'), "
        "to_regclass(quote_ident(current_schema()) || '._playbook_changes') IS NOT NULL",
    ).fetchone()
    if current is not None:
        return str(current), bool(restricted), bool(counter)
    wanted = [name for name in search_path_names(path) if name != "$user"]
    if not wanted:
        raise errors.CannotOpen(f"{label}: the connection's search_path names no schema")
    if mode != "create":
        raise errors.NotAPlaybook(
            f"{label} holds no playbook (the schema {wanted[0]!r} does not exist)"
        )
    psycopg = _psycopg()
    from psycopg import sql  # lazy: PostgreSQL only, after _psycopg()

    made = sql.Identifier(wanted[0])
    try:
        conn.execute(sql.SQL("CREATE SCHEMA IF NOT EXISTS {}").format(made))
        now = _with(conn, settings, "SELECT current_schema()").fetchone()[0]
    except psycopg.errors.UniqueViolation:
        now = wanted[0]  # another process made it a moment ago
    except psycopg.Error as exc:
        raise translate(exc, label) or exc from None
    if now != wanted[0]:  # never leave a schema behind that the playbook will not be in
        with contextlib.suppress(psycopg.Error):
            conn.execute(sql.SQL("DROP SCHEMA IF EXISTS {} RESTRICT").format(made))
        raise errors.CannotOpen(
            f"{label}: made the schema {wanted[0]!r}, but the connection's search_path "
            f"({path}) does not select it"
        )
    return wanted[0], False, False


def _with(conn: Any, settings: str, query: str) -> Any:
    """`query`'s cursor; with `settings` first, in the same implicit transaction."""
    if not settings:
        return conn.execute(query)
    with conn.pipeline():
        conn.execute(settings)
        return conn.execute(query)


def search_path_names(path: str) -> list[str]:
    """The schema names of a `search_path` setting, as PostgreSQL reads them: split at the
    commas outside double quotes; a quoted name kept as written (`""` is a quote), an
    unquoted one folded to lower case (ASCII, as the server folds identifiers)."""
    names: list[str] = []
    name: list[str] = []
    quoted = was_quoted = False
    i = 0
    while i < len(path):
        c = path[i]
        if quoted:
            if c == '"' and path[i + 1 : i + 2] == '"':
                name.append('"')
                i += 1
            elif c == '"':
                quoted = False
            else:
                name.append(c)
        elif c == '"':
            quoted = was_quoted = True
        elif c == ",":
            names.append("".join(name))
            name, was_quoted = [], False
        elif not c.isspace():
            name.append(c if was_quoted else c.lower() if c.isascii() else c)
        i += 1
    names.append("".join(name))
    return [n for n in names if n]


def connect_light(url: str, label: str, *, read_only: bool = False) -> Any:
    """A light connection (`light.py`) as `connect` makes a psycopg one: the same URL, the
    same settings; text in UTF-8, which is what a psycopg connection decodes to `str`."""
    url, options, _ = session(url, label, read_only=read_only, parse=libpq.parse_conninfo)
    keywords = {"dbname": url, "client_encoding": "UTF8"}
    keywords.update((k, str(v)) for k, v in options.items() if k != "autocommit")
    try:
        return light.connect(keywords)
    except light.LightError as exc:
        raise _connect_error(exc, label, url) from None


def _light_serves(url: str, mode: Mode) -> bool:
    """Whether a light connection can open this playbook: asked for (`prefer_light`), to
    read or write (not to create), straight to a server (not through a pool), with libpq
    found, and a URL that leaves the client's encoding alone."""
    if not light_preferred() or mode == "create" or pool_mode(url)[1] is not None:
        return False
    if not libpq.available():
        return False
    try:
        return "client_encoding" not in libpq.parse_conninfo(url)
    except ValueError:
        return False  # psycopg's reading says what is wrong with it


def open_postgres(url: str, mode: Mode, label: str) -> PostgresExecutor:
    """A `PostgresExecutor` on the playbook at `url` (see the module's docstring), on a
    light connection when one serves (`_light_serves`), else on psycopg's."""
    read_only = mode == "read"
    if _light_serves(url, mode):
        settings, opener = "", connect_light
    else:
        _psycopg()  # BackendUnavailable without it
        settings, opener = session(url, label, read_only=read_only)[2], connect
    conn = opener(url, label, read_only=read_only)
    try:
        schema, restricted, counter = playbook_schema(conn, label, mode, settings)
    except BaseException:
        conn.close()
        raise
    ex = PostgresExecutor(
        conn, schema=schema, label=label, read_only=mode == "read", settings=settings
    )
    ex.derived_by_database = restricted
    ex.counter_found(counter)
    ex.reopen = lambda: opener(url, label, read_only=read_only)
    return ex
