"""Issue 31: the Proposals pane's nearest existing bullets are read after the first paint.

The snapshot the workbench paints first lists the pending proposals without their nearest
bullets (at 100k rules that search is half a second, for a box not on screen until the
Proposals tab opens); a worker reads them once the snapshot is shown and swaps them in,
unless another snapshot is shown by then. Until then a new rule's box says it is looking
(not "nothing close"); a refresh keeps what was read for the same proposal until it is
read again. Now and as of a moment (time travel), at 80x24 and 160x48."""

from __future__ import annotations

import gc
import threading
import weakref
from dataclasses import replace
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
from textual.widgets import Static

from playbook import curate
from playbook.core.model import Provenance
from playbook.review import proposal_view, queue
from playbook.review.proposal_view import with_similar
from playbook.review.proposals import Proposal, Similar
from playbook.tui import data, reading
from playbook.tui.messages import SimilarRead
from playbook.tui.panes.proposal_text import LOOKING, near_text
from playbook.tui.panes.proposals import ProposalsPane

from .helpers import store_at
from .helpers.tui import SIZES, async_test, loaded, make_app, plain, wait_for

DAY = timedelta(days=1)
RULE = "Pin npm to 11 in release jobs"
NEARER = "Pin npm to 11 in the release jobs of each repo"  # added later, from outside


@pytest.fixture
def npm(tmp_path: Path) -> tuple[Path, dict[str, Any]]:
    """A rule, a proposal rewriting it, and an add that nearly duplicates it, staged 40
    days ago (the rule 100 days ago), so a moment 20 days back has them too."""
    path = tmp_path / "state.sqlite3"
    now = datetime.now(UTC).replace(microsecond=0)
    at = [now - 100 * DAY]
    store = store_at(path, clock=lambda: at[0])
    rule = curate(store, [{"type": "add", "content": RULE}]).added[0]
    at[0] = now - 40 * DAY
    staged = queue.stage(
        store,
        [
            {"type": "replace", "bullet_id": rule, "content": "Pin npm to 12 in all release jobs"},
            {"type": "add", "content": "Pin npm to 11 in the release jobs of every repo"},
        ],
        provenance=Provenance(session_ref="s:npm", byte_offset=0),
    ).staged
    store.close()
    return path, {"now": now, "rule": rule, "replace": staged[0], "add": staged[1]}


def nearest(path: Path, proposal_id: str) -> list[Similar]:
    """What `with_similar` finds for the proposal, read here from the store."""
    with store_at(path) as store:
        p = queue.get(store, proposal_id)
        assert p is not None
        return with_similar(store, p).similar


