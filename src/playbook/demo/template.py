"""The demo, built once and shipped with the package: a first `playbook demo` shows it at once.

Building the demo replays nine months through the API (`build.build_demo`: about 5 s, more
on a busy machine). The package carries one such build as a Playbook export
(`demo_template.json.gz`, with the moment it was built and the key of the demo code and
content it came from). `instantiate(path)` restores it into a new file with every
timestamp moved by the time since then, so the history ends "now" exactly as a build run
now would (ages, and so decay, scores and rungs, are the same), and the session files the
review queue points at are written beside it. A template whose key is not the current
demo's is not used: the caller builds instead.

`python -m playbook.demo.template` writes it (after a change to the demo or the curator); a
test checks that the shipped template is what the builder makes.

No Textual here: this module is part of the core.
"""

from __future__ import annotations

import gzip
import hashlib
import json
import sys
import tempfile
import time
import typing
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from ..core.version import __version__
from ..interop.importing import import_snapshot
from ..interop.snapshot import SECTIONS, export_snapshot
from ..interop.snapshot_rows import Snapshot, Stamp
from ..review import queue
from ..store import iso, open_store, parse_iso
from . import diary
from .build import DIARY_NAME, DemoPlaybook, build_demo

TEMPLATE_FILE = Path(__file__).with_name("template.json.gz")
FOLDER = "{demo}"  # where the demo's folder stands in the template's session refs
FORMAT = 1


def demo_key() -> str:
    """The key of this demo (the cache's folder, the template's match): changes with the
    version and with the demo's code or content."""
    digest = hashlib.sha256(__version__.encode())
    here = Path(__file__).parent
    for name in (
        "build.py",
        "content.py",
        "vocabulary.py",
        "rules_code.py",
        "rules_systems.py",
        "curation_cases.py",
        "diary.py",
        "history.py",
    ):
        digest.update((here / name).read_bytes())
    return digest.hexdigest()[:16]


def stamp_fields() -> dict[str, frozenset[str]]:
    """Section -> the fields of its rows that are timestamps (the export's `Stamp` type)."""

    out = {}
    for section in SECTIONS:
        model = typing.get_args(Snapshot.model_fields[section].annotation)[0]
        hints = typing.get_type_hints(model, include_extras=True)
        out[section] = frozenset(
            name for name, hint in hints.items() if hint is Stamp or Stamp in typing.get_args(hint)
        )
    return out


def _session_refs(doc: dict[str, Any], old: str, new: str) -> None:
    """Replace the folder `old` by `new` at the start of every session ref."""

    def moved(ref: Any) -> Any:
        return new + ref[len(old) :] if isinstance(ref, str) and ref.startswith(old) else ref

    for section, rows in doc.items():
        if not isinstance(rows, list):
            continue
        for row in rows:
            prov = row.get("provenance")
            if isinstance(prov, dict):
                prov["session_ref"] = moved(prov.get("session_ref"))
            if section == "watermarks":
                row["session_ref"] = moved(row["session_ref"])


def _shift(doc: dict[str, Any], by: timedelta) -> None:
    """Move every timestamp of an export document by `by`, in place."""

    for section, fields in stamp_fields().items():
        for row in doc.get(section, []):
            for name in fields:
                value = row.get(name)
                if value is not None:
                    row[name] = iso(parse_iso(value) + by)


def make_template(target: Path = TEMPLATE_FILE, *, now: datetime | None = None) -> Path:
    """Build the demo (at `now`) and write it as the template (deterministic bytes)."""

    now = (now or datetime.now(UTC)).astimezone(UTC).replace(microsecond=0)
    with tempfile.TemporaryDirectory(prefix="playbook-demo-template-") as tmp:
        info = build_demo(Path(tmp) / "demo.sqlite3", now=now)
        with open_store(info.path, mode="read") as store:
            doc = export_snapshot(store)
        _session_refs(doc, tmp, FOLDER)
    template = {
        "format": FORMAT,
        "key": demo_key(),
        "now": now.isoformat(),
        "rule_ids": info.rule_ids,
        "snapshot": doc,
    }
    data = json.dumps(template, ensure_ascii=False, sort_keys=True, separators=(",", ":"))
    target.write_bytes(gzip.compress(data.encode("utf-8"), mtime=0))
    return target


def load_template(source: Path = TEMPLATE_FILE) -> dict[str, Any] | None:
    """The shipped template, or None when there is none or it is not the current demo's."""
    try:
        template: dict[str, Any] = json.loads(gzip.decompress(source.read_bytes()))
    except (OSError, ValueError, EOFError):
        return None
    if template.get("format") != FORMAT or template.get("key") != demo_key():
        return None
    return template


def instantiate(
    path: Path, *, now: datetime | None = None, source: Path = TEMPLATE_FILE
) -> DemoPlaybook | None:
    """Restore the template into a new file at `path`, its history ending at `now`, and
    write the session files beside it; None when there is no usable template."""

    started = time.perf_counter()
    template = load_template(source)
    if template is None:
        return None
    if path.exists():
        raise FileExistsError(f"{path} already exists; the demo builds a new file")
    now = (now or datetime.now(UTC)).astimezone(UTC).replace(microsecond=0)
    doc = template["snapshot"]
    _shift(doc, now - datetime.fromisoformat(template["now"]))  # the template's own "now"
    _session_refs(doc, FOLDER, str(path.parent))
    ids: list[str] = template["rule_ids"]
    diary_path = path.with_name(DIARY_NAME)
    diary_path.write_text(diary.render_diary(ids), encoding="utf-8")
    path.with_name(diary.HOOK_SESSION_NAME).write_text(diary.HOOK_SESSION, encoding="utf-8")
    snapshot = Snapshot.model_validate(doc)
    with open_store(path) as store:
        import_snapshot(store, snapshot)

        return DemoPlaybook(
            path=path,
            diary_path=diary_path,
            rule_ids=ids,
            bullets=store.count_bullets(),
            events=store.event_count(),
            proposals=queue.count_pending(store),
            conflicts=len(store.conflicts()),
            blocked=len(store.blocked()),
            seconds=time.perf_counter() - started,
        )


if __name__ == "__main__":  # pragma: no cover
    if sys.argv[1:]:
        sys.exit(
            "usage: python -m playbook.demo.template (after a change to the demo or the curator)"
        )
    print(f"wrote {make_template()}")
