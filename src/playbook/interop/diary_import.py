"""A cass-memory diary into the review queue: each lesson a proposal a person decides.

Each of the diary's ``keyLearnings``, ``preferences`` and ``decisions`` becomes an ``add``
proposal (origin ``cass-diary``), with the diary's session as its provenance, its tags, and
its workspace as the workspace identity here (``cass.workspaces``: a path on this machine
gives that folder's identity, else its last folder's name; ``--workspace`` names another);
a diary without a workspace proposes global rules. Nothing becomes a rule until someone
approves it (``playbook proposals``, the workbench).

The staging is one transaction with the import's own decision-log entry. A lesson the queue
refuses (too long, near a blocked pattern) is a note; one already proposed from the same
session is not proposed again, so importing a diary twice adds nothing.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ..core.limits import problem
from ..core.terms import CASS_DIARY_ORIGIN
from ..review.queue import stage
from ..store import new_batch_id
from .cass.diary import LESSONS
from .cass.workspaces import identity_of
from .import_common import ImportReport, import_transaction
from .notes import Note

if TYPE_CHECKING:
    from ..store import PlaybookStore
    from .cass.diary import CassDiary


def _tags(store: PlaybookStore, diary: CassDiary, notes: list[Note]) -> list[str]:
    policy = store.policy
    fit = [t for t in dict.fromkeys(diary.tags) if problem(policy, "tag", t, "label") is None]
    kept = fit[: policy.max_tags]
    if len(kept) < len(diary.tags):
        notes.append(
            Note(
                f"{diary.id}.tags",
                f"{len(diary.tags) - len(kept)} tag(s) repeated, over the length limit or over "
                f"the {policy.max_tags} a rule may carry; dropped",
                "diary tags dropped (repeated, too long or too many)",
            )
        )
    return kept


def _scope(
    diary: CassDiary, count: int, workspace: str | None
) -> tuple[dict[str, Any], dict[str, Any]]:
    """The scope fields every proposal gets, and the report's `workspaces`."""
    if workspace is not None:
        key, how = workspace, "repository"
    elif diary.workspace is not None:
        key, how = identity_of(diary.workspace)
    else:
        return {}, {"repository": None, "scopes": {"global": count}, "counts": {}, "mapped": []}
    mapped = [
        {"scope": "workspace", "from": diary.workspace, "to": key, "how": how, "rules": count}
    ]
    report = {"repository": workspace, "scopes": {"workspace": count}, "counts": {how: count}}
    return {"scope": "workspace", "scope_key": key}, {**report, "mapped": mapped}


def import_diary(
    store: PlaybookStore,
    diary: CassDiary,
    *,
    source: str | None = None,
    actor: str = "human",
    workspace: str | None = None,
) -> ImportReport:
    """Stage the diary's lessons for review (see the module); the report's counts say how
    many were proposed and how many were proposed already. `workspace`, when given, is the
    workspace identity the lessons are scoped to, instead of the diary's own."""
    report = ImportReport(
        format="cass-diary", notes=list(diary.notes.items), batch_id=new_batch_id()
    )
    notes = report.notes
    scope, report.workspaces = _scope(diary, len(diary.items), workspace)
    tags = _tags(store, diary, notes)
    session = diary.session_path
    if session is not None and problem(store.policy, "session_ref", session, "ref"):
        notes.append(
            Note(f"{diary.id}.sessionPath", "over the length limit; not kept", "session path")
        )
        session = None
    deltas = []
    for item in diary.items:
        kind, category = LESSONS[item.section]
        delta: dict[str, Any] = {"type": "add", "content": item.text, "category": category}
        delta |= {"kind": kind, "tags": tags, **scope}
        delta["reason"] = f"cass-memory diary {diary.id}, {item.section}[{item.index}]"
        deltas.append(delta)
    staged: list[str] = []
    already = 0
    step = store.policy.max_batch
    with import_transaction(store):
        for start in range(0, len(deltas), step):
            result = stage(
                store,
                deltas[start : start + step],
                provenance={"session_ref": session},
                origin=CASS_DIARY_ORIGIN,
            )
            staged += result.staged
            already += len(result.duplicates)
            for i, reason in result.rejected:
                item = diary.items[start + i]
                notes.append(
                    Note(
                        f"{diary.id}.{item.section}[{item.index}]",
                        f"not proposed: {reason}",
                        "diary lessons the review queue refused (too long, or near a "
                        "blocked pattern)",
                    )
                )
        report.counts = {"proposed": len(staged), "already_proposed": already}
        if staged:
            detail = {
                "format": "cass-diary",
                "source": source,
                "diary": diary.id,
                "session": session,
                "counts": report.counts,
                "proposals": staged,
                "unmapped": len(notes),
            }
            store.log_decision(report.batch_id, actor, "import", None, "applied", None, detail)
    return report
