"""Hostile content: stored exactly, shown inert, bounded where a bound makes sense.

Rule text, contexts, tags and provenance come from agents and models. Whatever they hold
(Rich markup, ANSI and OSC escape sequences, C0/C1 controls, carriage returns, bidi
overrides, invisible format characters, NUL bytes, megabyte strings):

- the store gives back exactly what it was given;
- the CLI's human output never carries a raw control, escape, bidi or invisible character
  (they are shown as `\\x1b`, `\\u202e`, ...), markup is printed as the literal text it is,
  and `--json` output is valid JSON that decodes to the exact text;
- content over `Policy.max_content_length` is refused with the limit in the reason, never
  cut, and nothing of it is stored.
"""

from __future__ import annotations

import io
import json
import re
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from playbook.cli import main
from playbook.core.errors import InvalidInput
from playbook.core.inert import dumps, inert
from playbook.core.policy import Policy
from playbook.curation import curate
from playbook.curation.outcomes import apply_outcome
from playbook.review.queue import stage
from playbook.store import PlaybookStore

from .helpers import Clock, dump, store_at
from .helpers.hostile import HOSTILE, assert_inert, unsafe_chars

# SQLite only, on purpose: hostile text stored exactly includes NUL, which PostgreSQL's text
# refuses (`invalid_input`, see the README's team section); the rest is backend-free.
pytestmark = pytest.mark.sqlite_only


@pytest.fixture
def db(tmp_path: Path) -> Path:
    return tmp_path / "pb.sqlite3"


def add_hostile(store: PlaybookStore, text: str) -> str:
    r = curate(
        store,
        [
            {
                "type": "add",
                "content": text,
                "tags": [text[:40], "ci"],
                "category": text[:30],
                "scope": "workspace",
                "scope_key": text[:20],
            }
        ],
        provenance={"session_ref": text[:50], "byte_offset": 7},
    )
    assert r.added, r.outcomes
    bid = r.added[0]
    curate(store, [{"type": "helpful", "bullet_id": bid, "context": text}])
    curate(store, [{"type": "harmful", "bullet_id": bid, "reason": "other", "context": text}])
    return bid


# ------------------------------------------------------------------ stored exactly
@pytest.mark.parametrize("name", sorted(HOSTILE))
def test_hostile_text_is_stored_exactly(db: Path, name: str) -> None:
    text = HOSTILE[name]
    store = store_at(db, clock=Clock(), policy=Policy())
    bid = add_hostile(store, text)
    store.close()
    store = store_at(db, clock=Clock(), policy=Policy())  # read back through a new connection
    b = store.get_bullet(bid)
    assert b is not None
    assert b.content == text
    assert b.tags == list(dict.fromkeys(t.strip() for t in [text[:40], "ci"] if t.strip()))
    assert b.category == text[:30] and b.scope_key == text[:20]
    assert b.provenance.session_ref == text[:50]
    assert [e.context for e in store.timeline(bid)] == [text, text]
    logged = [d.detail["delta"] for d in store.decisions(bullet_id=bid) if "delta" in d.detail]
    assert logged[0]["content"] == text


def test_a_megabyte_of_text_round_trips_where_the_policy_allows_it(db: Path) -> None:
    big = ("[bold]\x1b[31m\x07\u202e" + "x" * 1000) * 1024  # over 1 MB, every hostile kind
    store = store_at(
        db, clock=Clock(), policy=Policy(max_content_length=2_000_000, max_text_length=2_000_000)
    )
    bid = add_hostile(store, big)
    assert store.get_bullet(bid).content == big  # type: ignore[union-attr]
    assert store.timeline(bid)[0].context == big
    r = apply_outcome(store, {"outcome": "success", "bullet_ids": [bid], "context": big})
    assert r.applied == [bid] and store.timeline(bid)[-1].context == big


def test_nul_bytes_are_refused_never_stored(db: Path) -> None:
    """SQLite could store them, PostgreSQL cannot: a playbook holding one could never be
    copied there (issue 29). Refused at the API and at the store alike, nothing written."""
    text = "Run\x00 the tests\x00"
    store = store_at(db, clock=Clock(), policy=Policy())
    before = dump(store)
    r = curate(store, [{"type": "add", "content": text}])
    assert [o.status for o in r.outcomes] == ["rejected-invalid"]
    with pytest.raises(InvalidInput, match="NUL"):
        store.insert_bullet(text)
    assert dump(store) == before


