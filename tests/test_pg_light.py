"""The light connection (`store/postgres/light.py`: libpq through ctypes, for the one-shot
commands) reads and writes what psycopg does: the same values of the same Python types, the
same parameter types sent, the same errors, the same pipelines; and the one-shot commands
run on it without importing psycopg, with the outcome they have on psycopg.

Every comparison is against psycopg itself on the same server, never against figures
copied from the light connection."""

from __future__ import annotations

import json
import subprocess
import sys
from decimal import Decimal
from typing import Any

import pytest

from playbook.cli import main
from playbook.core import errors
from playbook.store import open_store
from playbook.store.postgres import libpq, light, opening
from playbook.store.postgres.dialect import translate
from playbook.store.postgres.values import Unsupported, dump, loader, parse_array

from .helpers.cli import clean_env

psycopg = pytest.importorskip("psycopg")
pytestmark = pytest.mark.skipif(not libpq.available(), reason="no libpq found for ctypes")

# Statements whose every value both connections read: (query, parameters).
_READS: list[tuple[str, tuple[Any, ...] | None]] = [
    ("SELECT 1::int2, 70000::int4, 5000000000::int8, 7::oid", None),
    ("SELECT 1.5::float4, 2.25::float8, 'NaN'::float8, '-Infinity'::float8, 0.1::float8", None),
    ("SELECT 1.25::numeric, 'NaN'::numeric, 12345678901234567890.5::numeric", None),
    ("SELECT true, false, NULL::bool, NULL::int8, ''::text", None),
    ("SELECT 'x'::text, 'y'::varchar(4), 'z'::char(3), 'n'::name, 'c'::\"char\"", None),
    ("SELECT 'ünï ☃ 🎉'::text, E'tab\\there'::text, 'quote''s'::text", None),
    ("SELECT '\\x00ff10'::bytea, ''::bytea", None),
    ("SELECT '{\"a\": [1, 2.5, null]}'::json, '{\"b\": \"é\"}'::jsonb, 'null'::jsonb", None),
    ("SELECT ARRAY[1, 2, NULL]::int8[], ARRAY[]::int4[], ARRAY[1.5, NULL]::float8[]", None),
    ("SELECT ARRAY['a b', 'c\"d', 'e\\f', NULL, '', 'NULL', ' pad ', '{x,y}']::text[]", None),
    ("SELECT ARRAY[true, false]::bool[], ARRAY['v']::varchar[], ARRAY[1.5]::numeric[]", None),
    ("SELECT pg_notify('nobody', ''), 'pg_class'::regclass", None),
    ("SELECT %s, %s, %s, %s", ("text", 7, 2.5, True)),
    ("SELECT %s::int8 + 1, %s::float8 * 2, %s::text || '!'", (41, 1.25, "hi")),
    ("SELECT %s, %s, %s", (None, b"\x00\x01bin", "100%")),
    ("SELECT 'literal 100%%' || %s", ("x",)),
    ("SELECT x FROM unnest(%s::text[]) AS x ORDER BY 1", (["b", 'q"uo', "a\\b", "", None],)),
    ("SELECT %s = ANY(%s)", (3, [1, 2, 3])),
    ("SELECT cardinality(%s::int8[])", ([],)),
    ("SELECT n FROM generate_series(1, 2000) AS n WHERE n %% %s = 0", (7,)),
]

# Parameters whose type on the server must be what psycopg sends them as.
_TYPED: list[Any] = [
    0, -(2**15), 2**15, 2**31, -(2**31) - 1, 2**63, 1.5, float("inf"), float("nan"), True,
    "s", b"b", [1, 2], [2**40], [-(2**31) - 1, 0], [1.5], [True], ["a"], [], [None, 3],
]  # fmt: skip


@pytest.fixture
def both(pg_url: str) -> Any:
    heavy = psycopg.connect(pg_url, autocommit=True)
    lite = light.connect({"dbname": pg_url, "client_encoding": "UTF8"})
    yield heavy, lite
    heavy.close()
    lite.close()


