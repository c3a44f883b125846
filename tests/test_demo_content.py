"""The demo playbook's content: shape of the data, the history generator, the diary.

Similarity and scoring questions are asked of the real curator's helpers (`playbook.core.text`,
`playbook.core.scoring`), so the data is checked against the thresholds it will meet when loaded.
"""

import itertools
import os
import re
import subprocess
import sys
from collections import Counter, defaultdict
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
from rapidfuzz import fuzz

from playbook import curate
from playbook.core.policy import DEFAULT_POLICY
from playbook.core.scoring import RawEvent, days, decayed_totals, earned_rung, should_invert
from playbook.core.text import core_tokens, is_negative, jaccard, normalize, tokens
from playbook.demo.content import (
    BLOCKED_PATTERNS,
    CATEGORIES,
    CONFLICT_PAIRS,
    HARM_REASONS,
    KINDS,
    LANGUAGES,
    NEAR_DUPLICATES,
    PROFILES,
    RULE_TYPES,
    RULES,
    SCOPES,
    DemoEvent,
    index_of,
)
from playbook.demo.diary import DEMO_DIARY, render_diary
from playbook.demo.history import creation_time, generate_history
from playbook.store import PlaybookStore

NOW = datetime(2026, 5, 1, 9, 30, tzinfo=UTC)
CONTENTS = {rule.content for rule in RULES}
NEGATIVE_WORDS = {"never", "avoid", "don't", "dont"}
POSITIVE_WORDS = {"always", "must", "use"}
MARKER_RE = re.compile(r"\[playbook: (helpful|harmful) ([^\s\]]+)((?: [^\]]+)?)\]")
TRAILING_TAGS_RE = re.compile(r"(\s+#[a-z0-9-]+)+\s*$")


@pytest.fixture(scope="module")
def history() -> list[DemoEvent]:
    return generate_history(NOW)


def by_rule(events: list[DemoEvent]) -> dict[int, list[DemoEvent]]:
    grouped: dict[int, list[DemoEvent]] = defaultdict(list)
    for event in events:
        grouped[event.rule_index].append(event)
    return grouped


def decayed(events: list[DemoEvent]) -> tuple[float, float]:
    raw = [RawEvent(e.kind, days(e.at), 1.0) for e in events]
    return decayed_totals(raw, days(NOW), DEFAULT_POLICY.half_life_days)


def diary_proposals() -> list[str]:
    """What a heuristic reflector would propose: RULE:/AVOID: lines, trailing #tags dropped."""
    out = []
    for line in DEMO_DIARY.splitlines():
        if line.startswith("RULE:"):
            out.append(TRAILING_TAGS_RE.sub("", line.removeprefix("RULE:")).strip())
        elif line.startswith("AVOID:"):
            out.append(TRAILING_TAGS_RE.sub("", line).strip())
    return out


def near_block(content: str) -> bool:
    """The curator's blocked-pattern test (SPEC §5 step 2) with the default thresholds."""
    return any(
        normalize(content) == normalize(pattern)
        or jaccard(frozenset(tokens(content)), frozenset(tokens(pattern)))
        >= DEFAULT_POLICY.blocked_jaccard
        or fuzz.ratio(normalize(content), normalize(pattern)) >= DEFAULT_POLICY.blocked_fuzz_ratio
        for pattern, _ in BLOCKED_PATTERNS
    )


# --- the rules -----------------------------------------------------------------------------


def test_there_are_at_least_300_rules_in_every_category() -> None:
    assert len(RULES) >= 300
    per_category = Counter(rule.category for rule in RULES)
    assert set(per_category) == set(CATEGORIES)
    assert min(per_category.values()) >= 10


def test_contents_are_unique_and_non_trivial() -> None:
    folded = [rule.content.casefold() for rule in RULES]
    assert len(set(folded)) == len(folded)
    for rule in RULES:
        text = rule.content
        assert text == text.strip() and "\n" not in text, text
        assert len(text) >= 30 and len(text.split()) >= 6, text
        assert not text.endswith("."), text


