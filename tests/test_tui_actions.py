"""The workbench's actions, end to end: keys in the app, then the database checked, at
80x24 and at 160x48 (every dialog must work at the smallest)."""

from __future__ import annotations

from pathlib import Path

import pytest
from textual.widgets import Input, OptionList, TabbedContent, TextArea

from playbook import curate
from playbook.review import queue
from playbook.tui.panes.blocked import BlockedPane
from playbook.tui.panes.conflicts import ConflictsPane
from playbook.tui.panes.proposals import ProposalsPane
from playbook.tui.screens.modals import ConfirmModal, FormModal, HarmfulModal

from .helpers import store_at
from .helpers.tui import (
    SIZES,
    after_write,
    async_test,
    build_playbook,
    loaded,
    make_app,
    wait_for,
    workers_done,
)


@pytest.fixture
def playbook(tmp_path: Path) -> tuple[Path, dict]:
    path = tmp_path / "state.sqlite3"
    return path, build_playbook(path)


async def _fill(pilot, app, **values: str) -> None:
    """Fill the open form and confirm it."""
    await wait_for(pilot, lambda: isinstance(app.screen, FormModal))
    screen = app.screen
    for name, value in values.items():
        widget = screen.query_one(f"#field-{name}")
        if isinstance(widget, TextArea):
            widget.text = value
        else:
            widget.value = value  # type: ignore[attr-defined]
    await pilot.press("ctrl+s")


async def _confirm(pilot, app) -> None:
    """Confirm by keyboard: the confirm button has the focus when the dialog opens (a click
    at its place raced the dialog's first layout on a busy machine)."""
    await wait_for(pilot, lambda: isinstance(app.screen, ConfirmModal))
    await wait_for(pilot, lambda: getattr(app.screen.focused, "id", None) == "confirm")
    await pilot.press("enter")


async def _select_bullet(pilot, app, bullet_id: str) -> None:
    app.show_tab("bullets")
    assert app.bullets_pane.table.move_to(bullet_id)
    await pilot.pause()


async def _select_proposal(pilot, app, proposal_id: str) -> None:
    await pilot.press("3")
    pane = app.query_one(ProposalsPane)
    assert pane.table.move_to(proposal_id)
    await pilot.pause()
    assert pane.current().id == proposal_id


@pytest.mark.parametrize("size", SIZES)
@async_test
async def test_approve_curates_with_the_proposals_provenance(playbook, size) -> None:
    path, info = playbook
    pid = info["proposals"][0]
    app = make_app(path)
    async with app.run_test(size=size) as pilot:
        await loaded(pilot, app)
        assert "Proposals 2" in str(app.query_one(TabbedContent).get_tab("proposals").label)
        await _select_proposal(pilot, app, pid)
        await pilot.press("a")
        await after_write(pilot, app, lambda: len(app.snapshot.proposals) == 1)
    store = store_at(path)
    bullet = next(b for b in store.bullets() if b.content.startswith("Give each pytest-xdist"))
    assert bullet.provenance.session_ref == "session:test"
    assert bullet.provenance.byte_offset == 100
    assert queue.get(store, pid).status == "approved"
    assert queue.get(store, pid).decided_by == "human"


@pytest.mark.parametrize("size", SIZES)
@async_test
async def test_edit_then_approve_keeps_the_edit(playbook, size) -> None:
    path, info = playbook
    pid = info["proposals"][0]
    app = make_app(path)
    async with app.run_test(size=size) as pilot:
        await loaded(pilot, app)
        await _select_proposal(pilot, app, pid)
        await pilot.press("e")
        await _fill(pilot, app, content="Give each xdist worker its own SQLite file in tmp_path")
        await after_write(pilot, app, lambda: len(app.snapshot.proposals) == 1)
    store = store_at(path)
    contents = {b.content: b for b in store.bullets()}
    edited = contents["Give each xdist worker its own SQLite file in tmp_path"]
    assert edited.provenance.byte_offset == 100
    assert queue.get(store, pid).edited_delta["content"] == edited.content


