"""psycopg loads without `importlib.metadata` (issue 26: the prompt hook on PostgreSQL),
and says the same versions as when it asks the installed distributions itself."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

pytest.importorskip("psycopg")

_PROBE = """
import json, sys
from playbook.store.postgres.opening import import_psycopg
psycopg = import_psycopg()
import psycopg_binary
print(json.dumps([psycopg.__version__, psycopg_binary.__version__,
                  "importlib.metadata" in sys.modules, psycopg.Connection.__name__]))
"""


def test_psycopg_loads_without_asking_the_distributions() -> None:
    out = subprocess.run(
        [sys.executable, "-c", _PROBE], capture_output=True, text=True, timeout=60, check=True
    )
    version, binary, metadata_loaded, connection = json.loads(out.stdout)
    from importlib import metadata

    assert (version, binary) == (metadata.version("psycopg"), metadata.version("psycopg-binary"))
    assert metadata_loaded is False and connection == "Connection"
