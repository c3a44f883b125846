"""What the database checks of every row an agent's role writes (`roles.py` creates it).

The agent's role may add candidate rules and append feedback, outcomes (receipts),
proposals, conflict flags and its own decision log, through the rows the API writes, and
nothing else. PostgreSQL checks each such row itself:

* inserts, by row-level security: a policy per table whose check is a function here that
  either accepts the row or refuses it with the reason (`insufficient_privilege`). The
  table's owner is not subject to row-level security and a reviewer's policy accepts
  everything, so their writes cost nothing more;
* updates, by triggers whose `WHEN` clause lets the usual writes through without a call
  (a reviewer's or the owner's are then let through by the function);
* what only the database may write (the evidence cache, `meta`, a rule's maturity, the
  maturity log's moves) the agent's role has no grant for: the functions of
  `scoring_sql.py` write it on the agent's behalf.

A rule an agent adds is an active, unpinned candidate, `learned` (or `inverted`: the
anti-pattern of step 5), stamped with the time of writing, whose hash is its content's, not
near an active blocked pattern (the same normalized text, or of the same polarity with token
Jaccard or rapidfuzz ratio at the policy's thresholds: `matching_sql.py`), and not the
text of a retired or deprecated rule. An agent retires a rule only
by inverting it, when its own harm qualifies (`playbook_should_invert`).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from ...core.policy import Policy

SKEW = "1 day"  # how far from the database's clock an agent's timestamps may be


def _deny(message: str) -> str:
    """The PL/pgSQL that refuses with `message`: plain text, or an SQL expression of text
    (one that starts with a quote: `'near blocked pattern ' || hit`)."""
    if not message.startswith("'"):
        message = "'" + message.replace("'", "''") + "'"
    return f"RAISE EXCEPTION USING ERRCODE = 'insufficient_privilege', MESSAGE = {message}"


# Why an agent's row is refused: plain text, or SQL text (starting with a quote).
_NOW = f"(within {SKEW} of the database's clock)"
REFUSALS = {
    "bullet_shape": "an agent adds a rule only as an active, unpinned candidate: maturity "
    "is earned by evidence, and pins are a reviewer's",
    "bullet_source": "an agent's rule is learned (or the AVOID: anti-pattern of an "
    "inversion): replace and merge are a reviewer's",
    "bullet_time": f"an agent's rule is stamped with the time of writing {_NOW}",
    "bullet_hash": "content_hash must be the SHA-256 of the content",
    "bullet_blocked": "'the rule is near blocked pattern ' || hit",
    "bullet_zombie": "'the rule is the text of retired or deprecated ' || hit "
    "|| ' (no zombie rules; a reviewer restores one)'",
    "feedback_actor": "an agent cannot act as a human (feedback.actor)",
    "feedback_time": f"feedback is recorded at the time of writing {_NOW}, observed no later",
    "feedback_receipt": "a receipt is not empty",
    "feedback_retired": "'no feedback on a retired rule (' || bullet || ')'",
    "receipt": "a receipt is spent only by an outcome that applied: its feedback, written "
    "just before it in the same transaction",
    "edge": "an agent links rules only by inverting one whose harm qualifies (an inverts "
    "edge from its new anti-pattern); replace and merge are a reviewer's",
    "maturity_log": "the maturity log is the database's: an agent writes only the first "
    "entry (candidate) of a rule it adds",
    "decision_actor": "an agent cannot act as a human (decisions.actor)",
    "decision_action": "'an agent logs only what it did itself (not ' || action || ' ' "
    "|| status || ')'",
    "decision_time": f"a decision is logged at the time of writing {_NOW}",
    "flag": "an agent flags a conflict open, for the rule it adds; resolving one is a reviewer's",
    "proposal": "an agent proposes (pending, now); deciding a proposal is a reviewer's",
    "posting": "an agent indexes only the rules it adds",
    "vocab": "an agent only counts a new rule's words (vocab.df + 1)",
    "pinned": "'only a reviewer pins, unpins or changes a pinned rule (' || OLD.id || ')'",
    "restore": "'only a reviewer restores a deprecated rule (' || OLD.id || ')'",
    "maturity": "'an agent cannot set a rule''s maturity (' || OLD.id || '): evidence "
    "moves it, in the database''s maturity pass, and deprecating is a reviewer''s'",
    "unretire": "'only a reviewer brings back a retired rule (' || OLD.id || ')'",
    "draft": "'only a reviewer makes a draft live (' || OLD.id || ')'",
    "retire": "'an agent retires a rule (' || OLD.id || ') only by inverting it, once "
    "its harm is at least the policy''s and more than twice its help; replace, merge and "
    "deprecate are a reviewer''s'",
}


def checks_sql(s: str, policy: Policy, agent: str, human: str) -> list[str]:
    """The functions that accept an agent's row or refuse it with the reason."""
    fresh = "xmin = pg_current_xact_id()::xid"  # written by this transaction
    weight = max(
        1.0,
        policy.outcome_success_weight,
        policy.outcome_failure_weight,
        policy.outcome_partial_weight,
    )
    path = f"SET search_path = {s}, pg_temp"
    r = {name: _deny(text) for name, text in REFUSALS.items()}
    r["feedback_weight"] = _deny(
        f"an agent's feedback weighs at most {weight:g} (the policy's outcome weights)"
    )
    return [
        f"""CREATE OR REPLACE FUNCTION {s}.playbook_recent(t text) RETURNS boolean
LANGUAGE sql STABLE AS $$
SELECT {s}.playbook_is_time(t)
    AND t::timestamptz BETWEEN now() - interval '{SKEW}' AND now() + interval '{SKEW}'
$$""",
        f"""CREATE OR REPLACE FUNCTION {s}.playbook_is_agent() RETURNS boolean
LANGUAGE sql STABLE AS $$
SELECT pg_has_role(current_user, '{agent}', 'MEMBER')
    AND NOT pg_has_role(current_user, '{human}', 'MEMBER')
$$""",
        f"""CREATE OR REPLACE FUNCTION {s}.playbook_agent_bullet(
    id text, content text, kind text, source text, state text, maturity text, pinned int,
    pinned_reason text, created_at text, valid_from text, valid_to text, hash text,
    due float8, rev int) RETURNS boolean
LANGUAGE plpgsql STABLE {path} AS $$
DECLARE
    hit text;
BEGIN
    IF state <> 'active' OR maturity <> 'candidate' OR pinned <> 0 OR pinned_reason IS NOT NULL
       OR valid_to IS NOT NULL OR due IS NOT NULL OR rev <> 0 THEN
        {r["bullet_shape"]};
    END IF;
    IF source NOT IN ('learned', 'inverted')
       OR (source = 'inverted' AND (kind <> 'anti-pattern' OR content NOT LIKE 'AVOID: %')) THEN
        {r["bullet_source"]};
    END IF;
    IF NOT playbook_recent(created_at) OR valid_from IS DISTINCT FROM created_at THEN
        {r["bullet_time"]};
    END IF;
    IF hash IS DISTINCT FROM encode(sha256(convert_to(content, 'UTF8')), 'hex') THEN
        {r["bullet_hash"]};
    END IF;
    hit := playbook_blocked(content, kind);
    IF hit IS NOT NULL THEN
        {r["bullet_blocked"]};
    END IF;
    IF source = 'learned' THEN
        SELECT b.id INTO hit FROM bullets b WHERE b.content_hash = hash
            AND (b.state = 'retired' OR b.maturity = 'deprecated') LIMIT 1;
        IF FOUND THEN
            {r["bullet_zombie"]};
        END IF;
    END IF;
    RETURN true;
END
$$""",
        f"""CREATE OR REPLACE FUNCTION {s}.playbook_agent_feedback(
    bullet text, actor text, at text, recorded_at text, weight float8, receipt text)
RETURNS boolean LANGUAGE plpgsql STABLE {path} AS $$
BEGIN
    IF actor <> 'agent' THEN
        {r["feedback_actor"]};
    END IF;
    IF NOT playbook_recent(recorded_at) OR NOT playbook_is_time(at) OR at > recorded_at THEN
        {r["feedback_time"]};
    END IF;
    IF NOT weight <= {max(weight, 1.0)!r}::float8 THEN
        {r["feedback_weight"]};
    END IF;
    IF receipt = '' THEN
        {r["feedback_receipt"]};
    END IF;
    IF NOT EXISTS (SELECT 1 FROM bullets WHERE id = bullet AND state <> 'retired') THEN
        {r["feedback_retired"]};
    END IF;
    RETURN true;
END
$$""",
        f"""CREATE OR REPLACE FUNCTION {s}.playbook_agent_receipt(
    receipt text, batch text, recorded_at text) RETURNS boolean
LANGUAGE plpgsql STABLE {path} AS $$
BEGIN
    -- The log's last event is of the receipt's batch, written by this transaction (writers
    -- take turns: nobody's event can come after it), so the receipt's outcome applied.
    IF NOT playbook_recent(recorded_at) OR receipt = '' OR NOT COALESCE((
        SELECT f.batch_id = batch AND f.{fresh} FROM feedback f ORDER BY f.id DESC LIMIT 1
    ), false) THEN
        {r["receipt"]};
    END IF;
    RETURN true;
END
$$""",
        f"""CREATE OR REPLACE FUNCTION {s}.playbook_agent_edge(kind text, src text, dst text)
RETURNS boolean LANGUAGE plpgsql STABLE {path} AS $$
BEGIN
    IF kind <> 'inverts'
       OR NOT EXISTS (SELECT 1 FROM bullets WHERE id = src AND {fresh}
                      AND source = 'inverted' AND type = 'anti-pattern')
       OR NOT playbook_should_invert(dst) THEN
        {r["edge"]};
    END IF;
    RETURN true;
END
$$""",
        f"""CREATE OR REPLACE FUNCTION {s}.playbook_agent_maturity_log(
    bullet text, at text, maturity text) RETURNS boolean
LANGUAGE plpgsql STABLE {path} AS $$
BEGIN
    IF maturity <> 'candidate'
       OR NOT EXISTS (SELECT 1 FROM bullets b WHERE b.id = bullet AND b.{fresh}
                      AND b.created_at = at AND b.maturity = 'candidate')
       OR EXISTS (SELECT 1 FROM maturity_log m WHERE m.bullet_id = bullet) THEN
        {r["maturity_log"]};
    END IF;
    RETURN true;
END
$$""",
        f"""CREATE OR REPLACE FUNCTION {s}.playbook_agent_decision(
    actor text, action text, bullet text, status text, at text) RETURNS boolean
LANGUAGE plpgsql STABLE {path} AS $$
BEGIN
    IF actor <> 'agent' THEN
        {r["decision_actor"]};
    END IF;
    IF action NOT IN ('add', 'helpful', 'harmful', 'replace', 'merge', 'deprecate', '?',
                      'invert', 'outcome')
       OR (action IN ('replace', 'merge', 'deprecate') AND status = 'applied')
       OR (action = 'invert' AND NOT EXISTS (
            SELECT 1 FROM bullets WHERE id = bullet AND state = 'retired' AND {fresh})) THEN
        {r["decision_action"]};
    END IF;
    IF NOT playbook_recent(at) THEN
        {r["decision_time"]};
    END IF;
    RETURN true;
END
$$""",
        f"""CREATE OR REPLACE FUNCTION {s}.playbook_agent_flag(
    a text, status text, resolved_at text, resolution text, created_at text) RETURNS boolean
LANGUAGE plpgsql STABLE {path} AS $$
BEGIN
    IF status <> 'open' OR resolved_at IS NOT NULL OR resolution IS NOT NULL
       OR NOT playbook_recent(created_at)
       OR NOT EXISTS (SELECT 1 FROM bullets WHERE id = a AND {fresh}) THEN
        {r["flag"]};
    END IF;
    RETURN true;
END
$$""",
        f"""CREATE OR REPLACE FUNCTION {s}.playbook_agent_proposal(
    status text, decided_at text, decided_by text, reason text, edited text, result text,
    created_at text) RETURNS boolean
LANGUAGE plpgsql STABLE {path} AS $$
BEGIN
    IF status <> 'pending' OR decided_at IS NOT NULL OR decided_by IS NOT NULL
       OR reason IS NOT NULL OR edited IS NOT NULL OR result IS NOT NULL
       OR NOT playbook_recent(created_at) THEN
        {r["proposal"]};
    END IF;
    RETURN true;
END
$$""",
        f"""CREATE OR REPLACE FUNCTION {s}.playbook_agent_posting(seq bigint) RETURNS boolean
LANGUAGE plpgsql STABLE {path} AS $$
BEGIN
    IF NOT EXISTS (SELECT 1 FROM bullets b WHERE b.seq = playbook_agent_posting.seq
                   AND b.{fresh}) THEN
        {r["posting"]};
    END IF;
    RETURN true;
END
$$""",
        # Updates: what an agent's role may change of a row it can update at all.
        f"""CREATE OR REPLACE FUNCTION {s}.playbook_agent_update() RETURNS trigger
LANGUAGE plpgsql {path} AS $$
BEGIN
    IF NOT playbook_is_agent() THEN
        RETURN NEW;  -- a reviewer, the owner, or the database's own functions
    END IF;
    IF TG_TABLE_NAME = 'vocab' THEN
        {r["vocab"]};
    END IF;
    IF OLD.pinned <> 0 OR NEW.pinned <> OLD.pinned THEN
        {r["pinned"]};
    END IF;
    IF NEW.maturity <> OLD.maturity THEN
        IF OLD.maturity = 'deprecated' THEN
            {r["restore"]};
        END IF;
        {r["maturity"]};
    END IF;
    IF OLD.state = 'retired' THEN
        {r["unretire"]};
    END IF;
    IF OLD.state = 'draft' THEN
        {r["draft"]};
    END IF;
    IF NEW.state = 'retired' AND NEW.maturity_due IS NULL AND playbook_recent(NEW.valid_to)
       AND playbook_should_invert(OLD.id) THEN
        RETURN NEW;  -- step 5: inverting a rule its harm has turned
    END IF;
    {r["retire"]};
END
$$""",
    ]


