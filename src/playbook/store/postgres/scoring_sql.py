"""The evidence fold and the maturity pass in PL/pgSQL: what the database computes itself
for a connection of the agent role (`roles.py`), which may write neither the evidence cache
nor a rule's maturity.

These are `playbook.core.scoring` and `store/evidence.py` line by line, and must stay so: the
same events folded in the same order with the same IEEE operations (PostgreSQL's `^` is
C's `pow`, as Python's `**` is), the same flush to zero below `scoring.TINY` (PostgreSQL
raises on an underflow where Python gives 0.0, so both flush first), the same epoch days
(`extract(epoch ...)` is exact, its cast to float8 correctly rounded, as Python's
`timestamp()` is). tests/test_pg_scoring.py checks them against each other on generated
logs, bit for bit. The policy is the one `playbook pg roles` was run with, written into the
functions as constants: an agent cannot pass its own.

Functions (in the playbook's schema; the two that write are `SECURITY DEFINER`, owned by
the schema's owner, and take the playbook's write lock themselves):

* `playbook_fold()` — fold the events past the cache's watermark (`sync_evidence`);
* `playbook_evidence(id, now)` — (helpful, harmful, pending) of a bullet at `now` (epoch
  days), lineage included (`evidence_many`);
* `playbook_next_maturity(current, h, x, pinned)`, `playbook_still_demoting(...)`,
  `playbook_should_invert(id)` — `scoring.next_maturity`, `still_demoting`, and step 5's
  test of `invert_harmed`;
* `playbook_maturity_pass(ids, batch_id)` — the maturity pass over `ids` and the bullets
  due (`run_maturity_pass` / `rerate`), written in the agent's name; returns the moves.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ...core.policy import MAX_WEIGHT
from ...core.scoring import MAX_HALVINGS, TINY
from .statements import LOCK_CLASS, lock_key, quoted

if TYPE_CHECKING:
    from ...core.policy import Policy


def _f(x: float) -> str:
    """A float as a PostgreSQL float8 literal that reads back as the same double."""
    return f"'{float(x)!r}'::float8"


def scoring_sql(schema: str, policy: Policy) -> list[str]:
    """The statements that (re)create the functions on `schema`, with `policy`'s constants."""
    s = quoted(schema)
    p = policy
    lock = f"PERFORM pg_advisory_xact_lock({LOCK_CLASS}, {lock_key(schema)});"
    path = f"SET search_path = {s}, pg_temp"
    now_days = "(extract(epoch FROM clock_timestamp())::float8 / 86400.0::float8)"
    days = "(extract(epoch FROM ({t})::timestamptz)::float8 / 86400.0::float8)"
    good = (
        f"fb.weight >= 0 AND fb.weight <= {_f(MAX_WEIGHT)} AND {s}.playbook_is_time(fb.at) "
        f"AND {s}.playbook_is_time(fb.recorded_at)"
    )
    return [
        # 0.5 ** halvings, flushed to 0 where it would be below TINY (scoring.half_factor).
        f"""CREATE OR REPLACE FUNCTION {s}.playbook_half(halvings float8) RETURNS float8
LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
SELECT CASE WHEN halvings > {_f(MAX_HALVINGS)} THEN 0.0::float8
    ELSE '0.5'::float8 ^ halvings END
$$""",
        # v * f, 0 where it would be below TINY (scoring.scaled).
        f"""CREATE OR REPLACE FUNCTION {s}.playbook_scaled(v float8, f float8) RETURNS float8
LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
SELECT CASE WHEN v = 0 OR f = 0 OR abs(v) < {_f(TINY)} / abs(f) THEN 0.0::float8
    ELSE v * f END
$$""",
        f"""CREATE OR REPLACE FUNCTION {s}.playbook_effective(h float8, x float8, maturity text)
RETURNS float8 LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
SELECT {s}.playbook_scaled(h - {s}.playbook_scaled(x, {_f(p.harm_multiplier)}),
    CASE maturity WHEN 'candidate' THEN {_f(p.multiplier_candidate)}
        WHEN 'established' THEN {_f(p.multiplier_established)}
        WHEN 'proven' THEN {_f(p.multiplier_proven)}
        ELSE {_f(p.multiplier_deprecated)} END) + 0.0::float8
$$""",
        f"""CREATE OR REPLACE FUNCTION {s}.playbook_earned(h float8, x float8) RETURNS text
LANGUAGE plpgsql IMMUTABLE PARALLEL SAFE AS $$
DECLARE
    total float8 := h + x;
    ratio float8 := CASE WHEN total > 0 THEN x / total ELSE 0.0::float8 END;
BEGIN
    IF ratio > {_f(p.deprecate_harm_ratio)}
       AND total >= {_f(p.min_events_for_rung)} - {_f(p.epsilon)} THEN
        RETURN 'deprecated';
    END IF;
    IF total < {_f(p.min_events_for_rung)} - {_f(p.epsilon)} THEN
        RETURN 'candidate';
    END IF;
    IF h >= {_f(p.proven_min_helpful)} - {_f(p.epsilon)}
       AND ratio < {_f(p.proven_max_harm_ratio)} THEN
        RETURN 'proven';
    END IF;
    RETURN 'established';
END
$$""",
        f"""CREATE OR REPLACE FUNCTION {s}.playbook_rank(m text) RETURNS int
LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
SELECT CASE m WHEN 'deprecated' THEN 0 WHEN 'candidate' THEN 1 WHEN 'established' THEN 2
    ELSE 3 END
$$""",
        f"""CREATE OR REPLACE FUNCTION {s}.playbook_next_maturity(
    cur text, h float8, x float8, pinned boolean) RETURNS text
LANGUAGE plpgsql IMMUTABLE PARALLEL SAFE SET search_path = {s}, pg_temp AS $$
DECLARE
    new text := cur;
    earned text;
    score float8;
BEGIN
    IF pinned OR cur = 'deprecated' THEN
        RETURN cur;
    END IF;
    earned := playbook_earned(h, x);
    IF playbook_rank(earned) > playbook_rank(cur) THEN
        new := earned;
    END IF;
    score := playbook_effective(h, x, new);
    IF score < {_f(p.deprecate_score_below)} THEN
        RETURN 'deprecated';
    END IF;
    IF score < 0 AND new <> 'candidate' THEN
        RETURN CASE new WHEN 'proven' THEN 'established' ELSE 'candidate' END;
    END IF;
    RETURN new;
END
$$""",
        f"""CREATE OR REPLACE FUNCTION {s}.playbook_still_demoting(
    h float8, x float8, maturity text, pinned boolean) RETURNS boolean
LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
SELECT NOT pinned AND maturity NOT IN ('deprecated', 'candidate')
    AND {s}.playbook_effective(h, x, maturity) < 0
$$""",
        # The fold (store/evidence.py, sync_evidence): per bullet, events in id order.
        f"""CREATE OR REPLACE FUNCTION {s}.playbook_fold() RETURNS bigint
LANGUAGE plpgsql SECURITY DEFINER {path} AS $$
DECLARE
    mark bigint;
    top bigint;
    b record;
    e record;
    hl float8;
    ev record;
    ref float8;
    helpful float8;
    harmful float8;
    n bigint;
    last_at float8;
    last_id bigint;
    t float8;
    f float8;
    v float8;
    folded bigint;
    had boolean;
    started boolean;
    everything boolean;
BEGIN
    {lock}
    mark := COALESCE((SELECT value::bigint FROM meta WHERE key = 'evidence_watermark'), 0);
    top := (SELECT MAX(id) FROM feedback WHERE id > mark);
    IF top IS NULL THEN
        RETURN 0;
    END IF;
    folded := (SELECT count(*) FROM feedback WHERE id > mark);
    FOR b IN SELECT fb.bullet_id, min(bu.half_life_days) AS hl
             FROM feedback fb JOIN bullets bu ON bu.id = fb.bullet_id
             WHERE fb.id > mark GROUP BY fb.bullet_id ORDER BY fb.bullet_id LOOP
        hl := COALESCE(NULLIF(b.hl, 0), {_f(p.half_life_days)});
        SELECT * INTO ev FROM evidence WHERE bullet_id = b.bullet_id;
        had := FOUND;
        started := had AND ev.half_life = hl;
        -- no usable row: start afresh on a new playbook (mark 0, none folded), else fold
        -- the bullet's whole log again (store/evidence.py, _rebuild_agg)
        everything := NOT started AND (had OR mark > 0);
        IF started THEN
            ref := ev.ref; helpful := ev.helpful; harmful := ev.harmful; n := ev.count;
            last_at := ev.last_at; last_id := ev.last_event_id;
        ELSE
            ref := '-Infinity'::float8; helpful := 0; harmful := 0; n := 0;
            last_at := '-Infinity'::float8; last_id := 0;
        END IF;
        FOR e IN SELECT fb.id, fb.kind, fb.at, fb.weight FROM feedback fb
                 WHERE fb.bullet_id = b.bullet_id
                   AND (fb.id > mark OR everything)
                   AND {good}
                 ORDER BY fb.id LOOP
            t := {days.format(t="e.at")};
            IF t > ref THEN
                IF n > 0 THEN
                    f := playbook_half((t - ref) / hl);
                    helpful := playbook_scaled(helpful, f);
                    harmful := playbook_scaled(harmful, f);
                END IF;
                ref := t;
            END IF;
            v := playbook_scaled(e.weight, playbook_half((ref - t) / hl));
            IF e.kind = 'helpful' THEN
                helpful := helpful + v;
            ELSE
                harmful := harmful + v;
            END IF;
            n := n + 1;
            last_at := GREATEST(last_at, t);
            last_id := e.id;
        END LOOP;
        IF n > 0 THEN
            INSERT INTO evidence (bullet_id, half_life, ref, helpful, harmful, count, last_at,
                                  last_event_id)
            VALUES (b.bullet_id, hl, ref, helpful, harmful, n, last_at, last_id)
            ON CONFLICT (bullet_id) DO UPDATE SET half_life = excluded.half_life,
                ref = excluded.ref, helpful = excluded.helpful, harmful = excluded.harmful,
                count = excluded.count, last_at = excluded.last_at,
                last_event_id = excluded.last_event_id;
        END IF;
    END LOOP;
    INSERT INTO meta (key, value) VALUES ('evidence_watermark', top::text)
    ON CONFLICT (key) DO UPDATE SET value = excluded.value;
    RETURN folded;
END
$$""",
        # evidence_many for one bullet at `now` (epoch days), lineage included.
        f"""CREATE OR REPLACE FUNCTION {s}.playbook_evidence(
    root text, now float8, OUT helpful float8, OUT harmful float8, OUT pending float8)
LANGUAGE plpgsql STABLE {path} AS $$
DECLARE
    hl float8;
    members text[] := ARRAY[root];
    stack text[];
    m text;
    ev record;
    e record;
    eh float8;
    ex float8;
    f float8;
BEGIN
    helpful := 0; harmful := 0; pending := NULL;
    SELECT COALESCE(NULLIF(half_life_days, 0), {_f(p.half_life_days)}) INTO hl
    FROM bullets WHERE id = root;
    IF NOT FOUND THEN
        RETURN;
    END IF;
    -- ancestors(): a stack of the edges' targets in edge order, popped from its end
    stack := ARRAY(SELECT dst FROM edges WHERE src = root AND kind = 'supersedes' ORDER BY id);
    WHILE cardinality(stack) > 0 LOOP
        m := stack[cardinality(stack)];
        stack := stack[1:cardinality(stack) - 1];
        IF m = ANY(members) THEN
            CONTINUE;
        END IF;
        members := members || m;
        stack := stack || ARRAY(SELECT dst FROM edges WHERE src = m AND kind = 'supersedes'
                                ORDER BY id);
    END LOOP;
    FOREACH m IN ARRAY members LOOP
        SELECT * INTO ev FROM evidence WHERE bullet_id = m;
        IF NOT FOUND THEN
            CONTINUE;
        END IF;
        IF ev.half_life = hl AND (ev.count = 0 OR now >= ev.ref) THEN
            IF ev.count = 0 THEN
                eh := 0; ex := 0;
            ELSE
                f := playbook_half((now - ev.ref) / ev.half_life);
                eh := playbook_scaled(ev.helpful, f);
                ex := playbook_scaled(ev.harmful, f);
            END IF;
        ELSE
            eh := 0; ex := 0;
            FOR e IN SELECT fb.kind, {days.format(t="fb.at")} AS t, fb.weight FROM feedback fb
                     WHERE fb.bullet_id = m AND {good} ORDER BY fb.id LOOP
                f := playbook_scaled(e.weight,
                                     playbook_half(GREATEST(0.0::float8, now - e.t) / hl));
                IF e.kind = 'helpful' THEN
                    eh := eh + f;
                ELSE
                    ex := ex + f;
                END IF;
                IF e.t > now THEN
                    pending := LEAST(COALESCE(pending, e.t), e.t);
                END IF;
            END LOOP;
        END IF;
        helpful := helpful + eh;
        harmful := harmful + ex;
    END LOOP;
END
$$""",
        f"""CREATE OR REPLACE FUNCTION {s}.playbook_should_invert(bullet text) RETURNS boolean
LANGUAGE plpgsql STABLE {path} AS $$
DECLARE
    b record;
    ev record;
BEGIN
    SELECT type, pinned, state INTO b FROM bullets WHERE id = bullet;
    IF NOT FOUND OR b.type <> 'rule' OR b.pinned <> 0 OR b.state = 'retired' THEN
        RETURN false;
    END IF;
    ev := playbook_evidence(bullet, {now_days});
    RETURN ev.harmful >= {_f(p.invert_min_harm)} - {_f(p.epsilon)}
       AND ev.harmful > playbook_scaled(ev.helpful, {_f(p.invert_harm_over_help)});
END
$$""",
        # The maturity pass (curation/lifecycle.py, rerate), in the agent's name.
        f"""CREATE OR REPLACE FUNCTION {s}.playbook_maturity_pass(touched text[], batch text)
RETURNS TABLE (bullet_id text, was text, now_is text)
LANGUAGE plpgsql SECURITY DEFINER {path} AS $$
DECLARE
    now float8;
    stamp text;
    ids text[];
    bid text;
    b record;
    ev record;
    new text;
    due float8;
BEGIN
    {lock}
    PERFORM playbook_fold();
    now := {now_days};
    stamp := to_char(clock_timestamp() AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"');
    -- the bullets the batch touched, in its order, then those still due (demoting)
    ids := ARRAY(SELECT u.id FROM unnest(touched) WITH ORDINALITY AS u(id, n)
                 GROUP BY u.id ORDER BY min(u.n))
        || ARRAY(SELECT d.id FROM bullets d WHERE d.maturity_due <= now
                 AND NOT d.id = ANY(touched) ORDER BY d.seq);
    FOREACH bid IN ARRAY ids LOOP
        SELECT id, state, maturity, pinned <> 0 AS pinned, maturity_due INTO b
        FROM bullets WHERE id = bid;
        IF NOT FOUND THEN
            CONTINUE;
        END IF;
        IF b.state = 'retired' THEN
            IF b.maturity_due IS NOT NULL THEN
                UPDATE bullets SET maturity_due = NULL WHERE id = bid;
            END IF;
            CONTINUE;
        END IF;
        ev := playbook_evidence(bid, now);
        new := playbook_next_maturity(b.maturity, ev.helpful, ev.harmful, b.pinned);
        IF new <> b.maturity THEN
            UPDATE bullets SET maturity = new, rev = rev + 1 WHERE id = bid;
            INSERT INTO maturity_log (bullet_id, at, maturity, batch_id)
            VALUES (bid, stamp, new, batch);
            INSERT INTO decisions (at, batch_id, actor, action, bullet_id, status, reason, detail)
            VALUES (stamp, batch, 'agent', 'maturity', bid, 'applied',
                    format('evidence H=%s X=%s', to_char(ev.helpful, 'FM999999999999990.00'),
                           to_char(ev.harmful, 'FM999999999999990.00')),
                    format('{{"from": "%s", "to": "%s"}}', b.maturity, new));
            bullet_id := bid; was := b.maturity; now_is := new;
            RETURN NEXT;
        END IF;
        due := CASE WHEN playbook_still_demoting(ev.helpful, ev.harmful, new, b.pinned)
                    THEN now END;
        IF ev.pending IS NOT NULL AND new <> 'deprecated' AND NOT b.pinned THEN
            due := LEAST(COALESCE(due, ev.pending), ev.pending);
        END IF;
        IF due IS DISTINCT FROM b.maturity_due THEN
            UPDATE bullets SET maturity_due = due WHERE id = bid;
        END IF;
    END LOOP;
END
$$""",
    ]


# The functions an agent's connection calls (the rest are called by these).
CALLED = (
    "playbook_fold()",
    "playbook_maturity_pass(text[], text)",
    "playbook_should_invert(text)",
    "playbook_evidence(text, float8)",
)
