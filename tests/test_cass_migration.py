"""Migrating from cass-memory so that what comes in stays live (issue 27).

- drafts, which cass-memory shows to agents, come in active, and the report says so;
- a repository's `.cass/playbook.yaml` scopes its key-less workspace rules to that
  repository's workspace identity; path-keyed rules get the identity of their path (or,
  when the path is not on this machine, its last folder's name); the report counts each way;
- an empty `blocked.log` imports (nothing); a feedback event dated after the import does
  not crash it; `--rerate`'s hint says what the pass then does;
- a diary's lessons become proposals (origin `cass-diary`).

The fixtures are written by hand in the shapes of public repositories' files (named in
each fixture).
"""

from __future__ import annotations

import json
import re
import subprocess
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
import yaml

from playbook.interop.importing import import_data
from playbook.retrieval.query import recall
from playbook.review import queue
from playbook.store import PlaybookStore

from .helpers import T0, dump
from .helpers.cli import assert_user_error, run_cli

FIXTURES = Path(__file__).parent / "fixtures"
REPO_PLAYBOOK = FIXTURES / "cass_repo_playbook.yaml"
DIARY = FIXTURES / "cass_diary.json"
SHOP = "github.com/acme/shop"


def git_repo(folder: Path, remote: str | None = None) -> Path:
    """A real repository (git init), with an origin when given."""
    folder.mkdir(parents=True, exist_ok=True)
    subprocess.run(["git", "init", "-q", str(folder)], check=True)
    if remote:
        subprocess.run(["git", "-C", str(folder), "remote", "add", "origin", remote], check=True)
    return folder


def in_repo(tmp_path: Path, remote: str = "git@github.com:Acme/Shop.git") -> Path:
    """The fixture as `<repo>/.cass/playbook.yaml` of a clone of `remote`."""
    repo = git_repo(tmp_path / "clones" / "shop-checkout", remote)
    (repo / ".cass").mkdir()
    target = repo / ".cass" / "playbook.yaml"
    target.write_bytes(REPO_PLAYBOOK.read_bytes())
    return target


def rows(db: Path, *ids: str) -> dict[str, tuple[Any, ...]]:
    found = {}
    for bid in ids:
        b = run_cli("show", bid, "--json", db=db).data["bullet"]
        found[bid] = (b["state"], b["scope"], b["scope_key"])
    return found


# ----------------------------------------------------------------------------- live


def test_drafts_come_in_active_and_agents_are_shown_them(store: PlaybookStore) -> None:
    report = import_data(store, REPO_PLAYBOOK.read_bytes(), "cass", workspace=SHOP)
    # Five of six rules were drafts (cass-memory's "not retired, not deprecated" is live).
    assert report.live == {"rules": 6, "from_draft": 4}
    states = {b.id: b.state for b in store.bullets(state="all")}
    assert set(states.values()) == {"active"} and len(states) == 6
    assert not store.bullets(state="draft")
    # What a session in the repository recalls: the imported drafts are there.
    found = recall(store, "clippy warnings", scope=[f"workspace:{SHOP}"])
    assert [i.bullet.id for i in found.bullets] == ["b-mm2m4jnj-rfg98n"]


def test_the_import_says_how_many_came_in_live(tmp_path: Path) -> None:
    r = run_cli("import", in_repo(tmp_path), db=tmp_path / "pb.sqlite3")
    assert r.rc == 0, r.err
    assert "6 imported rule(s) are live; 4 were drafts in cass-memory" in r.out
    data = run_cli("import", in_repo(tmp_path / "b"), "--json", db=tmp_path / "b.sqlite3").data
    assert data["live"] == {"rules": 6, "from_draft": 4}


# ----------------------------------------------------------------------------- workspaces


