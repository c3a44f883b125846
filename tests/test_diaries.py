"""Diaries: passages with byte offsets, watermarks, and the two transcript formats."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

from hypothesis import given, settings
from hypothesis import strategies as st

from playbook.reflection.diaries import (
    TOOL_SUMMARY_MAX,
    Diary,
    Passage,
    detect_format,
    read_diary,
    read_jsonl_transcript,
    read_text_diary,
)

FIXTURES = Path(__file__).parent / "fixtures"


def line_at(data: bytes, offset: int) -> bytes:
    """The whole line that starts at ``offset``; fails if offset is not a line start."""
    assert offset == 0 or data[offset - 1 : offset] == b"\n", f"{offset} is not a line start"
    nl = data.find(b"\n", offset)
    return data[offset : len(data) if nl == -1 else nl]


def line_start_of(data: bytes, needle: bytes) -> int:
    """Offset of the start of the (unique) line containing ``needle``."""
    assert data.count(needle) == 1, needle
    return data.rfind(b"\n", 0, data.index(needle)) + 1


def json_fragment(text: str) -> bytes:
    """How ``text`` appears inside a JSON string written with ensure_ascii=False."""
    return json.dumps(text, ensure_ascii=False)[1:-1].encode()


# ------------------------------------------------------------------------------- text


TEXT = (
    "Ünïcödé préambule — ✓ 日本語\n"
    "still the first paragraph\n"
    "\n"
    "  Second paragraph, indented 段落\n"
    "RULE: keep offsets in bytes\n"
    "   \n"
    "\n"
    "Third.\n"
).encode()


def test_text_paragraphs_have_byte_offsets_after_multibyte_characters() -> None:
    diary = read_text_diary(TEXT, ref="notes.md")
    texts = [p.text for p in diary.passages]
    assert texts == [
        "Ünïcödé préambule — ✓ 日本語\nstill the first paragraph",
        "  Second paragraph, indented 段落\nRULE: keep offsets in bytes",
        "Third.",
    ]
    for p in diary.passages:
        assert p.role is None
        assert TEXT[p.offset :].startswith(p.text.encode())
    second = diary.passages[1]
    assert second.offset == TEXT.index(b"  Second paragraph")
    # The text before it has multibyte characters: a character count would be smaller.
    assert second.offset > len(TEXT.decode()[: TEXT.decode().index("  Second")])
    assert diary.end == len(TEXT)
    assert diary.skipped == 0
    assert diary.ref == "notes.md"


def test_text_start_watermark_skips_earlier_content() -> None:
    second = TEXT.index(b"  Second")
    diary = read_text_diary(TEXT, start=second)
    assert [p.offset for p in diary.passages] == [second, TEXT.index(b"Third.")]
    assert "préambule" not in diary.render()

    nothing_new = read_text_diary(TEXT, start=len(TEXT))
    assert nothing_new.passages == []
    assert nothing_new.end == len(TEXT)


def test_text_appended_later_is_read_from_the_watermark() -> None:
    first = read_text_diary(TEXT)
    grown = TEXT + b"\nAVOID: re-reading old text\n"
    again = read_text_diary(grown, start=first.end)
    assert [p.text for p in again.passages] == ["AVOID: re-reading old text"]
    assert grown[again.passages[0].offset :].startswith(b"AVOID:")


def test_text_start_past_the_end_keeps_the_watermark() -> None:
    diary = read_text_diary(b"short\n", start=100)
    assert diary.passages == []
    assert diary.end == 100


def test_text_invalid_utf8_is_replaced_not_raised() -> None:
    data = b"caf\xe9 \xff\xfe broken\n\nfine text\n"
    diary = read_text_diary(data)
    assert len(diary.passages) == 2
    assert "\ufffd" in diary.passages[0].text
    assert diary.passages[1].offset == data.index(b"fine text")


def test_text_bom_is_not_part_of_the_first_passage() -> None:
    data = b"\xef\xbb\xbfHello\n"
    diary = read_text_diary(data)
    assert diary.passages == [Passage(offset=3, text="Hello", role=None)]


# ------------------------------------------------------------------------------ JSONL


def _msg(role: str, text: str) -> bytes:
    record = {"type": role, "message": {"role": role, "content": text}}
    return json.dumps(record, ensure_ascii=False).encode()


def test_partial_trailing_jsonl_line_is_not_consumed() -> None:
    complete = _msg("user", "first ✓") + b"\n"
    partial = _msg("assistant", "still being written")[:-7]
    diary = read_jsonl_transcript(complete + partial)
    assert [p.text for p in diary.passages] == ["first ✓"]
    assert diary.end == len(complete)
    assert diary.skipped == 0

    # The writer finishes the line: the next read, from the watermark, gets it whole.
    finished = complete + _msg("assistant", "still being written") + b"\n"
    later = read_jsonl_transcript(finished, start=diary.end)
    assert [(p.offset, p.role, p.text) for p in later.passages] == [
        (len(complete), "assistant", "still being written")
    ]
    assert later.end == len(finished)


def test_jsonl_watermark_inside_a_line_skips_to_the_next_line() -> None:
    a = _msg("user", "alpha") + b"\n"
    b = _msg("assistant", "beta") + b"\n"
    diary = read_jsonl_transcript(a + b, start=5)
    assert [p.text for p in diary.passages] == ["beta"]
    assert diary.passages[0].offset == len(a)


def test_malformed_and_unrecognised_lines_are_skipped_and_counted() -> None:
    lines = [
        _msg("user", "kept one"),
        b"this is not json",
        b'{"type": "user", "message": ',  # truncated object
        b"[1, 2, 3]",  # JSON, but not an object
        b'"just a string"',
        b'{"no_type": true}',  # an object of no known shape
        b"\xff\xfe\x00garbage",
        b"",  # blank lines are neither passages nor skips
        b'{"type": "session_meta", "payload": {"id": "x"}}',  # known, no text: not a skip
        b"[" * 5000 + b"]" * 5000,  # nested too deep for json: must not raise
        _msg("assistant", "kept two"),
    ]
    data = b"\n".join(lines) + b"\n"
    diary = read_jsonl_transcript(data)
    assert [p.text for p in diary.passages] == ["kept one", "kept two"]
    assert diary.skipped == 7
    assert diary.end == len(data)
    assert diary.passages[1].offset == line_start_of(data, b"kept two")


def test_claude_code_session_fixture() -> None:
    path = FIXTURES / "claude_session.jsonl"
    data = path.read_bytes()
    diary = read_diary(path)
    assert diary.skipped == 0
    assert diary.end == len(data)
    assert diary.ref == str(path)

    expected = {
        b'"uuid":"u-1"': ("user", "The release job fails on npm ci"),
        b'"uuid":"u-2"': ("assistant", "Let me check the npm version"),
        b'"uuid":"u-3"': ("user", "[tool result] 10.2.4 name: release"),
        b'"uuid":"u-5"': ("assistant", "The lockfile needs npm 11."),
        b'"uuid":"u-6"': ("user", "[tool error] permission denied"),
        b'"uuid":"u-7"': ("assistant", "AVOID: running npm ci as root in CI"),
    }
    assert len(diary.passages) == len(expected)
    for passage, (needle, (role, head)) in zip(diary.passages, expected.items(), strict=True):
        assert passage.offset == line_start_of(data, needle)
        assert passage.role == role
        assert passage.text.startswith(head)
        line = line_at(data, passage.offset)
        assert needle in line
        assert json_fragment(head) in line or head.startswith("[tool")

    rendered = diary.render()
    assert "SECRET-THOUGHT" not in rendered  # thinking is dropped
    assert "<command-message>" not in rendered  # isMeta records are dropped
    assert "Release job fixes" not in rendered  # summary records are not conversation
    tool_call = diary.passages[1].text.splitlines()[-1]
    assert tool_call == "[tool: Bash] npm --version && cat .github/workflows/release.yml"
    tool_result = diary.passages[2].text
    assert "\n" not in tool_result
    assert len(tool_result) <= len("[tool result] ") + TOOL_SUMMARY_MAX
    assert tool_result.endswith("…")
    assert f"[@{diary.passages[3].offset} assistant]\nThe lockfile needs npm 11." in rendered


def test_codex_rollout_fixture() -> None:
    path = FIXTURES / "codex_rollout.jsonl"
    data = path.read_bytes()
    diary = read_diary(path)
    assert diary.skipped == 0
    assert diary.end == len(data)
    rendered = diary.render()
    assert "<environment_context>" not in rendered  # injected, nobody typed it
    assert "developer instructions" not in rendered
    assert "SECRET-THOUGHT" not in rendered  # reasoning is dropped
    # event_msg repeats the response items; the question must appear exactly once.
    assert rendered.count("Why does the migration test hang?") == 1

    texts = [p.text for p in diary.passages]
    assert texts == [
        "Why does the migration test hang? — naïve question",
        "[tool: shell] bash -lc pytest tests/test_migrate.py -x",
        "[tool result] 1 passed in 0.2s",
        "The test held a write lock.\n"
        "- RULE: Close the sqlite connection before running migrations #sqlite",
    ]
    assert [p.role for p in diary.passages] == ["user", "assistant", "user", "assistant"]
    for passage, needle in zip(
        diary.passages,
        [
            b'"input_text","text":"' + json_fragment("Why does the migration test hang?"),
            b'"type":"function_call"',
            b'"type":"function_call_output"',
            b'"output_text","text":"The test held a write lock.',
        ],
        strict=True,
    ):
        assert passage.offset == line_start_of(data, needle)
        assert b'"type":"response_item"' in line_at(data, passage.offset)


def test_codex_legacy_flat_rollout_fixture() -> None:
    path = FIXTURES / "codex_legacy_rollout.jsonl"
    data = path.read_bytes()
    diary = read_diary(path)
    assert diary.skipped == 0  # header and {"record_type":"state"} are known records
    assert [p.text for p in diary.passages] == [
        "Fix the flaky retry test",
        "[tool: shell] bash -lc pytest -k retry",
        "[tool result] 1 failed",
        "AVOID: sleeping in retry tests; inject a clock instead #tests",
    ]
    last = diary.passages[-1]
    assert last.offset == line_start_of(data, b"AVOID: sleeping")
    assert line_at(data, last.offset).startswith(b'{"type":"message"')


def test_format_is_detected_by_content_not_extension(tmp_path: Path) -> None:
    disguised = tmp_path / "session.txt"
    shutil.copy(FIXTURES / "codex_rollout.jsonl", disguised)
    assert read_diary(disguised).passages[0].role == "user"

    notes = tmp_path / "notes.jsonl"
    notes.write_text("# Notes\n\nRULE: a markdown file, whatever its name\n", encoding="utf-8")
    diary = read_diary(notes)
    assert [p.role for p in diary.passages] == [None, None]
    assert diary.skipped == 0

    empty = tmp_path / "empty.jsonl"
    empty.write_bytes(b"")
    assert detect_format(b"") is None
    assert read_diary(empty) == Diary(ref=str(empty), passages=[], end=0)
    assert detect_format(b'\n\n{"type": "user"}\n') == "jsonl"
    assert detect_format(b"{ not json at all\n") == "text"


def test_read_diary_honours_the_watermark_for_jsonl(tmp_path: Path) -> None:
    path = tmp_path / "s.jsonl"
    path.write_bytes(_msg("user", "one") + b"\n" + _msg("assistant", "two") + b"\n")
    first = read_diary(path)
    with path.open("ab") as f:
        f.write(_msg("user", "three") + b"\n")
    second = read_diary(path, start=first.end)
    assert [p.text for p in second.passages] == ["three"]
    assert second.passages[0].offset == first.end


def test_read_diary_from_a_watermark_matches_reading_the_bytes(tmp_path: Path) -> None:
    text_file = tmp_path / "notes.md"
    text_file.write_bytes(TEXT)
    cases = [
        (FIXTURES / "claude_session.jsonl", read_jsonl_transcript),
        (FIXTURES / "codex_rollout.jsonl", read_jsonl_transcript),
        (text_file, read_text_diary),
    ]
    for path, reader in cases:
        data = path.read_bytes()
        first_line_end = data.index(b"\n") + 1
        for start in (0, 1, first_line_end - 1, first_line_end, len(data) // 2, len(data), 10**7):
            from_file = read_diary(path, start=start)
            assert from_file == reader(data, start=start, ref=str(path)), (path.name, start)
            assert all(p.offset >= start for p in from_file.passages)


def test_a_transcript_whose_first_record_is_huge_is_still_jsonl(tmp_path: Path) -> None:
    path = tmp_path / "session.log"  # an extension that says nothing
    big = _msg("user", "x" * (2 << 20)) + b"\n"
    path.write_bytes(big + _msg("assistant", "after the big one") + b"\n")
    diary = read_diary(path)
    assert [p.role for p in diary.passages] == ["user", "assistant"]
    assert diary.passages[1].offset == len(big)


def test_passage_at_finds_the_covering_passage() -> None:
    diary = read_text_diary(TEXT)
    first, second, third = diary.passages
    assert diary.passage_at(first.offset) == first
    assert diary.passage_at(second.offset + 3) == second
    assert diary.passage_at(second.offset - 1) == first
    assert diary.passage_at(third.offset) == third
    assert diary.passage_at(diary.end) is None
    later = read_text_diary(TEXT, start=second.offset)
    assert later.passage_at(0) is None


def test_render_marks_each_passage_with_its_offset_and_role() -> None:
    diary = Diary(
        ref="x",
        passages=[Passage(0, "hello", "user"), Passage(40, "plain", None)],
        end=50,
    )
    assert diary.render() == "[@0 user]\nhello\n\n[@40]\nplain"


@settings(max_examples=200, deadline=None)
@given(data=st.binary(max_size=2000), start=st.integers(min_value=-5, max_value=2100))
def test_garbage_never_raises_and_offsets_stay_in_range(data: bytes, start: int) -> None:
    for reader in (read_text_diary, read_jsonl_transcript):
        diary = reader(data, start=start)
        offsets = [p.offset for p in diary.passages]
        assert offsets == sorted(offsets)
        assert all(max(start, 0) <= o < max(len(data), 1) for o in offsets)
        assert diary.end >= start
        diary.render()
