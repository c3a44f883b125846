"""Which connection a PostgreSQL playbook is opened on: psycopg's, or the light one
(`light.py`) where it serves. The launcher's one-shot commands ask for the light one; this
module imports nothing, so asking costs a SQLite command nothing."""

from __future__ import annotations

import os

_light = False


def prefer_light(on: bool = True) -> bool:
    """Open PostgreSQL playbooks on libpq itself rather than on psycopg where that serves
    (`light.py`): the launcher's one-shot commands (`mark`, `recall`, the hooks), which
    would spend about 100 ms importing psycopg. Returns the choice it replaced."""
    global _light
    before, _light = _light, on
    return before


def light_preferred() -> bool:
    """`prefer_light`'s choice; `$PLAYBOOK_PG_DRIVER=light` prefers it in every process
    (the tests run the PostgreSQL suite so), `=psycopg` in none."""
    forced = os.environ.get("PLAYBOOK_PG_DRIVER", "").lower()
    return forced == "light" or (_light and forced != "psycopg")
