"""Reflectors: heuristic markers, the command reflector's process handling, output parsing."""

from __future__ import annotations

import json
import os
import shlex
import sys
import time
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from playbook.reflection.diaries import (
    Diary,
    Passage,
    read_diary,
    read_jsonl_transcript,
    read_text_diary,
)
from playbook.reflection.reflectors import (
    HARMFUL_REASONS,
    CommandReflector,
    HeuristicReflector,
    ProposedItem,
    Reflector,
    ReflectorError,
    build_prompt,
    match_offset,
    parse_deltas,
)

FIXTURES = Path(__file__).parent / "fixtures"
FAKE_MODEL = str(FIXTURES / "fake_model.py")


def fake(mode: str, *args: str) -> list[str]:
    return [sys.executable, FAKE_MODEL, mode, *args]


def propose(diary: Diary, prior: list[dict[str, object]] | None = None) -> list[ProposedItem]:
    reflector: Reflector = HeuristicReflector()
    return reflector.propose(diary, [], prior or [])


# ------------------------------------------------------------------------ heuristic

NOTES = (
    "# Séance — 日本語 notes ✓\n"
    "\n"
    "Fixed the release job.\n"
    "- **RULE:** Pin npm to 11 in release jobs #CI #npm #ci\n"
    "\n"
    "> avoid: running `npm ci` as root\n"
    "1. Rule: Use C# records for DTOs #dotnet\n"
    "\n"
    "RULE:\n"
    "RULE: #onlytags\n"
    "RULES: not a marker\n"
    "The rule: not at the start of a line either\n"
).encode()


def test_rule_and_avoid_markers_with_tags_and_markdown() -> None:
    diary = read_text_diary(NOTES)
    items = propose(diary)
    # Each item points at the line holding its marker, not at its paragraph's first line.
    release = NOTES.index(b"- **RULE:**")
    quote = NOTES.index(b"> avoid:")
    csharp = NOTES.index(b"1. Rule:")
    assert diary.passages[1].offset == NOTES.index(b"Fixed the release job.") < release
    assert diary.passages[2].offset == quote < csharp
    assert items == [
        ProposedItem(
            {
                "type": "add",
                "content": "Pin npm to 11 in release jobs",
                "bullet_type": "rule",
                "tags": ["ci", "npm"],
            },
            release,
        ),
        ProposedItem(
            {
                "type": "add",
                "content": "AVOID: running `npm ci` as root",
                "bullet_type": "anti-pattern",
            },
            quote,
        ),
        ProposedItem(
            {
                "type": "add",
                "content": "Use C# records for DTOs",
                "bullet_type": "rule",
                "tags": ["dotnet"],
            },
            csharp,
        ),
    ]
    # Offsets are bytes: the multibyte heading makes them larger than character positions.
    assert release > NOTES.decode().index("- **RULE:**")


def test_feedback_markers_and_harmful_reason_mapping() -> None:
    text = (
        "Used [playbook: helpful b-7F3A9C2E] — the lockfile hint saved an hour\n"
        "* [Playbook: Harmful b-11111111 caused-bug it pinned the wrong version]\n"
        "[playbook: harmful b-22222222 WASTED_TIME]\n"
        "[playbook: harmful b-33333333 it was just slow]\n"
        "[playbook: harmful b-44444444]\n"
        "> [playbook: deprecate b-55555555 superseded by the npm 11 rule]\n"
        "[playbook: deprecate b-66666666] [playbook: helpful b-77777777 inside] after\n"
    )
    data = ("Préface ✓\n\n" + text).encode()
    diary = read_text_diary(data)
    items = propose(diary)
    assert [p.item for p in items] == [
        {
            "type": "helpful",
            "bullet_id": "b-7f3a9c2e",
            "context": "the lockfile hint saved an hour",
        },
        {
            "type": "harmful",
            "bullet_id": "b-11111111",
            "reason": "caused_bug",
            "context": "it pinned the wrong version",
        },
        {"type": "harmful", "bullet_id": "b-22222222", "reason": "wasted_time"},
        {
            "type": "harmful",
            "bullet_id": "b-33333333",
            "reason": "other",
            "context": "it was just slow",
        },
        {"type": "harmful", "bullet_id": "b-44444444", "reason": "other"},
        {
            "type": "deprecate",
            "bullet_id": "b-55555555",
            "reason": "superseded by the npm 11 rule",
        },
        {"type": "deprecate", "bullet_id": "b-66666666"},
        {"type": "helpful", "bullet_id": "b-77777777", "context": "inside after"},
    ]
    # Each item points at the line holding its marker (two on the last line).
    starts = [data.index(line.encode()) for line in text.splitlines()]
    assert [p.offset for p in items] == [*starts, starts[-1]]


