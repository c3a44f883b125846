"""The PostgreSQL executor's multi-row writes: a one-row INSERT asked for many rows goes as
INSERTs of up to `MANY_ROWS` rows, numbered with PostgreSQL's own `$n` parameters (sent as
they are, not parsed again by psycopg at every execution), and writes exactly the rows."""

from __future__ import annotations

import pytest

from playbook.store import open_store
from playbook.store import testing as raw
from playbook.store.postgres.statements import MANY_ROWS, Numbered, many_statements, numbered

UPSERT = (
    "INSERT INTO vocab (token, df) VALUES (?, ?) "
    "ON CONFLICT(token) DO UPDATE SET df = vocab.df + excluded.df"
)


def test_the_rows_are_numbered_on_from_one() -> None:
    text = numbered("INSERT INTO t (a, b) VALUES ", "(?, ?)", " ON CONFLICT(a) DO NOTHING", 3)
    assert isinstance(text, Numbered)
    assert text == (
        "INSERT INTO t (a, b) VALUES ($1, $2), ($3, $4), ($5, $6) ON CONFLICT(a) DO NOTHING"
    )


def test_many_rows_go_in_statements_of_at_most_many_rows() -> None:
    rows = [(f"t{i}", i) for i in range(2 * MANY_ROWS + 7)]
    statements = many_statements(UPSERT, rows)
    assert [len(p or ()) // 2 for _, p in statements] == [MANY_ROWS, MANY_ROWS, 7]
    assert all(isinstance(text, Numbered) for text, _ in statements)
    assert [v for _, p in statements for v in p or ()] == [v for row in rows for v in row]
    assert (
        f"${2 * MANY_ROWS}" in statements[0][0] and f"${2 * MANY_ROWS + 1}" not in statements[0][0]
    )
    # one row, or a statement with a parameter outside its VALUES: as before, `%s` text
    assert not isinstance(many_statements(UPSERT, rows[:1])[0][0], Numbered)


@pytest.mark.postgres
def test_a_waiting_multi_row_upsert_writes_exactly_its_rows(pg_url: str) -> None:
    rows = [(f"w{i}%s $1 ?", i) for i in range(MANY_ROWS + 3)]  # text that looks like SQL
    with open_store(pg_url) as store:
        with store.transaction():
            store.sql.later(UPSERT, rows)
            store.sql.later(UPSERT, rows[:2])
        got = dict(raw.rows(store, "SELECT token, df FROM vocab WHERE token LIKE 'w%'"))
    assert got == {t: n * (2 if i < 2 else 1) for i, (t, n) in enumerate(rows)}
