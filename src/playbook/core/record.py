"""Records: what `@dataclass` gives a small class, written once instead of for each class.

`@dataclass` writes a class's `__init__`, `__repr__` and `__eq__` (a frozen one's
`__hash__`, `__setattr__` and `__delattr__` too) as source text and compiles it when the
module is imported: 1 to 4 million instructions a class, and `dataclasses` itself imports
`inspect` (about 25 million more). A one-shot `playbook recall` loaded some twenty such
classes, a quarter of the instructions of the whole process (README: "Why one-shot commands
start fast"). A record costs what a plain class costs.

A record declares its fields as annotations, in order, and writes its own `__init__` (a
frozen one sets each field with `object.__setattr__`, as a frozen dataclass's does); the
rest is here and behaves as a dataclass's:

- `repr`: `Name(a=1, b='x')`, the fields in order (a class may name fewer in
  `_repr_names`);
- `==`: a record of the very same class with equal fields, compared as tuples; anything
  else is NotImplemented. A `Record` is unhashable, as a dataclass with `eq` that is not
  frozen;
- `FrozenRecord`: hashable (the hash of the tuple of its fields), and assigning or deleting
  any attribute raises `FrozenInstanceError` (an AttributeError, as `dataclasses`' is);
- `__match_args__`: the fields, so `case Name(a, b)` matches as it would a dataclass.

A field whose dataclass default was a `default_factory` of `list` or `dict` takes `NEW` as
its default, and its `__init__` makes the new empty value. Nothing else: no
`dataclasses.fields()`, `asdict()` or `replace()`, which need a dataclass.
"""

from __future__ import annotations

from collections.abc import Callable
from operator import attrgetter
from typing import Any, ClassVar

NEW: Any = object()  # a default argument that stands for a new empty list or dict


class FrozenInstanceError(AttributeError):
    """An assignment to (or deletion of) an attribute of a frozen record."""


def _getter(fields: tuple[str, ...]) -> Callable[[Any], tuple[Any, ...]]:
    """The function that gives a record's fields as a tuple."""
    if len(fields) > 1:
        return attrgetter(*fields)  # a tuple, in C
    if fields:
        one = attrgetter(fields[0])
        return lambda record: (one(record),)
    return lambda record: ()


class Record:
    """A record with a dataclass's `repr` and `==` (see the module's docstring)."""

    __slots__ = ()
    _field_names: ClassVar[tuple[str, ...]] = ()
    _repr_names: ClassVar[tuple[str, ...]] = ()
    _field_values: ClassVar[Callable[[Any], tuple[Any, ...]]] = staticmethod(_getter(()))

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        own = cls.__dict__.get("__annotations__", {})  # noqa: RUF063 (no inspect: see above)
        added = [n for n, hint in own.items() if "ClassVar" not in str(hint)]
        fields = (*cls._field_names, *(n for n in added if n not in cls._field_names))
        cls._field_names = fields
        setattr(cls, "__match_args__", fields)  # noqa: B010 (mypy refuses the assignment)
        if "_repr_names" not in cls.__dict__:
            cls._repr_names = fields
        cls._field_values = staticmethod(_getter(fields))

    def __repr__(self) -> str:
        shown = ", ".join(f"{n}={getattr(self, n)!r}" for n in self._repr_names)
        return f"{type(self).__qualname__}({shown})"

    def __eq__(self, other: object) -> bool:  # (so __hash__ is None: unhashable)
        if other.__class__ is self.__class__:
            return bool(type(self)._field_values(self) == type(self)._field_values(other))
        return NotImplemented


class FrozenRecord(Record):
    """A record whose attributes cannot change, hashable (see the module's docstring)."""

    __slots__ = ()

    def __hash__(self) -> int:
        return hash(type(self)._field_values(self))

    def __setattr__(self, name: str, value: object) -> None:
        raise FrozenInstanceError(f"cannot assign to field {name!r}")

    def __delattr__(self, name: str) -> None:
        raise FrozenInstanceError(f"cannot delete field {name!r}")