def _same(a: Any, b: Any) -> bool:
    """Equal, of the same types, all the way down (NaN equal to NaN)."""
    if type(a) is not type(b):
        return False
    if isinstance(a, (list, tuple)):
        return len(a) == len(b) and all(_same(x, y) for x, y in zip(a, b, strict=True))
    if isinstance(a, dict):
        return a.keys() == b.keys() and all(_same(a[k], b[k]) for k in a)
    if isinstance(a, float) and a != a:
        return b != b
    if isinstance(a, Decimal) and a.is_nan():
        return b.is_nan()
    return bool(a == b)


@pytest.mark.postgres
@pytest.mark.parametrize(("query", "params"), _READS)
def test_rows_read_as_psycopg_reads_them(both: Any, query: str, params: Any) -> None:
    heavy, lite = both
    want = heavy.execute(query, params).fetchall()
    got = lite.execute(query, params).fetchall()
    assert _same(got, want), (got, want)


@pytest.mark.postgres
@pytest.mark.parametrize("value", _TYPED, ids=repr)
def test_parameters_sent_as_the_types_psycopg_sends(both: Any, value: Any) -> None:
    heavy, lite = both
    query = "SELECT pg_typeof(%s)::text"
    told = []
    for conn in (heavy, lite):
        try:
            told.append(conn.execute(query, (value,)).fetchall())
        except (psycopg.Error, light.LightError) as exc:  # unknown: the server cannot tell
            told.append(exc.sqlstate)
    assert told[0] == told[1]


@pytest.mark.postgres
def test_rowcounts_and_statements_without_parameters(both: Any) -> None:
    heavy, lite = both
    for conn in (heavy, lite):
        conn.execute("CREATE TEMP TABLE t (k int PRIMARY KEY, v text)")
        added = conn.execute("INSERT INTO t VALUES (%s, %s), (%s, %s)", (1, "a", 2, "b"))
        assert added.rowcount == 2
        assert conn.execute("UPDATE t SET v = 'c' WHERE k > %s", (0,)).rowcount == 2
        assert conn.execute("SELECT * FROM t WHERE k = %s", (9,)).fetchone() is None
        # Two statements in one text, no parameters: what `BEGIN; SELECT pg_advisory...` is.
        conn.execute("BEGIN; SELECT 1")
        assert conn.info.transaction_status != light.IDLE
        conn.execute("ROLLBACK")
        assert conn.info.transaction_status == light.IDLE


@pytest.mark.postgres
def test_a_pipeline_is_one_transaction_and_raises_its_first_error(both: Any) -> None:
    heavy, lite = both
    outcomes = []
    for conn, failure in ((heavy, psycopg.Error), (lite, light.LightError)):
        conn.execute("CREATE TEMP TABLE p (k int PRIMARY KEY)")
        with conn.pipeline():
            first = conn.execute("INSERT INTO p VALUES (%s) RETURNING k", (1,))
            second = conn.execute("SELECT count(*) FROM p")
        assert (first.fetchall(), second.fetchall()) == ([(1,)], [(1,)])
        with pytest.raises(failure) as raised, conn.pipeline():
            conn.execute("INSERT INTO p VALUES (%s)", (2,))
            conn.execute("INSERT INTO p VALUES (%s)", (1,))  # a duplicate key
            conn.execute("INSERT INTO p VALUES (%s)", (3,))
        kept = conn.execute("SELECT k FROM p ORDER BY k").fetchall()
        outcomes.append((raised.value.sqlstate, kept))
        with conn.cursor() as cur:
            cur.executemany("INSERT INTO p VALUES (%s)", [(10,), (11,)])
            assert cur.rowcount == 2
    assert outcomes[0] == outcomes[1] == ("23505", [(1,)])  # the 2 went back with the 1


@pytest.mark.postgres
@pytest.mark.parametrize(
    ("query", "params"),
    [
        ("SELECT 1/0", None),
        ("SELEC nothing", None),
        ("SELECT %s::int4", (2**40,)),
        ("SELECT %s", ("nul \x00 inside",)),
        ("SELECT * FROM no_such_table WHERE x = %s", (1,)),
    ],
)
def test_errors_translate_as_psycopg_errors_do(both: Any, query: str, params: Any) -> None:
    heavy, lite = both
    caught = []
    for conn in (heavy, lite):
        with pytest.raises(Exception) as raised:
            conn.execute(query, params)
        mine = translate(raised.value, "the test server")
        assert mine is not None
        caught.append((type(mine), str(mine)))
    assert caught[0] == caught[1]


