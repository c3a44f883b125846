"""Bad input, property-based: nothing an agent, a model or a file can send makes Playbook
raise, every invalid item is reported, and what is rejected changes nothing.

- `curate` on arbitrary JSON and on near-valid deltas (a valid delta with one thing wrong):
  one outcome per item, a reason for every rejection, and the file afterwards is exactly the
  file that curating only the accepted items gives (same ids, same clock);
- the diary readers and the heuristic reflection loop on arbitrary text, bytes and JSONL;
- the cass-memory importer's parser on arbitrary bytes and on YAML of arbitrary shape;
- arbitrary bytes as a database file: one `DatabaseOpenError`, the file untouched.

CI runs 200 examples per property; `pytest -m slow` runs 2,000 (and longer inputs).
"""

from __future__ import annotations

import contextlib
import itertools
import json
import re
import sqlite3
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from playbook.cli import main
from playbook.curation import curate
from playbook.interop.cass import CassImport, CassImportError, parse_cass_playbook
from playbook.interop.importing import InvalidImport, import_data
from playbook.interop.snapshot import export_snapshot, to_json
from playbook.reflection.diaries import detect_format, read_jsonl_transcript, read_text_diary
from playbook.reflection.reflectors import HeuristicReflector
from playbook.reflection.session import reflect_session
from playbook.store import DatabaseOpenError, PlaybookStore, connect
from playbook.store import testing as raw

from .helpers import Clock

CI = settings(max_examples=200, deadline=None, suppress_health_check=list(HealthCheck))
LONG = settings(max_examples=2000, deadline=None, suppress_health_check=list(HealthCheck))


# ------------------------------------------------------------------ deterministic stores
class _Tokens:
    """Stands in for the store's randomness: ids and batch ids from a counter, so that two
    runs of the same operations give byte-identical files."""

    def __init__(self) -> None:
        self.counter = itertools.count()

    def __call__(self, n: int) -> str:
        return f"{next(self.counter):0{2 * n}x}"


@contextlib.contextmanager
def deterministic_ids() -> Iterator[_Tokens]:
    tokens = _Tokens()
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr("playbook.store.ids.random_hex", tokens)
        yield tokens


def _template() -> sqlite3.Connection:
    """A small playbook with one bullet in each state a delta can meet."""
    conn = connect(":memory:")
    store = PlaybookStore(conn, clock=Clock())
    with deterministic_ids():
        r = curate(
            store,
            [
                {"type": "add", "content": "Run the linter before every commit", "tags": ["ci"]},
                {"type": "add", "content": "Pin npm to 11 in release jobs"},
                {"type": "add", "content": "AVOID: force-pushing to main"},
                {"type": "add", "content": "Keep secrets in the vault"},
                {"type": "add", "content": "Use tabs in Makefiles"},
            ],
        )
        _active, pinned, _anti, retired, deprecated = r.added
        store.pin(pinned, "release policy")
        curate(store, [{"type": "replace", "bullet_id": retired, "content": "Use the vault"}])
        curate(store, [{"type": "deprecate", "bullet_id": deprecated, "reason": "old"}])
        store.block("disable the failing test", "never")
    return conn


TEMPLATE = _template()
IDS = [r[0] for r in TEMPLATE.execute("SELECT id FROM bullets ORDER BY rowid")]


def fresh_store() -> PlaybookStore:
    conn = sqlite3.connect(":memory:", isolation_level=None)
    TEMPLATE.backup(conn)
    return PlaybookStore(conn, clock=Clock(), migrate=False)


def snapshot(store: PlaybookStore) -> dict[str, list[tuple[Any, ...]]]:
    """Every row of every table; decisions without the input position of their delta."""
    out: dict[str, list[tuple[Any, ...]]] = {}
    for table in raw.tables(store):
        rows = sorted(raw.rows(store, f'SELECT * FROM "{table}"'), key=repr)
        if table == "decisions":  # (id, at, batch, actor, action, bullet, status, reason, detail)
            rows = [(*r[:7], _positions(r[7]), _without_index(r[8])) for r in rows]
        out[table] = rows
    return out


