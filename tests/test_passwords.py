"""No output, log line or --json document holds a PostgreSQL password (issue 29).

libpq quotes what it cannot parse, the password included; an import into a database that
already holds a playbook named the URL as given. Every message masks the URL and leaves the
password out in every spelling (as written, percent-decoded); `url_without_password` is what
a writer of settings keeps instead (libpq reads the password from ~/.pgpass).
"""

from __future__ import annotations

import json
from pathlib import Path
from urllib.parse import quote

import pytest

from playbook.store.urls import has_password, scrub, url_without_password

from .helpers import store_at
from .helpers.cli import run_cli

SECRET = "s3cret-Pw.29"


def _spellings(secret: str) -> list[str]:
    return [secret, quote(secret, safe=""), secret.replace("-", "%2D")]


@pytest.mark.parametrize(
    "url",
    [
        f"postgresql://bob:{SECRET}@[::1/db",
        f"postgresql://bob:{SECRET}@local host/db",
        f"postgresql://bob:{SECRET}%zz@localhost/db",
        f"postgresql://bob@localhost/db?password={SECRET}%zz",
        f"postgresql://bob:{SECRET}@localhost/db?foo=bar",
        f"postgresql://bob:{SECRET}@localhost:99999/db",
        f"postgresql://bob:{SECRET}@localhost/db?sslmode=bogus",
        f"postgres://bob:{SECRET}@127.0.0.1:1/db",
        f"postgresql://bob:p@{SECRET}@localhost/db",
    ],
)
def test_no_message_about_a_url_holds_its_password(url: str) -> None:
    pytest.importorskip("psycopg")
    r = run_cli("--db", url, "stats", "--json")
    assert r.rc in (2, 3), (r.rc, r.err)
    assert "Traceback" not in r.err
    for spelling in _spellings(SECRET):
        assert spelling not in r.out + r.err, (spelling, r.out, r.err)
    assert json.loads(r.out)["ok"] is False


def test_an_import_into_a_full_database_names_it_without_its_password(
    pg_url: str, tmp_path: Path
) -> None:
    user, rest = pg_url.split("://", 1)[1].split("@", 1)
    with_password = f"postgresql://{user}:{SECRET}@{rest}"  # the test server trusts: unused
    source = tmp_path / "source.sqlite3"
    with store_at(source) as store:
        store.insert_bullet("Pin npm to 11")
    export = tmp_path / "export.json"
    export.write_text(run_cli("export", db=source).out, encoding="utf-8")
    assert run_cli("--db", with_password, "import", export).rc == 0
    r = run_cli("--db", with_password, "import", export, "--json")
    assert json.loads(r.out)["error"]["code"] == "database_not_empty"
    assert SECRET not in r.out + r.err and "***" in r.err


def test_the_url_a_settings_file_may_hold() -> None:
    url = f"postgresql://bob:{SECRET}@db.example:5432/team?sslmode=require&password={SECRET}"
    kept = url_without_password(url)
    assert kept == "postgresql://bob@db.example:5432/team?sslmode=require"
    assert has_password(url) and not has_password(kept)
    assert url_without_password("postgresql://bob@h/db?password=x") == "postgresql://bob@h/db"
    assert scrub(f"bad token {quote(SECRET)}", url) == "bad token ***"
    assert SECRET not in scrub("x", f"postgresql://u:{SECRET}@h/db") + scrub(f"in URI: {url}", url)
