"""The workbench's Textual-free parts: row views, score history, filter, demo, import hygiene."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
import time
from datetime import timedelta
from pathlib import Path

import pytest

from playbook import curate, review
from playbook.core.policy import DEFAULT_POLICY
from playbook.demo.build import DemoPlaybook
from playbook.demo.cache import make_demo
from playbook.demo.writer import run_writer
from playbook.review import queue
from playbook.store import parse_iso
from playbook.store import testing as raw
from playbook.tui import data, filterspec, ordering, reading
from playbook.tui.format import reflow

from .helpers import Clock, store_at


def test_bullet_rows_match_store_scores(db_path: Path, clock: Clock) -> None:
    store = store_at(db_path, clock=clock)
    a = curate(store, [{"type": "add", "content": "Run the tests before pushing"}]).added[0]
    b = curate(store, [{"type": "add", "content": "Read the first error of the log"}]).added[0]
    curate(store, [{"type": "harmful", "bullet_id": b}])
    for _ in range(5):
        clock.advance(days=10)
        curate(store, [{"type": "helpful", "bullet_id": a}, {"type": "helpful", "bullet_id": b}])
    merged = (
        curate(
            store,
            [{"type": "merge", "bullet_ids": [a, b], "content": "Test, then read logs"}],
            actor="human",
        )
        .outcomes[0]
        .bullet_id
    )
    clock.advance(days=200)
    rows = {r.id: r for r in store.views.bullet_rows()}
    # every surface's score: now for a live bullet, frozen at retirement for a retired one
    scores = review.bullet_scores(store, store.get_bullets(rows).values())
    for bid, row in rows.items():
        assert abs(row.effective - scores[bid].effective) < 1e-9
        assert abs(row.helpful - scores[bid].helpful) < 1e-9
        assert row.stale == scores[bid].stale
    assert rows[merged].helpful > 0  # inherited through supersedes
    assert rows[a].state == "retired"
    retired_at = store.get_bullet(a).valid_to
    assert rows[a].helpful == pytest.approx(store.score(a, at=retired_at).helpful, abs=1e-9)
    assert rows[a].helpful > store.score(a).helpful  # 200 days of decay did not touch it
    assert merged in {r.id for r in store.views.bullet_rows(include_retired=False)}
    assert a not in {r.id for r in store.views.bullet_rows(include_retired=False)}


def test_parse_filter_and_row_passes(db_path: Path, clock: Clock) -> None:
    spec = filterspec.parse_filter("flaky ci is:pinned IS:Stale is:bogus is:ret")
    assert spec.words == "flaky ci"  # an is: word is never searched for as a word
    assert spec.flags == {"pinned", "stale"}
    assert spec.unknown == ("bogus",)  # is:ret is still being typed: not an error yet
    store = store_at(db_path, clock=clock)
    bid = curate(store, [{"type": "add", "content": "AVOID: sleeping in tests"}]).added[0]
    row = {r.id: r for r in store.views.bullet_rows()}[bid]
    assert filterspec.row_passes(row, frozenset({"anti"}))
    assert not filterspec.row_passes(row, frozenset({"rule"}))
    assert not filterspec.row_passes(row, frozenset({"retired"}))
    assert filterspec.row_passes(row, frozenset({"candidate"}))


def test_reflow_joins_prose_keeps_structure() -> None:
    text = "Read the log first,\nthen the code.\n\n- one\n- two\nRULE: keep me\nRULE: and me"
    assert reflow(text) == (
        "Read the log first, then the code.\n\n- one\n- two\nRULE: keep me\nRULE: and me"
    )


def test_snapshot_lists_every_pane(tmp_path: Path) -> None:
    from .helpers.tui import build_playbook

    path = tmp_path / "state.sqlite3"
    info = build_playbook(path)
    snap = reading.load_snapshot(data.Source(path))
    assert snap.live_count == 5
    assert [p.id for p in snap.proposals] == info["proposals"][::-1]  # newest first
    assert len(snap.conflicts) == 1 and snap.conflicts[0].a.bullet is not None
    assert [b.id for b in snap.blocked] == [info["block_id"]]


@pytest.fixture(scope="module")
def demo(tmp_path_factory: pytest.TempPathFactory) -> tuple[DemoPlaybook, float]:
    started = time.process_time()  # CPU time: a busy machine does not make it fail
    info = make_demo(tmp_path_factory.mktemp("demo") / "demo.sqlite3")
    return info, time.process_time() - started


def test_demo_is_built_through_the_api(demo: tuple[DemoPlaybook, float]) -> None:
    info, _ = demo  # how fast: bench/tui.py (a timed assertion fails on a busy machine)
    assert info.bullets > 350 and info.events > 3000
    assert info.conflicts >= 6 and info.blocked >= 6 and info.proposals >= 10
    store = store_at(info.path)
    maturities = {b.maturity for b in store.bullets()}
    assert maturities == {"candidate", "established", "proven", "deprecated"}
    actions = {d.action for d in store.decisions(limit=100_000)}
    assert {"add", "maturity", "invert", "merge", "pin", "deprecate", "block"} <= actions
    assert any(r.stale for r in store.views.bullet_rows())
    pending = queue.pending(store)
    reflected = [p for p in pending if p.origin == "reflection"]
    hooked = [p for p in pending if p.origin == queue.HOOK_ORIGIN]
    assert len(reflected) >= 10 and len(reflected) + len(hooked) == len(pending)
    assert all(p.provenance.session_ref == str(info.diary_path) for p in reflected)
    assert all(p.provenance.byte_offset is not None for p in pending)
    # A hook-driven session staged a rewrite and a merge (word diffs) and a new rule, each
    # pointing at its line of that session, staged after the diary was reflected.
    assert sorted(p.delta["type"] for p in hooked) == ["add", "merge", "replace"]
    session = Path(hooked[0].provenance.session_ref)
    text = session.read_bytes()
    for p in hooked:
        line = text[p.provenance.byte_offset :].split(b"\n", 1)[0].decode()
        assert line.endswith(p.delta["content"])
    assert min(p.created_at for p in hooked) > max(p.created_at for p in reflected)
    # The history spans months: the oldest event is long before the newest.
    events = raw.rows(store, "SELECT MIN(at), MAX(at) FROM feedback")[0]
    span = parse_iso(events[1]) - parse_iso(events[0])
    assert span > timedelta(days=200)


def test_writer_adds_feedback_and_proposals(
    demo: tuple[DemoPlaybook, float], tmp_path: Path
) -> None:
    path = tmp_path / "copy.sqlite3"
    shutil.copy(demo[0].path, path)
    store = store_at(path)
    before = (store.event_count(), queue.count_pending(store), store.count_bullets())
    assert run_writer(path, interval=(0, 0), iterations=30, seed=3) == 30
    after = (store.event_count(), queue.count_pending(store), store.count_bullets())
    assert after[0] > before[0]
    assert after[1] > before[1] or after[2] > before[2]


def _modules_loaded(code: str) -> list[str]:
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True
    ).stdout
    return json.loads(out.strip().splitlines()[-1])


def test_core_never_imports_textual() -> None:
    code = (
        "import importlib, json, pkgutil, sys, playbook\n"
        "for m in pkgutil.walk_packages(playbook.__path__, 'playbook.'):\n"
        "    if m.name.startswith('playbook.tui'):\n"
        "        continue\n"
        "    try:\n"
        "        importlib.import_module(m.name)\n"
        "    except ImportError as exc:\n"
        "        if 'textual' in str(exc): raise\n"
        "print(json.dumps(sorted(n for n in sys.modules if n.split('.')[0] == 'textual')))"
    )
    assert _modules_loaded(code) == []


def test_help_does_not_import_textual() -> None:
    code = (
        "import json, sys, contextlib, io\n"
        "from playbook.cli import main\n"
        "with contextlib.redirect_stdout(io.StringIO()) as out:\n"
        "    main(['--help']); main(['tui', '--help']); main(['demo', '--help'])\n"
        "assert 'tui' in out.getvalue() and '--writer' in out.getvalue()\n"
        "print(json.dumps(sorted(n for n in sys.modules if n.split('.')[0] == 'textual')))"
    )
    assert _modules_loaded(code) == []


def test_tui_command_reports_a_missing_file(tmp_path: Path) -> None:
    from playbook.cli import main

    assert main(["tui", "--db", str(tmp_path / "nope.sqlite3")]) == 1


def test_numpy_index_orders_exactly_like_the_python_sort() -> None:
    import random

    from playbook.store.views import BulletRow

    rng = random.Random(5)
    rows = {}
    odd = ["B-Z", "b-é", "b-", "b-0", "Ω", "b-\u00e9x", "a b"]  # case, accents, prefixes
    for i in range(400):
        bid = f"b-{rng.getrandbits(32):08x}" if i % 40 else f"{odd[i // 40 % len(odd)]}{i}"
        rows[bid] = BulletRow(
            bid, f"content {i % 7}", rng.choice(["rule", "anti-pattern"]),
            rng.choice(["candidate", "established", "proven", "deprecated"]),
            rng.choice(["active", "active", "retired"]), rng.random() < 0.2,
            round(rng.random() * 4, 1), round(rng.random(), 1), round(rng.random() * 3 - 1, 1),
            rng.random() < 0.3, "ci", "[]", "global", "learned",
            f"2026-0{rng.randint(1, 9)}-01T00:00:00.000000Z", i + 1,
        )  # fmt: skip
    relevance = {bid: float(rng.choice([1, 3, 4, 8])) for bid in list(rows)[::3]}
    relevance["b-missing"] = 3.0
    index = ordering.RowIndex(rows)
    for flags in (frozenset(), frozenset({"pinned"}), frozenset({"retired"}), frozenset({"anti"})):
        spec = filterspec.FilterSpec("", "", flags)
        for column in [None, *ordering.SORT_KEYS]:
            for reverse in (False, True):
                view = ordering.View(spec, None, column, reverse)
                expected = ordering.view_order(rows, view)
                assert ordering.view_order(rows, view, index=index) == expected, (flags, column)
        ranked = ordering.View(filterspec.FilterSpec("x", "x", flags), relevance)
        assert ordering.view_order(rows, ranked, index=index) == ordering.view_order(rows, ranked)


def test_ranking_through_the_index_equals_the_python_path(
    demo: tuple[DemoPlaybook, float],
) -> None:
    source = data.Source(demo[0].path)
    with source.open() as store:
        rows = {r.id: r for r in store.views.bullet_rows()}
    index = ordering.RowIndex(rows)
    base = ordering.View(filterspec.parse_filter(""))
    for text in ("ci", "flaky tests", "pytes", "git is:pinned", "docker is:anti", "zz", "x"):
        slow_view, slow = ordering.rank_view(source, text, rows, base, DEFAULT_POLICY)
        fast_view, fast = ordering.rank_view(source, text, rows, base, DEFAULT_POLICY, index)
        assert fast == slow, text
        assert fast_view.relevance == slow_view.relevance, text


def _python_by_score(rows: dict, descending: bool) -> list[str]:
    """`view_order`'s Python sort for the default view: live rows by score, ties by id."""
    chosen = sorted((r for r in rows.values() if r.state != "retired"), key=lambda r: r.id)
    chosen.sort(key=lambda r: r.effective, reverse=descending)
    return [r.id for r in chosen]