def _positions(reason: str | None) -> str | None:
    """'repeats delta 3' names an input position, which differs when items are left out."""
    return re.sub(r"delta \d+", "delta #", reason) if reason else reason


def _without_index(detail: str) -> str:
    d = json.loads(detail)
    d.pop("index", None)
    return json.dumps(d, sort_keys=True)


# ------------------------------------------------------------------ strategies
# Text as JSON can carry it: any code point, including lone surrogates (json.loads turns
# "\ud800" into one), controls, format characters and line separators.
TEXT = st.one_of(
    st.text(max_size=40),
    st.text(alphabet=st.characters(categories=("Cs", "Cc", "Cf", "Zl", "Zp")), max_size=8),
    st.sampled_from(["\ud800", "b-\udcff", "\x00", "\x1b]0;owned\x07", "\u202e", "\ufeff"]),
)
CONTENT = st.one_of(
    TEXT,
    st.sampled_from(
        [
            "",
            "   ",
            "Run the linter before every commit",  # an exact duplicate: folds
            "Never run the linter before every commit",  # opposite polarity: conflict
            "Use tabs in Makefiles",  # duplicates a deprecated bullet: zombie
            "Disable the failing test",  # near a blocked pattern
            "x" * 8001,  # over Policy.max_content_length
            "\x00\x1b[31m\u202e",
        ]
    ),
)
BULLET_ID = st.sampled_from([*IDS, "b-00000000", "", "B-" + IDS[0][2:]]) | TEXT
JSON = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats() | TEXT,
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(TEXT, inner, max_size=4),
    max_leaves=10,
)
FIELDS: dict[str, st.SearchStrategy[Any]] = {
    "content": CONTENT,
    "bullet_id": BULLET_ID,
    "bullet_ids": st.lists(BULLET_ID, max_size=3),
    "reason": st.none() | TEXT | st.sampled_from(["caused_bug", "outdated", "other"]),
    "context": st.none() | TEXT,
    "tags": st.lists(TEXT, max_size=3) | JSON,
    "category": st.none() | TEXT,
    "scope": st.sampled_from(["global", "workspace", "language", "planet", None]),
    "scope_key": st.none() | TEXT,
    "bullet_type": st.sampled_from(["rule", "anti-pattern", "warning", None]),
    "kind": st.none() | TEXT,
}
SHAPES = {
    "add": ["content", "tags", "category", "scope", "scope_key", "bullet_type", "kind"],
    "helpful": ["bullet_id", "context"],
    "harmful": ["bullet_id", "reason", "context"],
    "replace": ["bullet_id", "content", "reason"],
    "deprecate": ["bullet_id", "reason"],
    "merge": ["bullet_ids", "content", "reason"],
}
FORGED = ["provenance", "session_ref", "byte_offset", "sessionRef", "byteOffset", "actor", "id"]


@st.composite
def near_valid(draw: st.DrawFn) -> Any:
    """A delta of a real type with its fields drawn, then maybe one thing broken."""
    kind = draw(st.sampled_from(sorted(SHAPES)))
    fields = SHAPES[kind]
    required = {"add": 1, "helpful": 1, "harmful": 1, "replace": 2, "deprecate": 2, "merge": 2}
    chosen = fields[: required[kind]] + draw(st.lists(st.sampled_from(fields), max_size=3))
    delta: dict[str, Any] = {"type": kind}
    for name in chosen:
        delta[name] = draw(FIELDS[name])
    breakage = draw(st.sampled_from(["none", "drop", "extra", "retype", "type", "forge"]))
    if breakage == "drop" and len(delta) > 1:
        delta.pop(draw(st.sampled_from(sorted(k for k in delta if k != "type"))))
    elif breakage == "extra":
        delta[draw(TEXT)] = draw(JSON)
    elif breakage == "retype":
        delta[draw(st.sampled_from(sorted(delta)))] = draw(JSON)
    elif breakage == "type":
        delta["type"] = draw(st.sampled_from(["promote", "ADD", "", "pin", "approve"]) | JSON)
    elif breakage == "forge":
        delta[draw(st.sampled_from(FORGED))] = draw(
            st.just({"session_ref": "session:forged", "byte_offset": 1}) | JSON
        )
    return delta


