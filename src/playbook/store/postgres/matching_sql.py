"""Block matching in SQL, for the database's check of a rule an agent adds (`guard.py`):
`playbook.core.text`'s normalize, tokens and is_negative (its PROHIBITION), token Jaccard and
rapidfuzz's ratio, as `curation/matching.py` applies them. Keep them in step with it: the
database refuses what the API would (a tokenizer that differs in some corner of Unicode
refuses or lets through an agent's add there, never anything else); the ratio is computed
for patterns up to FUZZ_CELLS characters squared (longer ones match by text and tokens).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from ...core.policy import Policy

FUZZ_CELLS = 100_000  # the largest len(a) * len(b) the database computes a fuzzy ratio for

# Python's str.lower() turns these two into ASCII; PostgreSQL's lower() under the "C"
# collation leaves them (playbook.core.text folds case with str.lower()).
_LOWER = "replace(replace({t}, U&'\\0130', U&'i\\0307'), U&'\\212A', 'k')"


def matching_sql(s: str, policy: Policy) -> list[str]:
    """Block matching in SQL (`playbook.core.text`: normalize, tokens, is_negative and its
    PROHIBITION; jaccard; rapidfuzz's ratio): keep them in step with it."""
    lower = _LOWER.format(t="t")
    return [
        f"""CREATE OR REPLACE FUNCTION {s}.playbook_normalize(t text) RETURNS text
LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
SELECT COALESCE(string_agg(m[1], ' ' ORDER BY n), '')
FROM regexp_matches(lower({_LOWER.format(t="normalize(t, NFKC)")}), '([a-z0-9]+)', 'g')
    WITH ORDINALITY AS r(m, n)
$$""",
        f"""CREATE OR REPLACE FUNCTION {s}.playbook_tokens(t text) RETURNS text[]
LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
SELECT COALESCE(array_agg(DISTINCT m[1]) FILTER (WHERE length(m[1]) >= 2), '{{}}')
FROM regexp_matches(lower({lower}),
    '([a-z0-9]+(?:[._\\-+]+[a-z0-9]+)*[+#]*)', 'g') AS r(m)
$$""",
        f"""CREATE OR REPLACE FUNCTION {s}.playbook_is_negative(t text, kind text) RETURNS boolean
LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
SELECT kind = 'anti-pattern' OR t ~* ('^[[:space:]"''`*_>#-]*(avoid\\y|never\\y|'
    'don[''\u2019]?t\\y|do[[:space:]]+not\\y|stop[[:space:]]+[a-z]+ing\\y)')
$$""",
        f"""CREATE OR REPLACE FUNCTION {s}.playbook_jaccard(a text[], b text[]) RETURNS float8
LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
SELECT CASE WHEN cardinality(a) = 0 AND cardinality(b) = 0 THEN 1.0::float8
    ELSE (SELECT count(*) FROM (SELECT unnest(a) INTERSECT SELECT unnest(b)) i)::float8
       / (SELECT count(*) FROM (SELECT unnest(a) UNION SELECT unnest(b)) u)::float8 END
$$""",
        # rapidfuzz.fuzz.ratio: 100 * (1 - indel / (len a + len b)), indel = la + lb - 2 LCS
        f"""CREATE OR REPLACE FUNCTION {s}.playbook_fuzz_ratio(a text, b text) RETURNS float8
LANGUAGE plpgsql IMMUTABLE PARALLEL SAFE AS $$
DECLARE
    la int := length(a);
    lb int := length(b);
    prev int[];
    cur int[];
    i int;
    j int;
    ca text;
BEGIN
    IF la + lb = 0 THEN
        RETURN 100.0;
    END IF;
    IF la::bigint * lb > {FUZZ_CELLS} THEN
        RETURN NULL;  -- too long to compute here
    END IF;
    prev := array_fill(0, ARRAY[lb + 1]);
    FOR i IN 1..la LOOP
        ca := substr(a, i, 1);
        cur := array_fill(0, ARRAY[lb + 1]);
        FOR j IN 1..lb LOOP
            IF ca = substr(b, j, 1) THEN
                cur[j + 1] := prev[j] + 1;
            ELSE
                cur[j + 1] := GREATEST(prev[j + 1], cur[j]);
            END IF;
        END LOOP;
        prev := cur;
    END LOOP;
    RETURN 100.0::float8 * (1.0::float8 - (la + lb - 2 * prev[lb + 1])::float8 / (la + lb)::float8);
END
$$""",
        f"""CREATE OR REPLACE FUNCTION {s}.playbook_blocked(content text, kind text) RETURNS text
LANGUAGE plpgsql STABLE SET search_path = {s}, pg_temp AS $$
DECLARE
    norm text := playbook_normalize(content);
    toks text[] := playbook_tokens(content);
    negative boolean := playbook_is_negative(content, kind);
    p record;
    ratio float8;
BEGIN
    FOR p IN SELECT id, pattern, normalized FROM blocked_patterns WHERE active = 1
             ORDER BY created_at, id LOOP
        IF norm = p.normalized THEN
            RETURN p.id;
        END IF;
        CONTINUE WHEN negative <> playbook_is_negative(p.pattern, 'rule');
        IF playbook_jaccard(toks, playbook_tokens(p.pattern))
           >= {policy.blocked_jaccard!r}::float8 - '1e-09'::float8 THEN
            RETURN p.id;
        END IF;
        ratio := playbook_fuzz_ratio(norm, p.normalized);
        IF ratio >= {policy.blocked_fuzz_ratio!r}::float8 THEN
            RETURN p.id;
        END IF;
    END LOOP;
    RETURN NULL;
END
$$""",
    ]