# ------------------------------------------------------------------ bounded, not cut
def test_content_over_the_limit_is_refused_with_the_limit_not_cut(db: Path) -> None:
    store = store_at(db, clock=Clock(), policy=Policy())
    keep = add_hostile(store, "Keep the lockfile committed")
    other = add_hostile(store, "Commit the lockfile with the change")
    limit = store.policy.max_content_length
    before = dump(store)
    over = "y" * (limit + 1)
    r = curate(
        store,
        [
            {"type": "add", "content": over},
            {"type": "replace", "bullet_id": keep, "content": over},
            {"type": "merge", "bullet_ids": [keep, other], "content": over},
        ],
    )
    assert [o.status for o in r.outcomes] == ["rejected-invalid"] * 3
    for o in r.outcomes:
        assert f"{limit + 1:,} characters" in (o.reason or "")
        assert f"maximum is {limit:,}" in (o.reason or "")
        assert "Policy.max_content_length" in (o.reason or "")
    assert dump(store) == before
    staged = stage(store, [{"type": "add", "content": over}])
    assert staged.staged == [] and "maximum" in staged.rejected[0][1]
    assert dump(store) == before
    exact = "z" * limit
    r = curate(store, [{"type": "add", "content": exact}])
    assert store.get_bullet(r.added[0]).content == exact  # type: ignore[union-attr]


def test_the_cli_reports_the_limit_in_one_line(
    db: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["--db", str(db), "add", "w" * 9000]) == 1
    out, err = capsys.readouterr()
    assert out == "" and err.count("\n") == 1
    assert "9,000 characters; the maximum is 8,000" in err
    assert main(["--db", str(db), "recall", "w"]) == 0
    assert "nothing in the playbook matches" in capsys.readouterr().out


# ------------------------------------------------------------------ shown inert
@pytest.mark.parametrize("name", sorted(HOSTILE))
def test_show_and_recall_print_hostile_text_inert(
    db: Path, name: str, capsys: pytest.CaptureFixture[str]
) -> None:
    text = HOSTILE[name]
    store = store_at(db, clock=Clock(), policy=Policy())
    bid = add_hostile(store, text)
    store.close()
    for args in (["show", bid], ["recall", "run tests"], ["recall", "ci"]):
        assert main(["--db", str(db), *args]) == 0
        out, err = capsys.readouterr()
        assert bid in out, args
        assert_inert(out)
        assert_inert(err)
    # The text itself is shown, escaped: markup literally, escapes as visible \x1b etc.
    assert main(["--db", str(db), "show", bid]) == 0
    assert inert(text) in capsys.readouterr().out
    assert main(["--db", str(db), "recall", "run tests"]) == 0
    assert inert(text, one_line=True) in capsys.readouterr().out


@pytest.mark.parametrize("name", sorted(HOSTILE))
def test_json_output_is_inert_and_decodes_to_the_exact_text(
    db: Path, name: str, capsys: pytest.CaptureFixture[str]
) -> None:
    text = HOSTILE[name]
    store = store_at(db, clock=Clock(), policy=Policy())
    bid = add_hostile(store, text)
    store.close()
    assert main(["--db", str(db), "show", bid, "--json"]) == 0
    out = capsys.readouterr().out
    assert_inert(out)
    doc = json.loads(out)["data"]
    assert doc["bullet"]["content"] == text
    assert [e["context"] for e in doc["timeline"]] == [text, text]
    assert main(["--db", str(db), "recall", "run tests", "--json"]) == 0
    out = capsys.readouterr().out
    assert_inert(out)
    assert json.loads(out)["data"]["bullets"][0]["bullet"]["content"] == text


