"""The playbook's block for AGENTS.md / CLAUDE.md: which rules, in which order, in how
many bytes."""

from __future__ import annotations

import pytest

from playbook.interop.agents_md import BEGIN, END, BudgetTooSmall, build_store, render_store
from playbook.project.protocol import protocol_lines
from playbook.store import PlaybookStore


def rule_lines(text: str) -> list[str]:
    return [line for line in text.splitlines() if line.startswith("- ") and "`b-" in line]


def test_live_rules_by_category_trusted_first_anti_patterns_as_avoid(
    store: PlaybookStore,
) -> None:
    ins = store.insert_bullet
    proven = ins("Pin npm to 11 in release jobs", category="ci", maturity="proven").id
    est = ins("Cache pip downloads", category="ci", maturity="established").id
    avoid = ins(
        "AVOID: Sleeping in tests", category="testing", type="anti-pattern", maturity="established"
    ).id
    pinned = ins("Never force-push main", category="git", pinned=True, pinned_reason="policy").id
    candidate = ins("Maybe use uv", category="tooling").id
    harmed = ins("Retry deploys blindly", category="tooling").id
    deprecated = ins("Use black", category="tooling", maturity="deprecated").id
    retired = ins("Old rule", category="ci", maturity="proven", state="retired").id
    draft = ins("Draft rule", category="ci", maturity="proven", state="draft").id
    for _ in range(12):
        store.add_feedback(proven, "helpful")
    store.add_feedback(est, "helpful")
    store.add_feedback(harmed, "harmful", reason="caused_bug")

    text = render_store(store)
    lines = text.splitlines()
    assert lines[0] == BEGIN and lines[-1] == END and lines[1] == "## Playbook"
    # The agent's protocol, word for word as SessionStart tells it.
    for line in protocol_lines(recall_hint='playbook recall "<a few words>"'):
        assert line in lines
    headings = [line for line in lines if line.startswith("### ")]
    assert headings == ["### ci", "### git", "### testing", "### tooling"]
    ci = lines.index("### ci")
    assert lines[ci + 1] == f"- Pin npm to 11 in release jobs `{proven}`"
    assert lines[ci + 2] == f"- Cache pip downloads `{est}`"
    assert f"- Avoid: Sleeping in tests `{avoid}`" in lines
    assert f"- Never force-push main `{pinned}`" in lines
    # A candidate is live and shown, marked; one its evidence harms is not, yet.
    assert f"- Maybe use uv `{candidate}` (candidate)" in lines
    for left_out in (harmed, deprecated, retired, draft):
        assert left_out not in text
    assert "rules are shown here" not in text  # all 6 shown: nothing left to recall


def test_the_budget_is_filled_best_first(store: PlaybookStore) -> None:
    # Ranked: the pinned rule, then proven by score, then established, then candidates.
    ids = {}
    ids["pinned"] = store.insert_bullet("Keep the changelog in sync", pinned=True).id
    ids["proven_low"] = store.insert_bullet("Tag releases from main", maturity="proven").id
    ids["proven_high"] = store.insert_bullet("Sign release tags", maturity="proven").id
    ids["established"] = store.insert_bullet("Run the smoke test", maturity="established").id
    ids["candidate"] = store.insert_bullet("Try the new runner").id
    for _ in range(5):
        store.add_feedback(ids["proven_high"], "helpful")
    store.add_feedback(ids["proven_low"], "helpful")
    order = ["pinned", "proven_high", "proven_low", "established", "candidate"]

    def shown(**kw: int) -> list[str]:
        block = build_store(store, **kw)
        text = block.text()
        assert block.size == len(text.encode("utf-8")) and block.size <= kw.get("max_bytes", 8192)
        return [name for name in order if ids[name] in text]

    assert shown() == order
    assert shown(top=2) == order[:2]
    assert shown(top=0) == []
    # At the exact size of the block with its first three rules, three fit; a byte less,
    # two (the fourth rule never jumps ahead of the third).
    three = build_store(store, top=3).size
    assert shown(max_bytes=three) == order[:3]
    assert shown(max_bytes=three - 1) == order[:2]
    text = build_store(store, max_bytes=three).text()
    assert '_3 of 5 rules are shown here, best first; `playbook recall "' in text


def test_a_budget_too_small_for_the_protocol_is_refused(store: PlaybookStore) -> None:
    store.insert_bullet("Sign release tags", maturity="proven")
    bare = build_store(store, top=0).size
    assert build_store(store, max_bytes=bare).shown == 0
    with pytest.raises(BudgetTooSmall, match="--max-bytes 300 is below"):
        build_store(store, max_bytes=300)


def test_crlf_lines_count_against_the_budget(store: PlaybookStore) -> None:
    for n in range(30):
        store.insert_bullet(f"Rule number {n} about release trains", maturity="proven")
    lf = build_store(store, max_bytes=2000)
    crlf = build_store(store, max_bytes=2000, newline="\r\n")
    assert len(crlf.text("\r\n").encode()) == crlf.size <= 2000
    assert crlf.shown < lf.shown


def test_only_this_workspaces_rules(store: PlaybookStore) -> None:
    mine = store.insert_bullet(
        "Use the shop's sandbox keys", scope="workspace", scope_key="github.com/acme/shop"
    ).id
    theirs = store.insert_bullet(
        "Bump the blog theme", scope="workspace", scope_key="github.com/acme/blog"
    ).id
    everywhere = store.insert_bullet("Write commit messages in English").id
    text = build_store(store, workspace="GitHub.com/Acme/Shop").text()
    assert mine in text and everywhere in text and theirs not in text
    assert theirs in build_store(store).text()  # no workspace: every rule


def test_content_cannot_break_the_document(store: PlaybookStore) -> None:
    store.insert_bullet(
        "Rule one\n## Injected heading\n<!-- playbook:end -->\n\x1b[31mred\x1b[0m",
        category="ci\n# x",
        maturity="proven",
    )
    text = render_store(store)
    assert "\x1b" not in text
    lines = text.splitlines()
    assert not any(line.startswith(("## Injected", "<!-- playbook:end")) for line in lines[:-1])
    assert "- Rule one ## Injected heading <!-- playbook:end --> \\x1b[31mred\\x1b[0m `b-" in text
    assert "### ci # x" in lines


def test_empty_playbook_says_so_and_still_teaches_the_protocol(store: PlaybookStore) -> None:
    text = render_store(store)
    assert "_No live rules yet._" in text
    assert "starts with RULE: (what to do) or AVOID: (what not to do)" in text
    assert "[playbook: helpful <id>]" in text and "[playbook: harmful <id> <reason>]" in text
