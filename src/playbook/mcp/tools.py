"""What `playbook mcp`'s tools do, without the SDK: each takes plain arguments and returns the
plain dict its output model (`schemas`) describes (shaped by `views`), or raises
`ToolFailure` with a message for the agent. The server (`server`) wraps each one.

An agent is untrusted: every argument is bounded (the policy's limits, checked here even
though the schemas say them too), a transcript path is read only when
`project.sessions.check_transcript` accepts it and only so much per call, and whatever an
agent writes goes through `curate_as_agent` or the review queue with actor "agent".
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any, BinaryIO

from ..core.errors import InvalidInput, SchemaTooOld
from ..core.limits import TooLong, check
from ..core.policy import DEFAULT_POLICY
from ..curation.outcomes import InvalidOutcome, apply_outcome
from ..interop.agents_md import render, render_store
from ..project.sessions import TranscriptRefused, check_transcript
from ..reflection.reflectors import HeuristicReflector
from ..reflection.session import reflect_session
from ..retrieval.query import recall
from ..review import bullet_detail
from ..review import explain_hidden as explain
from ..review.actions import check_mark, mark_delta
from ..review.agent import curate_as_agent
from ..review.queue import pending, stage
from ..review.stats import playbook_stats
from ..store import open_store, resolve_target
from . import views as views
from .sources import Sources

if TYPE_CHECKING:
    from ..core.policy import Policy
    from ..store import PlaybookStore, Target

ORIGIN = "mcp"  # proposals staged over MCP say so
HIDDEN_MOST = 10  # hidden rules described with explain_hidden
DECISIONS_SHOWN = 10  # latest decisions in show_bullet
MATURITY_SHOWN = 20  # latest rungs in show_bullet
REFLECT_BYTES = 8 << 20  # transcript bytes one reflect_session call reads
PROPOSE_NOTE = "nothing is applied until a person approves it"
NEEDS_UPGRADE = "a person upgrades it with 'playbook migrate' (an agent's call never does)"


class ToolFailure(ValueError):
    """A tool call that cannot be carried out; the message goes back to the agent."""


@contextmanager
def _store(
    db: Target, policy: Policy | None, *, create: bool, reads: bool = False
) -> Iterator[PlaybookStore]:
    """A fresh connection per call: every call sees other processes' latest writes.

    An agent's call never upgrades the playbook's schema (as a hook never does): an upgrade
    reads every row, minutes on a team's playbook, holding the write lock for everyone,
    under the MCP client's own time limit. On an older schema a call that only `reads`
    answers from it read-only when it can; any other is refused (`SchemaTooOld`, whose
    message names `playbook migrate`)."""

    if not create and not db.exists():
        raise ToolFailure(f"no playbook at {db} yet; run 'playbook init' first")
    try:
        store = open_store(db, policy, mode="create" if create else "write", upgrade=False)
    except SchemaTooOld as exc:
        if not reads:
            raise ToolFailure(f"{exc}: nothing was written; {NEEDS_UPGRADE}") from None
        try:
            store = open_store(db, policy, mode="read")
        except SchemaTooOld as old:  # too old to be read as it is
            raise ToolFailure(f"{old}; {NEEDS_UPGRADE}") from None
    with store:
        yield store


def _provenance(session_ref: str | None, byte_offset: int | None = None) -> dict[str, Any]:
    return {"session_ref": session_ref, "byte_offset": byte_offset}


class _Window:
    """A transcript seen up to byte `end`: one call's bounded share of it (the diary
    reader keeps a last line cut by the end for the next call)."""

    def __init__(self, raw: BinaryIO, end: int) -> None:
        self.raw = raw
        self.end = end
        self.name = raw.name

    def seekable(self) -> bool:
        return True

    def seek(self, pos: int, whence: int = 0) -> int:
        return self.raw.seek(pos, whence)

    def read(self, n: int | None = -1) -> bytes:
        left = max(0, self.end - self.raw.tell())
        return self.raw.read(left if n is None or n < 0 else min(n, left))


class PlaybookTools:
    """The tool implementations, callable without MCP (the server wraps each one)."""

    def __init__(
        self,
        db: str | Path,
        policy: Policy | None = None,
        workspace: str | None = None,
        read_db: Target | None = None,
    ) -> None:
        self.db = resolve_target(db)  # a file or a postgresql:// URL
        # `read_db`: a streaming replica (checked: `store.replica.check_read_target`).
        self.sources = Sources(self.db, read_db, policy)
        self.policy = policy
        self.limits = policy or DEFAULT_POLICY
        self.workspace = workspace  # the project's identity: the AGENTS.md resource's scope

    def _bounded(self, *fields: tuple[str, Any, str]) -> None:
        """Refuse a parameter over its bound in the policy (never cut it)."""

        try:
            check(self.limits, fields)
        except TooLong as exc:
            raise ToolFailure(str(exc)) from None

    @staticmethod
    def _range(name: str, value: int, low: int, high: int | None = None) -> None:
        if value < low or (high is not None and value > high):
            bound = f"between {low} and {high}" if high is not None else f"at least {low}"
            raise ToolFailure(f"{name} must be {bound}")

    # ------------------------------------------------------------------ reading

    def recall(
        self,
        query: str,
        limit: int = 10,
        scope: list[str] | None = None,
        explain_hidden: bool = False,
    ) -> dict[str, Any]:
        self._range("limit", limit, 1 if explain_hidden else 0, 100)
        self._bounded(("query", query, "query"), ("scope", scope or [], "label"))
        with self.sources.replica_or(_store, create=False, reads=True) as store:
            r = recall(store, query, limit=limit, scope=scope or None)
            hidden = None
            if explain_hidden:
                hidden = explain(store, query, limit=limit, scope=scope or None, most=HIDDEN_MOST)
        out: dict[str, Any] = {
            name: [views.rule(i.bullet, i.final_score) for i in getattr(r, name)]
            for name in ("bullets", "anti_patterns", "deprecated_warnings")
        }
        if r.degraded:
            out["degraded"] = list(r.degraded)
        if hidden is not None:
            out["hidden"] = views.hidden(hidden, HIDDEN_MOST)
        return out

    def list_rules(
        self,
        category: str | None = None,
        tag: str | None = None,
        maturity: Sequence[str] | None = None,
        type: str | None = None,
        limit: int = 50,
        offset: int = 0,
    ) -> dict[str, Any]:
        self._range("limit", limit, 1, 100)
        self._range("offset", offset, 0)
        self._bounded(
            ("category", category, "label"), ("tag", tag, "label"), ("maturity", maturity, "label")
        )
        with self.sources.replica_or(_store, create=False, reads=True) as store:
            found = store.bullets(maturity=maturity or None, tag=tag, type=type)
            if category is not None:
                wanted = category.strip().lower()
                found = [b for b in found if b.category.lower() == wanted]
            scores = store.scores([b.id for b in found]) if found else {}
        effective = {b.id: scores[b.id].effective if b.id in scores else 0.0 for b in found}
        found.sort(key=lambda b: (-effective[b.id], b.id))
        shown, page = views.page(found, offset, limit)
        return {"rules": [views.rule(b, effective[b.id]) for b in shown], **page}

    def stats(self) -> dict[str, Any]:
        with self.sources.replica_or(_store, create=False, reads=True) as store:
            return playbook_stats(store)

    def pending_proposals(
        self,
        session_ref: str | None = None,
        type: str | None = None,
        limit: int = 20,
        offset: int = 0,
    ) -> dict[str, Any]:
        self._range("limit", limit, 1, 100)
        self._range("offset", offset, 0)
        self._bounded(("session_ref", session_ref, "ref"))
        with _store(self.db, self.policy, create=False, reads=True) as store:
            found = pending(store, similar=False, session=session_ref, delta_type=type)
        shown, page = views.page(found, offset, limit)
        return {"proposals": [views.proposal(p) for p in shown], **page}

    def show_bullet(
        self, bullet_id: str, events_limit: int = 10, events_offset: int = 0
    ) -> dict[str, Any]:
        self._range("events_limit", events_limit, 0, 100)
        self._range("events_offset", events_offset, 0)
        self._bounded(("bullet_id", bullet_id, "id"))
        with _store(self.db, self.policy, create=False, reads=True) as store:
            d = bullet_detail(store, bullet_id, decisions=DECISIONS_SHOWN)
        events, page = views.page(list(reversed(d.timeline)), events_offset, events_limit)
        return views.detail(d, events, page, maturity_shown=MATURITY_SHOWN)

    # ------------------------------------------------------------------ writing

    def mark_feedback(
        self,
        bullet_id: str,
        kind: str,
        reason: str | None = None,
        context: str | None = None,
        session_ref: str | None = None,
        receipt: str | None = None,
    ) -> dict[str, Any]:
        try:  # the API's one check of a mark; its message goes back to the agent
            check_mark(
                self.limits,
                bullet_id,
                kind,
                reason=reason,
                context=context,
                session_ref=session_ref,
                receipt=receipt,
            )
        except InvalidInput as exc:
            raise ToolFailure(str(exc)) from None
        delta = mark_delta(bullet_id, kind, reason=reason, context=context)
        with (
            _store(self.db, self.policy, create=False) as opened,
            self.sources.writing(opened) as store,
        ):
            done = curate_as_agent(
                store, [delta], _provenance(session_ref), origin=ORIGIN, receipt=receipt
            )
            if done.nothing_done:
                o = done.outcomes[0]
                raise ToolFailure(o.reason or o.status)
            batch = done.curated.batch_id if done.curated else None
            if done.replayed and receipt is not None:  # (a replay had a receipt)
                batch = store.receipt_batch(receipt)
            events = store.batch_events(bullet_id, batch) if batch else []
        stored = events[0] if events else None
        out: dict[str, Any] = {
            "status": "replayed" if done.replayed else "applied",
            "bullet_id": bullet_id,
            "kind": stored.kind if stored else kind,
            "receipt": receipt,
        }
        if stored is not None and stored.reason is not None:
            out["harm_reason"] = stored.reason
        curated = done.curated
        return out | views.changes(
            curated.maturity_changes if curated else [], curated.inversions if curated else []
        )

    def record_outcome(
        self,
        outcome: str,
        bullet_ids: list[str],
        receipt: str | None = None,
        context: str | None = None,
        session_ref: str | None = None,
    ) -> dict[str, Any]:
        self._bounded(("session_ref", session_ref, "ref"))
        report = {
            "outcome": outcome,
            "bullet_ids": bullet_ids,
            "receipt": receipt,
            "context": context,
        }
        with (
            _store(self.db, self.policy, create=False) as opened,
            self.sources.writing(opened) as store,
        ):
            try:
                r = apply_outcome(store, report, provenance=_provenance(session_ref), actor="agent")
            except InvalidOutcome as exc:
                raise ToolFailure(str(exc)) from None
        return {
            "outcome": r.outcome,
            "applied": r.applied,
            "skipped": r.skipped,
            "duplicate_citations": r.duplicate_citations,
            "replayed": r.replayed,
        } | views.changes(r.maturity_changes, r.inversions)

    def propose_deltas(
        self,
        deltas: list[Any],
        session_ref: str | None = None,
        byte_offset: int | None = None,
    ) -> dict[str, Any]:
        if byte_offset is not None:
            self._range("byte_offset", byte_offset, 0)
        self._bounded(("session_ref", session_ref, "ref"))
        if not deltas:
            raise ToolFailure("nothing staged: the batch is empty")
        with (
            _store(self.db, self.policy, create=True) as opened,
            self.sources.writing(opened) as store,
        ):
            r = stage(
                store, deltas, provenance=_provenance(session_ref, byte_offset), origin=ORIGIN
            )
        outcomes: list[dict[str, Any]] = [
            {"index": i, "status": "staged", "proposal_id": pid}
            for i, pid in zip(r.staged_at, r.staged, strict=True)
        ]
        outcomes += [{"index": i, "status": "already-proposed"} for i in r.duplicates]
        outcomes += [{"index": i, "status": "rejected", "reason": why} for i, why in r.rejected]
        outcomes.sort(key=lambda o: o["index"])
        if not r.staged and not r.duplicates:
            reasons = "; ".join(f"[{i}] {why}" for i, why in r.rejected[:10])
            more = f"; and {len(r.rejected) - 10} more" if len(r.rejected) > 10 else ""
            raise ToolFailure(f"nothing staged: every delta was rejected: {reasons}{more}")
        counts = [
            (len(r.staged), "staged for a person's review"),
            (len(r.duplicates), "already proposed"),
            (len(r.rejected), "rejected"),
        ]
        note = ", ".join(f"{n} {what}" for n, what in counts if n) + "; " + PROPOSE_NOTE
        return {
            "outcomes": outcomes,
            "staged": len(r.staged),
            "already_proposed": len(r.duplicates),
            "rejected": len(r.rejected),
            "note": note,
        }

    def reflect_session(self, transcript_path: str) -> dict[str, Any]:
        """Reflect on an agent's transcript with the zero-model reflector, staging what it
        teaches; at most `REFLECT_BYTES` of it per call (`more` says to call again)."""

        self._bounded(("transcript_path", transcript_path, "ref"))
        try:
            path = check_transcript(transcript_path)
        except TranscriptRefused as exc:
            raise ToolFailure(f"transcript refused: {exc}") from None
        ref = str(path)
        with (
            _store(self.db, self.policy, create=True) as opened,
            self.sources.writing(opened) as store,
        ):
            before = store.watermark(ref)
            try:
                with path.open("rb") as raw:
                    size = path.stat().st_size
                    end = before + REFLECT_BYTES
                    window = _Window(raw, end)
                    r = reflect_session(
                        store,
                        ref,
                        window,
                        HeuristicReflector(),
                        origin=ORIGIN,
                    )
            except OSError as exc:
                raise ToolFailure(f"cannot read the transcript: {exc.strerror or exc}") from None
        if r.errors:
            raise ToolFailure("; ".join(r.errors))
        cut = size > end
        if cut and r.watermark_after == before:
            raise ToolFailure(
                f"one record at byte {before} is over {REFLECT_BYTES >> 20} MiB; "
                "reflect this session with 'playbook reflect' instead"
            )
        return {
            "session_ref": ref,
            "staged": list(r.staged),
            "already_proposed": len(r.duplicates),
            "rejected": [x.reason for x in r.rejected],
            "watermark_before": r.watermark_before,
            "watermark_after": r.watermark_after,
            "more": cut,
        }

    def agents_md(self) -> str:
        """The AGENTS.md block: the protocol, then the live rules of `workspace` (global
        ones and its own; every rule without one), best first, within the default budget."""

        if not self.db.exists():
            return render([], {})
        with self.sources.replica_or(_store, create=False, reads=True) as store:
            return render_store(store, workspace=self.workspace)