def test_a_repositorys_rules_are_scoped_to_its_identity(tmp_path: Path) -> None:
    db = tmp_path / "pb.sqlite3"
    data = run_cli("import", in_repo(tmp_path), "--json", db=db).data
    ws = data["workspaces"]
    assert ws["repository"] == SHOP  # git@github.com:Acme/Shop.git, normalised
    # `scope: project` is this repository's; so is its global rule, as cass-memory reads
    # a repository's .cass/playbook.yaml only in that repository.
    assert ws["scopes"] == {"workspace": 6}
    assert ws["counts"] == {"repository": 6}
    assert ws["mapped"] == [
        {"scope": "workspace", "from": None, "to": SHOP, "how": "repository", "rules": 5},
        {"scope": "global", "from": None, "to": SHOP, "how": "repository", "rules": 1},
    ]
    got = rows(db, "b-mm4f9ayk-widrq4", "beads-check-existing-before-create", "b-mm19ofjo-ur2jss")
    assert got == {
        "b-mm4f9ayk-widrq4": ("active", "workspace", SHOP),
        "beads-check-existing-before-create": ("active", "workspace", SHOP),
        "b-mm19ofjo-ur2jss": ("active", "workspace", SHOP),
    }
    r = run_cli("import", in_repo(tmp_path / "k"), "--keep-global", db=tmp_path / "k.sqlite3")
    assert "rules by scope (as imported): 5 workspace, 1 global" in r.out
    kept = rows(tmp_path / "k.sqlite3", "b-mm19ofjo-ur2jss")
    assert kept == {"b-mm19ofjo-ur2jss": ("active", "global", None)}


def test_a_payments_rule_stays_in_its_own_repository(tmp_path: Path) -> None:
    # Regression: key-less workspace rules were shown in every repository's prompts.
    db = tmp_path / "pb.sqlite3"
    assert run_cli("import", in_repo(tmp_path), db=db).rc == 0
    words = "payment provider serde alias field names"

    def recalled(workspace: str) -> list[str]:
        data = run_cli("recall", words, "--scope", f"workspace:{workspace}", "--json", db=db)
        return [item["bullet"]["id"] for item in data.data["bullets"]]

    assert recalled("github.com/acme/blog") == []
    assert recalled(SHOP) == ["b-mm4f9ayk-widrq4"]


def test_path_keyed_rules_get_the_identity_of_their_path(tmp_path: Path) -> None:
    here = git_repo(tmp_path / "src" / "web-app", "https://user:tok@GitHub.com/Acme/Web.git")
    inside = here / "packages" / "ui"
    inside.mkdir(parents=True)
    plain = tmp_path / "notes"  # a folder, no repository
    plain.mkdir()

    def rule(n: int, **fields: Any) -> dict[str, Any]:
        base = {"id": f"b-w{n}", "category": "c", "content": f"Workspace rule {n} for tests"}
        return {**base, "scope": "workspace", "createdAt": "2026-01-01T00:00:00Z", **fields}

    doc = {
        "schema_version": 2,
        "bullets": [
            rule(1, workspace=str(here)),
            rule(2, workspace=str(inside)),  # a folder inside the repository
            rule(3, workspace="/home/someone/projects/Gone-App/"),  # not on this machine
            rule(4, scopeKey="C:\\Users\\dev\\src\\billing"),  # a Windows path
            rule(5, workspace=str(plain)),
            rule(6, scopeKey="web"),  # a name: kept
            rule(7, scopeKey="git@github.com:Acme/Api.git"),  # a remote: normalised
            rule(8),  # no key, and the file is in no repository
        ],
    }
    src = tmp_path / "global-playbook.yaml"
    src.write_text(yaml.safe_dump(doc), encoding="utf-8")
    db = tmp_path / "pb.sqlite3"
    r = run_cli("import", src, "--json", db=db)
    ws = r.data["workspaces"]
    assert ws["repository"] is None
    assert ws["counts"] == {"path": 3, "folder-name": 2, "kept": 2, "unkeyed": 1}
    keys = {f"b-w{n}": rows(db, f"b-w{n}")[f"b-w{n}"][2] for n in range(1, 9)}
    assert keys == {
        "b-w1": "github.com/acme/web",
        "b-w2": "github.com/acme/web",
        "b-w3": "Gone-App",
        "b-w4": "billing",
        "b-w5": "notes",
        "b-w6": "web",
        "b-w7": "github.com/acme/api",
        "b-w8": None,
    }
    text = run_cli("import", src, db=tmp_path / "text.sqlite3")
    assert f"keyed {here} -> github.com/acme/web (that folder's identity here)" in text.out
    assert "keyed /home/someone/projects/Gone-App/ -> Gone-App (not a folder on this" in text.out
    assert "1 workspace rule(s) name no workspace" in text.out and "--workspace" in text.out