def test_the_numpy_order_by_score_is_the_python_sort_across_snapshots() -> None:
    """`by_score` (what a step in time orders its 100k rows with) against the Python sort,
    with ties (0.0 and -0.0 too) and odd ids, over rows of several moments in a row: the
    ids ranked for one are kept for the next, which has fewer, more or other bullets."""
    import random

    from playbook.store.views import BulletRow

    rng = random.Random(11)
    odd = ["B-Z", "b-é", "b-", "b-0", "Ω", "b-\u00e9x", "a b", ""]
    scores = [0.0, -0.0, 0.5, 1.0, -1.0, 2.25]
    everyone = []
    for i in range(6000):
        bid = f"b-{rng.getrandbits(32):08x}" if i % 50 else f"{odd[i // 50 % len(odd)]}{i}"
        everyone.append((bid, i + 1))

    def table(bullets: list[tuple[str, int]]) -> dict[str, BulletRow]:
        return {
            bid: BulletRow(
                bid, "c", "rule", "candidate", rng.choice(["active", "active", "retired"]),
                False, 0.0, 0.0, rng.choice([*scores, rng.random() * 3 - 1]), False,
                "ci", "[]", "global", "learned", "2026-01-01T00:00:00.000000Z", seq,
            )
            for bid, seq in bullets
        }  # fmt: skip

    for bullets in (everyone[:4000], everyone[:2500], everyone, everyone[1000:5000]):
        rows = table(bullets)
        assert len(rows) >= ordering.NUMPY_FROM
        for reverse in (False, True):
            view = ordering.View(filterspec.FilterSpec("", "", frozenset()), None, None, reverse)
            assert ordering.view_order(rows, view) == _python_by_score(rows, view.descending)
    assert ordering.by_score({}) == []


def test_a_table_diff_says_what_was_added_removed_and_whether_any_row_changed() -> None:
    from playbook.tui.widgets.table import RowTable

    old = {"a": (1, 2), "b": (3, 4), "c": (5, 6)}
    assert not RowTable.diff(old, dict(old)).any
    assert not RowTable.diff(old, {k: tuple(v) for k, v in old.items()}).any  # equal rows
    d = RowTable.diff(old, {"a": (1, 2), "b": (3, 5), "d": (0, 0)})
    assert (d.added, d.removed, d.changed) == (1, 1, 1)
    d = RowTable.diff(old, {**old, "c": (5, 7), "a": (0, 0)})  # the count stops at the first
    assert (d.added, d.removed, d.changed) == (0, 0, 1)
    assert RowTable.diff({}, old).added == 3 and not RowTable.diff({}, old).changed