@pytest.mark.postgres
def test_refused_connections_read_as_under_psycopg(pg_url: str) -> None:
    base = pg_url.rsplit("/", 1)[0]
    for url in (f"{base}/no_such_database", "postgresql://127.0.0.1:1/x?connect_timeout=2"):
        told = []
        for connect in (opening.connect, opening.connect_light):
            with pytest.raises(errors.PlaybookError) as raised:
                connect(url, "the test server")
            told.append((type(raised.value), str(raised.value).replace("connection failed: ", "")))
        assert told[0][0] is told[1][0]
        assert told[0][1].split("(")[0] == told[1][1].split("(")[0]


@pytest.mark.postgres
def test_the_servers_notices_go_nowhere_as_under_psycopg(
    both: Any, capfd: pytest.CaptureFixture[str]
) -> None:
    notice = "DO $$BEGIN RAISE NOTICE 'a notice'; RAISE WARNING 'a warning'; END$$"
    for conn in both:
        conn.execute(notice)
        conn.execute("SELECT %s", ("with parameters",))
    with both[1].pipeline():
        both[1].execute(notice, None)
    out, err = capfd.readouterr()
    assert "notice" not in out + err and "warning" not in out + err


def test_values_refused_rather_than_read_otherwise() -> None:
    with pytest.raises(Unsupported):
        dump((1, 2))  # psycopg sends no tuples either
    with pytest.raises(Unsupported):
        dump(Decimal("1.5"))  # not one the light connection sends
    with pytest.raises(Unsupported):
        loader(1082)  # a date: psycopg reads it as `datetime.date`
    with pytest.raises(Unsupported):
        parse_array(b"{{1,2},{3,4}}", int)
    assert parse_array(b'{"a,b",NULL,"NULL",c}', bytes.decode) == ["a,b", None, "NULL", "c"]


# ---------------------------------------------------------------- the one-shot commands
_PROBE = """
import atexit, json, sys
atexit.register(lambda: print(json.dumps(["psycopg" in sys.modules]), file=sys.stderr))
sys.argv = ["playbook", *sys.argv[1:]]
from playbook.launcher import run
run()
"""


def _playbook(url: str, *args: str, driver: str, stdin: str = "") -> tuple[str, bool]:
    done = subprocess.run(
        [sys.executable, "-c", _PROBE, "--db", url, *args],
        input=stdin, capture_output=True, text=True, timeout=60,
        env=clean_env(PLAYBOOK_PG_DRIVER=driver),
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    return done.stdout, json.loads(done.stderr.strip().splitlines()[-1])[0]


@pytest.mark.postgres
def test_the_one_shot_commands_run_on_libpq_with_psycopgs_outcome(
    pg_url: str, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["--db", pg_url, "init"]) == 0
    capsys.readouterr()
    ids = []
    for text in (
        "Pin npm to 11 in release jobs",
        "Run the release job's npm ci with a lockfile",
        "Cache node_modules between CI jobs by the lockfile hash",
    ):
        assert main(["--db", pg_url, "add", text, "--json"]) == 0
        ids.append(json.loads(capsys.readouterr().out)["data"]["added"][0])
    outputs = {}
    for driver in ("", "psycopg"):  # the launcher's own choice (light), then psycopg
        hook = json.dumps(
            {"session_id": f"s-{driver}", "cwd": "/", "hook_event_name": "UserPromptSubmit",
             "transcript_path": "/nonexistent", "prompt": "the npm release job fails"}
        )  # fmt: skip
        shown, loaded = _playbook(pg_url, "hook", "prompt", driver=driver, stdin=hook)
        assert loaded is (driver == "psycopg")
        marked, _ = _playbook(pg_url, "mark", ids[1], "helpful", "--json", driver=driver)
        found, _ = _playbook(pg_url, "recall", "npm release", "--json", driver=driver)
        ranked = [b["bullet"]["id"] for b in json.loads(found)["data"]["bullets"]]
        outputs[driver] = (shown, json.loads(marked)["ok"], ranked)
    assert outputs[""] == outputs["psycopg"]
    assert outputs[""][2][0] == ids[1]  # marked helpful: first
    with open_store(pg_url, mode="read") as store:
        marks = store.sql.all("SELECT bullet_id, kind FROM feedback ORDER BY id")
    assert [tuple(m) for m in marks] == [(ids[1], "helpful")] * 2
