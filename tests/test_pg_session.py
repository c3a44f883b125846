"""The session settings every PostgreSQL connection of the store carries from its first
packet (`store/postgres/opening.py`): none costs a round trip, and a connection opened
again after a loss carries them too."""

from __future__ import annotations

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