@pytest.mark.parametrize(
    ("line", "expected"),
    [
        # A citation that ends the sentence: the full stop is no context.
        ("It misled me [playbook: harmful b-0a0b0c0d caused_bug].", {"reason": "caused_bug"}),
        ("Kept it [playbook: helpful b-0a0b0c0d]. ", {}),
        ("[playbook: helpful b-0a0b0c0d]!", {}),
        # Text that starts with dashes is the agent's words, kept whole.
        (
            "[playbook: helpful b-0a0b0c0d] --force-with-lease saved the branch",
            {"context": "--force-with-lease saved the branch"},
        ),
        ("[playbook: helpful b-0a0b0c0d] -- the hint was right", {"context": "the hint was right"}),
        ("[playbook: helpful b-0a0b0c0d]: it worked.", {"context": "it worked."}),
    ],
)
def test_punctuation_after_a_citation_is_not_its_context(line: str, expected: dict) -> None:
    (item,) = propose(read_text_diary(f"{line}\n".encode()))
    verb = "harmful" if "harmful" in line else "helpful"
    assert item.item == {"type": verb, "bullet_id": "b-0a0b0c0d", **expected}


@pytest.mark.parametrize("reason", HARMFUL_REASONS)
def test_every_harmful_reason_is_recognised(reason: str) -> None:
    diary = read_text_diary(f"[playbook: harmful b-0a0b0c0d {reason} because]\n".encode())
    (item,) = propose(diary)
    assert item.item == {
        "type": "harmful",
        "bullet_id": "b-0a0b0c0d",
        "reason": reason,
        "context": "because",
    }


def test_marker_scanning_stays_linear_on_hostile_lines() -> None:
    hostile = [
        "[playbook: helpful b-1 " * 20_000,  # unclosed markers
        "RULE: a" + " " * 200_000 + "b",  # a long blank run inside a rule
        "- " * 100_000 + "x",  # endless bullet prefixes
    ]
    began = time.process_time()  # CPU time: a busy machine does not make it fail
    items = propose(read_text_diary("\n\n".join(hostile).encode()))
    assert time.process_time() - began < 2
    assert [p.item for p in items] == [{"type": "add", "content": "a b", "bullet_type": "rule"}]


def test_prior_deltas_are_not_proposed_again() -> None:
    diary = read_text_diary(NOTES + b"\n[playbook: helpful b-12345678]\n")
    first = propose(diary)
    assert len(first) == 4
    assert propose(diary, prior=[p.item for p in first]) == []  # type: ignore[misc]

    # Prior from elsewhere: same add in other case and spacing; a vote on the same bullet.
    prior: list[dict[str, object]] = [
        {"type": "add", "content": "pin npm to 11  in RELEASE jobs", "tags": []},
        {"type": "helpful", "bullet_id": "B-12345678", "context": "different words"},
    ]
    left = [p.item["content"] for p in propose(diary, prior=prior)]  # type: ignore[index]
    assert left == ["AVOID: running `npm ci` as root", "Use C# records for DTOs"]


def test_a_marker_repeated_in_the_diary_is_proposed_once_at_its_first_passage() -> None:
    data = (
        b"RULE: Run the linter before committing\n\nlater:\n\n"
        b"RULE: run the linter  before committing\n"
    )
    items = propose(read_text_diary(data))
    assert len(items) == 1
    assert items[0].offset == 0


def test_tool_output_is_not_read_for_markers() -> None:
    record = {
        "type": "user",
        "message": {
            "role": "user",
            "content": [
                {"type": "tool_result", "content": "RULE: from a file the agent cat-ed"},
                {"type": "tool_result", "content": "[playbook: helpful b-99999999]"},
            ],
        },
    }
    diary = read_jsonl_transcript(json.dumps(record).encode() + b"\n")
    assert diary.passages  # the tool output is in the diary...
    assert propose(diary) == []  # ...but it is not the agent's decision


