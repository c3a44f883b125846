"""The session settings every PostgreSQL connection of the store carries from its first
packet (`store/postgres/opening.py`): none costs a round trip, and a connection opened
again after a loss carries them too."""

from __future__ import annotations

from urllib.parse import parse_qsl, quote, urlencode, urlsplit, urlunsplit

import pytest

from playbook.store import open_store
from playbook.store import testing as raw

pytestmark = pytest.mark.postgres


def _settings(store: object) -> tuple[str, str, str]:
    return (
        raw.value(store, "SELECT current_setting('jit')"),
        raw.value(store, "SELECT current_setting('lock_timeout')"),
        raw.value(store, "SELECT current_setting('default_transaction_read_only')"),
    )


def test_no_jit_a_lock_timeout_and_read_only_for_a_reader(pg_url: str) -> None:
    with open_store(pg_url) as store:
        assert _settings(store) == ("off", "30s", "off")
    with open_store(pg_url, mode="read") as reader:
        assert _settings(reader) == ("off", "30s", "on")


def test_a_connection_opened_again_keeps_them(pg_url: str) -> None:
    with open_store(pg_url) as store:
        store.sql.close()
        assert _settings(store) == ("off", "30s", "off")


def test_a_commit_does_not_ask_whether_the_counter_exists(pg_url: str) -> None:
    """The opening's one query finds the commit counter; a commit sends only its own
    statements (one round trip fewer for a one-shot `mark`)."""
    with open_store(pg_url):
        pass  # made, with its counter
    with open_store(pg_url) as store:
        conn = store.sql._conn
        sent: list[str] = []
        execute = conn.execute

        def counting(query: object, params: object = None, **kw: object) -> object:
            sent.append(str(query))
            return execute(query, params, **kw)  # type: ignore[arg-type]

        conn.execute = counting  # type: ignore[method-assign]
        before = store.sql.change_token()
        raw.run(store, "INSERT INTO meta (key, value) VALUES ('probe', '1')")
        assert store.sql.change_token()[0] == before[0] + 1
    assert not [q for q in sent if "to_regclass" in q]


def test_index_reads_are_costed_as_from_the_cache_unless_the_url_says(pg_url: str) -> None:
    """A playbook's tables live in the server's cache: the planner costs a page read out of
    order at 1.1, not the default 4 (recall's candidate reads then go by index); a URL's
    own `options` still decide."""
    with open_store(pg_url) as store:
        assert raw.value(store, "SELECT current_setting('random_page_cost')") == "1.1"
        schema = raw.value(store, "SELECT current_schema()")
    parts = urlsplit(pg_url)
    query = dict(parse_qsl(parts.query))
    query["options"] = (query.get("options", "") + " -crandom_page_cost=3").strip()
    with open_store(urlunsplit(parts._replace(query=urlencode(query, quote_via=quote)))) as store:
        assert raw.value(store, "SELECT current_setting('random_page_cost')") == "3"
        assert raw.value(store, "SELECT current_schema()") == schema  # the URL's own kept