class Held:
    """`reading.read_similar` held until `gate` is set: what the screen shows between the
    snapshot and its proposals' nearest bullets."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch) -> None:
        self.gate = threading.Event()
        real = reading.read_similar

        def held(*args: Any) -> Any:
            self.gate.wait(30)
            return real(*args)

        monkeypatch.setattr(reading, "read_similar", held)


def box(app: Any) -> str:
    return plain(app.query_one("#p-similar", Static).content)


async def on_proposal(pilot: Any, app: Any, proposal_id: str) -> ProposalsPane:
    await pilot.press("3")
    pane = app.query_one(ProposalsPane)
    await wait_for(pilot, lambda: pane.table.has_focus)
    assert pane.table.move_to(proposal_id)
    await pilot.pause()
    return pane


def test_the_snapshot_reads_proposals_without_their_nearest_rules(npm) -> None:
    """Now and as of a moment: no neighbours, every proposal waiting for them; then
    `read_similar` gives what `with_similar` gives."""
    path, info = npm
    expected = nearest(path, info["add"])
    assert [s.bullet_id for s in expected] == [info["rule"]]
    source = data.Source(path)
    for snap in (
        reading.load_snapshot(source),
        reading.load_snapshot_as_of(source, info["now"] - 20 * DAY),
    ):
        assert {p.id for p in snap.proposals} == {info["add"], info["replace"]}
        assert all(p.similar == [] for p in snap.proposals)
        assert not snap.similar_read
        assert snap.similar_unknown == {info["add"], info["replace"]}
        found = reading.read_similar(source, snap.similar_due(), lambda: False)
        assert found is not None and found[info["add"]].similar == expected
        snap.similar_found(found)
        assert snap.similar_read and not snap.similar_unknown and snap.similar_due() == []
    assert reading.read_similar(source, snap.proposals, lambda: True) is None  # cancelled


def test_the_box_tells_looking_from_nothing_close(npm) -> None:
    path, info = npm
    with store_at(path) as store:
        add, rewrite = queue.get(store, info["add"]), queue.get(store, info["replace"])
    assert add is not None and rewrite is not None
    assert plain(near_text(add, looking=True)[1]).strip() == LOOKING
    assert "nothing close" in plain(near_text(add)[1])  # read, and none found
    looking = near_text(replace(rewrite, targets=[]), looking=True)[1]
    assert plain(looking).strip() == LOOKING  # a rewrite with content is compared too
    mark = {"type": "helpful", "bullet_id": info["rule"]}
    assert "only adds and rewrites" in plain(near_text(replace(add, delta=mark), looking=True)[1])


@pytest.mark.parametrize("size", SIZES)
@async_test
async def test_the_nearest_rules_fill_in_after_the_first_paint(
    npm, size, monkeypatch: pytest.MonkeyPatch
) -> None:
    path, info = npm
    expected = nearest(path, info["add"])
    held = Held(monkeypatch)
    app = make_app(path)
    async with app.run_test(size=size) as pilot:
        try:
            await loaded(pilot, app)
            first = app.snapshot
            assert not first.similar_read and all(p.similar == [] for p in first.proposals)
            pane = await on_proposal(pilot, app, info["add"])
            shown = box(app)
            assert LOOKING in shown and "nothing close" not in shown
            assert info["rule"] not in shown
        finally:
            held.gate.set()
        await wait_for(pilot, lambda: app.snapshot.similar_read)
        await pilot.pause()
        assert app.snapshot is first  # the same snapshot, its proposals swapped in by id
        current = pane.current()
        assert current is not None and current.similar == expected
        shown = box(app)
        assert LOOKING not in shown
        for s in expected:
            assert s.bullet_id in shown and s.content in shown


@async_test
async def test_a_refresh_keeps_the_nearest_rules_read_then_reads_them_again(
    npm, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Another process adds a nearer rule: the next snapshot shows the neighbours read
    before (no "looking" flash) until the new ones, with the nearer rule, are read."""
    path, info = npm
    held = Held(monkeypatch)
    held.gate.set()
    app = make_app(path)
    async with app.run_test(size=(80, 24)) as pilot:
        await loaded(pilot, app)
        await wait_for(pilot, lambda: app.snapshot.similar_read)
        await on_proposal(pilot, app, info["add"])
        first = app.snapshot
        held.gate.clear()  # the next read waits
        try:
            with store_at(path) as store:
                nearer = curate(store, [{"type": "add", "content": NEARER}]).added[0]
            await wait_for(pilot, lambda: app.snapshot is not first)
            await pilot.pause()
            assert not app.snapshot.similar_read
            shown = box(app)
            assert LOOKING not in shown and info["rule"] in shown and nearer not in shown
        finally:
            held.gate.set()
        await wait_for(pilot, lambda: app.snapshot.similar_read)
        await pilot.pause()
        expected = nearest(path, info["add"])
        assert nearer in [s.bullet_id for s in expected]
        assert app.query_one(ProposalsPane).current().similar == expected
        assert nearer in box(app)


@async_test
async def test_nearest_rules_read_for_a_snapshot_no_longer_shown_are_dropped(npm) -> None:
    path, info = npm
    app = make_app(path)
    async with app.run_test(size=(80, 24)) as pilot:
        await loaded(pilot, app)
        await wait_for(pilot, lambda: app.snapshot.similar_read)
        pane = await on_proposal(pilot, app, info["add"])
        old = app.snapshot
        with store_at(path) as store:  # anything written: the next snapshot
            curate(store, [{"type": "helpful", "bullet_id": info["rule"]}])
        await wait_for(pilot, lambda: app.snapshot is not old and app.snapshot.similar_read)
        shown, now = box(app), list(app.snapshot.proposals)
        bogus = Similar(
            "b-stale00", "a neighbour read for the snapshot before", 0.99, "active", "candidate"
        )
        late: dict[str, Proposal] = {p.id: replace(p, similar=[bogus]) for p in old.proposals}
        app.post_message(SimilarRead(old, late))
        await pilot.pause()
        assert app.snapshot.proposals == now and pane.all == now
        assert box(app) == shown and "b-stale00" not in shown


