"""Where a batch came from, read without pydantic when it is plain (`plain_origin`).

`core.model.Provenance` is the contract: a session ref (text both backends store, or
None) and a byte offset (an int, 0 or more, or None), nothing else. A one-shot `playbook
mark --session REF` gives it as a plain dict; validating that through pydantic loads the
models (about a hundred milliseconds of a mark). A dict that the model would accept
unchanged is read here instead, into a `PlainOrigin` with the same two fields; anything
else (another key, a value of another type that pydantic would coerce or refuse, a model)
still goes through the model, which says what is wrong. The store reads only the two
fields (`Origin`).
"""

from __future__ import annotations

from typing import Protocol, TypeGuard

from .record import FrozenRecord


class Origin(Protocol):
    """What the store reads of a provenance: `Provenance`, or a `PlainOrigin`."""

    @property
    def session_ref(self) -> str | None: ...

    @property
    def byte_offset(self) -> int | None: ...


class PlainOrigin(FrozenRecord):
    """A provenance read without pydantic: the fields `Provenance` has, as it has them."""

    session_ref: str | None
    byte_offset: int | None

    def __init__(self, session_ref: str | None = None, byte_offset: int | None = None) -> None:
        object.__setattr__(self, "session_ref", session_ref)
        object.__setattr__(self, "byte_offset", byte_offset)


_FIELDS = frozenset(("session_ref", "byte_offset"))


def plain_text(value: object) -> TypeGuard[str]:
    """A plain str that both backends store (UTF-8 can encode it, no NUL): what the
    models' `StorableText` takes as it is (here, and for a plain vote's texts)."""
    if type(value) is not str or "\x00" in value:
        return False
    try:
        value.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def plain_origin(value: object) -> PlainOrigin | None:
    """The origin `value` is when `Provenance.model_validate` would take it unchanged; else
    None (validate it with the model)."""
    if type(value) is not dict or not value.keys() <= _FIELDS:
        return None
    ref, offset = value.get("session_ref"), value.get("byte_offset")
    if ref is not None and not plain_text(ref):
        return None
    if offset is not None and (type(offset) is not int or offset < 0):
        return None
    return PlainOrigin(ref, offset)
