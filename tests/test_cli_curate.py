"""`playbook curate` (and `add`, `mark`) when nothing, or only part, of a batch applies.

A batch that applies nothing is a failure for the caller: exit 1, error code
`nothing_applied`, the per-delta reasons in the one-line error. Bad input (not JSON, nested
too deeply, a scalar, invalid deltas) leaves every table exactly as it was.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import pytest

from playbook.store import open_store
from playbook.store import testing as raw

from .helpers.cli import assert_user_error, run_cli


def table_hashes(db: Path) -> dict[str, str]:
    """A digest of the schema and every row of every table, read without writing."""
    with open_store(db, mode="read") as store:
        return {
            table: hashlib.sha256(repr(rows).encode()).hexdigest()
            for table, rows in raw.dump(store).items()
        }


@pytest.fixture
def db(tmp_path: Path) -> Path:
    path = tmp_path / "pb.sqlite3"
    r = run_cli("add", "Pin npm to 11 in release jobs", "--json", db=path)
    assert r.rc == 0, r.err
    return path


DEEP = "[" * 100_000 + "]" * 100_000


@pytest.mark.parametrize(
    ("stdin", "code", "needle"),
    [
        ("42", "invalid_input", "not a number"),
        ('"add a rule"', "invalid_input", "not a string"),
        ("null", "invalid_input", "not null"),
        ('{"deltas": 7}', "invalid_input", "not a number"),
        ('{"type": "add", "content": "x"}', "invalid_input", "not an object"),
        (DEEP, "invalid_json", "nested too deeply"),
        ('{"deltas": ' + DEEP + "}", "invalid_json", "nested too deeply"),
        ("[]", "nothing_applied", "empty"),
        ('[{"type": "nope"}]', "nothing_applied", "[0] rejected-invalid: type: unknown"),
        (
            '[{"type": "helpful", "bullet_id": "b-none"}, {"type": "add", "content": " "}]',
            "nothing_applied",
            "[0] rejected-invalid: no bullet with id 'b-none'; [1] rejected-invalid",
        ),
    ],
)
def test_bad_batches_fail_with_one_line_and_change_nothing(
    db: Path, stdin: str, code: str, needle: str
) -> None:
    before = table_hashes(db)
    for args in (("curate", "-", "--json"), ("curate", "-")):
        r = run_cli(*args, db=db, stdin=stdin.encode())
        assert r.rc == 1, (r.rc, r.err)
        lines = r.err.splitlines()
        assert len(lines) == 1 and lines[0].startswith("playbook: error: "), r.err
        assert needle in lines[0]
        if "--json" in args:
            assert assert_user_error(r, code)["message"] in lines[0]
    assert table_hashes(db) == before


def test_deeply_nested_json_in_a_file(db: Path, tmp_path: Path) -> None:
    deep = tmp_path / "deep.json"
    deep.write_text(DEEP)
    before = table_hashes(db)
    r = run_cli("curate", deep, "--json", db=db)
    assert "nested too deeply" in assert_user_error(r, "invalid_json")["message"]
    assert table_hashes(db) == before


def test_an_add_refused_by_a_block_fails(db: Path) -> None:
    blocked = run_cli("block", "npm install --legacy-peer-deps", "-r", "hides conflicts", db=db)
    assert blocked.rc == 0
    r = run_cli("add", "npm install --legacy-peer-deps", "--json", db=db)
    err = assert_user_error(r, "nothing_applied")
    assert err["message"].startswith("refused-blocked: near blocked pattern p-")
    batch = json.dumps([{"type": "add", "content": "npm install --legacy-peer-deps"}])
    r = run_cli("curate", "-", "--json", db=db, stdin=batch.encode())
    assert (
        "[0] refused-blocked: near blocked pattern"
        in assert_user_error(r, "nothing_applied")["message"]
    )
    assert [o["status"] for o in r.json["data"]["outcomes"]] == ["refused-blocked"]


def test_a_partly_applied_batch_says_so(db: Path) -> None:
    batch = json.dumps(
        [
            {"type": "add", "content": "Run ruff before committing"},
            {"type": "helpful", "bullet_id": "b-none"},
            {"type": "add", "content": "Cache pip wheels in CI"},
        ]
    ).encode()
    r = run_cli("curate", "-", "--json", db=db, stdin=batch)
    assert r.rc == 0
    assert (r.data["partial"], r.data["applied_count"], r.data["not_applied_count"]) == (
        True,
        2,
        1,
    )
    text = run_cli("curate", "-", db=db, stdin=batch)
    assert text.rc == 0
    # the adds now fold into helpful votes on the bullets they added: applied again
    assert text.out.splitlines()[-1] == "partly applied: 2 of 3 deltas applied"
    whole = run_cli(
        "curate", "-", db=db, stdin=b'[{"type": "add", "content": "Squash fixup commits"}]'
    )
    assert whole.out.splitlines()[-1] == "applied: 1 delta"
