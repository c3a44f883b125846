"""What issue 31 cut from a one-shot `playbook mark` and `recall --json`, and that each cut
gives exactly what it replaced.

- the classes a one-shot command loads are records (`core/record.py`), not dataclasses:
  the same `repr`, `==`, hash and immutability, no code compiled at import, and a `recall`
  or a prompt hook (the playbook named, or found from the project's config) loads neither
  `dataclasses` nor `inspect` (checked in a fresh interpreter);
- `--db` is read without `project.config` (nothing to look for);
- the vocabularies' enums (`core.terms`) are made on first use, once, whatever the threads;
- the fast path, hooks included, pauses the collector for the command and freezes it at
  exit, not before: a process that goes on after `launcher.run` has its collector on, and
  nothing frozen;
- `core.inert` tells plain text without compiling its pattern, and says what the pattern
  says;
- `core.text`'s prohibition pattern is compiled on first use.
"""

from __future__ import annotations

import dataclasses
import importlib
import inspect
import json
import pickle
import re
import subprocess
import sys
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from playbook.core import inert, terms
from playbook.core.record import NEW, FrozenInstanceError, FrozenRecord, Record

from .helpers.startup import two_rule_playbook

SRC = Path(__file__).resolve().parents[1] / "src"
PACKAGE = SRC / "playbook"

# ------------------------------------------------------------------ records as dataclasses


class Point(FrozenRecord):
    x: int
    label: str

    def __init__(self, x: int, label: str = "a") -> None:
        object.__setattr__(self, "x", x)
        object.__setattr__(self, "label", label)


@dataclasses.dataclass(frozen=True)
class DataPoint:
    x: int
    label: str = "a"


class Bag(FrozenRecord):
    items: list[str]

    def __init__(self, items: list[str] = NEW) -> None:
        object.__setattr__(self, "items", [] if items is NEW else items)


@dataclasses.dataclass(frozen=True)
class DataBag:
    items: list[str] = dataclasses.field(default_factory=list)


class Counter(Record):
    n: float
    name: str | None

    def __init__(self, n: float, name: str | None = None) -> None:
        self.n = n
        self.name = name


@dataclasses.dataclass
class DataCounter:
    n: float
    name: str | None = None


_number = st.one_of(st.integers(-3, 3), st.floats(allow_nan=True, allow_infinity=True))
_text = st.text(max_size=4)


@settings(max_examples=300, deadline=None)
@given(a=st.tuples(_number, _text), b=st.tuples(_number, _text))
def test_a_record_has_a_dataclass_repr_and_equality(
    a: tuple[float, str], b: tuple[float, str]
) -> None:
    r1, r2 = Counter(*a), Counter(*b)
    d1, d2 = DataCounter(*a), DataCounter(*b)
    assert repr(r1) == repr(d1).replace("DataCounter", "Counter")
    assert (r1 == r2) == (d1 == d2)
    assert (r1 != r2) == (d1 != d2)
    assert Counter.__hash__ is None and DataCounter.__hash__ is None  # unhashable, both
    assert (r1 == a) is False and (d1 == a) is False  # never equal to another class
    r1.n = 7  # not frozen
    assert r1.n == 7


@settings(max_examples=300, deadline=None)
@given(x=st.integers(), y=st.integers(), label=_text, tags=st.lists(_text, max_size=2))
def test_a_frozen_record_is_hashable_and_cannot_change(
    x: int, y: int, label: str, tags: list[str]
) -> None:
    r, d = Point(x, label), DataPoint(x, label)
    assert repr(r) == repr(d).replace("DataPoint", "Point")
    assert hash(r) == hash(d)
    assert (r == Point(y, label)) == (d == DataPoint(y, label))
    assert Point.__match_args__ == DataPoint.__match_args__ == ("x", "label")
    assert repr(Bag(tags)) == repr(DataBag(tags)).replace("DataBag", "Bag")
    assert Bag(tags) == Bag(list(tags)) and Bag() == Bag([])
    assert Bag().items is not Bag().items  # a new list each, as a default_factory's
    for unhashable in (Bag(tags), DataBag(tags)):
        with pytest.raises(TypeError):
            hash(unhashable)
    with pytest.raises(FrozenInstanceError, match="cannot assign to field 'x'"):
        r.x = 1  # type: ignore[misc]
    with pytest.raises(AttributeError):
        del r.label
    match r:
        case Point(px, pl):
            assert (px, pl) == (x, label)