@pytest.mark.parametrize("size", SIZES)
@async_test
async def test_reject_with_reason(playbook, size) -> None:
    path, info = playbook
    pid = info["proposals"][0]
    app = make_app(path)
    async with app.run_test(size=size) as pilot:
        await loaded(pilot, app)
        await _select_proposal(pilot, app, pid)
        await pilot.press("x")
        await _fill(pilot, app, reason="too specific")
        await after_write(pilot, app, lambda: len(app.snapshot.proposals) == 1)
    p = queue.get(store_at(path), pid)
    assert (p.status, p.reason) == ("rejected", "too specific")


@pytest.mark.parametrize("size", SIZES)
@async_test
async def test_reject_and_block_refuses_a_later_add(playbook, size) -> None:
    path, info = playbook
    pid = info["proposals"][1]
    app = make_app(path)
    async with app.run_test(size=size) as pilot:
        await loaded(pilot, app)
        await _select_proposal(pilot, app, pid)
        await pilot.press("B")
        await _fill(pilot, app, reason="the hooks run the secret scan")
        await after_write(pilot, app, lambda: len(app.snapshot.blocked) == 2)
        assert "Blocked 2" in str(app.query_one(TabbedContent).get_tab("blocked").label)
    store = store_at(path)
    assert queue.get(store, pid).status == "rejected"
    assert any(b.pattern == "Use --no-verify to skip the slow hooks" for b in store.blocked())
    later = curate(store, [{"type": "add", "content": "Use --no-verify to skip the slow hooks"}])
    assert later.outcomes[0].status == "refused-blocked"


@pytest.mark.parametrize("size", SIZES)
@async_test
async def test_pin_stops_maturity_and_unpin_restores_it(playbook, size) -> None:
    path, info = playbook
    bid = info["ids"][0]
    app = make_app(path)
    async with app.run_test(size=size) as pilot:
        await loaded(pilot, app)
        await _select_bullet(pilot, app, bid)
        await pilot.press("p")
        await _fill(pilot, app, reason="team policy")
        await after_write(pilot, app, lambda: app.row(bid).pinned)
        store = store_at(path)
        before = store.get_bullet(bid).maturity
        for _ in range(6):  # enough harm to deprecate (or invert) an unpinned rule
            curate(store, [{"type": "harmful", "bullet_id": bid, "reason": "caused_bug"}])
        assert store.get_bullet(bid).maturity == before
        assert store.get_bullet(bid).state == "active"
        assert store.get_bullet(bid).pinned_reason == "team policy"
        await wait_for(pilot, lambda: app.row(bid).harmful > 5)  # seen by the live refresh
        await pilot.press("p")  # now unpin, confirmed in a modal
        await _confirm(pilot, app)
        await after_write(pilot, app, lambda: not app.row(bid).pinned)
    assert not store_at(path).get_bullet(bid).pinned


@pytest.mark.parametrize("size", SIZES)
@async_test
async def test_block_a_bullets_pattern(playbook, size) -> None:
    path, info = playbook
    bid = info["ids"][1]
    app = make_app(path)
    async with app.run_test(size=size) as pilot:
        await loaded(pilot, app)
        await _select_bullet(pilot, app, bid)
        await pilot.press("b")
        await _fill(pilot, app, reason="we read logs differently now")
        await after_write(pilot, app, lambda: len(app.snapshot.blocked) == 2)
    store = store_at(path)
    content = store.get_bullet(bid).content
    assert any(b.pattern == content and b.actor == "human" for b in store.blocked())
    refused = curate(store, [{"type": "add", "content": content + "!"}])
    assert refused.outcomes[0].status == "refused-blocked"


