"""The demo shipped with the package (`playbook.demo.template`) is what the builder makes.

`playbook demo`'s first run restores it, dated now, instead of replaying nine months
through the API. These tests hold it to the builder: the template must be the current
demo's (else `python -m playbook.demo.template` writes it again), a build at the template's
moment must give the same playbook to the last fact (ids aside: they are random), and a
restore at any later moment must move every timestamp, so ages and therefore every score
and rung are the ones the build had.
"""

from __future__ import annotations

import json
import re
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

import pytest

from playbook.demo.build import build_demo
from playbook.demo.diary import HOOK_SESSION_NAME
from playbook.demo.template import FOLDER, instantiate, load_template, stamp_fields
from playbook.interop.snapshot import export_snapshot
from playbook.review import queue
from playbook.store import open_store

from .helpers import Clock

REGENERATE = "the demo changed: run `python -m playbook.demo.template` and commit the file"
ID = re.compile(r"\b(?:[a-z]-[0-9a-f]{8}|c-[0-9a-f]{12})\b")
ISO = re.compile(r"^\d{4}-\d\d-\d\dT\d\d:\d\d")


def exported(path: Path) -> dict[str, Any]:
    """The playbook at `path` as an export, its folder written as the template writes it."""
    with open_store(path, mode="read") as store:
        doc = export_snapshot(store)
    return json.loads(json.dumps(doc).replace(json.dumps(str(path.parent))[1:-1], FOLDER))


def canonical(doc: dict[str, Any]) -> str:
    """The document with every random id (rules, proposals, blocks, batches) replaced by
    the order of its first appearance."""
    seen: dict[str, str] = {}
    text = json.dumps(doc, sort_keys=True, indent=0)
    return ID.sub(lambda m: seen.setdefault(m.group(0), f"<{len(seen)}>"), text)


@pytest.fixture(scope="module")
def template() -> dict[str, Any]:
    found = load_template()
    assert found is not None, REGENERATE
    return found


def test_the_shipped_template_is_what_the_builder_makes(
    template: dict[str, Any], tmp_path: Path
) -> None:
    now = datetime.fromisoformat(template["now"])
    seen: list[float] = []
    built = build_demo(tmp_path / "demo.sqlite3", now=now, progress=lambda f, _: seen.append(f))
    # The replay (`playbook demo --rebuild`) reports its progress all along.
    assert len(seen) > 20 and seen == sorted(seen) and seen[0] >= 0 and seen[-1] <= 1
    ours = canonical(exported(built.path))
    shipped = canonical(template["snapshot"])
    if ours != shipped:
        first = next(i for i, (a, b) in enumerate(zip(ours, shipped, strict=False)) if a != b)
        pytest.fail(f"{REGENERATE}\nbuilt:   {ours[first - 80 : first + 80]!r}\n"
                    f"shipped: {shipped[first - 80 : first + 80]!r}")  # fmt: skip
    assert len(built.rule_ids) == len(template["rule_ids"])


def test_every_timestamp_of_the_template_is_a_stamp_field(template: dict[str, Any]) -> None:
    """A time written anywhere else (a decision's detail, a proposal's result) would not
    move with the rest."""
    fields = stamp_fields()
    assert fields["feedback"] == {"at", "recorded_at"} and "created_at" in fields["bullets"]

    def strays(value: Any, where: str) -> list[str]:
        if isinstance(value, dict):
            return [s for k, v in value.items() for s in strays(v, f"{where}.{k}")]
        if isinstance(value, list):
            return [s for v in value for s in strays(v, where)]
        return [where] if isinstance(value, str) and ISO.match(value) else []

    found = []
    for section, rows in template["snapshot"].items():
        if isinstance(rows, list):
            for row in rows:
                for key, value in row.items():
                    if key not in fields[section]:
                        found += strays(value, f"{section}.{key}")
    assert found == []


def test_a_restore_later_keeps_every_age_and_so_every_score(
    template: dict[str, Any], tmp_path: Path
) -> None:
    then = datetime.fromisoformat(template["now"])
    later = then + timedelta(days=123, hours=7, minutes=11)
    (tmp_path / "then").mkdir()
    (tmp_path / "later").mkdir()
    at_then = instantiate(tmp_path / "then" / "demo.sqlite3", now=then)
    at_later = instantiate(tmp_path / "later" / "demo.sqlite3", now=later)
    assert at_then is not None and at_later is not None
    with (
        open_store(at_then.path, mode="read", clock=Clock(then)) as a,
        open_store(at_later.path, mode="read", clock=Clock(later)) as b,
    ):
        bullets = {x.id: x for x in a.bullets()}
        assert {x.id for x in b.bullets()} == set(bullets)
        for bullet in b.bullets():
            old = bullets[bullet.id]
            assert bullet.created_at - old.created_at == later - then
            assert (bullet.maturity, bullet.state) == (old.maturity, old.state)
            sa, sb = a.score(bullet.id), b.score(bullet.id)
            assert sb.helpful == pytest.approx(sa.helpful, abs=1e-9)
            assert sb.harmful == pytest.approx(sa.harmful, abs=1e-9)
        events = [e.at for x in b.bullets() for e in b.timeline(x.id)]
        assert max(events) < later and max(events) > later - timedelta(days=2)
        # The session files the review queue points at are beside it.
        refs = {p.provenance.session_ref for p in queue.pending(b)}
    folder = at_later.path.parent
    assert refs == {str(folder / "session-release-flake.md"), str(folder / HOOK_SESSION_NAME)}
    assert all(Path(ref).is_file() for ref in refs)
