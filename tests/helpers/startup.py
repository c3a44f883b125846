"""The small playbook the start-up tests run one-shot commands against (tests/test_startup.py,
tests/test_startup_cuts.py): two rules, one with a helpful mark."""

from __future__ import annotations

from pathlib import Path

from playbook.curation import curate
from playbook.store import open_store


def two_rule_playbook(path: Path) -> tuple[Path, str]:
    """(the playbook at `path`, the id of its rule with a mark)."""
    with open_store(path) as store:
        added = curate(
            store,
            [
                {"type": "add", "content": "Pin npm to 11 in release jobs", "tags": ["ci"]},
                {"type": "add", "content": "AVOID: npm install in release jobs"},
            ],
        ).added
        curate(store, [{"type": "helpful", "bullet_id": added[0]}])
    return path, added[0]