def _records() -> list[type[Record]]:
    """Every record class of the package (their modules imported)."""
    for path in sorted(PACKAGE.rglob("*.py")):
        text = path.read_text(encoding="utf-8")
        if "Record):" in text and "tui" not in path.parts:
            rel = path.relative_to(SRC).with_suffix("")
            importlib.import_module(".".join(rel.parts))
    found: list[type[Record]] = []
    todo = [Record]
    while todo:
        cls = todo.pop()
        for sub in cls.__subclasses__():
            todo.append(sub)
            if sub.__module__.startswith("playbook.") and sub is not FrozenRecord:
                found.append(sub)
    return found


def test_every_record_of_the_package_takes_its_fields_in_order() -> None:
    """What `repr`, `==` and hash compare is what the constructor takes, as a dataclass's
    generated `__init__` would (the policy takes its constants by name)."""
    records = _records()
    names = {f"{c.__module__}.{c.__qualname__}" for c in records}
    assert {"playbook.store.records.Evidence", "playbook.core.policy.Policy"} <= names
    for cls in records:
        params = list(inspect.signature(cls.__init__).parameters.values())[1:]
        if [p.kind for p in params] == [inspect.Parameter.VAR_KEYWORD]:
            continue  # Policy(**values)
        assert tuple(p.name for p in params) == cls._field_names, cls


# ------------------------------------------------------------------ what a fresh process loads

_LOADED = """
import io, sys, contextlib
from playbook.launcher import run
sys.argv = ["playbook", *sys.argv[1:]]
out = io.StringIO()
with contextlib.redirect_stdout(out):
    try:
        run()
    except SystemExit:
        pass
from playbook.core import terms
made = sorted(n for n in terms._VOCABULARIES if n in vars(terms))
print(repr((sorted(sys.modules), made, len(out.getvalue()))))
"""


def _fresh(
    argv: list[str], stdin: str = "", env: dict[str, str] | None = None
) -> tuple[set[str], list[str]]:
    """(the modules a fresh `playbook ARGV` process holds when done, the vocabularies it
    made)."""
    proc = subprocess.run(
        [sys.executable, "-c", _LOADED, *argv],
        input=stdin,
        capture_output=True,
        text=True,
        timeout=120,
        env={"PYTHONPATH": str(SRC), "PATH": "", **(env or {})},
    )
    assert proc.returncode == 0, proc.stderr
    modules, made, printed = eval(proc.stdout.strip().splitlines()[-1])
    assert printed > 0, proc.stderr  # the command did its work
    return set(modules), made


@pytest.fixture(scope="module")
def playbook_file(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, str]:
    return two_rule_playbook(tmp_path_factory.mktemp("cuts") / "pb.sqlite3")


def test_recall_loads_no_dataclass_machinery(playbook_file: tuple[Path, str]) -> None:
    path, _ = playbook_file
    loaded, made = _fresh(["--db", str(path), "recall", "npm release", "--json"])
    for gone in ("dataclasses", "inspect", "ast", "dis", "tokenize", "playbook.project.config"):
        assert gone not in loaded, gone
    assert made == ["Actor", "Maturity"]


