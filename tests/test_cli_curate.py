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


# ----------------------------------------------------------------------------- the format
def test_the_six_delta_shapes_are_documented_where_users_look(tmp_path: Path) -> None:
    """`curate --help` and the README show one example of each of the six delta types, and
    each example is a valid delta that curates: on a playbook holding the ids it names."""
    import re

    from playbook.cli import typer_app  # noqa: F401  (loads the command modules in order)
    from playbook.cli.core import DELTA_EXAMPLES
    from playbook.curation import curate

    examples = [json.loads(example) for example, _ in DELTA_EXAMPLES]
    assert sorted(e["type"] for e in examples) == sorted(
        ["add", "helpful", "harmful", "replace", "deprecate", "merge"]
    )
    help_text = run_cli("curate", "--help").out
    readme = (Path(__file__).resolve().parents[1] / "README.md").read_text(encoding="utf-8")
    in_readme = [json.loads(m) for m in re.findall(r"^\| `\w+` \| `(\{.*?\})` \|", readme, re.M)]
    assert in_readme == examples
    for example, fields in DELTA_EXAMPLES:
        assert " ".join(example.split()) in " ".join(help_text.split())
        assert " ".join(fields.split()) in " ".join(help_text.split())
    with open_store(tmp_path / "pb.sqlite3") as store:
        words = ["alpha", "bravo", "charlie", "delta", "echo", "foxtrot"]
        for word, (example, _) in zip(words, DELTA_EXAMPLES, strict=True):
            # Two rules of its own stand for the ids the example names.
            rules = [f"Cache the {word} wheels in CI", f"Pin node in the {word} release image"]
            first, second = curate(store, [{"type": "add", "content": c} for c in rules]).added
            text = example.replace("b-7f3a9c2e", first).replace("b-0c1d2e3f", second)
            (outcome,) = curate(store, [json.loads(text)]).outcomes
            assert outcome.status in ("added", "applied"), (example, outcome)