ITEM = near_valid() | JSON


# ------------------------------------------------------------------ curate
def check_curate(batch: list[Any]) -> None:
    with deterministic_ids() as tokens:
        a = fresh_store()
        result = curate(a, batch)
        assert [o.index for o in result.outcomes] == list(range(len(batch)))
        for o in result.rejected:
            assert isinstance(o.reason, str) and o.reason.strip()
        for o, item in zip(result.outcomes, batch, strict=True):
            if not isinstance(item, dict):
                assert o.status == "rejected-invalid"
            elif set(item) & set(FORGED[:5]):
                assert o.status == "rejected-invalid" and "provenance" in (o.reason or "")
        json.dumps(result.to_dict())  # reportable as it stands
        accepted = [
            item
            for o, item in zip(result.outcomes, batch, strict=True)
            if o.status != "rejected-invalid"
        ]
        b = fresh_store()
        tokens.counter = itertools.count()
        curate(b, accepted)
    assert snapshot(a) == snapshot(b)


@CI
@given(st.lists(ITEM, max_size=6))
def test_curate_reports_bad_items_and_they_change_nothing(batch: list[Any]) -> None:
    check_curate(batch)


@pytest.mark.slow
@LONG
@given(st.lists(ITEM, max_size=10))
def test_curate_reports_bad_items_and_they_change_nothing_long(batch: list[Any]) -> None:
    check_curate(batch)


@CI
@given(JSON | st.lists(JSON, max_size=4))
def test_curate_of_arbitrary_json_leaves_the_store_as_it_was(batch: Any) -> None:
    store = fresh_store()
    before = snapshot(store)
    result = curate(store, batch)
    assert len(result.outcomes) == (len(batch) if isinstance(batch, list) else 1)
    assert result.rejected == result.outcomes
    assert snapshot(store) == before


# ------------------------------------------------------------------ diaries and reflection
RECORD = st.fixed_dictionaries(
    {"type": st.sampled_from(["user", "assistant", "response_item", "summary"]) | TEXT},
    optional={
        "message": st.fixed_dictionaries(
            {"role": st.sampled_from(["user", "assistant"]) | JSON},
            optional={"content": TEXT | st.lists(JSON, max_size=3) | JSON},
        ),
        "payload": JSON,
        "record_type": JSON,
    },
)
MARKERS = st.sampled_from(
    ["RULE: ", "AVOID: ", "- **RULE**: ", "[playbook: helpful b-", "[playbook: harmful ", "\n\n"]
)
DIARY_TEXT = st.lists(TEXT | MARKERS, max_size=12).map("".join)


def _utf8(text: str) -> bytes:
    return text.encode("utf-8", "surrogatepass")


def jsonl(records: list[Any], garbage: list[bytes]) -> bytes:
    lines = [_utf8(json.dumps(r, ensure_ascii=False, default=repr)) for r in records]
    return b"\n".join(lines + garbage)


def check_reflection(data: bytes, start: int) -> None:
    fmt = detect_format(data)
    reader = read_jsonl_transcript if fmt == "jsonl" else read_text_diary
    diary = reader(data, start=start, ref="fuzz")
    assert diary.end >= start
    for p in diary.passages:
        assert isinstance(p.text, str) and start <= p.offset < max(diary.end, 1) + 1
    store = fresh_store()
    before = snapshot(store)
    result = reflect_session(store, "session:fuzz", diary, HeuristicReflector())
    assert result.ok, result.errors
    for r in result.rejected:
        assert isinstance(r.reason, str) and r.reason.strip()
    staged = raw.value(store, "SELECT COUNT(*) FROM proposals")
    assert staged == len(result.staged)
    after = snapshot(store)
    changed = {t for t in after if after[t] != before[t]}
    assert changed <= {"proposals", "watermarks"}
    assert store.watermark("session:fuzz") == max(start, diary.end)


@CI
@given(DIARY_TEXT, st.integers(0, 64))
def test_text_diaries_and_heuristic_reflection_never_raise(text: str, start: int) -> None:
    check_reflection(_utf8(text), start)