def test_the_prompt_hook_loads_no_dataclass_machinery(
    playbook_file: tuple[Path, str], tmp_path: Path
) -> None:
    """The hook input, its config, the workspace, the project's config and the items given
    are records: on SQLite a prompt hook compiles no dataclass (on PostgreSQL psycopg loads
    `dataclasses` for its own, and the hook's records still compile nothing)."""
    path, _ = playbook_file
    project = tmp_path / "project"
    project.mkdir()
    (project / "pb.sqlite3").write_bytes(path.read_bytes())
    (project / ".playbook.toml").write_text('db = "pb.sqlite3"\n', encoding="utf-8")
    named = ["--db", str(path), "hook", "prompt"]
    for n, argv in enumerate((named, ["hook", "prompt"])):  # named, then found from the project
        hook = {"session_id": f"s{n}", "cwd": str(project), "prompt": "npm release job"}
        loaded, _ = _fresh(argv, json.dumps(hook), {"XDG_STATE_HOME": str(tmp_path / "state")})
        for gone in ("dataclasses", "inspect", "ast", "dis", "tokenize"):
            assert gone not in loaded, (argv, gone)
    assert "playbook.project.config" in loaded  # the second hook found it from the project


def test_mark_loads_no_dataclass_machinery(playbook_file: tuple[Path, str], tmp_path: Path) -> None:
    """The outcome of a mark and the review module's classes it loads (conflicts, detail,
    actions) are records: a mark compiles no dataclass (on PostgreSQL psycopg loads
    `dataclasses` for its own)."""
    path, bid = playbook_file
    copy = tmp_path / "pb.sqlite3"
    copy.write_bytes(path.read_bytes())
    loaded, _ = _fresh(["--db", str(copy), "mark", bid, "helpful"])
    for gone in ("dataclasses", "inspect", "ast", "dis", "tokenize"):
        assert gone not in loaded, gone


def test_an_outcome_as_a_dict_is_what_asdict_gave() -> None:
    """`DeltaOutcome.to_dict` (a record now) has the fields `dataclasses.asdict` gave, in
    order, its code filled from the status unless given."""
    from playbook.curation.results import DeltaOutcome

    assert DeltaOutcome(3, "refused-pinned", "b-1", "pinned", "harmful").to_dict() == {
        "index": 3, "status": "refused-pinned", "bullet_id": "b-1", "reason": "pinned",
        "type": "harmful", "code": "pinned",
    }  # fmt: skip
    assert list(DeltaOutcome(0, "applied").to_dict()) == [
        "index", "status", "bullet_id", "reason", "type", "code"
    ]  # fmt: skip
    assert DeltaOutcome(0, "rejected-invalid", code="not_found").code == "not_found"
    assert DeltaOutcome(0, "applied").code is None


def test_mark_with_db_reads_no_project_config(playbook_file: tuple[Path, str]) -> None:
    path, bid = playbook_file
    loaded, made = _fresh(["--db", str(path), "mark", bid, "helpful"])
    assert "playbook.project.config" not in loaded
    assert made == ["Actor", "DeltaType", "Maturity"]


# ------------------------------------------------------------------ the collector at exit

_EXIT = """
import atexit, gc, sys
from playbook.launcher import run
collections = []
gc.callbacks.append(lambda phase, info: phase == "start" and collections.append(info))
atexit.register(lambda: print("frozen at exit:", gc.get_freeze_count() > 0))
sys.argv = ["playbook", *sys.argv[1:]]
try:
    run()
except SystemExit as done:
    print("frozen before exit:", gc.get_freeze_count() > 0, "code:", done.code)
    print("collector after:", gc.isenabled(), "young:", gc.get_count()[0] < 100)
    print("collections:", len(collections))
"""


@pytest.mark.parametrize("command", ["mark", "hook prompt"])
def test_a_one_shot_command_pauses_the_collector_and_freezes_at_exit_only(
    playbook_file: tuple[Path, str], tmp_path: Path, command: str
) -> None:
    path, bid = playbook_file
    copy = tmp_path / "pb.sqlite3"
    copy.write_bytes(path.read_bytes())
    argv = [bid, "helpful"] if command == "mark" else []
    hook = json.dumps({"session_id": "s1", "cwd": str(tmp_path), "prompt": "npm release"})
    proc = subprocess.run(
        [sys.executable, "-c", _EXIT, "--db", str(copy), *command.split(), *argv],
        input=hook if command != "mark" else "",
        capture_output=True,
        text=True,
        timeout=120,
        env={"PYTHONPATH": str(SRC), "PATH": "", "XDG_STATE_HOME": str(tmp_path / "state")},
    )
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.splitlines()[-4:] == [
        "frozen before exit: False code: 0",
        "collector after: True young: True",  # on, what the command made no longer young
        "collections: 0",  # paused for the command: none set off by its imports or rows
        "frozen at exit: True",
    ]
    assert not Path(f"{copy}-wal").exists()  # the playbook was closed before
    if command != "mark":  # the hook answered (its JSON, before the lines above)
        assert "Pin npm to 11" in proc.stdout


