"""Time travel (`review.rows_as_of`, `conflicts_as_of`, `proposals_as_of`) and then-vs-now
(`review.diff_since`, `playbook diff`).

The as-of views are checked against what the playbook really showed at each moment: a
random history is played with a pinned clock, the live table (`bullet_rows`) is snapshotted
at checkpoints, and `rows_as_of(checkpoint)` must give the same table afterwards. They are
also checked against `store.score(at=)` and `recall(as_of=)`."""

from __future__ import annotations

import json
import random
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from playbook import review
from playbook.curation import curate
from playbook.retrieval.query import recall
from playbook.review import queue
from playbook.store import PlaybookStore, open_store

from .helpers import T0, Clock, add, mark
from .helpers.cli import assert_user_error, run_cli

WORDS = "npm pytest ruff docker cache lockfile release migrations rebase squash lint ci".split()


def _play(store: PlaybookStore, clock: Clock, seed: int, steps: int = 70) -> list[tuple]:
    """A random history; returns (moment, {id: BulletRow}) snapshots of the live table."""
    rng = random.Random(seed)
    snapshots = []
    n = 0
    for step in range(steps):
        clock.advance(hours=rng.uniform(1, 24 * 9))
        live = [b for b in store.bullets() if b.state != "retired"]
        op = rng.random()
        if op < 0.25 or len(live) < 3:
            n += 1
            words = rng.sample(WORDS, 3)
            kind = "anti-pattern" if rng.random() < 0.2 else "rule"
            add(store, f"Rule {n}: use {' '.join(words)}", bullet_type=kind, tags=words[:1])
        elif op < 0.6:
            b = rng.choice(live)
            mark(store, b.id, rng.choice(["helpful", "helpful", "harmful"]), rng.randint(1, 3))
        elif op < 0.68:
            b = rng.choice(live)
            curate(store, [{"type": "replace", "bullet_id": b.id, "content": f"{b.content} v2"}],
                   actor="human")  # fmt: skip
        elif op < 0.74 and len(live) >= 2:
            a, b = rng.sample(live, 2)
            merged = f"Merged {step}: {a.content[:20]}"
            delta = {"type": "merge", "bullet_ids": [a.id, b.id], "content": merged}
            curate(store, [delta], actor="human")
        elif op < 0.8:
            b = rng.choice(live)
            if b.maturity == "deprecated":
                review.restore(store, b.id)
            else:
                review.deprecate(store, b.id, "random")
        elif op < 0.9:
            b = rng.choice(live)
            if b.pinned:
                review.unpin(store, b.id)
            else:
                review.pin(store, b.id, "random pin")
        else:  # an event observed long before it was recorded
            b = rng.choice(live)
            store.add_feedback(b.id, "helpful", at=clock() - timedelta(days=rng.uniform(0, 60)))
        if step % 7 == 6:
            snapshots.append((clock(), {r.id: r for r in store.views.bullet_rows()}))
    clock.advance(days=30)
    return snapshots


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_rows_as_of_are_the_table_as_it_stood_then(
    store: PlaybookStore, clock: Clock, seed: int
) -> None:
    snapshots = _play(store, clock, seed)
    assert len(snapshots) >= 9
    for moment, then in snapshots:
        rows = {r.id: r for r in review.rows_as_of(store, moment)}
        assert rows.keys() == then.keys()
        for bid, row in rows.items():
            was = then[bid]
            facts = ("state", "maturity", "pinned", "stale", "type", "content", "seq")
            assert {f: getattr(row, f) for f in facts} == {f: getattr(was, f) for f in facts}
            for f in ("helpful", "harmful", "effective"):
                assert getattr(row, f) == pytest.approx(getattr(was, f), abs=1e-9), (bid, f)


