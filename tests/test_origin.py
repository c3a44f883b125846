"""A provenance read without pydantic (`core.origin.plain_origin`) is taken only when
`Provenance.model_validate` would take it unchanged, and then it is the same two fields;
a mark in a session stores the same row either way."""

from __future__ import annotations

import pytest
from pydantic import ValidationError

from playbook.core.model import Provenance
from playbook.core.origin import PlainOrigin, plain_origin
from playbook.curation import curate
from playbook.store import PlaybookStore

CASES = [
    {},
    {"session_ref": "s-17"},
    {"session_ref": "s-17", "byte_offset": 0},
    {"session_ref": None, "byte_offset": None},
    {"byte_offset": 12},
    {"session_ref": "café ✓"},
    # the model refuses these
    {"byte_offset": -1},
    {"session_ref": "a\x00b"},
    {"session_ref": "\ud800"},
    {"session_ref": "s", "extra": 1},
    {"session_ref": 5},
    # the model coerces these (so they are not "unchanged")
    {"byte_offset": True},
    {"byte_offset": "3"},
    {"byte_offset": 3.0},
]


@pytest.mark.parametrize("value", CASES, ids=repr)
def test_plain_only_when_the_model_takes_it_unchanged(value: dict[str, object]) -> None:
    plain = plain_origin(value)
    try:
        model = Provenance.model_validate(value)
    except ValidationError:
        assert plain is None
        return
    same = all(
        type(getattr(model, k)) is type(v) and getattr(model, k) == v for k, v in value.items()
    )
    if not same:
        assert plain is None
    else:
        assert plain == PlainOrigin(model.session_ref, model.byte_offset)


def test_not_a_dict_is_left_to_the_model() -> None:
    assert plain_origin(Provenance(session_ref="s")) is None
    assert plain_origin([("session_ref", "s")]) is None


def test_a_mark_in_a_session_stores_the_same_row(store: PlaybookStore) -> None:
    bid = curate(store, [{"type": "add", "content": "Run pytest with -x"}]).added[0]
    curate(store, [{"type": "helpful", "bullet_id": bid}], {"session_ref": "s-1", "byte_offset": 7})
    curate(
        store, [{"type": "helpful", "bullet_id": bid}], Provenance(session_ref="s-1", byte_offset=7)
    )
    rows = store.sql.all(
        "SELECT session_ref, byte_offset FROM feedback WHERE bullet_id = ? ORDER BY id", (bid,)
    )
    assert rows == [("s-1", 7), ("s-1", 7)]
