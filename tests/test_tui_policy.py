"""The workbench scores with the policy the CLI is given (--policy / $PLAYBOOK_POLICY)."""

from __future__ import annotations

import re
from pathlib import Path

from playbook import curate
from playbook.cli import main
from playbook.core.policy import DEFAULT_POLICY
from playbook.core.policy_file import load_policy
from playbook.tui.app import Workbench
from playbook.tui.panes.detail import DetailPane

from .helpers import store_at
from .helpers.cli import clean_env, run_cli
from .helpers.tui import SIZE, async_test, loaded, make_app, screen_text, wait_for

POLICY = """\
[policy]
harm_multiplier = 1.5
multiplier_established = 2.5
half_life_days = 20
"""


def _playbook(tmp_path: Path) -> tuple[Path, Path, str]:
    path = tmp_path / "state.sqlite3"
    store = store_at(path)
    bid = curate(store, [{"type": "add", "content": "Read the first CI error first"}]).added[0]
    for _ in range(4):
        curate(store, [{"type": "helpful", "bullet_id": bid}])
    curate(store, [{"type": "harmful", "bullet_id": bid, "reason": "wasted_time"}])
    policy = tmp_path / "playbook.toml"
    policy.write_text(POLICY)
    return path, policy, bid


@async_test
async def test_workbench_shows_the_cli_score_under_a_custom_policy(tmp_path: Path) -> None:
    path, policy_file, bid = _playbook(tmp_path)
    shown = run_cli("show", bid, "--json", db=path, env=clean_env(PLAYBOOK_POLICY=str(policy_file)))
    cli_score = shown.data["score"]["effective"]
    default = run_cli("show", bid, "--json", db=path).data["score"]["effective"]
    assert abs(cli_score - default) > 0.5  # the custom policy really changes this score

    app = Workbench(path, policy=load_policy(policy_file), poll_seconds=0.1)
    async with app.run_test(size=SIZE) as pilot:
        await loaded(pilot, app)
        assert abs(app.row(bid).effective - cli_score) < 1e-4  # seconds of decay apart
        app.open_bullet(bid)
        await wait_for(pilot, lambda: app.query_one(DetailPane).detail is not None)
        assert abs(app.query_one(DetailPane).detail.score.effective - cli_score) < 1e-4
        await pilot.pause()
        assert re.search(r"half-life\s*20 days", screen_text(app))  # the policy's, not 90


@async_test
async def test_the_default_app_scores_with_the_default_policy(tmp_path: Path) -> None:
    path, _, bid = _playbook(tmp_path)
    default = run_cli("show", bid, "--json", db=path).data["score"]["effective"]
    app = make_app(path)
    async with app.run_test(size=SIZE) as pilot:
        await loaded(pilot, app)
        assert app.policy is DEFAULT_POLICY
        assert abs(app.row(bid).effective - default) < 1e-4


def test_tui_command_hands_the_policy_to_the_workbench(tmp_path: Path, monkeypatch) -> None:
    path, policy_file, _ = _playbook(tmp_path)
    seen = []
    monkeypatch.setattr(Workbench, "run", lambda self: seen.append(self.policy))
    monkeypatch.setenv("PLAYBOOK_POLICY", str(policy_file))
    try:
        main(["tui", "--db", str(path)])
    except SystemExit as exc:
        assert exc.code in (0, None)
    assert len(seen) == 1
    assert seen[0].harm_multiplier == 1.5 and seen[0].half_life_days == 20
