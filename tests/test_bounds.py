"""Every field a caller supplies is bounded by Policy: refused with the limit named, never
cut, and bad input is echoed back only as a short prefix."""

from __future__ import annotations

from pathlib import Path

import pytest

from playbook.core.limits import preview
from playbook.core.policy import Policy
from playbook.curation import curate
from playbook.curation.outcomes import InvalidOutcome, apply_outcome
from playbook.mcp.server import PlaybookTools, ToolFailure
from playbook.review.queue import stage
from playbook.store import PlaybookStore, open_store

from .helpers import dump
from .helpers.cli import assert_user_error, run_cli

HUGE_ID = "b-" + "9" * 5_000_000


def test_preview_shows_a_prefix_and_the_length() -> None:
    assert preview("b-1") == "'b-1'"
    assert preview("x" * 100) == repr("x" * 40) + "… (100 characters)"


@pytest.mark.parametrize(
    ("delta", "needle"),
    [
        ({"type": "helpful", "bullet_id": HUGE_ID}, "bullet_id is 5,000,002 characters; the "
         "maximum is 128 (Policy.max_id_length)"),
        ({"type": "merge", "bullet_ids": ["b-1", HUGE_ID], "content": "x"}, "bullet_ids is"),
        ({"type": "helpful", "bullet_id": "b-1", "context": "c" * 2001},
         "context is 2,001 characters; the maximum is 2,000 (Policy.max_text_length)"),
        ({"type": "deprecate", "bullet_id": "b-1", "reason": "r" * 2001}, "reason is 2,001"),
        ({"type": "add", "content": "x", "tags": ["t"] * 33},
         "tags has 33 items; the maximum is 32 (Policy.max_tags)"),
        ({"type": "add", "content": "x", "tags": ["t" * 201]}, "(Policy.max_label_length)"),
        ({"type": "add", "content": "x", "category": "c" * 201}, "category is 201"),
        ({"type": "add", "content": "x", HUGE_ID: 1}, "(5,000,002 characters): unknown field"),
    ],
)  # fmt: skip
def test_curate_refuses_each_field_over_its_bound(
    store: PlaybookStore, delta: dict, needle: str
) -> None:
    before = dump(store)
    (o,) = curate(store, [delta]).outcomes
    assert o.status == "rejected-invalid" and needle in (o.reason or "")
    assert len(o.reason or "") < 300 and len(o.bullet_id or "") < 100  # a prefix, at most
    assert dump(store) == before


def test_a_batch_and_a_session_ref_are_bounded(store: PlaybookStore) -> None:
    before = dump(store)
    many = [{"type": "add", "content": f"rule {i}"} for i in range(1001)]
    (o,) = curate(store, many).outcomes
    assert o.reason == "the batch has 1,001 deltas; the maximum is 1,000 (Policy.max_batch)"
    (o,) = curate(store, many[:1], provenance={"session_ref": "s" * 5000}).outcomes
    assert (
        o.reason == "session_ref is 5,000 characters; the maximum is 4,096 (Policy.max_ref_length)"
    )
    staged = stage(store, many)
    assert staged.staged == [] and "Policy.max_batch" in staged.rejected[0][1]
    staged = stage(store, [{"type": "helpful", "bullet_id": HUGE_ID}])
    assert "Policy.max_id_length" in staged.rejected[0][1] and len(staged.rejected[0][1]) < 200
    assert dump(store) == before


def test_the_limits_follow_the_policy(db_path: Path, clock) -> None:
    loose = open_store(db_path, Policy(max_text_length=10_000), clock)
    bid = curate(loose, [{"type": "add", "content": "Pin npm"}]).added[0]
    r = curate(loose, [{"type": "helpful", "bullet_id": bid, "context": "c" * 5000}])
    assert r.outcomes[0].status == "applied"
    assert loose.timeline(bid)[0].context == "c" * 5000  # whole: never cut


def test_outcome_reports_are_bounded(store: PlaybookStore) -> None:
    before = dump(store)
    for report, needle in [
        ({"outcome": "success", "bullet_ids": [HUGE_ID]}, "bullet_ids is 5,000,002 characters"),
        ({"outcome": "success", "context": "c" * 2001}, "(Policy.max_text_length)"),
        ({"outcome": "success", "receipt": "r" * 129}, "receipt is 129 characters"),
        ({"outcome": "success", "bullet_ids": ["b-1"] * 1001}, "(Policy.max_batch)"),
    ]:
        with pytest.raises(InvalidOutcome, match=needle.replace("(", r"\(").replace(")", r"\)")):
            apply_outcome(store, report)
    with pytest.raises(InvalidOutcome, match="session_ref is 5,000"):
        apply_outcome(store, {"outcome": "success"}, provenance={"session_ref": "s" * 5000})
    assert dump(store) == before