def test_every_field_takes_an_allowed_value() -> None:
    for rule in RULES:
        assert rule.category in CATEGORIES
        assert rule.type in RULE_TYPES
        assert rule.scope in SCOPES
        assert rule.kind in KINDS
        assert rule.profile in PROFILES
        assert 2 <= len(rule.tags) <= 4, rule
        assert len(set(rule.tags)) == len(rule.tags), rule
        assert all(re.fullmatch(r"[a-z0-9][a-z0-9-]{0,19}", tag) for tag in rule.tags), rule
        if rule.scope == "global":
            assert rule.scope_key is None
        elif rule.scope == "language":
            assert rule.scope_key in LANGUAGES
        else:
            assert rule.scope_key and re.fullmatch(r"[a-z0-9-]+", rule.scope_key)
        assert (rule.type == "anti-pattern") == rule.content.startswith("AVOID: "), rule


def test_scopes_are_mostly_global_with_some_language_and_workspace_rules() -> None:
    scopes = Counter(rule.scope for rule in RULES)
    assert scopes["global"] > len(RULES) / 2
    assert scopes["language"] >= 20 and scopes["workspace"] >= 5
    assert {rule.scope_key for rule in RULES if rule.scope == "language"} == set(LANGUAGES)


def test_every_profile_is_represented_in_a_demo_sized_share() -> None:
    shares = {p: n / len(RULES) for p, n in Counter(rule.profile for rule in RULES).items()}
    assert set(shares) == set(PROFILES)
    assert all(share >= 0.04 for share in shares.values()), shares
    assert shares["established"] == max(shares.values())


def test_anti_patterns_are_between_10_and_30_percent() -> None:
    share = sum(rule.type == "anti-pattern" for rule in RULES) / len(RULES)
    assert 0.10 <= share <= 0.30


def test_harmful_profile_rules_are_rules_the_curator_can_invert() -> None:
    harmful = [rule for rule in RULES if rule.profile == "harmful"]
    assert harmful and all(rule.type == "rule" for rule in harmful)


def test_no_two_rules_fold_into_each_other_when_loaded() -> None:
    cores = [core_tokens(rule.content) for rule in RULES]
    close = [
        (RULES[i].content, RULES[j].content)
        for i, j in itertools.combinations(range(len(RULES)), 2)
        if jaccard(cores[i], cores[j]) >= DEFAULT_POLICY.duplicate_jaccard
    ]
    assert close == []


def test_add_delta_carries_every_field() -> None:
    rule = next(r for r in RULES if r.scope == "language")
    assert rule.add_delta() == {
        "type": "add",
        "content": rule.content,
        "category": rule.category,
        "tags": list(rule.tags),
        "scope": "language",
        "scope_key": rule.scope_key,
        "bullet_type": rule.type,
        "kind": rule.kind,
    }
    assert "scope_key" not in next(r for r in RULES if r.scope == "global").add_delta()


def test_index_of_finds_a_rule_by_exact_content() -> None:
    assert index_of(RULES[42].content) == 42
    with pytest.raises(KeyError):
        index_of("no such rule")


# --- conflicts, near-duplicates, blocked patterns ------------------------------------------


def test_conflict_pairs_flip_polarity_with_nearly_the_same_words() -> None:
    assert 5 <= len(CONFLICT_PAIRS) <= 8
    for existing, proposal in CONFLICT_PAIRS:
        assert existing in CONTENTS and proposal not in CONTENTS
        words = [set(re.findall(r"[a-z']+", text.lower())) for text in (existing, proposal)]
        negative = [bool(w & NEGATIVE_WORDS) for w in words]
        assert negative.count(True) == 1, (existing, proposal)
        assert words[negative.index(False)] & POSITIVE_WORDS, (existing, proposal)
        assert is_negative(existing) != is_negative(proposal)
        # Same subject as far as the curator can tell, so it compares them instead of adding.
        assert jaccard(core_tokens(existing), core_tokens(proposal)) >= 0.85


def test_near_duplicates_are_close_but_below_the_fold_threshold() -> None:
    assert 6 <= len(NEAR_DUPLICATES) <= 10
    cores = {rule.content: core_tokens(rule.content) for rule in RULES}
    for group in NEAR_DUPLICATES:
        assert 2 <= len(group) <= 3
        assert group[0] in CONTENTS
        assert not any(member in CONTENTS for member in group[1:])
        for a, b in itertools.combinations(group, 2):
            assert 0.5 <= jaccard(core_tokens(a), core_tokens(b)) < 0.85, (a, b)
            assert is_negative(a) == is_negative(b)
        for member in group[1:]:
            for content, core in cores.items():
                assert jaccard(core_tokens(member), core) < 0.85, (member, content)