@pytest.mark.parametrize("seed", [1, 6])
def test_the_evidence_days_answer_every_moment_as_the_log_does(
    store: PlaybookStore, clock: Clock, seed: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Time travel reads the evidence cache's days (a checkpoint per bullet and recorded
    day, plus the day's events): each moment's table must be the one the whole log gives
    (and before anything, none), at the checkpoints, a microsecond before them, and at the
    days' boundaries around them."""
    snapshots = _play(store, clock, seed)
    moments = [m for m, _ in snapshots] + [T0 - timedelta(seconds=1), T0, clock()]
    moments += [m - timedelta(microseconds=1) for m, _ in snapshots]
    midnights = [m.replace(hour=0, minute=0, second=0, microsecond=0) for m, _ in snapshots]
    moments += midnights + [m - timedelta(microseconds=1) for m in midnights]
    folded = [review.rows_as_of(store, moment) for moment in moments]
    monkeypatch.setattr(store.past, "days_answer", lambda: False)  # the raw log
    scores = ("helpful", "harmful", "effective")
    for moment, days in zip(moments, folded, strict=True):
        read = review.rows_as_of(store, moment)
        assert [r._replace(helpful=0, harmful=0, effective=0) for r in days] == [
            r._replace(helpful=0, harmful=0, effective=0) for r in read
        ], moment
        for a, b in zip(days, read, strict=True):
            for f in scores:  # the same events summed in another order
                assert getattr(a, f) == pytest.approx(getattr(b, f), abs=1e-9), (a.id, f)
    assert review.rows_as_of(store, T0 - timedelta(seconds=1)) == []


@pytest.mark.parametrize("seed", [4, 5])
def test_rows_as_of_agree_with_store_score_and_recall_as_of(
    store: PlaybookStore, clock: Clock, seed: int
) -> None:
    snapshots = _play(store, clock, seed)
    for moment, _ in snapshots[::2]:
        rows = {r.id: r for r in review.rows_as_of(store, moment)}
        live = [bid for bid, r in rows.items() if r.state != "retired"]
        scores = store.scores(live, at=moment)
        for bid in live:
            assert rows[bid].effective == pytest.approx(scores[bid].effective, abs=1e-9)
            assert rows[bid].stale == scores[bid].stale
        result = recall(store, "npm pytest ruff docker cache release lint", limit=1000,
                        as_of=moment)  # fmt: skip
        items = result.bullets + result.anti_patterns + result.deprecated_warnings
        assert items
        for it in items:
            assert rows[it.bullet.id].state != "retired"
            assert it.effective_score == pytest.approx(rows[it.bullet.id].effective, abs=1e-9)
            assert it.bullet.maturity == rows[it.bullet.id].maturity


def test_pins_are_read_from_the_decision_log(store: PlaybookStore, clock: Clock) -> None:
    bid = add(store, "Pin npm in release jobs")
    t_before = clock.advance(hours=1)
    clock.advance(hours=1)
    review.pin(store, bid, "release policy")
    t_pinned = clock.advance(hours=1)
    clock.advance(hours=1)
    review.unpin(store, bid)
    clock.advance(hours=1)
    pinned = lambda t: {r.id: r.pinned for r in review.rows_as_of(store, t)}[bid]  # noqa: E731
    assert [pinned(t_before), pinned(t_pinned), pinned(clock())] == [False, True, False]
    assert review.rows_as_of(store, T0 - timedelta(seconds=1)) == []  # before anything


def test_a_bullet_retired_later_was_live_then(store: PlaybookStore, clock: Clock) -> None:
    old = add(store, "Run the linter before pushing")
    mark(store, old, n=2)
    then = clock.advance(days=5)
    clock.advance(days=5)
    curate(store, [{"type": "replace", "bullet_id": old, "content": "Run ruff before push"}])
    clock.advance(days=20)
    row = {r.id: r for r in review.rows_as_of(store, then)}[old]
    assert row.state == "active"
    assert row.effective == pytest.approx(2 * 0.5 ** (5 / 90) * 0.5)  # candidate
    now = {r.id: r for r in review.rows_as_of(store, clock())}[old]
    assert now.state == "retired"
    assert now.effective == pytest.approx(2 * 0.5 ** (10 / 90) * 0.5)  # frozen at retirement


def test_conflicts_as_of_show_the_flags_open_then(store: PlaybookStore, clock: Clock) -> None:
    a = add(store, "Always squash commits before merging")
    before = clock.advance(hours=1)
    clock.advance(hours=1)
    r = curate(store, [{"type": "add", "content": "Never squash commits before merging"}])
    assert r.outcomes[0].status == "conflict"
    b = r.added[0]
    open_then = clock.advance(days=1)
    clock.advance(hours=1)
    mark(store, a, n=3)  # established after the moment asked
    clock.advance(hours=1)
    (flag,) = review.conflicts(store)
    review.keep_both(store, flag.conflict.id)
    clock.advance(hours=1)
    assert review.conflicts_as_of(store, before) == []
    (view,) = review.conflicts_as_of(store, open_then)
    assert {view.a.bullet_id, view.b.bullet_id} == {a, b}
    assert view.conflict.status == "open" and view.conflict.resolution is None
    side = view.a if view.a.bullet_id == a else view.b
    assert side.bullet is not None and side.bullet.maturity == "candidate"  # as it stood
    assert side.events == [] and side.score is not None and side.score.effective == 0.0
    assert review.conflicts_as_of(store, clock()) == []  # resolved since
    assert store.get_bullet(a).maturity == "established"


def test_proposals_as_of_are_the_queue_as_it_stood(store: PlaybookStore, clock: Clock) -> None:
    target = add(store, "Use black for formatting")
    clock.advance(hours=1)
    first = queue.stage(store, [{"type": "add", "content": "Cache pip downloads in CI"}]).staged
    t1 = clock.advance(hours=1)
    clock.advance(hours=1)
    queue.approve(store, first[0])
    t2 = clock.advance(hours=1)
    clock.advance(hours=1)
    second = queue.stage(
        store, [{"type": "replace", "bullet_id": target, "content": "Use ruff format"}]
    ).staged
    t3 = clock.advance(hours=1)
    clock.advance(hours=1)
    curate(store, [{"type": "replace", "bullet_id": target, "content": "Use ruff"}])
    t4 = clock.advance(hours=1)
    assert [p.id for p in review.proposals_as_of(store, t1)] == first
    assert review.proposals_as_of(store, t1)[0].status == "pending"
    assert review.proposals_as_of(store, t2) == []
    (p3,) = review.proposals_as_of(store, t3)
    assert p3.id == second[0] and p3.stale is None and p3.targets[0].state == "active"
    (p4,) = review.proposals_as_of(store, t4)  # its target was retired since: stale then
    assert p4.targets[0].state == "retired" and p4.stale and "was retired" in p4.stale


# ------------------------------------------------------------------ diff


def _scenario(store: PlaybookStore, clock: Clock) -> dict[str, str]:
    ids = {
        "lint": add(store, "Run the linter before pushing"),
        "npm": add(store, "Pin npm in release jobs"),
        "cache": add(store, "Key caches on the lockfile hash"),
    }
    mark(store, ids["cache"], n=2)
    clock.advance(days=10)  # since = T0 + 10 days
    clock.advance(days=1)
    r = curate(store, [{"type": "replace", "bullet_id": ids["lint"], "content": "Run ruff"}])
    ids["ruff"] = r.outcomes[0].bullet_id
    mark(store, ids["npm"], n=3)  # candidate -> established
    ids["docker"] = add(store, "Build docker images in CI only")
    clock.advance(days=9)  # now = T0 + 20 days
    return ids


def test_diff_since_lists_what_appeared_retired_moved_and_changed_rung(
    store: PlaybookStore, clock: Clock
) -> None:
    ids = _scenario(store, clock)
    d = review.diff_since(store, T0 + timedelta(days=10))
    assert [c.id for c in d.appeared] == [ids["ruff"], ids["docker"]]
    assert d.appeared[0].state_then is None and d.appeared[0].score_then is None
    (gone,) = d.retired
    assert gone.id == ids["lint"] and gone.successors == (ids["ruff"],)
    assert (gone.state_then, gone.state_now) == ("active", "retired")
    (rung,) = d.rung_changes
    assert (rung.id, rung.maturity_then, rung.maturity_now) == (ids["npm"], "candidate",
                                                                "established")  # fmt: skip
    h = lambda age: 0.5 ** (age / 90)  # noqa: E731
    npm = next(c for c in d.movers if c.id == ids["npm"])
    assert npm.score_then == 0.0 and npm.score_now == pytest.approx(3 * h(9))
    cache = next(c for c in d.movers if c.id == ids["cache"])
    assert cache.score_then == pytest.approx(2 * h(10) * 0.5)
    assert cache.delta == pytest.approx(2 * (h(20) - h(10)) * 0.5)
    assert [c.id for c in d.movers] == [ids["npm"], ids["cache"]]  # largest move first
    assert d.counts == {"appeared": 2, "retired": 1, "rung_changes": 1, "moved": 2,
                        "rules_then": 3, "rules_now": 4}  # fmt: skip
    assert review.diff_since(store, T0 + timedelta(days=10), movers=1).movers[0].id == ids["npm"]
    doc = d.to_dict()
    assert doc["counts"] == d.counts and doc["retired"][0]["successors"] == [ids["ruff"]]
    assert doc["movers"][1]["delta"] == pytest.approx(cache.delta)
    with pytest.raises(ValueError, match="after"):
        review.diff_since(store, clock() + timedelta(days=1))


def test_diff_until_a_past_moment(store: PlaybookStore, clock: Clock) -> None:
    ids = _scenario(store, clock)
    d = review.diff_since(store, T0 + timedelta(days=10), until=T0 + timedelta(days=10, hours=1))
    assert d.appeared == d.retired == d.rung_changes == []
    assert d.until == T0 + timedelta(days=10, hours=1)
    assert d.movers == [] and d.counts["moved"] == 0  # an hour of decay: under 0.01
    d = review.diff_since(store, T0 + timedelta(hours=1), until=T0 + timedelta(days=10))
    assert d.appeared == d.retired == d.rung_changes == []
    (cache,) = d.movers
    assert cache.id == ids["cache"]
    assert cache.delta == pytest.approx(0.5 ** (10 / 90) - 0.5 ** (1 / 24 / 90))


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("7d", datetime(2026, 5, 24, 9, 30, tzinfo=UTC)),
        ("4w", datetime(2026, 5, 3, 9, 30, tzinfo=UTC)),
        ("3m", datetime(2026, 2, 28, 9, 30, tzinfo=UTC)),  # no 31 February
        ("1y", datetime(2025, 5, 31, 9, 30, tzinfo=UTC)),
        ("2026-05-01", datetime(2026, 5, 1, tzinfo=UTC)),
        ("2026-05-01T10:00:00+02:00", datetime(2026, 5, 1, 8, tzinfo=UTC)),
    ],
)
def test_parse_moment(text: str, expected: datetime) -> None:
    assert review.parse_moment(text, datetime(2026, 5, 31, 9, 30, tzinfo=UTC)) == expected