def test_the_mcp_tools_bound_their_parameters_and_echo_a_prefix(db_target, store) -> None:
    tools = PlaybookTools(db_target)
    for call, needle in [
        (lambda: tools.show_bullet(HUGE_ID), "bullet_id is 5,000,002 characters"),
        (lambda: tools.show_bullet("b-" + "7" * 100), "no bullet with id 'b-777"),
        (lambda: tools.recall("q" * 2001), "(Policy.max_query_length)"),
        (lambda: tools.mark_feedback("b-1", "helpful", context="c" * 2001), "context is 2,001"),
        (lambda: tools.mark_feedback(HUGE_ID, "helpful"), "bullet_id is 5,000,002"),
        (lambda: tools.propose_deltas([], session_ref="s" * 5000), "session_ref is 5,000"),
        (lambda: tools.record_outcome("success", [HUGE_ID]), "bullet_ids is 5,000,002"),
    ]:
        with pytest.raises((ToolFailure, ValueError)) as info:
            call()
        assert needle in str(info.value) and len(str(info.value)) < 300, str(info.value)


def test_the_cli_bounds_its_arguments_in_one_line(tmp_path: Path) -> None:
    db = tmp_path / "pb.sqlite3"
    assert run_cli("init", db=db).rc == 0
    long_id = "b-" + "8" * 100_000  # argv caps one argument at 128 KiB
    for args, needle in [
        (["show", long_id], "ID is 100,002 characters; the maximum is 128"),
        (["mark", "b-1", "helpful", "--context", "c" * 3000], "--context is 3,000"),
        (["recall", "q" * 3000], "query is 3,000 characters"),
        (["pin", "b-1", "-r", "r" * 3000], "--reason is 3,000"),
        (["unblock", long_id], "ID is 100,002"),
        (["add", "Pin npm", "--session", "s" * 5000], "--session is 5,000"),
    ]:
        r = run_cli(*args, "--json", db=db)
        err = assert_user_error(r, "invalid_input")
        assert needle in err["message"] and len(r.err) < 300, r.err


# A bad mark: (kind, the other API arguments, the CLI's arguments after `mark b-1`). Each
# surface must answer with the API's own message (`review.actions.check_mark`), naming its
# own spelling of the parameter.
BAD_MARKS = [
    ("sideways", {}, ["sideways"]),
    ("helpful", {"reason": "outdated"}, ["helpful", "--reason", "outdated"]),
    ("helpful", {"context": "c" * 2001}, ["helpful", "--context", "c" * 2001]),
    ("helpful", {"session_ref": "s" * 5000}, ["helpful", "--session", "s" * 5000]),
]


@pytest.mark.parametrize(("kind", "extra", "argv"), BAD_MARKS)
def test_a_bad_mark_is_refused_by_the_one_check_on_every_surface(
    tmp_path: Path, kind: str, extra: dict[str, str], argv: list[str]
) -> None:
    """Mark validation lives once, in the API: the CLI, the MCP server and the workbench
    (`review.mark`) pass its error on; none checks on its own (it would word it otherwise)."""
    from playbook import review
    from playbook.cli.hot import MARK_NAMES as CLI_NAMES
    from playbook.core.errors import InvalidInput
    from playbook.core.policy import DEFAULT_POLICY
    from playbook.review.actions import MARK_NAMES, check_mark

    def refusal(names: dict[str, str]) -> str:
        with pytest.raises(InvalidInput) as info:
            check_mark(DEFAULT_POLICY, "b-1", kind, names=names, **extra)
        return str(info.value)

    db = tmp_path / "pb.sqlite3"
    assert run_cli("init", db=db).rc == 0
    err = assert_user_error(run_cli("mark", "b-1", *argv, "--json", db=db), "invalid_input")
    assert err["message"] == refusal(CLI_NAMES)
    with pytest.raises(ToolFailure) as failure:
        PlaybookTools(db).mark_feedback("b-1", kind, **extra)
    assert str(failure.value) == refusal(MARK_NAMES)
    session = extra.get("session_ref")
    given = {k: v for k, v in extra.items() if k != "session_ref"}
    with open_store(db) as store, pytest.raises(InvalidInput) as raised:
        review.mark(store, "b-1", kind, provenance={"session_ref": session}, **given)
    assert str(raised.value) == refusal(MARK_NAMES)