def test_heuristic_offsets_point_at_the_transcript_lines() -> None:
    path = FIXTURES / "claude_session.jsonl"
    data = path.read_bytes()
    items = propose(read_diary(path))
    u5 = data.rfind(b"\n", 0, data.index(b'"uuid":"u-5"')) + 1
    u7 = data.rfind(b"\n", 0, data.index(b'"uuid":"u-7"')) + 1
    assert [(p.item["type"], p.offset) for p in items] == [  # type: ignore[index]
        ("add", u5),
        ("helpful", u5),
        ("add", u7),
    ]
    assert items[0].item["tags"] == ["ci", "npm"]  # type: ignore[index]
    assert items[1].item["context"] == "the lockfile hint was right"  # type: ignore[index]

    codex = FIXTURES / "codex_rollout.jsonl"
    cdata = codex.read_bytes()
    (rule,) = propose(read_diary(codex))
    assert rule.item == {
        "type": "add",
        "content": "Close the sqlite connection before running migrations",
        "bullet_type": "rule",
        "tags": ["sqlite"],
    }
    assert rule.offset is not None
    assert cdata[rule.offset :].startswith(b'{"timestamp"')
    line = cdata[rule.offset : cdata.index(b"\n", rule.offset)]
    assert b"Close the sqlite connection" in line


# ------------------------------------------------------------------------ parsing


DELTA = {"type": "add", "content": "x"}


@pytest.mark.parametrize(
    ("output", "expected"),
    [
        ('[{"type": "add", "content": "x"}]', [DELTA]),
        ('Sure!\n```json\n[{"type": "add", "content": "x"}]\n```\nAnything else?', [DELTA]),
        (
            'Note [1] and {braces}.\n```\n{"deltas": [{"type": "add", "content": "x"}]}\n```',
            [DELTA],
        ),
        ('Result: {"deltas": []} done', []),
        ("Nothing new: []", []),
        ('See [1, 2] then [{"type": "add", "content": "x"}] ok', [DELTA]),
        (
            '{"type": "add", "content": "x"}\n{"type": "helpful", "bullet_id": "b-1"}\n',
            [DELTA, {"type": "helpful", "bullet_id": "b-1"}],
        ),
        (  # a trailing comma breaks the array; the objects inside are still found
            '[{"type": "add", "content": "x", "tags": ["a"]},\n {"type": "add", "content": "y"},]',
            [{"type": "add", "content": "x", "tags": ["a"]}, {"type": "add", "content": "y"}],
        ),
        (  # claude -p --output-format json
            json.dumps(
                {
                    "type": "result",
                    "result": 'Here:\n```json\n[{"type": "add", "content": "x"}]\n```',
                }
            ),
            [DELTA],
        ),
        ('[{"type": "add", "content": "x"}, "stray", 3]', [DELTA, "stray", 3]),
        ("no json here at all", None),
        ("[1, 2, 3] {not json} [nope]", None),
        ('{"type": "object", "properties": {}}', None),
        ("", None),
        ("[" * 3000, None),
    ],
)
def test_parse_deltas_tolerates_prose_and_fences(output: str, expected: object) -> None:
    assert parse_deltas(output) == expected


def test_parse_deltas_gives_up_quickly_on_large_garbage() -> None:
    garbage = "[1," * 200_000 + "{" * 1000
    began = time.process_time()  # CPU time: a busy machine does not make it fail
    assert parse_deltas(garbage) is None
    assert time.process_time() - began < 5


# ------------------------------------------------------------------------ prompt & offsets


PLAYBOOK = [
    {
        "id": "b-7f3a9c2e",
        "content": "Pin npm to 11\nin release jobs",
        "type": "rule",
        "maturity": "proven",
        "tags": ["ci"],
    },
    {"id": "b-0badc0de", "content": "AVOID: sleep in tests", "type": "anti-pattern"},
]