@pytest.mark.parametrize("text", ["yesterday", "7x", "2026-13-01", ""])
def test_parse_moment_refuses_what_it_cannot_read(text: str) -> None:
    with pytest.raises(ValueError, match="not a date"):
        review.parse_moment(text, datetime(2026, 5, 31, tzinfo=UTC))


# ------------------------------------------------------------------ CLI


@pytest.fixture
def diff_db(tmp_path: Path) -> tuple[Path, dict[str, str]]:
    path = tmp_path / "state.sqlite3"
    clock = Clock()
    with open_store(path, clock=clock) as s:
        ids = _scenario(s, clock)
    return path, ids


def test_cli_diff_json_and_text(diff_db: tuple[Path, dict[str, str]]) -> None:
    db, ids = diff_db
    r = run_cli("diff", "--since", "2026-03-11T12:00:00Z", "--until", "2026-03-21T12:00:00Z",
                "--json", db=db)  # fmt: skip
    assert r.rc == 0, r.err
    data = r.data
    assert data["counts"]["appeared"] == 2 and data["retired"][0]["id"] == ids["lint"]
    assert data["since"].startswith("2026-03-11T12:00") and data["until"].startswith("2026-03-21")
    text = run_cli("diff", "--since", "2026-03-11T12:00:00Z", "--until", "2026-03-21T12:00:00Z",
                   db=db)  # fmt: skip
    assert text.rc == 0, text.err
    lines = text.out.splitlines()
    assert lines[0] == "Playbook from 2026-03-11 12:00 to 2026-03-21 12:00"
    assert "3 live rules then, 4 now: 2 appeared, 1 retired, 1 rung change" in lines[1]
    assert any(ln.startswith(f"  {ids['lint']}") and f"-> {ids['ruff']}" in ln for ln in lines)
    assert any(ln.startswith(f"  {ids['npm']}  candidate -> established") for ln in lines)
    # relative: everything since a year before now (the history is in 2026-03)
    rel = run_cli("diff", "--since", "100y", "--json", db=db)
    assert rel.rc == 0 and rel.data["counts"]["appeared"] == 5


def test_cli_diff_refuses_a_bad_date_in_one_line(diff_db: tuple[Path, dict[str, str]]) -> None:
    db, _ = diff_db
    r = run_cli("diff", "--since", "last tuesday", "--json", db=db)
    err = assert_user_error(r, "invalid_input")
    assert err["message"].startswith("--since: not a date: 'last tuesday'")
    r = run_cli("diff", "--since", "2026-03-20", "--until", "2026-03-10", "--json", db=db)
    assert "later than --until" in assert_user_error(r, "invalid_input")["message"]
    assert json.loads(run_cli("diff", "--since", "1d", "--json", db=db).out)["ok"] is True
