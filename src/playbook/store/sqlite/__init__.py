"""The SQLite backend: opening a file, the executor, and every SQLite-only piece of SQL.

`dialect.py` (SQL fragments, error translation), `executor.py` (the executor),
`opening.py` (modes, PRAGMAs, the WAL switch). The PostgreSQL backend is the sibling
package `store/postgres/`; the SQL fragments that differ are `store.dialect.SQLITE`.

Everything that is particular to SQLite lives in this package, so that the PostgreSQL one
sits beside it: the PRAGMAs, the WAL switch, `data_version` for live refresh,
`BEGIN IMMEDIATE`, `lastrowid`, and the translation of `sqlite3` errors into Playbook's own
(`playbook.core.errors`). No module outside the store package imports `sqlite3`; outside this
package the store speaks to its database only through the `Executor` protocol
(`store/executor.py`).

Three ways to open a file (`open_sqlite(path, mode)`):

* `read`   — an existing playbook, read only: never creates, never migrates, never
             switches the journal mode; works on a read-only file, folder or mount.
* `write`  — an existing playbook, read and write: upgrades an older schema; a file that
             holds no playbook (another program's database) is refused untouched.
* `create` — creates the folder and the file, switches to WAL, migrates.
"""

from .dialect import BUSY_TIMEOUT_MS, MODES, Mode, driver_error, translate
from .executor import Rows, SqliteExecutor
from .opening import connect, executor_of, open_sqlite

__all__ = [
    "BUSY_TIMEOUT_MS",
    "MODES",
    "Mode",
    "Rows",
    "SqliteExecutor",
    "connect",
    "driver_error",
    "executor_of",
    "open_sqlite",
    "translate",
]
