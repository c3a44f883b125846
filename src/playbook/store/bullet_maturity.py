"""The bullets' maturity (`BulletRepo`'s): a rung set and logged (`maturity_log`), one
bullet's or many at once, the time the maturity pass must look at a bullet again, the
bullets due, and a rung as it stood at a moment."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from datetime import datetime
from typing import Any

from .base import DecidingPart
from .records import iso


class BulletMaturity(DecidingPart):
    """The maturity writes and reads of `BulletRepo`."""

    def set_maturity(
        self,
        bullet_id: str,
        maturity: str,
        *,
        batch_id: str | None = None,
        at: datetime | None = None,
    ) -> None:
        """Set a bullet's rung, one `rev` up, and log it (at `at`, default now)."""
        self.set_maturities([(bullet_id, maturity)], batch_id=batch_id, at=at)

    def set_maturity_due(self, bullet_id: str, due: float | None) -> None:
        """When the maturity pass must look at the bullet again (None: only when touched)."""
        self.set_maturity_dues([(bullet_id, due)])

    def set_maturities(
        self,
        moves: Sequence[tuple[str, str]],
        *,
        batch_id: str | None = None,
        at: datetime | None = None,
    ) -> None:
        """`set_maturity` of each (bullet id, maturity) of `moves` (distinct bullets), in
        one statement on PostgreSQL: there an UPDATE of a bullet costs the server 0.2 ms
        to start whatever it changes (the table's indexes opened, its triggers readied),
        as much as a hundred rows of one statement; a maturity pass of a team's year
        moves hundreds of rules at once."""
        if not moves:
            return
        when = iso(at or self.now())
        with self.transaction():
            self._update_each("maturity", "text", moves, bump_rev=True)
            self.sql.later(
                "INSERT INTO maturity_log (bullet_id, at, maturity, batch_id) VALUES (?,?,?,?)",
                [(bid, when, to, batch_id) for bid, to in moves],
            )

    def set_maturity_dues(self, dues: Sequence[tuple[str, float | None]]) -> None:
        """`set_maturity_due` of each (bullet id, due) of `dues` (distinct bullets), in one
        statement on PostgreSQL (as `set_maturities`)."""
        if dues:
            self._update_each("maturity_due", "float8", dues)

    def _update_each(
        self, column: str, pg_type: str, pairs: Sequence[tuple[str, Any]], *, bump_rev: bool = False
    ) -> None:
        """Set `column` of each bullet (id, value) of `pairs` (distinct ids), and its `rev`
        one up with `bump_rev`: one statement on PostgreSQL, a row at a time on SQLite
        (in-process: no statement to start again)."""
        if self.sql.dialect.name == "postgresql":
            rev = ", rev = b.rev + 1" if bump_rev else ""
            self.sql.later(
                f"UPDATE bullets AS b SET {column} = v.value{rev} "
                f"FROM unnest(?::text[], ?::{pg_type}[]) AS v(id, value) WHERE b.id = v.id",
                [([bid for bid, _ in pairs], [value for _, value in pairs])],
            )
        else:
            rev = ", rev = rev + 1" if bump_rev else ""
            self.sql.later(
                f"UPDATE bullets SET {column} = ?{rev} WHERE id = ?",
                [(value, bid) for bid, value in pairs],
            )

    def due_for_maturity(self, now_days: float) -> list[str]:
        """The bullets due for the maturity pass by `now_days`, in the order they were
        added (as the database's own pass takes them: `postgres/scoring_sql.py`), so a
        pass writes its moves in the same order on every backend."""
        return self.sql.column(
            "SELECT id FROM bullets WHERE maturity_due IS NOT NULL AND maturity_due <= ? "
            "ORDER BY seq",
            (now_days,),
        )

    def maturity_as_of(self, ids: Iterable[str], as_of: datetime) -> dict[str, str]:
        """Each bullet's maturity as it stood at `as_of` (absent if it did not exist yet)."""
        out: dict[str, str] = {}
        d = self.sql.dialect
        for bid, maturity in self.sql.execute(
            f"SELECT bullet_id, maturity FROM maturity_log WHERE {d.in_list('bullet_id')} "
            "AND at <= ? ORDER BY at, id",
            (d.list_param(ids), iso(as_of)),
        ):
            out[bid] = maturity
        return out
