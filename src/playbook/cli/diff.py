"""diff: the playbook then and now (a thin wrapper over `playbook.review.diff_since`)."""

from __future__ import annotations

from typing import Any

import typer

from ..core.inert import inert
from ..core.text import plural
from .common import CliError, emit, json_option, open_store, set_json
from .registry import app


def _short(text: str, width: int = 70) -> str:
    one = inert(" ".join(text.split()), one_line=True)
    return one if len(one) <= width else one[: width - 1] + "…"


@app.command()
def diff(
    since: str = typer.Option(
        ..., "--since", metavar="DATE", help="Then: 2026-05-01, an ISO datetime, or 7d, 4w, 3m."
    ),
    until: str | None = typer.Option(
        None, "--until", metavar="DATE", help="Now, unless given (same forms as --since)."
    ),
    movers: int = typer.Option(20, "--movers", min=0, help="How many score movers to list."),
    json_out: bool = json_option(),
) -> None:
    """What changed since a date: rules that appeared, were retired, changed rung, and the
    ones whose score moved most. Scores then are the playbook as it stood then."""
    set_json(json_out)
    from ..review import diff_since  # lazy: --help, every typer command

    with open_store(read_only=True, replica=True) as store:
        now = store.now()
        start = _moment("--since", since, now)
        end = _moment("--until", until, now) if until is not None else None
        if end is not None and start > end:
            raise CliError("invalid_input", f"--since ({since}) is later than --until ({until})")
        data = diff_since(store, start, until=end, movers=movers).to_dict()
    emit(data, render_diff(data, until_given=end is not None))


def _moment(option: str, text: str, now: Any) -> Any:
    from ..review import parse_moment  # lazy: --help, every typer command

    try:
        return parse_moment(text, now)
    except ValueError as exc:
        raise CliError("invalid_input", f"{option}: {exc}") from None


def _score(value: float | None) -> str:
    return "     -" if value is None else f"{value:+z6.2f}"


SHOWN = 10  # rules listed per section in the text report; --json has them all


def _section(title: str, total: int, rows: list[str]) -> list[str]:
    lines = ["", f"{title} ({total}):", *rows[:SHOWN]]
    if len(rows) > SHOWN:
        lines.append(f"  … and {len(rows) - SHOWN} more (--json lists them all)")
    return lines


def render_diff(data: dict[str, Any], *, until_given: bool = False) -> str:
    c = data["counts"]
    end = data["until"][:16].replace("T", " ") + ("" if until_given else " (now)")
    lines = [
        f"Playbook from {data['since'][:16].replace('T', ' ')} to {end}",
        f"  {plural(c['rules_then'], 'live rule')} then, {c['rules_now']} now: "
        f"{c['appeared']} appeared, {c['retired']} retired, "
        f"{plural(c['rung_changes'], 'rung change')}, {c['moved']} moved in score",
    ]
    if data["appeared"]:
        rows = [
            f"  {r['id']}  {r['maturity_now']:<11} {_score(r['score_now'])}  "
            f"{_short(r['content'])}" + ("  (retired since)" if r["state_now"] == "retired" else "")
            for r in data["appeared"]
        ]
        lines += _section("Appeared", c["appeared"], rows)
    if data["retired"]:
        rows = [
            f"  {r['id']}  {r['maturity_now']:<11} {_score(r['score_now'])}  "
            f"{_short(r['content'], 50)}"
            + (f"  -> {', '.join(r['successors'])}" if r["successors"] else "")
            for r in data["retired"]
        ]
        lines += _section("Retired (score when retired)", c["retired"], rows)
    if data["rung_changes"]:
        rows = [
            f"  {r['id']}  {r['maturity_then'] + ' -> ' + r['maturity_now']:<26} "
            f"{_short(r['content'], 50)}"
            for r in data["rung_changes"]
        ]
        lines += _section("Changed rung", c["rung_changes"], rows)
    if data["movers"]:
        shown = len(data["movers"])
        top = f"top {shown} of {c['moved']}" if shown < c["moved"] else str(shown)
        lines += ["", f"Moved most in score ({top}):"]
        for r in data["movers"]:
            lines.append(
                f"  {r['id']}  {_score(r['score_then'])} -> {_score(r['score_now'])}  "
                f"({r['delta']:+z.2f})  {_short(r['content'], 50)}"
            )
    if not any(data[k] for k in ("appeared", "retired", "rung_changes", "movers")):
        lines.append("nothing changed")
    return "\n".join(lines)