def test_workspace_option_scopes_a_loose_file(tmp_path: Path) -> None:
    loose = tmp_path / "downloaded.yaml"
    loose.write_bytes(REPO_PLAYBOOK.read_bytes())
    db = tmp_path / "pb.sqlite3"
    data = run_cli(
        "import", loose, "--workspace", "https://github.com/Acme/Shop", "--json", db=db
    ).data
    assert data["workspaces"]["repository"] == SHOP
    assert data["workspaces"]["found_by"] == "given with --workspace"
    assert rows(db, "b-mm2m4jne-vgc9jn")["b-mm2m4jne-vgc9jn"][2] == SHOP
    # A folder here names its repository's identity.
    repo = git_repo(tmp_path / "checkout", "ssh://git@github.com:22/acme/other.git")
    data = run_cli("import", loose, "--workspace", repo, "--json", db=tmp_path / "o.sqlite3").data
    assert data["workspaces"]["repository"] == "github.com/acme/other"


# ----------------------------------------------------------------------------- blocked.log


@pytest.mark.parametrize("content", [b"", b"\n\n  \n"])
def test_an_empty_blocked_log_imports_nothing(tmp_path: Path, content: bytes) -> None:
    db = tmp_path / "pb.sqlite3"
    assert run_cli("import", in_repo(tmp_path), db=db).rc == 0
    before = dump_db(db)
    log = tmp_path / "clones" / "shop-checkout" / ".cass" / "blocked.log"
    log.write_bytes(content)
    r = run_cli("import", log, "--json", db=db)
    assert r.rc == 0, r.err
    assert r.data["format"] == "cass-blocked-log" and r.data["counts"] == {"blocked_patterns": 0}
    assert dump_db(db) == before  # not even an import entry in the decision log
    assert run_cli("import", "-", "--format", "cass", stdin=content, db=db).rc == 0


def test_an_empty_file_that_is_not_a_log_is_refused_with_a_hint(tmp_path: Path) -> None:
    empty = tmp_path / "playbook.yaml"
    empty.write_bytes(b"")
    r = run_cli("import", empty, "--json", db=tmp_path / "pb.sqlite3")
    err = assert_user_error(r, "invalid_import")
    assert "the file is empty" in err["message"] and "--format cass" in err["message"]
    assert not (tmp_path / "pb.sqlite3").exists()


def dump_db(db: Path) -> Any:
    from .helpers import store_at

    with store_at(db) as store:
        return dump(store)


# ----------------------------------------------------------------------------- feedback


def test_a_feedback_event_dated_after_the_import_is_counted_as_new(store: PlaybookStore) -> None:
    # Regression: Note("feedback", ...) without its kind raised TypeError (exit 4).
    doc = {
        "schema_version": 2,
        "bullets": [
            {
                "id": "b-ahead",
                "category": "ci",
                "content": "Pin the CI image by digest",
                "state": "active",
                "createdAt": "2026-01-01T00:00:00Z",
                "feedbackEvents": [
                    {"type": "helpful", "timestamp": "2026-03-20T00:00:00Z"},  # after T0
                    {"type": "helpful", "timestamp": "2026-02-01T12:00:00Z"},
                ],
            }
        ],
    }
    report = import_data(store, yaml.safe_dump(doc).encode(), "cass")
    assert report.counts["feedback"] == 2
    (note,) = [n for n in report.notes if n.where == "feedback"]
    assert "1 event(s) dated after the import" in note.text
    # SPEC §4: a future event has age 0, weight 1; the other is 28 days old.
    age = (T0 - T0.replace(month=2, day=1)).total_seconds() / 86400
    assert store.score("b-ahead").helpful == pytest.approx(1.0 + 0.5 ** (age / 90))


# ----------------------------------------------------------------------------- --rerate