# table -> the check of an agent's INSERT (a call of a function above on the new row).
INSERT_CHECKS = {
    "bullets": (
        "playbook_agent_bullet(id, content, type, source, state, maturity, pinned, "
        "pinned_reason, created_at, valid_from, valid_to, content_hash, maturity_due, rev)"
    ),
    "feedback": "playbook_agent_feedback(bullet_id, actor, at, recorded_at, weight, receipt)",
    "receipts": "playbook_agent_receipt(receipt, batch_id, recorded_at)",
    "edges": "playbook_agent_edge(kind, src, dst)",
    "maturity_log": "playbook_agent_maturity_log(bullet_id, at, maturity)",
    "decisions": "playbook_agent_decision(actor, action, bullet_id, status, at)",
    "conflicts": "playbook_agent_flag(a, status, resolved_at, resolution, created_at)",
    "proposals": (
        "playbook_agent_proposal(status, decided_at, decided_by, reason, edited_delta, "
        "result, created_at)"
    ),
    "bullet_tokens": "playbook_agent_posting(seq)",
    "bullet_tags": "playbook_agent_posting(seq)",
    "vocab": "df = 1",
    "cache_blob": "true",
    "watermarks": "true",
}
# table -> the columns an agent's role may update (a trigger checks the change).
UPDATES = {
    "bullets": ("state", "valid_to", "maturity", "maturity_due", "rev"),
    "vocab": ("df",),
    "cache_blob": ("*",),
    "watermarks": ("*",),
    "_playbook_changes": ("*",),
}
# The triggers on updates: (name, table, the WHEN of a change an agent may not make freely).
UPDATE_GUARDS = (
    ("agent_guard_rule", "bullets",
     "NEW.maturity <> OLD.maturity OR NEW.state <> OLD.state OR NEW.pinned <> OLD.pinned "
     "OR OLD.pinned <> 0 OR NEW.maturity_due IS DISTINCT FROM OLD.maturity_due"),
    ("agent_guard_vocab", "vocab", "NEW.df <> OLD.df + 1 OR NEW.token <> OLD.token"),
)  # fmt: skip


