"""Write what was read from a cass-memory file into a playbook, empty or not.

A `playbook.yaml` and a `blocked.log` can come in either order, and into a playbook that
already has rules:

- a bullet whose content is already in the playbook merges into that bullet: its events are
  appended, each once (an event the log already holds is not written again), and the
  existing bullet keeps its own fields; other bullets are added, keeping their cass-memory id
  when it is short, printable and free (else a new id, listed in `report.ids`);
- `replacedBy` becomes a `supersedes` edge unless the edge is there already (or its original
  is an existing rule that is still active: a supersedes edge means the original was
  retired, and the import does not retire existing rules);
- `deprecatedPatterns` and `blocked.log` entries become human blocks unless the same text
  (normalized) is blocked already, lifted blocks included: a person's unblock stands;
- imported deprecation reasons go to the decision log (`deprecate` entries).

Drafts come in active (cass-memory shows its drafts to agents), and workspace rules get
the workspace identity of their repository (`cass.workspaces`).

So importing the same file twice adds nothing the second time. Existing bullets that got new
evidence go through the maturity pass (their own evidence moved them); imported bullets keep
the maturity cass-memory recorded unless `rerate` is set.
"""

from __future__ import annotations

import re
from datetime import datetime
from typing import TYPE_CHECKING, Any

from ..core.text import content_hash
from ..store import new_batch_id
from ..store.store import new_id
from .cass.workspaces import assign_workspaces
from .cass_rows import (
    _block_rows,
    _bullet_row,
    _deprecations,
    _event_row,
    _identity,
    _maturity_row,
    _stamp,
    _state,
)
from .import_common import ImportReport, Progress, Ticker, finish, import_transaction, movable_rules
from .notes import Note

if TYPE_CHECKING:
    from ..store import PlaybookStore
    from .cass import CassImport, ImportedBullet, ImportedEvent


# Ids we keep from another tool: short, printable, no spaces.
_KEEPABLE_ID = re.compile(r"[A-Za-z0-9][A-Za-z0-9._:-]{0,63}")


class _Plan:
    """Which imported bullets are new (and their ids) and which merge into existing ones."""

    def __init__(self, store: PlaybookStore, bullets: list[ImportedBullet], empty: bool) -> None:
        self.ids: dict[str, str] = {}  # source id -> bullet id in this playbook
        self.renamed: dict[str, str] = {}  # source id -> new id, when it could not be kept
        self.merged: dict[str, str] = {}  # source id -> existing bullet id
        self.retired: set[str] = set()  # existing bullets (merged into) that are retired
        keepable = [b.source_id for b in bullets if _KEEPABLE_ID.fullmatch(b.source_id)]
        taken = set() if empty else store.bulk.existing_ids(keepable)
        by_hash = (
            {} if empty else store.bulk.bullets_by_hash(content_hash(b.content) for b in bullets)
        )
        claimed: set[str] = set()
        for b in bullets:
            target = _match(b, by_hash.get(content_hash(b.content), []), claimed)
            if target is not None:
                bid, state = target
                claimed.add(bid)
                self.ids[b.source_id] = self.merged[b.source_id] = bid
                if state == "retired":
                    self.retired.add(bid)
                continue
            new = b.source_id
            if not _KEEPABLE_ID.fullmatch(new) or new in taken:
                new = new_id("b")
                while new in taken:  # pragma: no cover - 32 random bits
                    new = new_id("b")
                self.renamed[b.source_id] = new
            self.ids[b.source_id] = new
            taken.add(new)

    def is_new(self, source_id: str) -> bool:
        return source_id in self.ids and source_id not in self.merged


def _match(
    b: ImportedBullet, same_content: list[tuple[str, str]], claimed: set[str]
) -> tuple[str, str] | None:
    """The existing bullet an imported one merges into: the one with its id, else the
    first unclaimed one (live before retired), else None."""
    free = [m for m in same_content if m[0] not in claimed]
    for m in free:
        if m[0] == b.source_id:
            return m
    live = [m for m in free if m[1] != "retired"]
    pool = live or free
    return pool[0] if pool else None