def test_the_rerate_hint_says_what_the_pass_then_does(tmp_path: Path) -> None:
    # Regression: the hint counted the rules whose earned rung differs from the recorded
    # one (2 here); the pass, which lowers a rung only on a negative score, moved 1.
    yesterday = (datetime.now(UTC) - timedelta(days=1)).isoformat()
    harm = {"type": "harmful", "timestamp": yesterday, "reason": "wrong_context"}

    def rule(bid: str, maturity: str, events: list[dict[str, Any]]) -> dict[str, Any]:
        return {
            "id": bid,
            "category": "c",
            "content": f"Rule {bid} about release trains",
            "state": "active",
            "maturity": maturity,
            "createdAt": yesterday,
            "feedbackEvents": events,
        }

    doc = {
        "schema_version": 2,
        "bullets": [
            rule("b-est1", "established", []),  # earns candidate; the pass leaves it
            rule("b-est2", "established", []),
            rule("b-harm", "candidate", [harm, harm]),  # score -3.97: deprecated by the pass
            rule("b-help", "candidate", [{"type": "helpful", "timestamp": yesterday}]),
        ],
    }
    src = tmp_path / "playbook.yaml"
    src.write_text(yaml.safe_dump(doc), encoding="utf-8")
    r = run_cli("import", src, db=tmp_path / "kept.sqlite3")
    said = re.search(r"the maturity pass \(--rerate\) would move (\d+) of (\d+) rules", r.out)
    assert said is not None, r.out
    assert "their evidence earns another rung on 2" in r.out
    kept = run_cli("import", src, "--json", db=tmp_path / "k2.sqlite3").data["maturity"]
    assert kept == {"kept": "as recorded", "rated": 4, "would_move": 1, "earned_differs": 2}
    moved = run_cli("import", src, "--rerate", "--json", db=tmp_path / "re.sqlite3").data
    assert int(said.group(1)) == len(moved["maturity_changes"]) == 1
    assert moved["maturity_changes"] == [["b-harm", "candidate", "deprecated"]]


# ----------------------------------------------------------------------------- diaries


def test_a_diary_becomes_proposals_to_review(store: PlaybookStore) -> None:
    report = import_data(store, DIARY.read_bytes(), source="diary-4f1c2a9e0b7d.json")
    assert report.format == "cass-diary"
    assert report.counts == {"proposed": 4, "already_proposed": 0}
    pending = queue.pending(store)
    assert [(p.delta["content"], p.delta["kind"]) for p in pending] == [
        ("Capture one real sandbox response before writing the serde types for a provider",
         "key_learning"),
        ("Run cargo clippy --workspace -- -D warnings before committing Rust code",
         "key_learning"),
        ("Small commits, one crate per commit", "preference"),
        ("Keep the legacy webhook route until the mobile app ships 4.2", "decision"),
    ]  # fmt: skip
    assert {p.origin for p in pending} == {"cass-diary"}
    session = "/home/dev/.claude/projects/-home-dev-shop/5d0c9a1e-2b4f-4c77-9a51-3e2f0b8d6c10.jsonl"
    assert {p.provenance.session_ref for p in pending} == {session}
    # /home/dev/shop is not on this machine: its last folder's name.
    assert {(p.delta["scope"], p.delta["scope_key"]) for p in pending} == {("workspace", "shop")}
    assert {tuple(p.delta["tags"]) for p in pending} == {("payments", "rust")}
    places = {n.where for n in report.notes}
    assert "diary-4f1c2a9e0b7d.accomplishments" in places  # noted, not proposed
    assert "diary-4f1c2a9e0b7d.keyLearnings" in places  # the 42 that is not text
    assert not store.bullets(state="all")  # nothing is a rule until a person approves it
    again = import_data(store, DIARY.read_bytes())
    assert again.counts == {"proposed": 0, "already_proposed": 4}
    assert len(queue.pending(store)) == 4
    done = queue.approve(store, pending[0].id, actor="human")
    (rule,) = store.bullets()
    assert done.outcomes[0].status == "added" and (rule.scope, rule.scope_key) == (
        "workspace",
        "shop",
    )
    assert rule.provenance.session_ref == session


def test_a_diary_with_too_many_tags_and_an_overlong_session_path_is_noted(
    store: PlaybookStore,
) -> None:
    """Both are dropped with a note each (the notes once lacked their kind: a TypeError)."""
    doc = json.loads(DIARY.read_bytes())
    doc["tags"] = [f"t{i}" for i in range(store.policy.max_tags + 3)]
    doc["sessionPath"] = "/s/" + "x" * store.policy.max_ref_length
    report = import_data(store, json.dumps(doc).encode(), source="diary.json")
    notes = {n.where: n.text for n in report.notes}
    assert notes["diary-4f1c2a9e0b7d.tags"].startswith("3 tag(s) repeated")
    assert notes["diary-4f1c2a9e0b7d.sessionPath"] == "over the length limit; not kept"
    pending = queue.pending(store)
    assert len(pending) == 4 and {p.provenance.session_ref for p in pending} == {None}
    assert {len(p.delta["tags"]) for p in pending} == {store.policy.max_tags}


