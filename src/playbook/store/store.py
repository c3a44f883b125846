"""PlaybookStore: the playbook's facts, behind one object. The store package holds every SQL
statement of Playbook.

The store is a façade holding the executor (`self.sql`, see `store/executor.py`), the
policy, the clock and the write transaction, composed of parts, each built with the
executor and what it needs (never the store):

* `bullets`   — `BulletRepo` (bullets.py): the rows, their lifecycle (maturity, retire,
                pin) and the token index; `store.bullets(state=...)` lists them (SPEC §2)
* `evidence`  — `EvidenceRepo` (evidence.py): the evidence cache folded from the log, and
                the write transaction that folds new events as it commits
* `feedback`  — `FeedbackLog` (feedback.py): the append-only feedback log and receipts
* `edges`, `blocks`, `conflicts` — `EdgeRepo`, `BlockRepo`, `ConflictRepo` (rulings.py):
                lineage, blocked patterns, conflict flags
* `decisions` — `DecisionLog` (base.py): the audit trail; `meta`, the meta table
* `blobs`     — `BlobRepo` (blobs.py): the embedding cache and reflection watermarks
* `scoring`   — `Scores` (scores.py): scores now or as of a moment

The façade keeps SPEC §2's names (`get_bullet`, `bullets`, `timeline`, `score`, `pin`,
`unpin`, `block`, `unblock`, `blocked`, `conflicts`, `lineage`) and, for its callers, every
name the store had before it was composed (`delegate`: the part's method).
The formulas live in `playbook.core.scoring`; the human-only rule in `playbook.core.authority`.
Open a store with `open_store(target)` (`store/target.py`).
"""

from __future__ import annotations

from collections.abc import Callable, Hashable
from contextlib import AbstractContextManager
from datetime import UTC, datetime
from functools import cached_property
from types import TracebackType
from typing import TYPE_CHECKING, Any, Concatenate, Generic, ParamSpec, Self, TypeVar, overload

from ..core.errors import StoreError
from ..core.policy import DEFAULT_POLICY, Policy
from ..core.terms import utcnow
from .backends import executor_of
from .base import DecisionLog, Meta
from .blobs import BlobRepo
from .bullets import BulletRepo
from .evidence import EvidenceRepo
from .feedback import FeedbackLog
from .ids import new_batch_id, new_id, random_hex
from .proposals import ProposalRepo
from .ranking import Rank
from .records import BlockedPattern, Conflict, Decision, Evidence, Lineage, iso, parse_iso
from .rulings import BlockRepo, ConflictRepo, EdgeRepo
from .schema import MEMORY_LATEST, memory_migration, run_migrations, schema_version
from .scores import Scores

if TYPE_CHECKING:
    from ..core.model import Bullet
    from .bulk import TableRows
    from .history import Past
    from .interchange import Interchange
    from .log_pages import LogPages
    from .postgres.roles import Roles
    from .ranking import RankCache
    from .replication import Replication
    from .reports import Reports
    from .views import Views

P = ParamSpec("P")
R = TypeVar("R")


class delegate(Generic[P, R]):
    """A name the façade keeps for its callers: the method of one of its parts. The bound
    method is kept on the instance at first use, so later calls cost a plain look-up."""

    __slots__ = ("method", "name", "part")

    def __init__(self, part: str, method: Callable[Concatenate[Any, P], R]) -> None:
        self.part = part
        self.method = method.__name__
        self.name = ""

    def __set_name__(self, owner: type, name: str) -> None:
        self.name = name

    @overload
    def __get__(self, obj: None, owner: type | None = None) -> Self: ...

    @overload
    def __get__(self, obj: object, owner: type | None = None) -> Callable[P, R]: ...

    def __get__(self, obj: object, owner: type | None = None) -> Self | Callable[P, R]:
        if obj is None:
            return self  # the class's attribute: the declaration
        bound: Callable[P, R] = getattr(getattr(obj, self.part), self.method)
        obj.__dict__[self.name] = bound
        return bound