# ------------------------------------------------------------------ vocabularies on first use


def test_a_vocabulary_is_the_same_enum_however_it_is_reached() -> None:
    assert terms.Maturity is importlib.import_module("playbook.core.terms").Maturity
    assert [m.value for m in terms.Maturity] == list(terms.MATURITIES)
    assert terms.DeltaType.HELPFUL == "helpful" and terms.Scope.GLOBAL == "global"
    assert terms.Maturity.__module__ == "playbook.core.terms"
    assert pickle.loads(pickle.dumps(terms.Maturity.PROVEN)) is terms.Maturity.PROVEN
    with pytest.raises(AttributeError):
        _ = terms.NoSuchVocabulary  # type: ignore[attr-defined]


def test_threads_that_reach_a_vocabulary_first_all_get_one_enum() -> None:
    code = """
import threading
from playbook.core import terms
got, start = [], threading.Barrier(8)
def reach():
    start.wait()
    got.append(terms.HarmReason)
threads = [threading.Thread(target=reach) for _ in range(8)]
for t in threads: t.start()
for t in threads: t.join()
print(len({id(e) for e in got}), len(got))
"""
    proc = subprocess.run(
        [sys.executable, "-c", code],
        capture_output=True,
        text=True,
        timeout=60,
        env={"PYTHONPATH": str(SRC), "PATH": ""},
    )
    assert proc.stdout.split() == ["1", "8"], proc.stderr


# ------------------------------------------------------------------ inert text, its pattern


def test_every_character_inert_escapes_is_one_isprintable_refuses() -> None:
    """What makes `_plain` exact: a text `str.isprintable` accepts (newlines and tabs
    aside, when kept) holds nothing to escape. Checked over every code point."""
    every = "".join(map(chr, range(0x110000)))
    for one_line in (False, True):
        escaped = set(inert._unsafe(one_line).findall(every))
        assert escaped and not any(c.isprintable() for c in escaped)
    assert {"\n", "\t"} & set(inert._unsafe(False).findall(every)) == set()


_odd = st.sampled_from(["\x1b", "\n", "\t", "\r", "\x7f", "\x85", "\u202e", "\ud800", "\xa0"])
_texts = st.lists(st.one_of(st.text(max_size=6), _odd), max_size=8).map("".join)


@settings(max_examples=500, deadline=None)
@given(text=_texts)
def test_inert_says_what_its_pattern_says(text: str) -> None:
    for one_line in (False, True):
        assert inert.inert(text, one_line=one_line) == inert._unsafe(one_line).sub(
            inert._escape, text
        )
    assert inert.has_unsafe(text) == bool(inert._unsafe(False).search(text))
    doc = {"k": text, "n": [1.5, None]}
    reference = inert._unsafe(False).sub(
        inert._json_escape, inert.json.dumps(doc, ensure_ascii=False, indent=2)
    )
    assert inert.dumps(doc) == reference


def test_the_prohibition_pattern_is_the_polarity_rule() -> None:
    from playbook.core.text import PROHIBITION, is_negative

    assert re.compile(PROHIBITION, re.IGNORECASE).pattern == PROHIBITION
    assert is_negative("Never push to main") and is_negative("  don't use yarn")
    assert is_negative("Stop using yarn") and not is_negative("Stop the server first")
    assert not is_negative("Pin npm") and is_negative("Pin npm", "anti-pattern")