def policies_sql(s: str, agent: str, human: str, tables: list[str]) -> list[str]:
    """Row-level security on every table: a reviewer may do anything, an agent read
    everything, insert what INSERT_CHECKS accepts and update what it has grants for (the
    triggers check how). The owner is not subject to it."""
    out: list[str] = []
    for table in tables:
        t = f"{s}.{table}"
        out += [
            f"ALTER TABLE {t} ENABLE ROW LEVEL SECURITY",
            f"DROP POLICY IF EXISTS playbook_human ON {t}",
            f"CREATE POLICY playbook_human ON {t} TO {human} USING (true) WITH CHECK (true)",
            f"DROP POLICY IF EXISTS playbook_agent_read ON {t}",
            f"CREATE POLICY playbook_agent_read ON {t} FOR SELECT TO {agent} USING (true)",
            f"DROP POLICY IF EXISTS playbook_agent_insert ON {t}",
            f"DROP POLICY IF EXISTS playbook_agent_update ON {t}",
        ]
        if table in INSERT_CHECKS:
            out.append(
                f"CREATE POLICY playbook_agent_insert ON {t} FOR INSERT TO {agent} "
                f"WITH CHECK ({INSERT_CHECKS[table]})"
            )
        if table in UPDATES:
            out.append(
                f"CREATE POLICY playbook_agent_update ON {t} FOR UPDATE TO {agent} "
                "USING (true) WITH CHECK (true)"
            )
    for name, table, condition in UPDATE_GUARDS:
        out.append(f"DROP TRIGGER IF EXISTS {name} ON {s}.{table}")
        out.append(
            f"CREATE TRIGGER {name} BEFORE UPDATE ON {s}.{table} FOR EACH ROW "
            f"WHEN ({condition}) EXECUTE FUNCTION {s}.playbook_agent_update()"
        )
    return out