@CI
@given(
    st.lists(RECORD, max_size=5),
    st.lists(st.binary(max_size=30) | DIARY_TEXT.map(_utf8), max_size=3),
    st.integers(0, 64),
)
def test_jsonl_transcripts_and_heuristic_reflection_never_raise(
    records: list[Any], garbage: list[bytes], start: int
) -> None:
    check_reflection(jsonl(records, garbage), start)


@CI
@given(st.binary(max_size=300), st.integers(0, 400))
def test_arbitrary_bytes_as_a_diary_never_raise(data: bytes, start: int) -> None:
    check_reflection(data, start)


@pytest.mark.slow
@LONG
@given(DIARY_TEXT | st.binary(max_size=2000).map(repr), st.integers(0, 64))
def test_diaries_never_raise_long(text: str, start: int) -> None:
    check_reflection(_utf8(text), start)


# ------------------------------------------------------------------ cass-memory import
CASS_KEYS = st.sampled_from(
    ["id", "content", "category", "scope", "state", "maturity", "type", "tags", "pinned",
     "feedbackEvents", "createdAt", "replacedBy", "deprecated", "isNegative", "kind"]
)  # fmt: skip


def check_cass(data: bytes | str) -> None:
    try:
        result = parse_cass_playbook(data)
    except CassImportError as exc:
        assert "\n" not in str(exc) and str(exc).strip()
        return
    assert isinstance(result, CassImport)
    assert all(isinstance(line, str) for line in result.unmapped)


@CI
@given(st.binary(max_size=1000))
def test_arbitrary_bytes_as_a_cass_playbook(data: bytes) -> None:
    check_cass(data)


@CI
@given(
    st.dictionaries(
        st.sampled_from(["schema_version", "bullets", "deprecatedPatterns", "name"]) | TEXT,
        st.lists(st.dictionaries(CASS_KEYS, JSON, max_size=6), max_size=3) | JSON,
        max_size=4,
    )
)
def test_arbitrary_yaml_as_a_cass_playbook(doc: dict[Any, Any]) -> None:
    text = yaml.safe_dump(doc, allow_unicode=False)
    check_cass(text.encode())
    check_cass(b"schema_version: 2\n" + text.encode())


@pytest.mark.slow
@LONG
@given(st.binary(max_size=4000))
def test_arbitrary_bytes_as_a_cass_playbook_long(data: bytes) -> None:
    check_cass(data)


# ------------------------------------------------------------------ importing files
def _empty_template() -> sqlite3.Connection:
    conn = connect(":memory:")
    PlaybookStore(conn, clock=Clock())
    return conn


EMPTY = _empty_template()
EXPORT = json.loads(to_json(export_snapshot(PlaybookStore(TEMPLATE, migrate=False))))


def empty_store() -> PlaybookStore:
    conn = sqlite3.connect(":memory:", isolation_level=None)
    EMPTY.backup(conn)
    conn.execute("PRAGMA foreign_keys=ON")
    return PlaybookStore(conn, clock=Clock(), migrate=False)


def check_import(data: bytes, fmt: str) -> None:
    """An import either succeeds into a sound file or fails with one line, writing nothing."""
    store = empty_store()
    before = snapshot(store)
    try:
        import_data(store, data, fmt)
    except InvalidImport as exc:
        assert "\n" not in str(exc) and str(exc).strip()
        assert snapshot(store) == before
        return
    assert raw.rows(store, "PRAGMA integrity_check") == [("ok",)]
    assert raw.rows(store, "PRAGMA foreign_key_check") == []