def test_build_prompt_holds_playbook_prior_and_marked_diary() -> None:
    data = b"Intro\n\nRULE: keep {prior} and {diary} literal\n"
    diary = read_text_diary(data)
    prior = [{"type": "helpful", "bullet_id": "b-7f3a9c2e"}]
    prompt = build_prompt(diary, PLAYBOOK, prior)
    assert "b-7f3a9c2e [rule, proven] Pin npm to 11 in release jobs #ci" in prompt
    assert "b-0badc0de [anti-pattern, candidate] AVOID: sleep in tests" in prompt
    assert '{"type": "helpful", "bullet_id": "b-7f3a9c2e"}' in prompt
    second = data.index(b"RULE:")
    assert f"[@{second}]\nRULE: keep {{prior}} and {{diary}} literal" in prompt
    assert prompt.count("{prior}") == 1 and prompt.count("{diary}") == 1  # only the diary's
    assert "Never include provenance" in prompt
    for kind in ("add", "helpful", "harmful", "replace", "deprecate", "merge"):
        assert f'{{"type": "{kind}"' in prompt
    assert build_prompt(Diary("x", [], 0), [], []).count("(empty)") == 2


def test_match_offset_picks_the_best_passage_and_ignores_claimed_offsets() -> None:
    diary = Diary(
        ref="d",
        passages=[
            Passage(0, "We talked about npm and other things", "user"),
            Passage(100, "Pin npm to version 11 in every release job", "assistant"),
            Passage(200, "Pin npm to version 11 in every release job", "assistant"),
            Passage(300, "Marked [playbook: helpful b-7f3a9c2e]", "assistant"),
        ],
        end=400,
    )
    item = {"type": "add", "content": "Pin npm to 11 in release jobs", "byte_offset": 300}
    assert match_offset(item, diary) == 100  # best overlap; the tie goes to the earlier one
    assert match_offset({"type": "helpful", "bullet_id": "b-7f3a9c2e", "offset": 0}, diary) == 300
    assert match_offset({"type": "add", "content": "zebra marmalade"}, diary) is None
    assert match_offset({"type": "add"}, diary) is None
    assert match_offset("not an object", diary) is None
    assert match_offset(item, Diary("d", [], 0)) is None


def test_match_offset_points_at_the_line_within_a_paragraph() -> None:
    data = (
        "We spent the morning on the release ✓\n"
        "npm ci kept failing on the runner\n"
        "Pinning npm to version 11 in the release job fixed it\n"
        "\n"
        "Lunch.\n"
    ).encode()
    diary = read_text_diary(data)
    item = {"type": "add", "content": "Pin npm to 11 in release jobs"}
    assert match_offset(item, diary) == data.index(b"Pinning npm")
    # Words only the paragraph as a whole shares: its first line.
    loose = {"type": "add", "content": "morning runner"}
    assert match_offset(loose, diary) == data.index(b"We spent")


# ------------------------------------------------------------------------ command


def echo_diary() -> tuple[bytes, Diary]:
    data = (
        "Old paragraph before the watermark ✓\n\n"
        "Always run migrations inside a transaction\n\n"
        "We stopped at the zebra crossing on the way\n"
    ).encode()
    return data, read_text_diary(data, start=data.index(b"Always"))


def test_command_reflector_reads_json_around_prose_and_sets_offsets_itself() -> None:
    data, diary = echo_diary()
    reflector = CommandReflector(fake("echo"), timeout=30)
    items = reflector.propose(diary, PLAYBOOK, [])
    assert [p.item for p in items] == [
        {
            "type": "add",
            "content": "Always run migrations inside a transaction",  # echoed from stdin
            "tags": ["echo"],
            "offset": 0,  # the model's claim stays in the raw item for validation to judge
        },
        {"type": "helpful", "bullet_id": "b-0000aaaa", "context": "zebra crossing"},
        {"type": "add", "content": "Quantum marmalade has nothing to do with it"},
    ]
    assert [p.offset for p in items] == [
        data.index(b"Always"),  # not the 0 the output claimed
        data.index(b"We stopped"),
        None,
    ]


def test_command_reflector_accepts_a_deltas_object_and_a_string_command() -> None:
    _, diary = echo_diary()
    command = shlex.join(fake("object"))
    items = CommandReflector(command, timeout=30).propose(diary, [], [])
    assert [p.item["type"] for p in items] == ["add", "helpful", "add"]  # type: ignore[index]