def test_blocked_patterns_have_reasons_and_block_no_rule() -> None:
    assert 5 <= len(BLOCKED_PATTERNS) <= 8
    assert all(pattern and len(reason) > 20 for pattern, reason in BLOCKED_PATTERNS)
    assert [rule.content for rule in RULES if near_block(rule.content)] == []


# --- history -------------------------------------------------------------------------------


def test_history_is_deterministic_and_depends_on_the_seed(history: list[DemoEvent]) -> None:
    assert generate_history(NOW) == history
    assert generate_history(NOW, seed=7) == history
    assert generate_history(NOW, seed=8) != history


def test_history_size_and_order(history: list[DemoEvent]) -> None:
    assert 2000 <= len(history) <= 4000
    assert history == sorted(history, key=lambda e: e.at)
    assert {e.rule_index for e in history} <= set(range(len(RULES)))


def test_every_event_is_well_formed_and_between_creation_and_now(
    history: list[DemoEvent],
) -> None:
    for event in history:
        created = creation_time(event.rule_index, NOW)
        assert event.at.utcoffset() == timedelta(0)
        assert created < event.at <= NOW, event
        assert event.at >= NOW - timedelta(days=280)
        assert event.kind in ("helpful", "harmful")
        assert event.actor in ("agent", "human")
        assert event.context.strip()
        if event.kind == "harmful":
            assert event.reason in HARM_REASONS
        else:
            assert event.reason is None
    actors = Counter(e.actor for e in history)
    assert 0 < actors["human"] < actors["agent"]


def test_creation_time_is_deterministic_aware_and_follows_the_profile() -> None:
    for i, rule in enumerate(RULES):
        created = creation_time(i, NOW)
        assert created == creation_time(i, NOW)
        assert created.tzinfo is not None and created < NOW
        age = NOW - created
        if rule.profile == "candidate":
            assert age <= timedelta(days=30)
        if rule.profile in ("stale", "fading"):
            assert age > timedelta(days=200)
    with pytest.raises(ValueError):
        creation_time(0, datetime(2026, 5, 1))  # naive on purpose
    with pytest.raises(ValueError):
        generate_history(datetime(2026, 5, 1))  # naive on purpose


def test_harmful_rules_are_dominated_by_harm(history: list[DemoEvent]) -> None:
    grouped = by_rule(history)
    for i, rule in enumerate(RULES):
        if rule.profile != "harmful":
            continue
        kinds = Counter(e.kind for e in grouped[i])
        assert kinds["harmful"] > 2 * kinds["helpful"], rule.content
        # ...and after decay too, so the curator inverts it into an AVOID: anti-pattern.
        assert should_invert(*decayed(grouped[i]), DEFAULT_POLICY), rule.content


def test_stale_rules_have_no_event_in_the_last_200_days(history: list[DemoEvent]) -> None:
    cutoff = NOW - timedelta(days=200)
    grouped = by_rule(history)
    for i, rule in enumerate(RULES):
        if rule.profile == "stale":
            assert all(e.at < cutoff for e in grouped[i]), rule.content


def test_profiles_earn_the_rungs_the_demo_needs(history: list[DemoEvent]) -> None:
    grouped = by_rule(history)
    earned: dict[str, Counter[str]] = defaultdict(Counter)
    for i, rule in enumerate(RULES):
        helpful, harmful = decayed(grouped[i])
        earned[rule.profile][earned_rung(helpful, harmful, DEFAULT_POLICY).value] += 1
    assert set(earned["proven"]) == {"proven"}
    assert set(earned["candidate"]) == {"candidate"}
    assert earned["established"]["established"] >= 0.9 * earned["established"].total()
    # Fading: decay pulls most of them below the established rung they once had.
    assert earned["fading"]["candidate"] >= 0.6 * earned["fading"].total()
    # Contested: mixed, some still established, some already over the harm ratio.
    assert earned["contested"]["established"] > 0 and earned["contested"]["deprecated"] > 0


def test_fading_and_contested_histories_have_their_shape(history: list[DemoEvent]) -> None:
    grouped = by_rule(history)
    for i, rule in enumerate(RULES):
        events = grouped[i]
        kinds = Counter(e.kind for e in events)
        if rule.profile == "fading":
            assert kinds["helpful"] >= 5
            assert max(e.at for e in events) < NOW - timedelta(days=100)
        if rule.profile == "contested":
            assert 0.1 <= kinds["harmful"] / len(events) <= 0.5
        if rule.profile == "candidate":
            assert len(events) <= 2