@st.composite
def near_valid_export(draw: st.DrawFn) -> bytes:
    """A real export with one thing changed: a field set to any JSON, dropped or added, a
    row dropped or repeated, or a section replaced."""
    doc = json.loads(json.dumps(EXPORT))
    sections = sorted(k for k, v in doc.items() if isinstance(v, list) and v)
    section = draw(st.sampled_from(sections))
    rows = doc[section]
    i = draw(st.integers(0, len(rows) - 1))
    change = draw(st.sampled_from(["set", "drop-key", "add-key", "drop-row", "repeat", "swap"]))
    if change == "set":
        rows[i][draw(st.sampled_from(sorted(rows[i])))] = draw(JSON | BULLET_ID)
    elif change == "drop-key":
        rows[i].pop(draw(st.sampled_from(sorted(rows[i]))))
    elif change == "add-key":
        rows[i][draw(TEXT)] = draw(JSON)
    elif change == "drop-row":
        rows.pop(i)
    elif change == "repeat":
        rows.append(rows[i])
    else:
        doc[section] = draw(JSON)
    return json.dumps(doc, default=repr).encode("utf-8", "surrogatepass")


@CI
@given(st.binary(max_size=600), st.sampled_from(["auto", "json", "yaml", "cass"]))
def test_arbitrary_bytes_imported_into_a_store(data: bytes, fmt: str) -> None:
    check_import(data, fmt)


@CI
@given(near_valid_export())
def test_a_damaged_export_imports_whole_or_not_at_all(data: bytes) -> None:
    check_import(data, "auto")


@CI
@given(
    st.lists(st.dictionaries(CASS_KEYS, JSON | TEXT, max_size=8), max_size=4),
    st.lists(JSON, max_size=2),
)
def test_a_cass_playbook_of_any_shape_imports_whole_or_not_at_all(
    bullets: list[Any], patterns: list[Any]
) -> None:
    doc = {"schema_version": 2, "bullets": bullets, "deprecatedPatterns": patterns}
    check_import(yaml.safe_dump(doc).encode(), "cass")


@pytest.mark.slow
@LONG
@given(near_valid_export() | st.binary(max_size=3000))
def test_imports_whole_or_not_at_all_long(data: bytes) -> None:
    check_import(data, "auto")


@settings(max_examples=40, deadline=None, suppress_health_check=list(HealthCheck))
@given(near_valid_export() | st.binary(max_size=400), st.sampled_from(["auto", "cass"]))
def test_the_import_command_reports_a_bad_file_in_one_line(
    tmp_path_factory: Any, capsys: pytest.CaptureFixture[str], data: bytes, fmt: str
) -> None:
    folder = tmp_path_factory.mktemp("import")
    (folder / "in.bin").write_bytes(data)
    code = main(["--db", str(folder / "new.sqlite3"), "import", str(folder / "in.bin"), "-f", fmt])
    out, err = capsys.readouterr()
    assert code in (0, 1), err
    if code:
        assert out == "" and err.count("\n") == 1 and err.startswith("playbook: error: ")


# ------------------------------------------------------------------ database files
SQLITE_HEADER = b"SQLite format 3\x00"


def check_database_bytes(folder: Path, data: bytes) -> None:
    path = folder / "bad.sqlite3"
    path.write_bytes(data)
    try:
        conn = connect(path)
    except DatabaseOpenError as exc:
        assert "\n" not in str(exc) and "not a usable SQLite database" in str(exc)
        assert path.read_bytes() == data, "a refused file was changed"
        return
    # Only what SQLite itself takes for a database opens: an empty file, or a header it
    # accepts with pages it has not read yet. Using it must still fail cleanly.
    try:
        PlaybookStore(conn)
    except DatabaseOpenError:
        pass
    finally:
        conn.close()


@CI
@given(st.binary(max_size=2000))
def test_arbitrary_bytes_as_a_database_file(tmp_path_factory: Any, data: bytes) -> None:
    check_database_bytes(tmp_path_factory.mktemp("db"), data)


@CI
@given(st.binary(min_size=84, max_size=3000))
def test_a_sqlite_header_over_garbage(tmp_path_factory: Any, data: bytes) -> None:
    check_database_bytes(tmp_path_factory.mktemp("db"), SQLITE_HEADER + data)


@pytest.mark.slow
@LONG
@given(st.binary(max_size=8000) | st.binary(max_size=8000).map(SQLITE_HEADER.__add__))
def test_arbitrary_bytes_as_a_database_file_long(tmp_path_factory: Any, data: bytes) -> None:
    check_database_bytes(tmp_path_factory.mktemp("db"), data)
