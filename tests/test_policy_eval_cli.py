"""`playbook policy eval` and `policy show` as a user runs them (issue 18)."""

from __future__ import annotations

from pathlib import Path

import pytest

from .helpers import Clock, store_at
from .helpers.cli import assert_user_error, run_cli
from .helpers.policy_eval_worlds import flipping_world, noise_world


def _world(path: Path, build, **kw) -> Path:  # type: ignore[no-untyped-def]
    clock = Clock()
    store = store_at(path, clock=clock)
    build(store, clock, **kw)
    store.close()
    return path


@pytest.fixture(scope="module")
def flip_db(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("flip") / "state.sqlite3"
    return _world(path, flipping_world, period=60, rules=20, marks_per_day=16)


def test_write_then_show_round_trips_the_provenance(flip_db: Path, tmp_path: Path) -> None:
    toml = tmp_path / "playbook.toml"
    before = flip_db.read_bytes()
    report = run_cli("policy", "eval", "--write", toml, "--json", db=flip_db).data
    assert flip_db.read_bytes() == before  # evaluating reads the playbook, never writes it
    assert report["verdict"]["status"] == "recommended"
    name = report["verdict"]["challenger"]
    row = next(c for c in report["candidates"] if c["name"] == name)
    assert report["written"] == {"path": str(toml), "changes": row["changes"]}
    assert row["changes"]["half_life_days"] == 30
    primary = row["metrics"]["log_loss"]

    items = run_cli("--policy", toml, "policy", "show", "--json").data
    shown = {i["name"]: i for i in items}
    for const, value in row["changes"].items():
        item = shown[const]
        assert item["value"] == value and item["overridden"]
        prov = item["provenance"]
        assert prov["value"] == value
        assert prov["candidate"] == name
        assert prov["difference"] == pytest.approx(primary["diff"])
        assert prov["interval"] == pytest.approx(primary["interval"])
        assert prov["heldout_events"] == primary["events"] == report["log"]["heldout_events"]
        assert prov["sessions"] == primary["sessions"]
        assert prov["events"] == report["log"]["events"]
        assert prov["log_span"] == f"{report['log']['first'][:10]} .. {report['log']['last'][:10]}"
    assert shown["stale_after_days"]["provenance"] is None  # unchanged constants: no claim
    human = run_cli("--policy", toml, "policy", "show").out
    hl_block = human[human.index("half_life_days") :].splitlines()
    assert hl_block[0].split()[1] == "30"
    assert hl_block[1].strip().startswith(f"measured {prov['date']} by policy eval ({name})")

    # a later evaluation challenges the written policy, not the defaults
    again = run_cli("--policy", toml, "policy", "eval", "--json", db=flip_db).data
    current = again["candidates"][0]
    assert current["current"] and current["half_life_days"] == 30
    assert current["name"] == f"current (= {name})"
    assert name not in [c["name"] for c in again["candidates"][1:]]
    assert again["verdict"]["challenger"] != name


def test_human_report_ends_with_the_verdict(flip_db: Path) -> None:
    r = run_cli("policy", "eval", "--split", "0.6", "--k", "3", db=flip_db)
    assert r.rc == 0, r.err
    lines = r.out.strip().splitlines()
    assert lines[-1].startswith("recommended: hl30-")
    header = next(line for line in lines if line.startswith("candidate"))
    assert "log-loss" in header and "recall@3" in header and "AUC" in header
    assert "(40% of the span)" in lines[0]


def test_inert_writes_nothing(tmp_path: Path) -> None:
    db = _world(tmp_path / "noise.sqlite3", noise_world, rules=20, marks_per_day=16)
    toml = tmp_path / "playbook.toml"
    r = run_cli("policy", "eval", "--write", toml, "--json", db=db)
    assert r.data["verdict"]["status"] == "inert" and r.data["written"] is None
    assert not toml.exists()
    assert "nothing written" in r.err


def test_candidates_file_is_compared(flip_db: Path, tmp_path: Path) -> None:
    f = tmp_path / "candidates.toml"
    f.write_text(
        "[candidates.month]\nhalf_life_days = 30\n\n[candidates.year]\nhalf_life_days = 365\n"
    )
    data = run_cli("policy", "eval", "--candidates", f, "--json", db=flip_db).data
    assert [c["name"] for c in data["candidates"]] == ["current", "month", "year"]
    assert data["verdict"]["challenger"] == "month"


def test_user_errors(flip_db: Path, tmp_path: Path) -> None:
    bad = tmp_path / "c.toml"
    bad.write_text("[candidates.x]\nproven_min_helpful = 5\n")
    r = run_cli("policy", "eval", "--candidates", bad, "--json", db=flip_db)
    assert "held at its logged values" in assert_user_error(r, "invalid_input")["message"]
    r = run_cli("policy", "eval", "--candidates", tmp_path / "none.toml", "--json", db=flip_db)
    assert_user_error(r, "file_not_found")
    r = run_cli("policy", "eval", "--json", db=tmp_path / "missing.sqlite3")
    assert_user_error(r, "no_database")
    assert not (tmp_path / "missing.sqlite3").exists()
    r = run_cli("policy", "eval", "--split", "1.5", db=flip_db)
    assert r.rc == 2 and "Traceback" not in r.err
