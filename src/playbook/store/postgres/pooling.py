"""A connection's settings, at its start or in every transaction (`?pool=transaction`).

Playbook's connections carry settings: `lock_timeout` (how long a writer waits for the
playbook's write lock), `jit = off`, `random_page_cost`, whatever `-c name=value` the URL's
own `options` says (a `search_path` choosing the playbook's schema), and, for a read-only
opening, `default_transaction_read_only = on`. Straight to a server they go in the startup
packet's `options` and hold for the whole session, at no cost.

A pooler in transaction mode (PgBouncer's `pool_mode = transaction`) hands each transaction
to whichever server connection is free: it refuses the `options` startup parameter (or,
told to ignore it, drops it: no lock timeout, no read-only, the wrong schema), and a
statement psycopg prepared on one server connection is missing, or already there, on the
next. With `pool=transaction` in the URL (`postgresql://host:6432/team?pool=transaction`),
Playbook sends no `options` and prepares nothing; the settings travel with every
transaction instead, as `set_config(name, value, true)` (`SET LOCAL`) in the transaction's
first round trip: in the `BEGIN` of a write or a snapshot, and in the same pipeline as a
read on its own, which the server runs as one implicit transaction. A read-only opening
sets `transaction_read_only` in each, so a read command stays read-only through the pool.
The parameter is taken out of the URL before libpq sees it.
"""

from __future__ import annotations

from urllib.parse import unquote

from ...core import errors

POOL_PARAMETER = "pool"
POOL_MODES = ("transaction",)


def pool_mode(url: str) -> tuple[str, str | None]:
    """(`url` without `pool=...`, the mode it named or None); `UsageError` for a mode that
    Playbook does not know."""
    base, mark, query = url.partition("?")
    pairs = [(p.partition("=")[0], unquote(p.partition("=")[2])) for p in query.split("&")]
    modes = [value for key, value in pairs if key == POOL_PARAMETER] if mark else []
    if not modes:
        return url, None
    if len(modes) > 1 or modes[0] not in POOL_MODES:
        raise errors.UsageError(
            f"{POOL_PARAMETER}={','.join(modes)} in a PostgreSQL URL: the one value "
            f"Playbook knows is {POOL_PARAMETER}=transaction (a pooler in transaction mode)"
        )
    kept = "&".join(p for p in query.split("&") if p.partition("=")[0] != POOL_PARAMETER)
    return f"{base}?{kept}" if kept else base, modes[0]


def option_settings(options: str) -> list[tuple[str, str]]:
    """The `(name, value)` settings of a libpq `options` string (`-c name=value`,
    `-cname=value`, `--name=value`; a backslash escapes the next character);
    `ValueError` naming anything else, which a pooled connection cannot carry."""
    words: list[str] = []
    word: list[str] | None = None
    escaped = False
    for c in options:
        if escaped:
            word = (word or []) + [c]
            escaped = False
        elif c == "\\":
            escaped = True
            word = word or []
        elif c.isspace():
            if word is not None:
                words.append("".join(word))
            word = None
        else:
            word = (word or []) + [c]
    if word is not None:
        words.append("".join(word))
    settings: list[tuple[str, str]] = []
    i = 0
    while i < len(words):
        w = words[i]
        if w == "-c" and i + 1 < len(words):
            i += 1
            w = words[i]
        elif w.startswith(("-c", "--")) and len(w) > 2:
            w = w[2:]
        else:
            raise ValueError(w)
        name, eq, value = w.partition("=")
        if not eq or not name:
            raise ValueError(w)
        settings.append((name.replace("-", "_"), value))
        i += 1
    return settings


def settings_statement(settings: list[tuple[str, str]]) -> str:
    """One statement that sets each of `settings` for the current transaction only."""

    def literal(text: str) -> str:
        return "'" + text.replace("'", "''") + "'"

    calls = [f"set_config({literal(name)}, {literal(value)}, true)" for name, value in settings]
    return "SELECT " + ", ".join(calls)
