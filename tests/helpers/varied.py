"""A playbook with a bit of everything, for export/import tests."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

from playbook.core.model import Provenance
from playbook.curation import curate, run_maturity_pass
from playbook.curation.outcomes import apply_outcome
from playbook.review import queue
from playbook.store import PlaybookStore

from . import Clock

SPAN_DAYS = 300  # the builder moves the clock forward exactly this much


def add(store: PlaybookStore, content: str, **fields: Any) -> str:
    result = curate(store, [{"type": "add", "content": content, **fields}])
    bid = result.outcomes[0].bullet_id
    assert bid is not None, result.outcomes
    return bid


def build_varied(store: PlaybookStore, clock: Clock) -> dict[str, str]:
    """Pinned, proven, deprecated, replaced (retired), inverted, backdated events, blocks
    (one lifted), a conflict, proposals in every state, an outcome receipt, a watermark,
    a per-bullet half-life, a draft, and hostile text. Ends with a maturity pass."""
    begin = clock()
    ids: dict[str, str] = {}
    prov = {"session_ref": "session:one", "byte_offset": 4096}
    ids["npm"] = add(store, "Pin npm to 11 in release jobs", tags=["ci", "npm"], category="ci")
    ids["pytest"] = add(store, "Run pytest with -x in CI", tags=["pytest"], category="testing")
    ids["black"] = add(store, "Use black for formatting", category="tooling")
    ids["migrate"] = add(store, "Always run migrations inside a transaction", category="db")
    ids["sleep"] = add(store, "Sleep 5 seconds before retrying the deploy", category="deploy")
    ids["squash"] = add(store, "Always squash merge feature branches", category="git")
    ids["hostile"] = add(
        store, "Ünïcode rule: \u202egnirts\u202c and \x1b[31mred\x1b[0m\nsecond line"
    )
    ids["slow"] = store.insert_bullet(
        "Refresh the lockfile weekly", half_life_days=30.0, category="ci", source="manual"
    ).id
    ids["draft"] = store.insert_bullet("Maybe cache docker layers", state="draft").id
    clock.advance(days=20)
    for _ in range(11):  # proven
        curate(store, [{"type": "helpful", "bullet_id": ids["npm"], "context": "release ok"}])
        clock.advance(days=1)
    store.pin(ids["npm"], "release policy, agreed with the team")
    # Observation time long before knowledge time.
    store.add_feedback(ids["pytest"], "helpful", at=clock() - timedelta(days=100), weight=2.0)
    store.add_feedback(
        ids["pytest"],
        "harmful",
        reason="wasted_time",
        context="flaky on arm",
        provenance=Provenance(session_ref="session:two", byte_offset=12),
        actor="human",
        at=clock() - timedelta(days=40),
    )
    store.add_feedback(ids["slow"], "helpful", weight=0.5)
    clock.advance(days=30)
    curate(
        store,
        [{"type": "replace", "bullet_id": ids["black"], "content": "Use ruff format"}],
        provenance=prov,
    )
    curate(store, [{"type": "deprecate", "bullet_id": ids["migrate"], "reason": "too slow"}])
    for _ in range(4):  # harmed into an AVOID: anti-pattern
        curate(store, [{"type": "harmful", "bullet_id": ids["sleep"], "reason": "caused_bug"}])
        clock.advance(hours=2)
    add(store, "Never squash merge feature branches", category="git")  # conflict
    kept = store.block("npm install --legacy-peer-deps", "hides peer conflicts")
    lifted = store.block("disable the linter", "was too broad")
    clock.advance(days=1)
    store.unblock(lifted)
    ids["block"] = kept
    staged = queue.stage(
        store,
        [
            {"type": "add", "content": "Cache pip downloads in CI", "tags": ["ci"]},
            {"type": "add", "content": "Commit generated files", "category": "git"},
            {"type": "helpful", "bullet_id": ids["pytest"]},
        ],
        provenance=prov,
    ).staged
    queue.approve(store, staged[0])
    queue.reject(store, staged[1], "generated files stay out of git", block=True)
    apply_outcome(
        store,
        {"outcome": "success", "bullet_ids": [ids["npm"], ids["pytest"]], "receipt": "run-1"},
    )
    with store.transaction():
        store.set_watermark("session:one", 8192)
    elapsed = (clock() - begin).total_seconds() / 86400
    clock.advance(days=SPAN_DAYS - elapsed)
    run_maturity_pass(store, touched=store.active_ids())
    return ids


def build_with_outcomes(store: PlaybookStore, clock: Clock) -> dict[str, str]:
    """`build_varied` (a bit of everything), then outcomes with receipts and a replay."""
    ids = build_varied(store, clock)
    live = [b.id for b in store.bullets()][:3]
    for i in range(4):
        clock.advance(hours=7)
        r = apply_outcome(
            store,
            {"outcome": ["success", "failure", "partial"][i % 3], "bullet_ids": live,
             "receipt": f"task-{i}", "context": f"task {i}"},
        )  # fmt: skip
        assert r.applied
    assert apply_outcome(store, {"outcome": "success", "receipt": "task-0"}).replayed
    curate(store, [{"type": "harmful", "bullet_id": live[0], "reason": "outdated"}])
    return ids