def test_hostile_ids_and_rejections_are_printed_inert(
    db: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """What a caller sends back in an error (an id that is not one, a field name) is
    untrusted too."""
    evil = "\x1b]0;owned\x07\u202e\x9b2J"
    batch = tmp_path / "deltas.json"
    batch.write_text(
        json.dumps(
            [
                {"type": "helpful", "bullet_id": evil},
                {"type": "add", "content": "Run the tests", evil: 1},
                {"type": evil},
                {"type": "add", "content": "Run \ud800 the tests"},
                {"type": "helpful", "bullet_id": "b-\udcff"},
            ]
        )
    )
    # nothing applied: a failure (exit 1), each reason printed, all of it inert
    assert main(["--db", str(db), "curate", str(batch)]) == 1
    out, err = capsys.readouterr()
    assert out.count("rejected-invalid") == 5
    assert err.startswith("playbook: error: nothing applied: 5 deltas, none applied")
    assert_inert(out)
    assert_inert(err)
    assert main(["--db", str(db), "curate", str(batch), "--json"]) == 1
    out = capsys.readouterr().out
    assert_inert(out)
    doc = json.loads(out)
    assert doc["ok"] is False and doc["error"]["code"] == "nothing_applied"
    assert [o["status"] for o in doc["data"]["outcomes"]] == ["rejected-invalid"] * 5
    for args in (["show", evil], ["mark", evil, "helpful"], ["mark", "b-1", evil]):
        assert main(["--db", str(db), *args]) == 1
        out, err = capsys.readouterr()
        assert_inert(out)
        assert_inert(err)
        assert err.count("\n") == 1


BAD_ARGV = "\udcff"  # what Python makes of the byte 0xff in a command-line argument


@pytest.mark.parametrize(
    "args",
    [
        ["add", "Run the tests", "--offset", "-1"],
        ["curate", "-", "--offset", "-3"],
        ["add", "Run the tests", "--session", BAD_ARGV],
        ["add", f"Run {BAD_ARGV} the tests"],
        ["mark", f"b-{BAD_ARGV}", "helpful"],
        ["pin", f"b-{BAD_ARGV}", "--reason", "x"],
        ["block", f"{BAD_ARGV} pattern", "--reason", BAD_ARGV],
        ["outcome", "success", "b-1", "--receipt", BAD_ARGV],
        ["recall", f"tests {BAD_ARGV}"],
    ],
)
def test_bad_arguments_are_one_plain_line_and_change_nothing(
    db: Path, args: list[str], capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    store = store_at(db, clock=Clock(), policy=Policy())
    add_hostile(store, "Run the tests")
    before = dump(store)
    store.close()
    monkeypatch.setattr("sys.stdin", io.StringIO("[]"))
    code = main(["--db", str(db), *args])
    out, err = capsys.readouterr()
    assert code in (0, 1), err  # 0: recall of a word that matches nothing is no error
    assert_inert(out)
    assert_inert(err)
    if code:
        assert out == "" and err.count("\n") == 1 and err.startswith("playbook: error: ")
    store = store_at(db, clock=Clock(), policy=Policy())
    assert dump(store) == before


def test_proposals_are_listed_inert(db: Path, capsys: pytest.CaptureFixture[str]) -> None:
    store = store_at(db, clock=Clock(), policy=Policy())
    bid = add_hostile(store, "Run the tests")
    for i, text in enumerate(HOSTILE.values()):
        staged = stage(
            store,
            [{"type": "add", "content": f"{text} {i}", "tags": [text[:10] or "x"]}],
            provenance={"session_ref": text[:30], "byte_offset": i},
        )
        assert staged.staged, staged.rejected
    stage(store, [{"type": "helpful", "bullet_id": bid, "context": HOSTILE["osc-title"]}])
    store.close()
    assert main(["--db", str(db), "proposals"]) == 0
    out, err = capsys.readouterr()
    assert out.count("(reflection)") == len(HOSTILE) + 1
    assert_inert(out)
    assert_inert(err)


# ------------------------------------------------------------------ inert itself
def test_inert_covers_every_control_format_and_separator_character() -> None:
    everything = "".join(map(chr, range(0x110000)))
    shown = inert(everything)
    assert_inert(shown)
    assert "\n" in shown and "\t" in shown  # kept: they do not act on a terminal
    assert_inert(inert(everything, one_line=True).replace("\\n", ""))
    assert "\n" not in inert(everything, one_line=True)


@settings(max_examples=300, deadline=None)
@given(st.text(alphabet=st.characters(blacklist_categories=()), max_size=60))
def test_inert_and_terminal_json_keep_the_text_recoverable(text: str) -> None:
    assert_inert(inert(text))
    safe = re.sub("[\\\\]", "", text)
    if not unsafe_chars(safe):
        assert inert(safe) == safe  # ordinary text, any script, is left alone
    encoded = dumps({"content": text, "tags": [text]})
    assert_inert(encoded)
    assert json.loads(encoded) == {"content": text, "tags": [text]}
