"""The two backends side by side: the same history gives the same bytes and the same bits.

Every behaviour test runs on both backends (the `backend` fixture in conftest.py); these
tests compare the two directly. The same operations, with the same clock and the same ids,
are run on a SQLite file and on a PostgreSQL schema; then the exports must be the same
bytes, every score, recall result and evidence-cache row the same floats (compared with
`==`, not approximately), and the incremental evidence fold equal, bit for bit, to a fold
of the whole log from scratch, on each backend.
"""

from __future__ import annotations

import itertools
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from playbook.interop.snapshot import export_snapshot, to_json
from playbook.retrieval.query import recall
from playbook.store import PlaybookStore, open_store
from playbook.store import testing as raw

from .helpers import Clock
from .helpers.varied import build_with_outcomes as history

pytestmark = pytest.mark.postgres


@pytest.fixture
def same_ids(monkeypatch: pytest.MonkeyPatch) -> Iterator[Any]:
    """Ids from a counter that each build restarts: both backends get the same ones."""
    state: dict[str, Iterator[int]] = {}

    def restart() -> None:
        state["n"] = itertools.count(1)

    def counter(nbytes: int) -> str:
        return f"{next(state['n']):0{nbytes * 2}x}"

    restart()
    monkeypatch.setattr("playbook.store.ids.random_hex", counter)
    yield restart


def evidence_rows(store: PlaybookStore) -> list[tuple[Any, ...]]:
    return raw.rows(
        store,
        "SELECT bullet_id, half_life, ref, helpful, harmful, count, last_at, last_event_id "
        "FROM evidence ORDER BY bullet_id",
    )


def facts(store: PlaybookStore, clock: Clock) -> dict[str, Any]:
    """What a user sees of a playbook, as exact values."""
    everyone = [b.id for b in store.bullets(state="all")]
    scores = store.scores(everyone)
    hit = recall(store, "npm release pytest ci")
    return {
        "export": to_json(export_snapshot(store)),
        "scores": {b: (s.helpful, s.harmful, s.effective, s.earned, s.stale)
                   for b, s in scores.items()},
        "past": {b: store.score(b, at=clock() - __import__("datetime").timedelta(days=30))
                 for b in everyone[:4]},
        "recall": [(i.bullet.id, i.relevance, i.effective_score, i.final_score)
                   for i in hit.bullets + hit.anti_patterns + hit.deprecated_warnings],
        "rows": [tuple(r) for r in store.views.bullet_rows()],
        "evidence": evidence_rows(store),
    }  # fmt: skip


def build(target: str | Path, same_ids: Any) -> dict[str, Any]:
    same_ids()
    clock = Clock()
    with open_store(target, clock=clock) as store:
        history(store, clock)
        return facts(store, clock)


def test_the_same_history_gives_the_same_bytes_and_bits_on_both_backends(
    tmp_path: Path, pg_url: str, same_ids: Any
) -> None:
    on_sqlite = build(tmp_path / "pb.sqlite3", same_ids)
    on_postgres = build(pg_url, same_ids)
    assert on_sqlite["export"].count('"receipt"') > 4  # the history is not empty
    for key in on_sqlite:
        assert on_postgres[key] == on_sqlite[key], key


def test_the_incremental_fold_equals_a_fold_from_scratch_bit_for_bit(
    store: PlaybookStore, clock: Clock
) -> None:
    history(store, clock)
    folded = evidence_rows(store)
    assert len(folded) >= 5
    with store.transaction():  # forget the cache: every event is folded again, in order
        raw.run(store, "DELETE FROM evidence")
        raw.run(store, "UPDATE meta SET value = '0' WHERE key = 'evidence_watermark'")
    assert store.evidence_watermark() == 0
    assert store.sync_evidence() == store.event_count()
    assert evidence_rows(store) == folded


def test_nul_in_text_is_refused_alike(store: PlaybookStore) -> None:
    """PostgreSQL's text cannot hold U+0000; SQLite's could, and such a playbook could never
    be copied there (issue 29): both refuse it, with the same words, and store nothing."""
    from playbook.core.errors import InvalidInput

    with pytest.raises(InvalidInput, match=r"NUL character \(\\x00\) cannot be stored"):
        store.insert_bullet("Run\x00 the tests")
    assert store.count_bullets() == 0