def test_a_diary_imports_from_the_command_line(tmp_path: Path) -> None:
    db = tmp_path / "pb.sqlite3"
    r = run_cli("import", DIARY, db=db)
    assert r.rc == 0, r.err
    assert "4 proposals to review (cass-diary)" in r.out and "playbook proposals" in r.out
    listed = run_cli("proposals", "--json", db=db).data
    assert len(listed["proposals"]) == 4
    r = run_cli("import", DIARY, db=db)
    assert "nothing new" in r.out and "4 lesson(s) already proposed" in r.out


def test_a_diary_that_is_not_json_is_refused_and_changes_nothing(tmp_path: Path) -> None:
    db = tmp_path / "pb.sqlite3"
    bad = tmp_path / "diary.json"
    text = DIARY.read_text(encoding="utf-8")
    bad.write_text(text[: len(text) // 2], encoding="utf-8")  # cut in the middle
    r = run_cli("import", bad, "--format", "cass", "--json", db=db)
    err = assert_user_error(r, "invalid_import")
    assert "not a cass-memory diary" in err["message"] or "not valid JSON" in err["message"]
    assert not db.exists()


def test_a_diarys_json_report_says_where_its_lessons_were_scoped(tmp_path: Path) -> None:
    data = run_cli("import", DIARY, "--json", db=tmp_path / "pb.sqlite3").data
    assert data["format"] == "cass-diary" and data["workspaces"]["counts"] == {"folder-name": 4}
    # --workspace names the repository instead of the diary's path.
    data = run_cli(
        "import", DIARY, "--workspace", "git@github.com:Acme/Shop.git", "--json",
        db=tmp_path / "ws.sqlite3",
    ).data  # fmt: skip
    assert data["workspaces"]["mapped"] == [
        {"scope": "workspace", "from": "/home/dev/shop", "to": SHOP, "how": "repository",
         "rules": 4}
    ]  # fmt: skip
    listed = run_cli("proposals", "--json", db=tmp_path / "ws.sqlite3").data["proposals"]
    assert {p["delta"]["scope_key"] for p in listed} == {SHOP}


# ----------------------------------------------------------------------------- activate


def test_activate_makes_drafts_live_all_or_none(store: PlaybookStore) -> None:
    from playbook import review
    from playbook.core.errors import NotFound, Refused, StoreError

    a = store.insert_bullet("Draft rule about release notes", state="draft").id
    b = store.insert_bullet("Draft rule about changelogs", state="draft").id
    live = store.insert_bullet("Live rule about tags").id
    before = dump(store)
    with pytest.raises(NotFound):
        review.activate(store, [a, "b-missing"])
    with pytest.raises(Refused):
        review.activate(store, [a], actor="agent")
    assert dump(store) == before  # neither wrote anything
    done = review.activate(store, [a, live, b, a])
    assert (done.activated, done.already) == ([a, b], [live])
    assert {x.id: x.state for x in store.bullets()} == {a: "active", b: "active", live: "active"}
    assert [d.bullet_id for d in store.decisions() if d.action == "activate"] == [a, b]
    retired = store.insert_bullet("Retired rule", state="retired").id
    with pytest.raises(StoreError, match="retired"):
        review.activate(store, [retired])


def test_activate_on_the_command_line(tmp_path: Path) -> None:
    from .helpers import store_at

    db = tmp_path / "pb.sqlite3"
    with store_at(db) as store:
        ids = [store.insert_bullet(f"Draft rule number {n}", state="draft").id for n in range(3)]
    r = run_cli("activate", ids[0], "--json", db=db)
    assert r.data == {"activated": [ids[0]], "already_active": []}
    err = assert_user_error(run_cli("activate", ids[1], "b-nope", "--json", db=db), "not_found")
    assert "b-nope" in err["message"]
    with store_at(db) as store:  # all or none: ids[1] is still a draft
        assert [b.id for b in store.bullets(state="draft")] == ids[1:]
    r = run_cli("activate", "--all-drafts", db=db)
    assert r.rc == 0 and r.out.splitlines() == [f"activated {ids[1]}", f"activated {ids[2]}"]
    assert assert_user_error(run_cli("activate", "--json", db=db), "usage", 2)
