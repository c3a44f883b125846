"""Reflection at the edges a user hits (issue 12): a diary still being written, the delta cap,
diaries from pipes, provenance at the line, and bad input that must change nothing."""

from __future__ import annotations

import hashlib
import json
import os
import re
import sqlite3
import subprocess
import sys
import threading
from pathlib import Path
from typing import Any

import pytest

from playbook.reflection.diaries import read_text_diary
from playbook.reflection.reflectors import HeuristicReflector
from playbook.reflection.session import reflect_session
from playbook.review.queue import list_proposals, pending
from playbook.store import PlaybookStore

from .helpers import store_at
from .helpers.cli import clean_env, run_cli

ROOT = Path(__file__).resolve().parents[1]
FAKE_MODEL = Path(__file__).parent / "fixtures" / "fake_model.py"


def reflect(store: PlaybookStore, diary: Any, **kw: Any) -> Any:
    return reflect_session(store, "s:1", diary, HeuristicReflector(), **kw)


def contents(store: PlaybookStore) -> list[str]:
    return [p.delta["content"] for p in list_proposals(store)]


# ------------------------------------------------------------------ a diary still being written


def test_a_text_line_without_its_newline_is_left_for_the_next_read() -> None:
    whole = b"Notes\nRULE: Pin npm to 11 in release jobs\n"
    half = whole[: whole.index(b" to 11")]  # the agent is still writing the line
    diary = read_text_diary(half)
    assert [p.text for p in diary.passages] == ["Notes"]
    assert diary.end == len(b"Notes\n")
    assert diary.unfinished == len(half) - diary.end
    later = read_text_diary(whole, start=diary.end)
    assert [p.text for p in later.passages] == ["RULE: Pin npm to 11 in release jobs"]
    assert later.end == len(whole) and later.unfinished == 0


def test_a_rule_half_written_is_staged_whole_once_the_line_is_finished(
    store: PlaybookStore, tmp_path: Path
) -> None:
    path = tmp_path / "notes.md"
    path.write_bytes(b"# Session\n\nRULE: Pin npm")
    first = reflect(store, path)
    assert first.proposed == [] and contents(store) == []
    assert store.watermark("s:1") == len(b"# Session\n\n")
    assert first.unfinished == len(b"RULE: Pin npm")

    with path.open("ab") as f:
        f.write(b" to 11 in release jobs\n")
    second = reflect(store, path)
    assert contents(store) == ["Pin npm to 11 in release jobs"]
    assert second.watermark_after == path.stat().st_size


# ------------------------------------------------------------------ the delta cap


def rules_diary(n: int) -> bytes:
    return b"".join(f"RULE: Rule number {i} about topic{i}\n".encode() for i in range(n))


