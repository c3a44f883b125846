"""What issue 31 cut from a one-shot `playbook mark` and `recall --json`, and that each cut
gives exactly what it replaced.

- the classes a one-shot command loads are records (`core/record.py`), not dataclasses:
  the same `repr`, `==`, hash and immutability, and no code compiled at import.
"""

from __future__ import annotations

import dataclasses
import importlib
import inspect
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from playbook.core.record import NEW, FrozenInstanceError, FrozenRecord, Record

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