def _alive(pid: int) -> bool:
    try:
        status = Path(f"/proc/{pid}/status").read_text()
    except OSError:
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            return False
        return True
    return "\nState:\tZ" not in status  # a zombie is dead, only not yet reaped


@pytest.mark.skipif(os.name != "posix", reason="process groups are POSIX")
def test_a_hanging_program_is_killed_after_the_timeout(tmp_path: Path) -> None:
    pid_file = tmp_path / "grandchild.pid"
    reflector = CommandReflector(fake("sleep", str(pid_file)), timeout=1.5)
    began = time.monotonic()
    with pytest.raises(ReflectorError, match=r"timed out after 1\.5s"):
        reflector.propose(echo_diary()[1], [], [])
    assert time.monotonic() - began < 6
    # The program's own child went down with it, not left holding the pipes.
    pid = int(pid_file.read_text())
    deadline = time.monotonic() + 3
    while _alive(pid) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not _alive(pid)


def test_garbage_output_is_a_clear_error() -> None:
    with pytest.raises(ReflectorError, match="printed no JSON deltas") as err:
        CommandReflector(fake("garbage"), timeout=30).propose(echo_diary()[1], [], [])
    assert "\n" not in str(err.value)
    assert "I'm sorry" in str(err.value)


def test_non_zero_exit_reports_status_and_stderr_tail() -> None:
    with pytest.raises(ReflectorError) as err:
        CommandReflector(fake("fail"), timeout=30).propose(echo_diary()[1], [], [])
    message = str(err.value)
    assert "exited with status 3" in message
    assert "model quota exceeded" in message
    assert "\n" not in message


def test_output_over_the_cap_stops_the_program() -> None:
    began = time.monotonic()
    with pytest.raises(ReflectorError, match="more than 100000 bytes"):
        CommandReflector(fake("flood"), timeout=30, max_output=100_000).propose(
            echo_diary()[1], [], []
        )
    assert time.monotonic() - began < 10


def test_a_missing_program_is_a_clear_error(tmp_path: Path) -> None:
    missing = tmp_path / "no-such-model-cli"
    with pytest.raises(ReflectorError, match=r"not found: .*no-such-model-cli"):
        CommandReflector([str(missing), "-p"]).propose(echo_diary()[1], [], [])


def test_bad_arguments_are_refused() -> None:
    with pytest.raises(ValueError):
        CommandReflector("   ")
    with pytest.raises(ValueError):
        CommandReflector(["x"], timeout=0)
    with pytest.raises(ValueError):
        CommandReflector(["x"], max_output=0)


def test_shell_metacharacters_are_never_executed(tmp_path: Path) -> None:
    hits = [tmp_path / name for name in ("dollar", "semicolon", "backtick", "arg1", "arg2")]
    text = f"$(touch {hits[0]}) ; touch {hits[1]} `touch {hits[2]}` && rm -rf {tmp_path}/nothing\n"
    diary = read_text_diary(text.encode())
    items = CommandReflector(shlex.join(fake("echo")), timeout=30).propose(diary, [], [])
    assert items[0].item["content"] == text.strip()  # type: ignore[index]

    # Metacharacters in the command string itself are literal arguments, not shell syntax.
    command = shlex.join(fake("argv")) + f" $(touch {hits[3]}) ; touch {hits[4]}"
    items = CommandReflector(command, timeout=30).propose(diary, [], [])
    assert items[0].item["content"] == f"$(touch {hits[3]}) ; touch {hits[4]}"  # type: ignore[index]
    assert [h for h in hits if h.exists()] == []


@settings(max_examples=200, deadline=None)
@given(text=st.text(max_size=400))
def test_heuristic_and_parser_never_raise_on_arbitrary_text(text: str) -> None:
    diary = read_text_diary(text.encode("utf-8", "surrogatepass"))
    for item in propose(diary):
        assert isinstance(item.item, dict)
        assert item.offset in {p.offset for p in diary.passages}
    parse_deltas(text)
    for marker in ("RULE: ", "[playbook: harmful b-1 ", "```json\n[", '{"deltas": '):
        parse_deltas(marker + text)
        propose(read_text_diary((marker + text).encode("utf-8", "surrogatepass")))