# Each run re-reads what is left of the diary: the cost grows with the square of its
# length. The suite takes 520 rules (eleven runs that stage, the last short of the cap);
# `-m slow` the 2,000 of the report that found the bug.
@pytest.mark.parametrize("rules", [520, pytest.param(2000, marks=pytest.mark.slow)])
def test_the_delta_cap_leaves_the_rest_for_the_next_run_never_loses_it(
    store: PlaybookStore, tmp_path: Path, rules: int
) -> None:
    cap = store.policy.reflect_max_deltas
    assert cap == 50
    data = rules_diary(rules)
    path = tmp_path / "notes.md"
    path.write_bytes(data)
    first = reflect(store, path)
    assert len(first.staged) == cap
    assert first.stopped == "max-deltas"
    assert first.truncated == rules - cap and first.unplaced == 0
    # The watermark stops at the first rule left out, not at the end of the file.
    assert first.watermark_after == data.index(b"RULE: Rule number 50 ")
    runs = 1
    while True:
        result = reflect(store, path)
        runs += 1
        assert result.ok and result.duplicates == []
        if not result.staged:
            break
    assert runs == -(-rules // cap) + 1  # every run that stages, then one that finds none
    assert contents(store) == [f"Rule number {i} about topic{i}" for i in range(rules)]
    assert store.watermark("s:1") == len(data)
    for p in list_proposals(store):  # each points at its own line
        number = p.delta["content"].split()[2]
        line = f"RULE: Rule number {number} ".encode()
        assert data.startswith(line, p.provenance.byte_offset), number


def test_with_apply_a_capped_run_curates_each_rule_once(
    store: PlaybookStore, tmp_path: Path
) -> None:
    path = tmp_path / "notes.md"
    path.write_bytes(rules_diary(120))
    results = [reflect(store, path, apply=True) for _ in range(4)]
    assert [sum(len(c.added) for c in r.curated) for r in results] == [50, 50, 20, 0]
    bullets = store.bullets()
    assert sorted(b.content for b in bullets) == sorted(
        f"Rule number {i} about topic{i}" for i in range(120)
    )
    assert all(store.timeline(b.id) == [] for b in bullets)  # no add folded into a vote


def test_a_line_holding_more_deltas_than_the_cap_is_taken_whole(
    store: PlaybookStore, tmp_path: Path
) -> None:
    ids = [store.insert_bullet(f"Rule {i} about subject{i}").id for i in range(60)]
    line = " ".join(f"[playbook: helpful {i}]" for i in ids)
    data = f"{line}\nRULE: After the long line\n".encode()
    path = tmp_path / "notes.md"
    path.write_bytes(data)
    first = reflect(store, path)
    assert len(first.staged) == 60  # over the cap: stopping inside a line is impossible
    assert first.watermark_after == data.index(b"RULE: After")
    second = reflect(store, path)
    assert [p.delta.get("content") for p in pending(store)][-1] == "After the long line"
    assert len(second.staged) == 1 and store.watermark("s:1") == len(data)


# ------------------------------------------------------------------ provenance at the line


def test_a_proposal_points_at_its_line_not_at_its_paragraph(
    store: PlaybookStore, tmp_path: Path
) -> None:
    data = (
        "# Release ✓\n"
        "\n"
        "The release job failed on npm ci.\n"
        "Pinned npm to 11 and it passed.\n"
        "RULE: Pin npm to 11 in release jobs #ci\n"
        "AVOID: sudo npm ci\n"
    ).encode()
    path = tmp_path / "notes.md"
    path.write_bytes(data)
    reflect(store, path)
    offsets = {p.delta["content"]: p.provenance.byte_offset for p in pending(store)}
    assert offsets == {
        "Pin npm to 11 in release jobs": data.index(b"RULE: Pin"),
        "AVOID: sudo npm ci": data.index(b"AVOID: sudo"),
    }


def test_a_diary_already_read_keeps_the_lines_past_a_watermark_inside_a_paragraph(
    store: PlaybookStore,
) -> None:
    data = b"RULE: First rule here\nRULE: Second rule here\nRULE: Third rule here\n"
    with store.transaction():
        store.set_watermark("s:1", data.index(b"RULE: Second"))
    result = reflect(store, read_text_diary(data))
    assert [p.delta["content"] for p in pending(store)] == [
        "Second rule here",
        "Third rule here",
    ]
    assert result.watermark_after == len(data)


# ------------------------------------------------------------------ pipes and stdin


PIPED = b"Done.\n\nRULE: Pipe the diary in #shell\n"


def run_with_pipe(db: Path, data: bytes, session: str) -> subprocess.CompletedProcess[bytes]:
    """`playbook reflect <(producer)`: the diary is a pipe named /dev/fd/N."""
    read_end, write_end = os.pipe()

    def produce() -> None:
        with os.fdopen(write_end, "wb") as f:
            f.write(data)

    writer = threading.Thread(target=produce)
    writer.start()
    try:
        return subprocess.run(
            [
                *(sys.executable, "-c", "from playbook.cli import run; run()", "--db", str(db)),
                *("reflect", f"/dev/fd/{read_end}", "--session", session, "--json"),
            ],
            pass_fds=(read_end,),
            capture_output=True,
            env=clean_env(),
            timeout=60,
        )
    finally:
        os.close(read_end)
        writer.join()


@pytest.mark.skipif(not Path("/dev/fd").is_dir(), reason="needs /dev/fd")
def test_reflect_reads_a_diary_from_a_pipe(tmp_path: Path) -> None:
    db = tmp_path / "state.sqlite3"
    proc = run_with_pipe(db, PIPED, "pipe:1")
    assert proc.returncode == 0, proc.stderr
    data = json.loads(proc.stdout)["data"]
    assert data["watermark_after"] == len(PIPED) and len(data["staged"]) == 1
    # The watermark is the session's: the same stream again proposes nothing, a longer one
    # only what was added.
    again = json.loads(run_with_pipe(db, PIPED, "pipe:1").stdout)["data"]
    assert again["proposed"] == [] and again["watermark_after"] == len(PIPED)
    grown = PIPED + b"RULE: Read only the new part\n"
    more = json.loads(run_with_pipe(db, grown, "pipe:1").stdout)["data"]
    assert [p["delta"]["content"] for p in more["proposed"]] == ["Read only the new part"]
    assert more["proposed"][0]["byte_offset"] == len(PIPED)


def test_reflect_reads_a_diary_from_stdin(tmp_path: Path) -> None:
    db = tmp_path / "state.sqlite3"
    r = run_cli("reflect", "-", "--session", "stdin:1", "--json", db=db, stdin=PIPED)
    assert r.rc == 0, r.err
    with store_at(db) as store:
        assert contents(store) == ["Pipe the diary in"]
        assert store.watermark("stdin:1") == len(PIPED)
    again = run_cli("reflect", "-", "--session", "stdin:1", "--json", db=db, stdin=PIPED)
    assert again.data["proposed"] == []


# ------------------------------------------------------------------ bad input changes nothing


def table_hash(db: Path) -> str:
    conn = sqlite3.connect(db)
    try:
        return hashlib.sha256("\n".join(conn.iterdump()).encode()).hexdigest()
    finally:
        conn.close()


@pytest.fixture
def busy_db(tmp_path: Path) -> Path:
    """A playbook with a rule, a pending proposal and a watermark: something to lose."""
    db = tmp_path / "state.sqlite3"
    notes = tmp_path / "seed.md"
    notes.write_bytes(b"RULE: Seed rule for the hash\n")
    with store_at(db) as store:
        store.insert_bullet("Existing rule")
        reflect_session(store, "s", notes, HeuristicReflector())
    return db


def bad_reflect_calls(tmp_path: Path) -> list[tuple[list[str], int, str]]:
    notes = tmp_path / "notes.md"
    notes.write_bytes(b"RULE: Would be staged\n")
    fail = f"{sys.executable} {FAKE_MODEL} fail"
    garbage = f"{sys.executable} {FAKE_MODEL} garbage"
    run = ["reflect", str(notes), "--session", "bad"]
    return [
        (["reflect", str(tmp_path / "nope.md"), "--session", "bad"], 1, "file_not_found"),
        (["reflect", str(tmp_path), "--session", "bad"], 1, "file_error"),
        (["reflect", str(notes), "--session", " "], 2, "usage"),
        ([*run, "--heuristic", "--reflector", "x"], 2, "usage"),
        ([*run, "--reflector", ""], 2, "usage"),
        ([*run, "--reflector", "x", "--timeout", "0"], 2, "usage"),
        ([*run, "--reflector", fail], 1, "reflector_failed"),
        ([*run, "--reflector", garbage], 1, "reflector_failed"),
        ([*run, "--reflector", str(tmp_path / "no-such-program")], 1, "reflector_failed"),
    ]  # fmt: skip


def test_bad_input_to_reflect_is_one_line_a_documented_code_and_changes_nothing(
    busy_db: Path, tmp_path: Path
) -> None:
    documented = readme_error_codes()
    before = table_hash(busy_db)
    for args, exit_code, code in bad_reflect_calls(tmp_path):
        r = run_cli(*args, "--json", db=busy_db)
        assert r.rc == exit_code, (args, r.err)
        assert r.error["code"] == code, (args, r.out)
        assert len(r.err.splitlines()) == 1 and r.err.startswith("playbook: error: "), r.err
        assert code in documented and documented[code] == exit_code
        assert table_hash(busy_db) == before, args
    # Without --json the same single line, and nothing on stdout.
    text = run_cli(*bad_reflect_calls(tmp_path)[0][0], db=busy_db)
    assert text.out == "" and len(text.err.splitlines()) == 1


def readme_error_codes() -> dict[str, int]:
    """`error.code` -> exit, from the README's error-code table."""
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    table = text[text.index("### Error codes") :]
    codes: dict[str, int] = {}
    for row in re.findall(r"^\| (`[^|]+`) \| (\d) \|", table, re.MULTILINE):
        for name in re.findall(r"`([a-z_]+)`", row[0]):
            codes[name] = int(row[1])
    return codes


def test_every_error_code_reflect_and_the_hooks_can_emit_is_documented() -> None:
    sources = [
        ROOT / "src/playbook/cli/learning.py",
        *sorted((ROOT / "src/playbook").glob("cli/hook*.py")),
    ]
    source = "\n".join(p.read_text(encoding="utf-8") for p in sources)
    reflect_fn = source[source.index("def reflect(") :]
    emitted = set(re.findall(r'CliError\(\s*"([a-z_]+)"', reflect_fn))
    assert {"reflector_failed", "file_not_found", "file_error", "usage"} <= emitted
    documented = readme_error_codes()
    assert emitted <= set(documented), emitted - set(documented)