@pytest.mark.parametrize("size", SIZES)
@async_test
async def test_deprecate_then_restore(playbook, size) -> None:
    path, info = playbook
    bid = info["ids"][0]
    app = make_app(path)
    async with app.run_test(size=size) as pilot:
        await loaded(pilot, app)
        await _select_bullet(pilot, app, bid)
        await pilot.press("d")
        await _fill(pilot, app, reason="superseded by the new CI")
        await after_write(pilot, app, lambda: app.row(bid).maturity == "deprecated")
        assert app.row(bid).effective == 0
        await pilot.press("r")
        await _fill(pilot, app, reason="the new CI was rolled back")
        await after_write(pilot, app, lambda: app.row(bid).maturity != "deprecated")
    store = store_at(path)
    assert store.get_bullet(bid).maturity == "established"  # what 4 helpful votes earn
    actions = [(d.action, d.actor) for d in store.decisions(bullet_id=bid)]
    assert ("deprecate", "human") in actions
    assert ("restore", "human") in actions
    restore = [d for d in store.decisions(bullet_id=bid) if d.action == "restore"][-1]
    assert restore.detail == {"from": "deprecated", "to": "established"}
    assert restore.reason == "the new CI was rolled back"


@pytest.mark.parametrize("size", SIZES)
@async_test
async def test_mark_helpful_and_harmful(playbook, size) -> None:
    path, info = playbook
    bid = info["ids"][3]
    app = make_app(path)
    async with app.run_test(size=size) as pilot:
        await loaded(pilot, app)
        await _select_bullet(pilot, app, bid)
        await pilot.press("plus")
        await after_write(pilot, app, lambda: app.row(bid).helpful > 0.9)
        await pilot.press("minus")
        await wait_for(pilot, lambda: isinstance(app.screen, HarmfulModal))
        app.screen.query_one(OptionList).highlighted = 1  # wasted_time
        app.screen.query_one("#context", Input).value = "slowed the fix"
        await pilot.press("ctrl+s")
        await after_write(pilot, app, lambda: app.row(bid).harmful > 0.9)
    events = store_at(path).timeline(bid)
    assert [(e.kind, e.actor) for e in events] == [("helpful", "human"), ("harmful", "human")]
    assert events[1].reason == "wasted_time"
    assert events[1].context == "slowed the fix"


@pytest.mark.parametrize("size", SIZES)
@async_test
async def test_conflict_keep_both(playbook, size) -> None:
    path, _ = playbook
    app = make_app(path)
    async with app.run_test(size=size) as pilot:
        await loaded(pilot, app)
        assert len(app.snapshot.conflicts) == 1
        await pilot.press("4")
        await pilot.press("k")
        await after_write(pilot, app, lambda: not app.snapshot.conflicts)
        assert "Conflicts 0" in str(app.query_one(TabbedContent).get_tab("conflicts").label)
    resolved = store_at(path).conflicts(include_resolved=True)
    assert resolved[0].status == "resolved"
    assert resolved[0].resolution == "kept both"


@pytest.mark.parametrize("size", SIZES)
@async_test
async def test_conflict_deprecate_one(playbook, size) -> None:
    path, _ = playbook
    app = make_app(path)
    async with app.run_test(size=size) as pilot:
        await loaded(pilot, app)
        await pilot.press("4")
        conflict = app.query_one(ConflictsPane).current().conflict
        await pilot.press("right_square_bracket")
        await _fill(pilot, app, reason="we pin base images")
        await after_write(pilot, app, lambda: not app.snapshot.conflicts)
    store = store_at(path)
    assert store.get_bullet(conflict.b).maturity == "deprecated"
    assert store.get_bullet(conflict.a).maturity != "deprecated"
    assert store.conflicts(include_resolved=True)[0].resolution == f"deprecated {conflict.b}"


@pytest.mark.parametrize("size", SIZES)
@async_test
async def test_conflict_merge(playbook, size) -> None:
    path, _ = playbook
    app = make_app(path)
    async with app.run_test(size=size) as pilot:
        await loaded(pilot, app)
        await pilot.press("4")
        conflict = app.query_one(ConflictsPane).current().conflict
        await pilot.press("m")
        await _fill(pilot, app, content="Pin base images by digest in production images")
        await after_write(pilot, app, lambda: not app.snapshot.conflicts)
    store = store_at(path)
    merged = next(b for b in store.bullets() if b.content.startswith("Pin base images by digest"))
    assert merged.source == "merged"
    assert sorted(b for _, b in store.lineage(merged.id).predecessors) == sorted(
        [conflict.a, conflict.b]
    )
    assert store.get_bullet(conflict.a).state == "retired"
    assert store.conflicts(include_resolved=True)[0].resolution == f"merged into {merged.id}"