@async_test
async def test_a_moment_back_shows_its_proposals_then_their_nearest_rules(
    npm, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Time travel before any neighbours were read: the moment's proposals say they are
    being looked for, then show them (the read for now, cancelled, posts nothing)."""
    path, info = npm
    expected = nearest(path, info["add"])
    held = Held(monkeypatch)
    app = make_app(path)
    async with app.run_test(size=(80, 24)) as pilot:
        when = info["now"] - 20 * DAY
        try:
            await loaded(pilot, app)
            pane = await on_proposal(pilot, app, info["add"])
            assert LOOKING in box(app)
            app.travel_to(when)
            await wait_for(pilot, lambda: app.snapshot.as_of == when)
            pane.table.move_to(info["add"])
            await pilot.pause()
            then = app.snapshot
            assert not then.similar_read and all(p.similar == [] for p in then.proposals)
            assert LOOKING in box(app) and info["rule"] not in box(app)
        finally:
            held.gate.set()
        await wait_for(pilot, lambda: app.snapshot.similar_read)
        await pilot.pause()
        assert app.snapshot is then
        current = pane.current()
        assert current is not None and current.similar == expected
        assert info["rule"] in box(app) and LOOKING not in box(app)


class Searches:
    """Counts the nearest-rule searches (`with_similar` calls), by proposal id."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch) -> None:
        self.ids: list[str] = []
        real = proposal_view.with_similar

        def counted(store: Any, p: Proposal) -> Proposal:
            self.ids.append(p.id)
            return real(store, p)

        monkeypatch.setattr(proposal_view, "with_similar", counted)


def test_a_refresh_searches_only_when_what_the_search_reads_changed(npm) -> None:
    """Marks and a retirement change nothing the search reads: the neighbours are kept
    (the retired one shown so); a new proposal is the only one searched; a new bullet
    has every proposal searched again."""
    path, info = npm
    source = data.Source(path)

    def after(before: reading.Snapshot, write: Any) -> reading.Snapshot:
        with store_at(path) as store:
            write(store)
        snap = reading.load_snapshot(source)
        snap.carry_similar(before)
        return snap

    first = reading.load_snapshot(source)
    found = reading.read_similar(source, first.similar_due(), lambda: False)
    assert found is not None
    first.similar_found(found)
    marked = after(first, lambda s: curate(s, [{"type": "helpful", "bullet_id": info["rule"]}]))
    assert marked.similar_read and marked.similar_due() == [] and not marked.similar_unknown
    assert marked.proposals == first.proposals
    retired = after(marked, lambda s: s.retire(info["rule"]))
    assert retired.similar_read
    add = next(p for p in retired.proposals if p.id == info["add"])
    assert [(s.bullet_id, s.state) for s in add.similar] == [(info["rule"], "retired")]
    assert add.similar == nearest(path, info["add"])  # as a search now would find them

    def stage(store: Any) -> None:
        queue.stage(store, [{"type": "add", "content": "Cache npm in release jobs"}])

    staged = after(retired, stage)
    new = [p.id for p in staged.similar_due()]
    assert not staged.similar_read and len(new) == 1
    assert new[0] not in (info["add"], info["replace"])
    assert staged.similar_unknown == set(new)
    unread = after(staged, lambda s: curate(s, [{"type": "helpful", "bullet_id": info["rule"]}]))
    assert len(unread.similar_due()) == 3  # the one before was not read: its basis is unknown
    readd = after(retired, lambda s: curate(s, [{"type": "add", "content": NEARER}]))
    assert not readd.similar_read and len(readd.similar_due()) == 3
    assert readd.similar_unknown == set(new)  # the others: shown meanwhile, until read again
    back = reading.load_snapshot_as_of(source, info["now"] - 20 * DAY)
    back.carry_similar(retired)
    assert len(back.similar_due()) == 2 and back.similar_unknown == set()  # searched as before


@async_test
async def test_a_refresh_after_marks_keeps_the_nearest_rules_without_a_search(
    npm, monkeypatch: pytest.MonkeyPatch
) -> None:
    """An agent's mark (the usual refresh): no search, the box still shows the neighbour;
    a proposal staged meanwhile is the only one searched."""
    path, info = npm
    searches = Searches(monkeypatch)
    app = make_app(path)
    async with app.run_test(size=(80, 24)) as pilot:
        await loaded(pilot, app)
        await wait_for(pilot, lambda: app.snapshot.similar_read)
        pane = await on_proposal(pilot, app, info["add"])
        assert sorted(searches.ids) == sorted([info["add"], info["replace"]])
        for _ in range(3):
            before = app.snapshot
            with store_at(path) as store:
                curate(store, [{"type": "helpful", "bullet_id": info["rule"]}])
            await wait_for(pilot, lambda b=before: app.snapshot is not b)
            await pilot.pause()
            assert app.snapshot.similar_read and len(searches.ids) == 2
            assert info["rule"] in box(app) and LOOKING not in box(app)
        with store_at(path) as store:
            new = queue.stage(store, [{"type": "add", "content": "Cache npm in release jobs"}])
        await wait_for(pilot, lambda: new.staged[0] in {p.id for p in app.snapshot.proposals})
        await wait_for(pilot, lambda: app.snapshot.similar_read)
        assert searches.ids[2:] == new.staged
        current = pane.current()
        assert current is not None and current.id == info["add"]
        assert current.similar == nearest(path, info["add"]) and info["rule"] in box(app)


def test_the_texts_compared_do_not_keep_the_snapshot_before_alive(npm) -> None:
    """`same_texts` remembers its answer, not the snapshot: a refresh every few seconds
    would otherwise keep every 100k-row read since the start."""
    path, _ = npm
    source = data.Source(path)
    before, after = reading.load_snapshot(source), reading.load_snapshot(source)
    assert after.same_texts(before) and after.same_texts(before)
    gone = weakref.ref(before)
    del before
    gc.collect()
    assert gone() is None
