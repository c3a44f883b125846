"""Bullets and their token index: the rows, their lifecycle (maturity, retire, pin), and the
postings recall and duplicate search read."""

from __future__ import annotations

import json
from collections.abc import Iterable, Sequence
from datetime import datetime
from typing import TYPE_CHECKING, Any, cast

from ..core.authority import require_human
from ..core.errors import NotFound, StoreError
from ..core.text import content_hash, tokens
from . import ids
from .bullet_maturity import BulletMaturity
from .records import BULLET_COLUMNS, BulletRecord, BulletState, bullet_of, iso

if TYPE_CHECKING:
    from ..core.model import Bullet
    from ..core.origin import Origin

MAX_ID_ATTEMPTS = 20  # 20 collisions of 32 random bits do not happen


class BulletRepo(BulletMaturity):
    """The bullets: `store.bullets(state=..., ...)` lists them (SPEC §2), `get`, `insert`,
    and their lifecycle (their maturity: `BulletMaturity`)."""

    # ---------------------------------------------------------------- writing
    def insert(
        self,
        content: str,
        *,
        category: str = "general",
        tags: Iterable[str] = (),
        scope: str = "global",
        scope_key: str | None = None,
        type: str = "rule",
        kind: str = "workflow_rule",
        source: str = "learned",
        state: str = "active",
        maturity: str = "candidate",
        pinned: bool = False,
        pinned_reason: str | None = None,
        half_life_days: float | None = None,
        provenance: Origin | None = None,
        created_at: datetime | None = None,
        valid_to: datetime | None = None,
        batch_id: str | None = None,
        bullet_id: str | None = None,
    ) -> Bullet:
        session_ref, byte_offset = _where(provenance)
        at = iso(created_at or self.now())
        clean_tags = list(dict.fromkeys(t.strip() for t in tags if t and t.strip()))
        with self.transaction():
            row = None
            for _ in range(1 if bullet_id else MAX_ID_ATTEMPTS):
                bid = bullet_id or ids.new_id("b")
                # A new id that some row has already makes no row; another id is drawn.
                on_taken = "" if bullet_id else " ON CONFLICT (id) DO NOTHING"
                row = self.sql.insert_row(
                    "bullets",
                    f"INSERT INTO bullets ({BULLET_COLUMNS}, batch_id) VALUES "
                    f"(?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?){on_taken}",
                    (
                        bid,
                        content,
                        category,
                        json.dumps(clean_tags),
                        scope,
                        scope_key,
                        type,
                        kind,
                        source,
                        state,
                        maturity,
                        int(pinned),
                        pinned_reason,
                        half_life_days,
                        session_ref,
                        byte_offset,
                        at,
                        at,
                        iso(valid_to) if valid_to else None,
                        content_hash(content),
                        batch_id,
                    ),
                    f"seq, {BULLET_COLUMNS}",
                )
                if row is not None:
                    break
            if row is None:
                raise RuntimeError("could not allocate a bullet id")  # pragma: no cover
            self._index_bullet(row[0], content, clean_tags)
            self.sql.later(
                "INSERT INTO maturity_log (bullet_id, at, maturity, batch_id) VALUES (?,?,?,?)",
                [(bid, at, maturity, batch_id)],
            )
        return bullet_of(row[1:])

    def _index_bullet(self, seq: int, content: str, tags: list[str]) -> None:
        """Postings for recall and duplicate search, keyed by the bullet's integer `seq`."""
        toks = sorted(set(tokens(content)))
        self.sql.later(
            "INSERT INTO bullet_tokens (token, seq) VALUES (?, ?) ON CONFLICT DO NOTHING",
            [(t, seq) for t in toks],
        )
        self.sql.later(
            "INSERT INTO vocab (token, df) VALUES (?, 1) "
            "ON CONFLICT(token) DO UPDATE SET df = vocab.df + 1",
            [(t,) for t in toks],
        )
        self.sql.later(
            "INSERT INTO bullet_tags (tag, seq) VALUES (?, ?) ON CONFLICT DO NOTHING",
            [(t.lower(), seq) for t in tags],
        )

    def retire(self, bullet_id: str, *, at: datetime | None = None) -> None:
        with self.transaction():
            self.sql.execute(
                "UPDATE bullets SET state = 'retired', valid_to = ?, maturity_due = NULL, "
                "rev = rev + 1 WHERE id = ? AND state != 'retired'",
                (iso(at or self.now()), bullet_id),
            )

    def pin(self, bullet_id: str, reason: str, *, actor: str = "human") -> None:
        """Pin a bullet: its maturity never moves and agents cannot retire it. Human only.

        The bullet's state is checked inside the write transaction, so a bullet retired by
        another process a moment ago is refused, never pinned."""
        require_human(actor, "pin a bullet")
        with self.transaction():
            bullet = self.require(bullet_id)
            if bullet.state == "retired":
                raise StoreError(f"{bullet_id} is retired; a retired bullet cannot be pinned")
            self.sql.execute(
                "UPDATE bullets SET pinned = 1, pinned_reason = ?, maturity_due = NULL, "
                "rev = rev + 1 WHERE id = ?",
                (reason, bullet_id),
            )
            self.decisions.log(None, actor, "pin", bullet_id, "applied", reason)

    def activate(self, bullet_id: str, *, actor: str = "human") -> bool:
        """Make a draft live (state active): agents are shown it from now on. Human only.
        Returns whether it was a draft; an active bullet is left as it is, and a retired
        one is refused (its interval is closed: a successor carries it on)."""
        require_human(actor, "make a draft live")
        with self.transaction():
            state = self.state(bullet_id)
            if state is None:
                raise NotFound(f"no bullet with id {bullet_id!r}")
            if state == "retired":
                raise StoreError(f"{bullet_id} is retired; a retired rule cannot be made live")
            if state == "active":
                return False
            self.sql.execute(
                "UPDATE bullets SET state = 'active', rev = rev + 1 "
                "WHERE id = ? AND state = 'draft'",
                (bullet_id,),
            )
            self.decisions.log(None, actor, "activate", bullet_id, "applied", None)
        return True

    def unpin(self, bullet_id: str, *, actor: str = "human") -> None:
        require_human(actor, "unpin a bullet")
        with self.transaction():
            self.require(bullet_id)
            self.sql.execute(
                "UPDATE bullets SET pinned = 0, pinned_reason = NULL, rev = rev + 1 WHERE id = ?",
                (bullet_id,),
            )
            self.decisions.log(None, actor, "unpin", bullet_id, "applied", None)

    # ---------------------------------------------------------------- reading
    def get(self, bullet_id: str) -> Bullet | None:
        row = self.sql.one(f"SELECT {BULLET_COLUMNS} FROM bullets WHERE id = ?", (bullet_id,))
        return bullet_of(row) if row else None

    def require(self, bullet_id: str) -> Bullet:
        bullet = self.get(bullet_id)
        if bullet is None:
            raise NotFound(f"no bullet with id {bullet_id!r}")
        return bullet

    def get_many(self, ids: Iterable[str]) -> dict[str, Bullet]:
        return {bid: bullet_of(row) for bid, row in self.records(ids).items()}

    def records(self, ids: Iterable[str]) -> dict[str, BulletRecord]:
        """The rows (`records.BULLET_COLUMNS`) of these bullets, by id, those that exist:
        for callers that build a `Bullet` only when asked (`records.bullet_of`) or serialise
        one straight from its row (`records.bullet_json`)."""
        wanted = list(dict.fromkeys(ids))
        if not wanted:
            return {}
        d = self.sql.dialect
        rows = self.sql.execute(
            f"SELECT {BULLET_COLUMNS} FROM bullets WHERE {d.in_list('id')}",
            (d.list_param(wanted),),
        )
        return {row[0]: BulletRecord._make(row) for row in rows}

    def state(self, bullet_id: str) -> str | None:
        """A bullet's state (active, draft, retired), or None when there is no such bullet."""
        # a row of the database: a TEXT column, or None (no such bullet)
        return cast(
            "str | None", self.sql.scalar("SELECT state FROM bullets WHERE id = ?", (bullet_id,))
        )

    def states(self, ids: Iterable[str]) -> dict[str, BulletState]:
        """What the maturity pass reads of each bullet (no model is built): by id, those
        that exist."""
        wanted = list(dict.fromkeys(ids))
        d = self.sql.dialect
        rows = self.sql.execute(
            "SELECT id, state, maturity, pinned, type, maturity_due FROM bullets "
            f"WHERE {d.in_list('id')}",
            (d.list_param(wanted),),
        )
        return {r[0]: BulletState(r[1], r[2], bool(r[3]), r[4], r[5]) for r in rows}

    def __call__(
        self,
        state: str | Sequence[str] | None = None,
        maturity: str | Sequence[str] | None = None,
        tag: str | None = None,
        pinned: bool | None = None,
        *,
        type: str | None = None,
    ) -> list[Bullet]:
        """Bullets in creation order. `state=None` means every non-retired bullet."""
        where: list[str] = []
        args: list[Any] = []
        if state is None:
            where.append("state != 'retired'")
        elif state != "all":
            states = [state] if isinstance(state, str) else list(state)
            where.append(f"state IN ({','.join('?' * len(states))})")
            args += states
        if maturity is not None:
            ms = [maturity] if isinstance(maturity, str) else list(maturity)
            where.append(f"maturity IN ({','.join('?' * len(ms))})")
            args += ms
        if tag is not None:
            where.append("seq IN (SELECT seq FROM bullet_tags WHERE tag = ?)")
            args.append(tag.lower())
        if pinned is not None:
            where.append("pinned = ?")
            args.append(int(pinned))
        if type is not None:
            where.append("type = ?")
            args.append(type)
        sql = f"SELECT {BULLET_COLUMNS} FROM bullets"
        if where:
            sql += " WHERE " + " AND ".join(where)
        sql += " ORDER BY created_at, seq"
        return [bullet_of(r) for r in self.sql.execute(sql, args)]

    def count(self) -> int:
        return int(self.sql.scalar("SELECT COUNT(*) FROM bullets", default=0))

    def active_ids(self) -> list[str]:
        return self.sql.column("SELECT id FROM bullets WHERE state != 'retired'")

    # ---------------------------------------------------------------- token index
    def doc_freqs(self, toks: Iterable[str]) -> dict[str, int]:
        """How many bullets hold each token (0 for a token none holds)."""
        toks = list(toks)
        d = self.sql.dialect
        rows = self.sql.all(
            f"SELECT token, df FROM vocab WHERE {d.in_list('token')}", (d.list_param(toks),)
        )
        return dict.fromkeys(toks, 0) | dict(rows)

    def near_rows(
        self, digest: str, toks: Iterable[str], at_least: int, via: Iterable[str] | None = None
    ) -> list[tuple[str, str, str, int]]:
        """(id, content, created_at as stored, how many of `toks` its postings hold) of the
        bullets (any state) with this content hash or whose postings hold at least
        `at_least` of `toks`, most shared first: the candidates of a duplicate search,
        counted in the index so that no row of a bullet sharing fewer is read (one query).
        `via`: some of `toks` every such bullet holds one of (a prefix of the rarest); then
        only the bullets posted under them are counted, not every posting of `toks`."""
        toks = list(dict.fromkeys(toks))
        sql = "SELECT id, content, created_at, ? AS n FROM bullets WHERE content_hash = ?"
        args: list[Any] = [len(toks), digest]
        d = self.sql.dialect
        if toks and 0 < at_least <= len(toks) and via is None:
            sql += (
                " UNION SELECT b.id, b.content, b.created_at, c.n FROM bullets b JOIN "
                f"(SELECT seq, COUNT(*) AS n FROM bullet_tokens WHERE {d.in_list('token')} "
                "GROUP BY seq HAVING COUNT(*) >= ?) c ON b.seq = c.seq"
            )
            args += [d.list_param(toks), at_least]
        elif toks and 0 < at_least <= len(toks) and via is not None:
            sql += (
                " UNION SELECT b.id, b.content, b.created_at, c.n FROM bullets b JOIN "
                "(SELECT p.seq, (SELECT COUNT(*) FROM bullet_tokens t WHERE t.seq = p.seq "
                f"AND {d.in_list('t.token')}) AS n FROM (SELECT DISTINCT seq FROM bullet_tokens "
                f"WHERE {d.in_list('token')}) p) c ON b.seq = c.seq WHERE c.n >= ?"
            )
            args += [d.list_param(toks), d.list_param(list(via)), at_least]
        return self.sql.all(sql + " ORDER BY n DESC, id", args)

    def recall_candidates(
        self, ids: list[str] | None, *, at: str | None = None
    ) -> list[tuple[str, str, str, str, str, str | None, str]]:
        """(id, type, maturity, state, scope, scope_key, content_hash) of bullets that can be
        recalled: not retired now, or, with `at` (ISO), valid at that time. `ids` None: all."""
        cols = "id, type, maturity, state, scope, scope_key, content_hash FROM bullets"
        if at is None:
            where, args = "state != 'retired'", []
        else:
            where, args = "valid_from <= ? AND (valid_to IS NULL OR valid_to > ?)", [at, at]
        if ids is None:
            return self.sql.all(f"SELECT {cols} WHERE {where}", args)
        d = self.sql.dialect
        return self.sql.all(
            f"SELECT {cols} WHERE {d.in_list('id')} AND {where}", [d.list_param(ids), *args]
        )


def _where(provenance: Origin | None) -> tuple[str | None, int | None]:
    """(session_ref, byte_offset) of a provenance, or none (no model is built for it)."""
    if provenance is None:
        return None, None
    return provenance.session_ref, provenance.byte_offset
