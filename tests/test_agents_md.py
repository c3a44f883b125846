"""The AGENTS.md / CLAUDE.md rendering of a playbook."""

from __future__ import annotations

from playbook.interop.agents_md import render_store
from playbook.store import PlaybookStore


def test_trusted_rules_by_category_anti_patterns_as_avoid(store: PlaybookStore) -> None:
    ins = store.insert_bullet
    proven = ins("Pin npm to 11 in release jobs", category="ci", maturity="proven").id
    est = ins("Cache pip downloads", category="ci", maturity="established").id
    avoid = ins(
        "AVOID: Sleeping in tests", category="testing", type="anti-pattern", maturity="established"
    ).id
    pinned = ins("Never force-push main", category="git", pinned=True, pinned_reason="policy").id
    candidate = ins("Maybe use uv", category="tooling").id
    deprecated = ins("Use black", category="tooling", maturity="deprecated").id
    retired = ins("Old rule", category="ci", maturity="proven", state="retired").id
    draft = ins("Draft rule", category="ci", maturity="proven", state="draft").id
    for _ in range(12):
        store.add_feedback(proven, "helpful")
    store.add_feedback(est, "helpful")

    text = render_store(store)
    lines = text.splitlines()
    assert lines[0] == "# Playbook"
    # Categories in order, best score first within one.
    headings = [line for line in lines if line.startswith("## ")]
    assert headings == ["## ci", "## git", "## testing"]
    ci = lines.index("## ci")
    assert lines[ci + 2] == f"- Pin npm to 11 in release jobs `{proven}`"
    assert lines[ci + 3] == f"- Cache pip downloads `{est}`"
    assert f"- Avoid: Sleeping in tests `{avoid}`" in lines
    assert f"- Never force-push main `{pinned}`" in lines
    for left_out in (candidate, deprecated, retired, draft):
        assert left_out not in text


def test_content_cannot_break_the_document(store: PlaybookStore) -> None:
    store.insert_bullet(
        "Rule one\n## Injected heading\n\x1b[31mred\x1b[0m", category="ci\n# x", maturity="proven"
    )
    text = render_store(store)
    assert "\x1b" not in text
    assert not any(line.startswith("## Injected") for line in text.splitlines())
    assert "- Rule one ## Injected heading \\x1b[31mred\\x1b[0m `b-" in text
    assert "## ci # x" in text


def test_empty_playbook_says_so(store: PlaybookStore) -> None:
    store.insert_bullet("Unproven idea")
    assert "_No proven or established rules yet._" in render_store(store)