class PlaybookStore:
    """The playbook in one database.

    `PlaybookStore(db, policy=..., clock=...)` takes what `open_database(path)` returns (or
    a `sqlite3.Connection`, or an executor) and migrates it; `open_store(target)` is the
    usual way in. A store is a context manager: leaving the block closes it.
    """

    def __init__(
        self,
        db: Any,
        *,
        policy: Policy = DEFAULT_POLICY,
        clock: Callable[[], datetime] = utcnow,
        migrate: bool = True,
    ) -> None:
        self.sql = sql = executor_of(db)
        self._policy = policy
        self.clock = clock
        now = self.now
        self.meta = Meta(sql)
        self.decisions = DecisionLog(sql, policy, now, self.meta)
        self.edges = EdgeRepo(sql, now, sql.transaction)
        self.evidence = EvidenceRepo(sql, policy, now, self.meta, self.edges)
        transaction = self.evidence.transaction
        self.bullets = BulletRepo(sql, now, transaction, self.decisions)
        self.feedback = FeedbackLog(sql, now, self.evidence)
        self.blocks = BlockRepo(sql, now, transaction, self.decisions)
        self.conflicts = ConflictRepo(sql, now, transaction, self.decisions)
        self.blobs = BlobRepo(sql, now, transaction)
        self.scoring = Scores(self.bullets, self.evidence, policy, now)
        self.proposals = ProposalRepo(sql)
        self.rank = Rank(sql, policy, self.evidence, self.decisions)
        if migrate:
            if schema_version(sql) < MEMORY_LATEST and not sql.read_only:
                # every step in one transaction: a new playbook's first write-ahead log
                # holds each page once, not once per step (a nearly full disk)
                with sql.transaction():
                    run_migrations(sql, [memory_migration(MEMORY_LATEST)], policy=policy)
            else:
                run_migrations(sql, [memory_migration(MEMORY_LATEST)], policy=policy)

    # ---------------------------------------------------------------- lifetime
    def close(self) -> None:
        """Close the connection (the store cannot be used afterwards)."""
        self.sql.close()

    def __enter__(self) -> Self:
        return self

    def __exit__(
        self,
        kind: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()

    @property
    def policy(self) -> Policy:
        """The scoring policy every part reads."""
        return self._policy

    @policy.setter
    def policy(self, policy: Policy) -> None:
        """A new policy reaches every part built so far that holds one (and the parts built
        later are built with it): a part never scores with another policy than the store."""
        self._policy = policy
        for part in list(vars(self).values()):
            if part is not self and hasattr(part, "policy") and not isinstance(part, Policy):
                part.policy = policy
        # (the rank table's cache key holds the policy's fingerprint: a new policy misses it)

    @property
    def read_only(self) -> bool:
        """Opened for reading only (`open_store(..., mode="read")`, or a read-only file)."""
        return self.sql.read_only

    @property
    def derived_by_database(self) -> bool:
        """The connection may not write what is derived from the log (the evidence cache, a
        rule's maturity): the database computes it (PostgreSQL's agent role, `pg roles`), so
        the maturity pass and step 5's test are asked of it."""
        return self.sql.derived_by_database

    # The read models a one-shot `mark` or `recall` never reads are built (and their modules
    # loaded) on first use: opening a store stays cheap (bench/cli.py).
    @cached_property
    def past(self) -> Past:
        """The playbook as it stood at a moment, and its whole history (`history.py`)."""
        from .history import Past  # lazy: mark, recall, every hook (bench/cli.py)

        return Past(self.sql, self.policy, self.evidence)

    @cached_property
    def views(self) -> Views:
        """What the workbench reads (`views.py`)."""
        from .views import Views  # lazy: mark, recall, every hook (bench/cli.py)

        return Views(self.sql, self.policy, self.now, self.evidence, self.past)

    @cached_property
    def reports(self) -> Reports:
        """Counts for `playbook stats` (`reports.py`)."""
        from .reports import Reports  # lazy: mark, recall, every hook (bench/cli.py)

        return Reports(self.sql)

    @cached_property
    def replication(self) -> Replication:
        """Where the database stands in streaming replication (`replication.py`)."""
        from .replication import Replication  # lazy: every command but the workbench's reads

        return Replication(self.sql)

    @cached_property
    def bulk(self) -> Interchange:
        """Export and import (`interchange.py`)."""
        from .interchange import Interchange  # lazy: mark, recall, every hook (bench/cli.py)

        return Interchange(self.sql)

    @cached_property
    def tables(self) -> TableRows:
        """Whole tables' rows: bulk appends, a playbook's copy (`bulk.py`)."""
        from .bulk import TableRows  # lazy: mark, recall, every hook (bench/cli.py)

        return TableRows(self.sql, self.transaction, self.bulk)

    @cached_property
    def log(self) -> LogPages:
        """The whole history a page at a time, for `policy eval` (`log_pages.py`)."""
        from .log_pages import LogPages  # lazy: mark, recall, every hook (bench/cli.py)

        return LogPages(self.sql)

    @property
    def roles(self) -> Roles:
        """The agent and reviewer roles of a PostgreSQL playbook (`postgres/roles.py`,
        loaded when asked: opening a store does not pay for it)."""
        from .postgres.roles import Roles  # lazy: psycopg: mark, recall, every hook

        return Roles(self.sql, self.policy, self.transaction)

    @property
    def rank_cache(self) -> RankCache:
        """What recall keeps between queries (`store.rank.cache`)."""
        return self.rank.cache

    @property
    def location(self) -> str:
        """Where the playbook is (a path, or a URL without its password), for messages."""
        return self.sql.label

    # ---------------------------------------------------------------- time & transactions
    def now(self) -> datetime:
        t = self.clock()
        if t.tzinfo is None:
            raise ValueError("the store's clock must return timezone-aware datetimes")
        return t.astimezone(UTC)

    def transaction(self) -> AbstractContextManager[None]:
        """One write transaction (re-entrant: an inner block joins the outer one). The
        feedback events it appends are folded into the evidence cache once, as it commits
        (`EvidenceRepo.transaction`)."""
        return self.evidence.transaction()

    def change_token(self) -> Hashable:
        """Changes whenever anyone commits to the playbook: compare two for live refresh."""
        return self.sql.change_token()

    def listen(self) -> None:
        """Make `change_token()` follow other connections' commits without asking the
        database each time, where the backend can push them (PostgreSQL's LISTEN/NOTIFY; a
        SQLite token is free to read already). For a long-lived watcher."""
        self.sql.listen()

    def half_life(self, bullet: Bullet | None = None, value: float | None = None) -> float:
        """A bullet's half-life in days (its own, or the policy's)."""
        return self.evidence.half_life(bullet.half_life_days if bullet is not None else value)

    def refold(self) -> int:
        """Fold again, at the half-life each rule is read with under this store's policy,
        the evidence cache and days of every rule kept at another, in one write transaction
        (`refold.py`; `doctor --fix`). Returns how many rules were folded again."""
        from .refold import Refold  # lazy: doctor --fix only

        return Refold(self.sql, self.evidence)()

    # ---------------------------------------------------------------- SPEC §2
    def get_bullet(self, bullet_id: str) -> Bullet | None:
        return self.bullets.get(bullet_id)

    timeline = delegate("feedback", FeedbackLog.timeline)
    latest_events = delegate("feedback", FeedbackLog.latest_events)
    score = delegate("scoring", Scores.score)
    pin = delegate("bullets", BulletRepo.pin)
    unpin = delegate("bullets", BulletRepo.unpin)
    block = delegate("blocks", BlockRepo.block)
    unblock = delegate("blocks", BlockRepo.unblock)
    blocked = delegate("blocks", BlockRepo.blocked)
    lineage = delegate("edges", EdgeRepo.lineage)
    # (`bullets(...)` and `conflicts()` are the parts themselves, called.)

    # ---------------------------------------------------------------- names kept for callers
    insert_bullet = delegate("bullets", BulletRepo.insert)
    set_maturity = delegate("bullets", BulletRepo.set_maturity)
    set_maturity_due = delegate("bullets", BulletRepo.set_maturity_due)
    set_maturities = delegate("bullets", BulletRepo.set_maturities)
    set_maturity_dues = delegate("bullets", BulletRepo.set_maturity_dues)
    due_for_maturity = delegate("bullets", BulletRepo.due_for_maturity)
    retire = delegate("bullets", BulletRepo.retire)
    activate = delegate("bullets", BulletRepo.activate)
    require_bullet = delegate("bullets", BulletRepo.require)
    get_bullets = delegate("bullets", BulletRepo.get_many)
    bullet_records = delegate("bullets", BulletRepo.records)
    bullet_state = delegate("bullets", BulletRepo.state)
    bullet_states = delegate("bullets", BulletRepo.states)
    count_bullets = delegate("bullets", BulletRepo.count)
    active_ids = delegate("bullets", BulletRepo.active_ids)
    maturity_as_of = delegate("bullets", BulletRepo.maturity_as_of)
    recall_candidates = delegate("bullets", BulletRepo.recall_candidates)

    fold_at_commit = delegate("evidence", EvidenceRepo.fold_at_commit)
    evidence_behind = delegate("evidence", EvidenceRepo.behind)
    evidence_watermark = delegate("evidence", EvidenceRepo.evidence_watermark)
    log_watermark = delegate("evidence", EvidenceRepo.log_watermark)
    sync_evidence = delegate("evidence", EvidenceRepo.sync)
    raw_events = delegate("evidence", EvidenceRepo.raw_events)
    evidence_many = delegate("evidence", EvidenceRepo.many)
    database_maturity_pass = delegate("evidence", EvidenceRepo.database_maturity_pass)
    database_should_invert = delegate("evidence", EvidenceRepo.database_should_invert)
    scores = delegate("scoring", Scores.scores)

    add_feedback = delegate("feedback", FeedbackLog.add_feedback)
    record_feedback = delegate("feedback", FeedbackLog.record_feedback)
    batch_events = delegate("feedback", FeedbackLog.batch_events)
    event_count = delegate("feedback", FeedbackLog.event_count)
    has_receipt = delegate("feedback", FeedbackLog.has_receipt)
    receipt_batch = delegate("feedback", FeedbackLog.receipt_batch)
    add_receipt = delegate("feedback", FeedbackLog.add_receipt)

    add_edge = delegate("edges", EdgeRepo.add)
    supersedes_map = delegate("edges", EdgeRepo.supersedes_map)
    ancestors = delegate("edges", EdgeRepo.ancestors)
    flag_conflict = delegate("conflicts", ConflictRepo.flag)
    resolve_conflict = delegate("conflicts", ConflictRepo.resolve)

    log_decision = delegate("decisions", DecisionLog.log)
    policy_fingerprint = delegate("decisions", DecisionLog.policy_fingerprint)
    maturity_policy_changed = delegate("decisions", DecisionLog.maturity_policy_changed)
    record_maturity_policy = delegate("decisions", DecisionLog.record_maturity_policy)

    cache_get = delegate("blobs", BlobRepo.cache_get)
    cache_put = delegate("blobs", BlobRepo.cache_put)
    cache_embedders = delegate("blobs", BlobRepo.cache_embedders)
    watermark = delegate("blobs", BlobRepo.watermark)
    set_watermark = delegate("blobs", BlobRepo.set_watermark)
    mark_record = delegate("blobs", BlobRepo.mark_record)
    marked_records = delegate("blobs", BlobRepo.marked_records)


__all__ = [
    "BlockedPattern",
    "Conflict",
    "Decision",
    "Evidence",
    "Lineage",
    "PlaybookStore",
    "StoreError",
    "iso",
    "new_batch_id",
    "new_id",
    "parse_iso",
    "random_hex",
]