# --- the diary -----------------------------------------------------------------------------


def test_diary_is_a_realistic_markdown_session() -> None:
    lines = DEMO_DIARY.splitlines()
    assert 80 <= len(lines) <= 150
    assert lines[0].startswith("# ")
    assert sum(line.startswith("RULE: ") for line in lines) >= 4
    assert sum(line.startswith("AVOID: ") for line in lines) >= 2
    assert "[playbook: helpful {rule:" in DEMO_DIARY
    assert "[playbook: harmful {rule:" in DEMO_DIARY


def test_render_diary_substitutes_every_placeholder() -> None:
    ids = [f"b-{i:08x}" for i in range(len(RULES))]
    referenced = {int(n) for n in re.findall(r"\{rule:(\d+)\}", DEMO_DIARY)}
    rendered = render_diary(ids)
    assert "{rule:" not in rendered and "{ref:" not in rendered
    markers = MARKER_RE.findall(rendered)
    assert len(markers) == DEMO_DIARY.count("[playbook: ")
    assert {bullet_id for _, bullet_id, _ in markers} == {ids[n] for n in referenced}
    for kind, _, rest in markers:
        if kind == "harmful":
            reason, _, context = rest.strip().partition(" ")
            assert reason in HARM_REASONS and context
        else:
            assert rest == ""


def test_render_diary_refuses_too_few_ids() -> None:
    with pytest.raises(ValueError, match="ids"):
        render_diary(["b-00000001"])


def test_diary_markers_point_at_rules_of_the_right_profile() -> None:
    for kind, index in re.findall(r"\[playbook: (helpful|harmful) \{rule:(\d+)\}", DEMO_DIARY):
        profile = RULES[int(index)].profile
        if kind == "harmful":
            assert profile == "harmful"
        else:
            assert profile in ("proven", "established")


def test_diary_proposes_one_near_duplicate_and_one_blocked_pattern() -> None:
    proposals = diary_proposals()
    cores = [core_tokens(rule.content) for rule in RULES]
    duplicates = [
        p for p in proposals if any(jaccard(core_tokens(p), core) >= 0.85 for core in cores)
    ]
    assert len(duplicates) == 1 and duplicates[0] not in CONTENTS
    assert len([p for p in proposals if near_block(p)]) == 1


# --- through the real curator, on a real SQLite file -----------------------------------------


def test_the_content_loads_through_curate_as_intended(store: PlaybookStore) -> None:
    for pattern, reason in BLOCKED_PATTERNS:
        store.block(pattern, reason)

    loaded = curate(store, [rule.add_delta() for rule in RULES], actor="human")
    assert [o.status for o in loaded.outcomes] == ["added"] * len(RULES)
    bullet = store.get_bullet(loaded.outcomes[0].bullet_id)
    assert bullet is not None and bullet.category == RULES[0].category

    conflicts = curate(store, [{"type": "add", "content": b} for _, b in CONFLICT_PAIRS])
    assert {o.status for o in conflicts.outcomes} == {"conflict"}

    extras = [{"type": "add", "content": c} for group in NEAR_DUPLICATES for c in group[1:]]
    assert {o.status for o in curate(store, extras).outcomes} == {"added"}

    proposed = curate(store, [{"type": "add", "content": p} for p in diary_proposals()])
    assert Counter(o.status for o in proposed.outcomes) == {
        "added": len(diary_proposals()) - 2,
        "folded": 1,
        "refused-blocked": 1,
    }


# --- import hygiene ------------------------------------------------------------------------


def test_module_imports_without_textual_numpy_or_sqlite() -> None:
    src = Path(__file__).resolve().parents[1] / "src"
    code = (
        "import sys\n"
        "for name in ('textual', 'numpy', 'sqlite3', '_sqlite3', 'sqlite_utils'):\n"
        "    sys.modules[name] = None  # any attempt to import it now fails\n"
        "import playbook.demo.content as d\n"
        "assert len(d.RULES) >= 300\n"
    )
    env = {**os.environ, "PYTHONPATH": str(src)}
    done = subprocess.run(
        [sys.executable, "-c", code], env=env, capture_output=True, text=True, check=False
    )
    assert done.returncode == 0, done.stderr