@pytest.mark.parametrize("size", SIZES)
@async_test
async def test_unblock_and_block_new(playbook, size) -> None:
    path, info = playbook
    app = make_app(path)
    async with app.run_test(size=size) as pilot:
        await loaded(pilot, app)
        await pilot.press("5")
        assert app.query_one(BlockedPane).current().id == info["block_id"]
        await pilot.press("u")
        await _confirm(pilot, app)
        await after_write(pilot, app, lambda: not app.snapshot.blocked)
        await pilot.press("n")
        await _fill(pilot, app, pattern="Force push to main", reason="main is shared")
        await after_write(pilot, app, lambda: len(app.snapshot.blocked) == 1)
    store = store_at(path)
    assert [b.pattern for b in store.blocked()] == ["Force push to main"]
    old = next(b for b in store.blocked(include_inactive=True) if b.id == info["block_id"])
    assert not old.active


@pytest.mark.parametrize("size", SIZES)
@async_test
async def test_cancelled_modal_changes_nothing(playbook, size) -> None:
    path, info = playbook
    bid = info["ids"][0]
    app = make_app(path)
    async with app.run_test(size=size) as pilot:
        await loaded(pilot, app)
        await _select_bullet(pilot, app, bid)
        await pilot.press("d")
        await wait_for(pilot, lambda: isinstance(app.screen, FormModal))
        await pilot.press("escape")
        await pilot.pause()
        assert not isinstance(app.screen, FormModal)
        await workers_done(app)
    assert store_at(path).get_bullet(bid).maturity != "deprecated"


@pytest.mark.parametrize("size", SIZES)
@async_test
async def test_refused_action_is_reported_not_raised(playbook, size) -> None:
    """Restoring a bullet another session already restored: the API refuses, the app says so."""
    path, info = playbook
    bid = info["ids"][0]
    store = store_at(path)
    curate(store, [{"type": "deprecate", "bullet_id": bid, "reason": "x"}], actor="human")
    app = make_app(path)
    async with app.run_test(size=size) as pilot:
        await loaded(pilot, app)
        await _select_bullet(pilot, app, bid)
        await pilot.press("r")
        await wait_for(pilot, lambda: isinstance(app.screen, FormModal))
        store.set_maturity(bid, "candidate")  # someone else restores it meanwhile
        await pilot.press("ctrl+s")
        await workers_done(app)
        await wait_for(
            pilot, lambda: any("not deprecated" in str(n.message) for n in app._notifications)
        )
        assert app.is_running


@pytest.mark.parametrize("size", SIZES)
@async_test
async def test_a_draft_is_made_live_by_key_palette_and_help(playbook, size) -> None:
    """A draft (kept, never shown to agents) goes live with `a`, after a confirmation; the
    palette offers it for the draft only, and the help lists the key."""
    from playbook.tui.screens.help import HelpScreen

    path, info = playbook
    store = store_at(path)
    draft = store.insert_bullet("Prefer uv run over activating a venv by hand", state="draft").id
    live = info["ids"][0]
    app = make_app(path)
    async with app.run_test(size=size) as pilot:
        await loaded(pilot, app)
        await pilot.press("question_mark")
        assert isinstance(app.screen, HelpScreen)
        keys = {s.title: dict(s.keys) for s in app.screen.sections}
        assert keys["Bullets and Detail"]["a"] == "Make this draft live: agents are shown it"
        await pilot.press("escape")
        await _select_bullet(pilot, app, live)
        assert not any(c.name.startswith("Make live") for c in app.palette_commands())
        await _select_bullet(pilot, app, draft)
        offered = [c for c in app.palette_commands() if c.name == f"Make live {draft}"]
        assert len(offered) == 1 and offered[0].help.endswith("(a)")
        await pilot.press("a")
        await _confirm(pilot, app)
        await after_write(pilot, app, lambda: app.row(draft).state == "active")
    assert store.get_bullet(draft).state == "active"
    (decision,) = [d for d in store.decisions(bullet_id=draft) if d.action == "activate"]
    assert decision.actor == "human"
