"""The reflection loop: iterations, caps, validation, provenance, watermark, idempotence."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import pytest

from playbook.reflection.diaries import Diary, read_diary, read_text_diary
from playbook.reflection.reflectors import (
    CommandReflector,
    HeuristicReflector,
    ProposedItem,
    ReflectorError,
)
from playbook.reflection.session import ReflectionResult, reflect_session
from playbook.review.queue import count_pending, get, pending, stage
from playbook.store import PlaybookStore

from .helpers import dump

FIXTURES = Path(__file__).parent / "fixtures"
FAKE_MODEL = str(FIXTURES / "fake_model.py")

NOTES = (
    b"# Release day\n"
    b"\n"
    b"The release job failed on npm ci.\n"
    b"\n"
    b"Pinned npm to 11 and it passed.\n"
    b"\n"
    b"The migration test hung on a write lock.\n"
)
P0, P1, P2, P3 = (
    0,
    NOTES.index(b"The release"),
    NOTES.index(b"Pinned"),
    NOTES.index(b"The migration"),
)


def add(content: str, **extra: Any) -> dict[str, Any]:
    return {"type": "add", "content": content, **extra}


class Scripted:
    """A fake reflector: call n returns rounds[n-1] (then nothing); records what it saw.

    Each scripted entry is (item, offset) or a bare item (offset None); `fail_at` makes that
    call raise `error` instead.
    """

    def __init__(
        self,
        *rounds: list[Any],
        fail_at: int | None = None,
        error: Exception | None = None,
    ) -> None:
        self.rounds = rounds
        self.fail_at = fail_at
        self.error = error or ReflectorError("the model fell over")
        self.calls: list[tuple[Diary, list[dict[str, Any]], list[dict[str, Any]]]] = []

    def propose(
        self, diary: Diary, playbook: list[dict[str, Any]], prior: list[dict[str, Any]]
    ) -> list[ProposedItem]:
        self.calls.append((diary, [dict(b) for b in playbook], [dict(d) for d in prior]))
        n = len(self.calls)
        if n == self.fail_at:
            raise self.error
        batch = self.rounds[n - 1] if n <= len(self.rounds) else []
        return [
            ProposedItem(*entry) if isinstance(entry, tuple) else ProposedItem(entry, None)
            for entry in batch
        ]


@pytest.fixture
def notes(tmp_path: Path) -> Path:
    path = tmp_path / "notes.md"
    path.write_bytes(NOTES)
    return path


def reflect(store: PlaybookStore, reflector: Any, diary: Any, **kw: Any) -> ReflectionResult:
    return reflect_session(store, "session:abc", diary, reflector, **kw)


# ------------------------------------------------------------------------ the loop


def test_iteration_cap_stops_after_three_calls(store: PlaybookStore, notes: Path) -> None:
    rounds = [[(add(f"Rule number {n} of round {r}"), P1) for n in range(2)] for r in range(5)]
    reflector = Scripted(*rounds)
    result = reflect(store, reflector, notes)
    assert len(reflector.calls) == 3
    assert result.iterations == 3
    assert result.stopped == "max-iterations"
    assert len(result.proposed) == 6
    assert [p.iteration for p in result.proposed] == [1, 1, 2, 2, 3, 3]
    assert count_pending(store) == 6


def test_fifty_delta_cap_stops_the_loop_and_counts_the_excess(
    store: PlaybookStore, notes: Path
) -> None:
    rounds = [
        [add(f"Distinct rule {r}-{n} about topic{r}x{n}") for n in range(30)] for r in range(3)
    ]
    reflector = Scripted(*rounds)
    result = reflect(store, reflector, notes)
    assert len(reflector.calls) == 2
    assert result.stopped == "max-deltas"
    assert len(result.proposed) == 50
    assert result.truncated == 10
    assert count_pending(store) == 50
    # the first 50 in order: all of round 1, the first 20 of round 2
    assert result.deltas[-1]["content"] == "Distinct rule 1-19 about topic1x19"


def test_early_stop_when_an_iteration_proposes_nothing_new(
    store: PlaybookStore, notes: Path
) -> None:
    first = [(add("Pin npm to 11 in release jobs", tags=["ci"]), P2)]
    # the same delta again, reworded only in case and spacing: not new
    second = [(add("pin  NPM to 11 in release jobs", tags=["ci"]), P2)]
    reflector = Scripted(first, second, [(add("never reached"), P1)])
    result = reflect(store, reflector, notes)
    assert len(reflector.calls) == 2
    assert result.stopped == "nothing-new"
    assert result.deltas == [
        {"type": "add", "content": "Pin npm to 11 in release jobs", "tags": ["ci"]}
    ]


def test_growing_playbook_and_prior_deltas_are_fed_back(store: PlaybookStore, notes: Path) -> None:
    kept = store.insert_bullet("Run the linter before pushing", tags=["git"])
    gone = store.insert_bullet("Retired advice")
    store.retire(gone.id)
    r1 = [
        (add("Pin npm to 11 in release jobs"), P2),
        ({"type": "helpful", "bullet_id": kept.id}, P1),
    ]
    reflector = Scripted(r1, [(add("AVOID: holding a write lock in tests"), P3)])
    reflect(store, reflector, notes)
    (_, book1, prior1), (_, book2, prior2), (_, book3, _) = reflector.calls
    existing = {
        "id": kept.id,
        "content": "Run the linter before pushing",
        "type": "rule",
        "maturity": "candidate",
        "tags": ["git"],
    }
    assert book1 == [existing]
    assert prior1 == []
    assert book2 == [
        existing,
        {
            "id": "proposed-1",
            "content": "Pin npm to 11 in release jobs",
            "type": "rule",
            "maturity": "candidate",
            "tags": [],
        },
    ]
    assert prior2 == [
        {"type": "add", "content": "Pin npm to 11 in release jobs", "tags": []},
        {"type": "helpful", "bullet_id": kept.id},
    ]
    assert book3[-1] == {
        "id": "proposed-2",
        "content": "AVOID: holding a write lock in tests",
        "type": "anti-pattern",  # as curation will type it
        "maturity": "candidate",
        "tags": [],
    }


def test_a_large_playbook_is_cut_to_the_bullets_nearest_the_diary(
    store: PlaybookStore, notes: Path
) -> None:
    far = [store.insert_bullet(f"Unrelated advice about gardening {i}") for i in range(3)]
    near = store.insert_bullet("Pin the npm version in the release job")
    reflector = Scripted([])
    reflect_session(store, "s", notes, reflector, playbook_limit=2)
    book = reflector.calls[0][1]
    assert [b["id"] for b in book] == [far[0].id, near.id]  # nearest kept, then oldest


# ------------------------------------------------------------------------ validation


def test_invalid_items_are_rejected_with_reasons_never_raised(
    store: PlaybookStore, notes: Path
) -> None:
    items = [
        ("not a delta", P1),
        ({"type": "teleport", "content": "x"}, P1),
        ({"type": "add"}, P1),
        ({"type": "add", "content": "   "}, P1),
        ({"type": "add", "content": "Fine", "mood": "happy"}, P1),
        ({"type": "helpful", "bullet_id": "b-00000000"}, P1),
        ({"type": "add", "content": "x" * 9000}, P1),
        (add("A valid rule about lockfiles"), P2),
    ]
    result = reflect(store, Scripted(items), notes)
    assert result.ok
    reasons = [r.reason for r in result.rejected]
    assert len(reasons) == 7
    assert reasons[0] == "a delta must be an object, not str"
    assert reasons[1].startswith("type: unknown delta type")
    assert reasons[2] == "content: Field required"
    assert reasons[3] == "content: must not be blank"  # no pydantic wording
    assert reasons[4] == "mood: unknown field"
    assert reasons[5] == "no bullet with id 'b-00000000'"
    assert "maximum is 8,000" in reasons[6]
    assert all(r.iteration == 1 and r.byte_offset == P1 for r in result.rejected)
    assert [p["id"] for p in (x.to_dict() for x in pending(store))] == result.staged
    assert [p.delta for p in pending(store)] == [
        {"type": "add", "content": "A valid rule about lockfiles", "tags": []}
    ]


def test_a_rejected_item_repeated_in_later_iterations_is_reported_once(
    store: PlaybookStore, notes: Path
) -> None:
    bad = {"type": "helpful", "bullet_id": "b-00000000"}
    result = reflect(store, Scripted([bad, add("One")], [bad, add("Two")], [bad]), notes)
    assert len(result.rejected) == 1
    assert result.iterations == 3


def test_provenance_is_the_sessions_never_the_models(store: PlaybookStore, notes: Path) -> None:
    items = [
        (add("Claims a source", session_ref="session:forged"), P1),
        (add("Claims an offset", byte_offset=7), P1),
        (add("Claims both", provenance={"session_ref": "x", "byte_offset": 1}), P1),
        (add("Pin npm to 11 in release jobs"), P2),
        (add("Points nowhere"), 999_999),  # not a passage of this diary
        (add("Points inside a passage"), P2 + 3),  # not where a passage starts
        add("Has no offset"),
    ]
    result = reflect(store, Scripted(items), notes)
    assert [r.reason.split(" (")[0] for r in result.rejected] == [
        "a delta cannot carry provenance",
        "a delta cannot carry provenance",
        "a delta cannot carry provenance",
    ]
    stored = {p.delta["content"]: p.provenance for p in pending(store)}
    assert set(stored) == {
        "Pin npm to 11 in release jobs",
        "Points nowhere",
        "Points inside a passage",
        "Has no offset",
    }
    assert stored["Pin npm to 11 in release jobs"].model_dump() == {
        "session_ref": "session:abc",
        "byte_offset": P2,
    }
    for content in ("Points nowhere", "Points inside a passage", "Has no offset"):
        assert stored[content].model_dump() == {"session_ref": "session:abc", "byte_offset": None}
    assert NOTES[P2:].startswith(b"Pinned npm to 11")


# ------------------------------------------------------------------------ failure & watermark


@pytest.mark.parametrize(
    "error", [ReflectorError("model quota exceeded"), RuntimeError("bug in a plugin")]
)
def test_a_reflector_failing_mid_way_changes_nothing(
    store: PlaybookStore, notes: Path, error: Exception
) -> None:
    store.insert_bullet("Existing rule")
    before = dump(store)
    reflector = Scripted([(add("Would be staged"), P1)], fail_at=2, error=error)
    result = reflect(store, reflector, notes)
    assert not result.ok
    assert result.errors == [f"iteration 2: {error}"]
    assert result.stopped == "error"
    assert result.staged == [] and result.curated == []
    assert result.watermark_before == result.watermark_after == 0
    assert store.watermark("session:abc") == 0
    assert dump(store) == before
    # the next run reads the same text again and succeeds
    retry = reflect(store, Scripted([(add("Would be staged"), P1)]), notes)
    assert retry.ok and len(retry.staged) == 1
    assert store.watermark("session:abc") == len(NOTES)


def test_watermark_advances_with_the_results_in_one_transaction(
    store: PlaybookStore, notes: Path
) -> None:
    result = reflect(store, Scripted([(add("Pin npm to 11"), P2)]), notes)
    assert (result.watermark_before, result.watermark_after) == (0, len(NOTES))
    assert store.watermark("session:abc") == len(NOTES)
    assert store.watermark("another session") == 0


def test_a_watermark_moved_by_another_run_stores_nothing(store: PlaybookStore, notes: Path) -> None:
    class Racing(Scripted):
        def propose(self, diary: Diary, playbook: Any, prior: Any) -> list[ProposedItem]:
            with store.transaction():  # another reflection of this session finishing
                store.set_watermark("session:abc", 10)
            return super().propose(diary, playbook, prior)

    result = reflect(store, Racing([(add("Pin npm to 11"), P2)]), notes)
    assert not result.ok
    assert "moved while reflecting" in result.errors[0]
    assert count_pending(store) == 0
    assert store.watermark("session:abc") == 10


def test_rerun_on_the_same_diary_proposes_nothing_twice(store: PlaybookStore, notes: Path) -> None:
    first = reflect(store, HeuristicReflector(), _with_markers(notes))
    assert len(first.staged) == 2
    reflector = Scripted([(add("anything"), P1)])
    again = reflect(store, reflector, notes)
    assert reflector.calls == []  # nothing past the watermark: the model is not called
    assert again.stopped == "nothing-to-read" and again.iterations == 0
    assert again.staged == [] and count_pending(store) == 2
    # appended text is read from the watermark on, and only it
    with notes.open("ab") as fh:
        fh.write(b"\nRULE: Close the sqlite connection before migrating\n")
    seen = Scripted([])
    reflect(store, seen, notes)
    diary = seen.calls[0][0]
    assert [p.text for p in diary.passages] == [
        "RULE: Close the sqlite connection before migrating"
    ]
    third = reflect(store, HeuristicReflector(), notes)
    assert third.stopped == "nothing-to-read"  # the Scripted run above consumed it


def _with_markers(path: Path) -> Path:
    path.write_bytes(NOTES + b"\nRULE: Pin npm to 11 in release jobs #ci\n\nAVOID: sudo npm ci\n")
    return path


def test_a_diary_already_read_is_cut_at_the_watermark(store: PlaybookStore) -> None:
    diary = read_text_diary(NOTES, ref="mem")
    first = Scripted([(add("From the first paragraph"), P1)])
    reflect(store, first, diary)
    assert store.watermark("session:abc") == len(NOTES)
    second = Scripted([(add("From the first paragraph"), P1)])
    result = reflect(store, second, diary)  # the same object again
    assert second.calls == [] and result.staged == []


def test_the_queue_does_not_stage_a_delta_already_pending(
    store: PlaybookStore, notes: Path
) -> None:
    stage(store, [add("Pin npm to 11")], provenance={"session_ref": "other"})
    result = reflect(store, Scripted([(add("Pin npm to 11"), P2), (add("New"), P2)]), notes)
    assert [p.delta["content"] for p in result.duplicates] == ["Pin npm to 11"]
    assert [get(store, i).delta["content"] for i in result.staged] == ["New"]  # type: ignore[union-attr]


def test_a_missing_diary_file_raises_oserror(store: PlaybookStore, tmp_path: Path) -> None:
    with pytest.raises(FileNotFoundError):
        reflect(store, Scripted([]), tmp_path / "nope.md")
    assert store.watermark("session:abc") == 0


# ------------------------------------------------------------------------ apply


def test_apply_curates_each_item_with_its_own_offset(store: PlaybookStore, notes: Path) -> None:
    items = [(add("Pin npm to 11 in release jobs"), P2), (add("Close connections in tests"), P3)]
    result = reflect(store, Scripted(items), notes, apply=True)
    assert result.ok and result.staged == [] and count_pending(store) == 0
    assert [c.outcomes[0].status for c in result.curated] == ["added", "added"]
    by_content = {b.content: b for b in store.bullets()}
    assert by_content["Pin npm to 11 in release jobs"].provenance.model_dump() == {
        "session_ref": "session:abc",
        "byte_offset": P2,
    }
    assert by_content["Close connections in tests"].provenance.byte_offset == P3
    assert store.watermark("session:abc") == len(NOTES)
    data = json.loads(json.dumps(result.to_dict()))
    assert data["applied"] is True and len(data["curated"]) == 2


# ------------------------------------------------------------------------ real reflectors


def test_command_reflector_end_to_end(store: PlaybookStore, notes: Path) -> None:
    store.insert_bullet("Helpful rule", bullet_id="b-0000aaaa")
    reflector = CommandReflector([sys.executable, FAKE_MODEL, "echo"], timeout=30)
    result = reflect(store, reflector, notes)
    assert result.ok, result.errors
    # fake_model echoes the diary's first line with an "offset" claim: an unknown field
    assert [r.reason for r in result.rejected] == ["offset: unknown field"]
    assert result.stopped == "nothing-new" and result.iterations == 2
    staged = {p.delta["type"]: p for p in pending(store)}
    assert staged["helpful"].delta == {
        "type": "helpful",
        "bullet_id": "b-0000aaaa",
        "context": "zebra crossing",
    }
    assert staged["add"].delta["content"] == "Quantum marmalade has nothing to do with it"
    for p in staged.values():
        assert p.provenance.session_ref == "session:abc"
        assert p.provenance.byte_offset is None  # no passage shares a word with them
    assert store.watermark("session:abc") == len(NOTES)


@pytest.mark.parametrize(
    ("mode", "message"), [("garbage", "printed no JSON deltas"), ("fail", "exited with status 3")]
)
def test_command_reflector_failure_is_reported_and_stores_nothing(
    store: PlaybookStore, notes: Path, mode: str, message: str
) -> None:
    before = dump(store)
    reflector = CommandReflector([sys.executable, FAKE_MODEL, mode], timeout=30)
    result = reflect(store, reflector, notes)
    assert not result.ok and message in result.errors[0]
    assert dump(store) == before


def _line_at(data: bytes, offset: int) -> bytes:
    assert offset == 0 or data[offset - 1 : offset] == b"\n"
    return data[offset : data.index(b"\n", offset)]


@pytest.mark.parametrize(
    ("fixture", "marker", "content"),
    [
        ("claude_session.jsonl", b"RULE: Pin npm to 11", "Pin npm to 11 in release jobs"),
        (
            "codex_rollout.jsonl",
            b"RULE: Close the sqlite connection",
            "Close the sqlite connection before running migrations",
        ),
    ],
)
def test_proposals_from_transcripts_point_at_the_line_with_the_marker(
    store: PlaybookStore, fixture: str, marker: bytes, content: str
) -> None:
    path = FIXTURES / fixture
    data = path.read_bytes()
    result = reflect(store, HeuristicReflector(), path)
    proposal = next(p for p in pending(store) if p.delta.get("content") == content)
    offset = proposal.provenance.byte_offset
    assert offset is not None
    line = _line_at(data, offset)
    assert marker in line
    assert proposal.id in result.staged
    assert store.watermark("session:abc") == read_diary(path).end
