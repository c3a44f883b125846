"""Review that scales, in the workbench: marks and batch decisions, the queue filter, hook
origins and the "new since you last looked" count, stale proposals, and a conflict merge
that asks about the pin. Each at 80x24 and at 160x48, keys in, the database checked."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from textual.widgets import Checkbox, Static, TabbedContent

from playbook import curate
from playbook.core.model import Provenance
from playbook.review import queue
from playbook.tui.app import Workbench
from playbook.tui.panes.proposals import MARK, ProposalsPane
from playbook.tui.screens.modals import ConfirmModal, FormModal
from playbook.tui.seen import LastLooked

from .helpers import store_at
from .helpers.tui import (
    SIZES,
    after_write,
    async_test,
    loaded,
    make_app,
    plain,
    screen_lines,
    wait_for,
)

HOOK_SESSION = "/home/dev/.claude/projects/app/3f2a-session.jsonl"


@pytest.fixture
def queue_playbook(tmp_path: Path) -> tuple[Path, dict]:
    """Two rules; three proposals from a reflected diary, then two from a hook session."""
    path = tmp_path / "state.sqlite3"
    store = store_at(path)
    ids = [
        curate(store, [{"type": "add", "content": c}]).added[0]
        for c in ("Run the tests before pushing", "Read the first error of the CI log")
    ]
    diary = queue.stage(
        store,
        [
            {"type": "add", "content": "Give each pytest-xdist worker its own SQLite file"},
            {"type": "add", "content": "Cache the pip download folder in CI"},
            {"type": "helpful", "bullet_id": ids[0]},
        ],
        provenances=[Provenance(session_ref="diary.md", byte_offset=i * 100) for i in range(3)],
    ).staged
    hooks = queue.stage(
        store,
        [
            {"type": "add", "content": "Rebuild the lockfile after bumping a dependency"},
            {"type": "harmful", "bullet_id": ids[1], "reason": "wasted_time"},
        ],
        provenances=[Provenance(session_ref=HOOK_SESSION, byte_offset=i * 50) for i in range(2)],
        origin=queue.HOOK_ORIGIN,
    ).staged
    store.close()
    return path, {"ids": ids, "diary": diary, "hooks": hooks}


async def _proposals(pilot, app) -> ProposalsPane:
    await pilot.press("3")
    pane = app.query_one(ProposalsPane)
    await wait_for(pilot, lambda: pane.table.has_focus)
    return pane


def _label(app, tab: str) -> str:
    return str(app.query_one(TabbedContent).get_tab(tab).label)


# ------------------------------------------------------------------------------ marks


@pytest.mark.parametrize("size", SIZES)
@async_test
async def test_marked_proposals_are_approved_together_after_one_confirmation(
    queue_playbook, size
) -> None:
    path, info = queue_playbook
    first, second = info["diary"][0], info["diary"][1]
    app = make_app(path)
    async with app.run_test(size=size) as pilot:
        await loaded(pilot, app)
        pane = await _proposals(pilot, app)
        for pid in (first, second):
            assert pane.table.move_to(pid)
            await pilot.press("space")
        await pilot.pause()
        assert pane.marked == {first, second}
        marked_lines = [line for line in screen_lines(app) if MARK in line]
        assert len(marked_lines) == 2  # a visible mark on each marked row
        assert "2 marked" in str(app.query_one("#pfilter-info", Static).content)
        await pilot.press("a")
        await wait_for(pilot, lambda: isinstance(app.screen, ConfirmModal))
        listed = str(app.screen.subject)
        assert first in listed and second in listed
        await wait_for(pilot, lambda: getattr(app.screen.focused, "id", None) == "confirm")
        await pilot.press("enter")
        await after_write(pilot, app, lambda: len(app.snapshot.proposals) == 3)
        assert not pane.marked  # decided proposals leave the marks
    store = store_at(path)
    assert {queue.get(store, p).status for p in (first, second)} == {"approved"}
    assert queue.get(store, info["diary"][2]).status == "pending"
    contents = {b.content for b in store.bullets()}
    assert "Cache the pip download folder in CI" in contents


@pytest.mark.parametrize("size", SIZES)
@async_test
async def test_marked_proposals_are_rejected_with_one_reason(queue_playbook, size) -> None:
    path, info = queue_playbook
    chosen = info["hooks"]
    app = make_app(path)
    async with app.run_test(size=size) as pilot:
        await loaded(pilot, app)
        pane = await _proposals(pilot, app)
        for pid in chosen:
            assert pane.table.move_to(pid)
            await pilot.press("space")
        await pilot.press("x")
        await wait_for(pilot, lambda: isinstance(app.screen, FormModal))
        app.screen.query_one("#field-reason").value = "one noisy session"
        await pilot.press("ctrl+s")
        await after_write(pilot, app, lambda: len(app.snapshot.proposals) == 3)
    store = store_at(path)
    for pid in chosen:
        p = queue.get(store, pid)
        assert (p.status, p.reason, p.decided_by) == ("rejected", "one noisy session", "human")


@pytest.mark.parametrize("size", SIZES)
@async_test
async def test_space_unmarks_and_escape_clears_the_marks(queue_playbook, size) -> None:
    path, info = queue_playbook
    app = make_app(path)
    async with app.run_test(size=size) as pilot:
        await loaded(pilot, app)
        pane = await _proposals(pilot, app)
        pane.table.move_to(info["diary"][0])
        await pilot.press("space")
        pane.table.move_to(info["diary"][0])
        await pilot.press("space")
        assert pane.marked == set()
        await pilot.press("home", "space", "space")  # each mark moves the cursor down
        assert len(pane.marked) == 2
        await pilot.press("escape")
        assert pane.marked == set()
        await pilot.press("a")  # no marks: a approves the proposal under the cursor
        await after_write(pilot, app, lambda: len(app.snapshot.proposals) == 4)


@pytest.mark.parametrize("size", SIZES)
@async_test
async def test_a_stale_marked_proposal_is_named_and_the_others_go_through(
    queue_playbook, size
) -> None:
    path, info = queue_playbook
    helpful_on_first = info["diary"][2]
    store = store_at(path)
    curate(
        store,
        [{"type": "replace", "bullet_id": info["ids"][0], "content": "Run the whole suite first"}],
        actor="human",
    )
    store.close()
    app = Workbench(path, poll_seconds=3600, seen=LastLooked(path, path.parent / "s.json"))
    async with app.run_test(size=size) as pilot:
        await loaded(pilot, app)
        pane = await _proposals(pilot, app)
        for pid in (info["diary"][0], helpful_on_first):
            pane.table.move_to(pid)
            await pilot.press("space")
        await pilot.press("a")
        await wait_for(pilot, lambda: isinstance(app.screen, ConfirmModal))
        await wait_for(pilot, lambda: getattr(app.screen.focused, "id", None) == "confirm")
        await pilot.press("enter")
        await after_write(pilot, app, lambda: len(app.snapshot.proposals) == 4)
        said = " ".join(str(n.message) for n in app._notifications)
        assert "Approved 1 of 2" in said and helpful_on_first in said and "retired" in said
    store = store_at(path)
    assert queue.get(store, info["diary"][0]).status == "approved"
    assert queue.get(store, helpful_on_first).status == "pending"


# ------------------------------------------------------------------------------ filter


@pytest.mark.parametrize("size", SIZES)
@async_test
async def test_the_queue_filters_by_type_session_and_origin(queue_playbook, size) -> None:
    path, info = queue_playbook
    app = make_app(path)
    async with app.run_test(size=size) as pilot:
        await loaded(pilot, app)
        pane = await _proposals(pilot, app)
        await pilot.press("slash")
        for key in "type:add":
            await pilot.press(key)
        await wait_for(pilot, lambda: len(pane.table.order) == 3)
        assert set(pane.table.order) == {*info["diary"][:2], info["hooks"][0]}
        pane.set_filter("from:hook")
        await wait_for(pilot, lambda: set(pane.table.order) == set(info["hooks"]))
        pane.set_filter("session:3f2a type:harmful")
        await wait_for(pilot, lambda: list(pane.table.order) == [info["hooks"][1]])
        pane.set_filter("session:diary.md pip")
        await wait_for(pilot, lambda: list(pane.table.order) == [info["diary"][1]])
        assert "1 of 5" in str(app.query_one("#pfilter-info", Static).content)
        pane.set_filter("type:bogus")
        await pilot.pause()
        error = app.query_one("#pfilter-error", Static)
        assert error.display and "unknown type:bogus" in str(error.content)
        assert "merge" in str(error.content)  # the known ones are listed


# ------------------------------------------------------------------------------ origin, new


@pytest.mark.parametrize("size", SIZES)
@async_test
async def test_hook_proposals_show_their_origin_newest_first(queue_playbook, size) -> None:
    path, info = queue_playbook
    app = make_app(path)
    async with app.run_test(size=size) as pilot:
        await loaded(pilot, app)
        pane = await _proposals(pilot, app)
        assert list(pane.table.order)[:2] == info["hooks"][::-1]  # newest first
        assert list(pane.table.order)[-1] == info["diary"][0]
        rows = [line for line in screen_lines(app) if info["hooks"][0] in line]
        assert rows and "hook" in rows[0]
        diary_rows = [line for line in screen_lines(app) if info["diary"][0] in line]
        assert diary_rows and "hook" not in diary_rows[0]
        assert "2 from hooks" in str(app.query_one("#pfilter-info", Static).content)


@pytest.mark.parametrize("size", SIZES)
@async_test
async def test_the_tab_counts_what_is_new_since_you_last_looked(queue_playbook, size) -> None:
    path, _ = queue_playbook
    app = make_app(path)
    async with app.run_test(size=size) as pilot:
        await loaded(pilot, app)
        assert "+5" in _label(app, "proposals")  # never looked: all five are new
        await _proposals(pilot, app)
        await wait_for(pilot, lambda: "+" not in _label(app, "proposals"))
    remembered = json.loads((path.parent / "seen.json").read_text())
    assert list(remembered) == [str(path.resolve())]

    store = store_at(path)
    later = queue.stage(
        store,
        [{"type": "add", "content": "Print the seed of every randomized test"}],
        provenance=Provenance(session_ref=HOOK_SESSION, byte_offset=900),
        origin=queue.HOOK_ORIGIN,
    ).staged
    store.close()
    app = make_app(path)
    async with app.run_test(size=size) as pilot:
        await loaded(pilot, app)
        assert "Proposals 6" in _label(app, "proposals") and "+1" in _label(app, "proposals")
        pane = await _proposals(pilot, app)
        newest = [line for line in screen_lines(app) if later[0] in line]
        assert newest and "new" in newest[0].split()  # marked new while you look
        assert pane.table.cursor_key == later[0]
        await wait_for(pilot, lambda: "+" not in _label(app, "proposals"))


# ------------------------------------------------------------------------------ stale


@pytest.mark.parametrize("size", SIZES)
@async_test
async def test_a_stale_proposal_shows_its_target_now_and_approve_says_why_not(
    queue_playbook, size
) -> None:
    path, info = queue_playbook
    stale = info["diary"][2]  # helpful on ids[0], which is replaced below
    store = store_at(path)
    new = (
        curate(
            store,
            [
                {
                    "type": "replace",
                    "bullet_id": info["ids"][0],
                    "content": "Run the whole suite first",
                }
            ],
            actor="human",
        )
        .outcomes[0]
        .bullet_id
    )
    store.close()
    app = make_app(path)
    async with app.run_test(size=size) as pilot:
        await loaded(pilot, app)
        pane = await _proposals(pilot, app)
        assert pane.table.move_to(stale)
        await pilot.pause()
        row = next(line for line in screen_lines(app) if stale in line or "stale" in line)
        assert "stale" in row
        assert "STALE" in " ".join(screen_lines(app))
        target = plain(app.query_one("#p-similar", Static).content)
        assert f"retired since (succeeded by {new})" in target
        await pilot.press("a")
        await pilot.pause()
        said = [str(n.message) for n in app._notifications]
        assert said and f"its target {info['ids'][0]} was retired (succeeded by {new})" in said[-1]
        assert not isinstance(app.screen, ConfirmModal | FormModal)
    assert queue.get(store_at(path), stale).status == "pending"


@pytest.mark.parametrize("size", SIZES)
@async_test
async def test_a_proposal_gone_stale_after_the_read_is_refused_with_the_queues_message(
    queue_playbook, size
) -> None:
    path, info = queue_playbook
    stale = info["diary"][2]
    app = Workbench(path, poll_seconds=3600, seen=LastLooked(path, path.parent / "s.json"))
    async with app.run_test(size=size) as pilot:
        await loaded(pilot, app)
        pane = await _proposals(pilot, app)
        pane.table.move_to(stale)
        store = store_at(path)  # another reviewer replaces the target meanwhile
        curate(
            store,
            [{"type": "replace", "bullet_id": info["ids"][0], "content": "Run it all first"}],
            actor="human",
        )
        store.close()
        await pilot.press("a")
        await wait_for(pilot, lambda: any("is stale" in str(n.message) for n in app._notifications))
    assert queue.get(store_at(path), stale).status == "pending"


# ------------------------------------------------------------------------------ merge


@pytest.fixture
def pinned_conflict(tmp_path: Path) -> tuple[Path, dict]:
    """'Always …' pinned, with help; 'Never …' added against it (a conflict), with harm."""
    path = tmp_path / "state.sqlite3"
    store = store_at(path)
    always = curate(store, [{"type": "add", "content": "Always pin base images to a tag"}])
    a = always.added[0]
    for _ in range(4):
        curate(store, [{"type": "helpful", "bullet_id": a}])
    store.pin(a, "team policy since the outage", actor="human")
    never = curate(store, [{"type": "add", "content": "Never pin base images to a tag"}])
    n = never.added[0]
    curate(store, [{"type": "harmful", "bullet_id": n, "reason": "caused_bug"}])
    store.close()
    return path, {"always": a, "never": n}


@pytest.mark.parametrize("size", SIZES)
@pytest.mark.parametrize("keep", [False, True])
@async_test
async def test_a_conflict_merge_keeps_the_pin_only_when_ticked(pinned_conflict, size, keep) -> None:
    path, info = pinned_conflict
    app = make_app(path)
    async with app.run_test(size=size) as pilot:
        await loaded(pilot, app)
        await pilot.press("4")
        await pilot.press("m")
        await wait_for(pilot, lambda: isinstance(app.screen, FormModal))
        box = app.screen.query_one("#field-keep_pin", Checkbox)
        assert box.value is False  # not carried unless the person merging says so
        assert info["always"] in str(box.label)
        app.screen.query_one("#field-content").text = "Pin base images to a digest"
        if keep:
            box.value = True
        await pilot.press("ctrl+s")
        await after_write(pilot, app, lambda: not app.snapshot.conflicts)
    store = store_at(path)
    merged = next(b for b in store.bullets() if b.content == "Pin base images to a digest")
    assert merged.pinned is keep
    if keep:
        assert merged.pinned_reason == "team policy since the outage"
    # The merged rule agrees with "Always …": that side's help counts, never the other's harm.
    score = store.score(merged.id)
    assert score.harmful == 0 and score.helpful > 3.9


# ------------------------------------------------------------------------------ diffs, closest


@pytest.fixture
def rewrite_playbook(tmp_path: Path) -> tuple[Path, dict]:
    """A rule, a proposal rewriting it, and an add that nearly duplicates it."""
    path = tmp_path / "state.sqlite3"
    store = store_at(path)
    rule = curate(store, [{"type": "add", "content": "Pin npm to 11 in release jobs"}]).added[0]
    staged = queue.stage(
        store,
        [
            {"type": "replace", "bullet_id": rule, "content": "Pin npm to 12 in all release jobs"},
            {"type": "add", "content": "Pin npm to 11 in the release jobs of every repo"},
        ],
        provenance=Provenance(session_ref="s:npm", byte_offset=0),
    ).staged
    store.close()
    return path, {"rule": rule, "replace": staged[0], "add": staged[1]}


def test_a_word_diff_strikes_what_goes_and_underlines_what_comes() -> None:
    from playbook.review import proposal_diff
    from playbook.tui import format as fmt
    from playbook.tui.panes.proposal_text import diff_text

    text = diff_text(
        proposal_diff("Pin npm to 11 in release jobs", "Pin npm to 12 in all release jobs")
    )
    assert text.plain.replace(" ", "") == "Pinnpmto1112inallreleasejobs".replace(" ", "")
    styled = {text.plain[s.start : s.end].strip(): s.style for s in text.spans}
    # named styles, drawn struck and underlined (test_tui_colours checks text.tcss says so)
    assert styled["11"] == fmt.DIFF_DELETED
    assert styled["12"] == styled["all"] == fmt.DIFF_INSERTED
    assert "Pin npm to" not in styled  # unchanged words carry no diff style


@pytest.mark.parametrize("size", SIZES)
@async_test
async def test_a_rewrite_shows_its_word_diff_and_an_add_its_closest_rules(
    rewrite_playbook, size
) -> None:
    path, info = rewrite_playbook
    app = make_app(path)
    async with app.run_test(size=size) as pilot:
        await loaded(pilot, app)
        pane = await _proposals(pilot, app)
        assert app.snapshot.diffs[info["replace"]][0][0] == info["rule"]
        pane.table.move_to(info["replace"])
        await pilot.pause()
        shown = " ".join(screen_lines(app))
        assert f"vs {info['rule']}" in shown
        pane.table.move_to(info["add"])
        await wait_for(pilot, lambda: app.snapshot.similar_read)  # read after the first paint
        await pilot.pause()
        similar = plain(app.query_one("#p-similar", Static).content)
        assert info["rule"] in similar and "Pin npm to 11 in release jobs" in similar