def import_cass(
    store: PlaybookStore,
    cass: CassImport,
    *,
    progress: Progress | None = None,
    actor: str = "human",
    source: str | None = None,
    rerate: bool = False,
    workspace: str | None = None,
    keep_global: bool = False,
) -> ImportReport:
    """Write a parsed cass-memory file into `store` in one transaction (see the module).
    Workspace rules are keyed by the workspace identity (`cass.workspaces`); `workspace`
    is the one rules without a key take (the repository whose `.cass` folder holds the
    file), None when it is not known; with it, the file's global rules are that
    repository's too, unless `keep_global`."""
    fmt = "cass" if cass.kind == "playbook" else "cass-blocked-log"
    report = ImportReport(format=fmt, notes=list(cass.notes.items), batch_id=new_batch_id())
    if cass.kind == "playbook":
        report.workspaces = assign_workspaces(cass.bullets, workspace, keep_global=keep_global)
    batch = report.batch_id
    total = len(cass.bullets) + len(cass.events) + len(cass.edges) + len(cass.blocks)
    tick = Ticker(total, progress)
    with import_transaction(store):
        now = store.now()
        empty = store.bulk.is_empty()
        plan = _Plan(store, cass.bullets, empty)
        report.ids, report.merged = plan.renamed, plan.merged
        new = [b for b in cass.bullets if plan.is_new(b.source_id)]
        report.live = _live(new)
        events: list[ImportedEvent] = []
        if cass.kind == "playbook":
            report.counts["bullets"] = store.bulk.insert_rows(
                "bullets", (_bullet_row(b, plan.ids, batch) for b in new), on_rows=tick
            )
            store.bulk.insert_rows("maturity_log", (_maturity_row(b, plan.ids, batch) for b in new))
            events = _events_to_write(store, cass.events, plan, now, report.notes, empty)
            report.counts["feedback"] = store.bulk.insert_events(
                (_event_row(e, plan.ids, now, batch) for e in events), on_rows=tick
            )
            report.counts["edges"] = store.bulk.insert_rows(
                "edges", _edge_rows(store, cass, plan, report.notes, empty, batch)
            )
            store.bulk.insert_rows("decisions", _deprecations(new, plan.ids, now, actor, batch))
        blocks = _block_rows(store, cass.blocks, now, report.notes, empty)
        report.counts["blocked_patterns"] = store.bulk.insert_rows("blocked_patterns", blocks)
        tick(len(cass.edges) + len(cass.blocks))
        touched = {plan.ids[e.source_id] for e in events} & set(plan.merged.values())
        movable = {plan.ids[k]: m for k, m in movable_rules(new).items()}
        added = any(report.counts.values())
        log = None
        if added:
            log = {
                "format": fmt,
                "source": source,
                "counts": report.counts,
                "unmapped": len(report.notes),
                "ids": report.ids,
                "merged": report.merged,
                "live": report.live,
                "workspaces": report.workspaces,
            }
            if cass.kind == "blocked-log":
                log["forgotten"] = {b["id"]: b["source"] for b in blocks if b.get("source")}
        finish(
            store,
            report,
            actor=actor,
            movable=movable,
            imported=[plan.ids[b.source_id] for b in new],
            touched=touched,
            rerate=rerate,
            was_empty=empty,
            log=log,
        )
    tick.finish()
    return report


# --------------------------------------------------------------------------- rows


def _live(new: list[ImportedBullet]) -> dict[str, int]:
    """How many of the imported rules agents will be shown, and how many were drafts."""
    return {
        "rules": sum(1 for b in new if _state(b) == "active" and b.maturity != "deprecated"),
        "from_draft": sum(1 for b in new if b.state == "draft"),
    }


def _events_to_write(
    store: PlaybookStore,
    events: list[ImportedEvent],
    plan: _Plan,
    now: datetime,
    notes: list[Note],
    empty: bool,
) -> list[ImportedEvent]:
    """The events to append: all of a new bullet's; of a merged one, those the log does not
    hold yet (counted, so an event written twice in the file is written twice)."""
    future = [e for e in events if e.at > now]
    if future:
        notes.append(
            Note(
                "feedback",
                f"{len(future)} event(s) dated after the import (e.g. {_stamp(future[0].at)}); "
                "they count as new (age 0) until then",
                "feedback events dated after the import count as new (age 0) until then",
            )
        )
    if empty or not plan.merged:
        return [e for e in events if e.source_id in plan.ids]
    have = store.bulk.event_identities(set(plan.merged.values()))
    out: list[ImportedEvent] = []
    for e in events:
        if e.source_id not in plan.ids:
            continue
        if e.source_id in plan.merged:
            key = _identity(e, plan.ids)
            if have[key] > 0:
                have[key] -= 1
                continue
        out.append(e)
    return out


def _edge_rows(
    store: PlaybookStore,
    cass: CassImport,
    plan: _Plan,
    notes: list[Note],
    empty: bool,
    batch: str | None,
) -> list[dict[str, Any]]:
    have = set() if empty else store.bulk.edge_identities()
    created = {b.source_id: b.created_at for b in cass.bullets}
    rows: list[dict[str, Any]] = []
    for e in cass.edges:
        src, dst = plan.ids.get(e.successor_source_id), plan.ids.get(e.original_source_id)
        if src is None or dst is None or src == dst or (e.kind, src, dst) in have:
            continue
        original = e.original_source_id
        if original in plan.merged and dst not in plan.retired:
            notes.append(
                Note(
                    original,
                    f"replacedBy {e.successor_source_id} not applied: it merged into {dst}, "
                    "which is still active here",
                    "replacedBy not applied to existing rules that are still active",
                )
            )
            continue
        have.add((e.kind, src, dst))
        rows.append(
            {
                "id": None,
                "kind": e.kind,
                "src": src,
                "dst": dst,
                "at": _stamp(created[e.successor_source_id]),
                "batch_id": batch,
            }
        )
    return rows
