"""policy show, policy eval: the constants, where each came from, and measuring them.

`policy eval` replays this playbook's own feedback log and compares candidate policies on
its held-out end (see `playbook.policy_eval`); `--write FILE` records a recommended change
with the evidence it rests on, which `policy show` prints beside the constant.
"""

from __future__ import annotations

import sys
from typing import Any

import typer

from ..core.inert import inert
from ..core.policy import DEFAULT_POLICY, Policy
from .common import (
    CliError,
    emit,
    json_option,
    load_policy_option,
    note,
    open_store,
    policy_path,
    set_json,
)
from .registry import app

policy_app = typer.Typer(
    name="policy",
    help="The scoring, curation and recall constants, and measuring them on your own log.",
    no_args_is_help=True,
    rich_markup_mode=None,
)
app.add_typer(policy_app, name="policy")


def _shown(value: Any) -> str:
    """A constant as `policy show` prints it (lists of words joined by spaces)."""
    if isinstance(value, float):
        return f"{value:.6g}"
    if isinstance(value, tuple | list):
        return " ".join(str(v) for v in value)
    return str(value)


def _range(bounds: tuple[float, float, bool] | None) -> str | None:
    """A constant's range in words ("0 to 100", "above 0, to 36500")."""
    if bounds is None:
        return None
    low, high, above = bounds
    return f"above {low:g}, to {high:g}" if above else f"{low:g} to {high:g}"


def _one_line(text: str) -> str:
    return inert(text or "", one_line=True)


def _provenance() -> dict[str, dict[str, Any]]:
    """The measured constants' provenance in the --policy file (none without one)."""
    given = policy_path()
    if not given:
        return {}
    import tomllib  # lazy: every typer command

    from ..core.policy_file import load_provenance  # lazy: every typer command

    try:
        return load_provenance(given)
    except (OSError, tomllib.TOMLDecodeError):  # load_policy_option already reported it
        return {}


@policy_app.command("show")
def policy_show(json_out: bool = json_option()) -> None:
    """Every constant: its value, where the value came from, and what it does."""
    set_json(json_out)

    policy = load_policy_option()
    measured = _provenance()
    overridden = policy.fields_set if policy is not None else set()
    items = []
    for name, default, source, description in Policy.explain():
        value = getattr(policy, name) if policy is not None else default
        prov = measured.get(name) if name in overridden else None
        items.append(
            {
                "name": name,
                "value": value,
                "default": default,
                "source": f"{policy_path()}" if name in overridden else source,
                "default_source": source,
                "overridden": name in overridden,
                "provenance": prov,
                "description": description,
                "range": _range(Policy.range_of(name)),
            }
        )
    width = max(len(i["name"]) for i in items)
    lines = []
    for i in items:
        value, default = (_shown(v) for v in (i["value"], i["default"]))
        origin = (
            f"set in {i['source']} (default {_one_line(default)[:40]})"
            if i["overridden"]
            else i["source"]
        )
        lines.append(f"{i['name']:<{width}}  {value:<8}  {_one_line(origin)}")
        prov = i["provenance"]
        if prov:
            from ..core.policy_file import describe_provenance  # lazy: every typer command

            lines.append(f"{'':<{width}}  {_one_line(describe_provenance(prov))}")
            if prov.get("value") is not None and prov["value"] != i["value"]:
                lines.append(
                    f"{'':<{width}}  (edited since: the measured value was {prov['value']:g})"
                )
        bounds = f" ({i['range']})" if i["range"] else ""
        lines.append(f"{'':<{width}}  {i['description']}{bounds}")
    emit(items, "\n".join(lines))


@policy_app.command("eval")
def policy_eval(
    candidates: str | None = typer.Option(
        None,
        "--candidates",
        metavar="FILE",
        help="A TOML file of named policies ([candidates.NAME] tables of settings). "
        "Default: half-life 30/60/90/180/365 days x harm weight 2/4/8.",
    ),
    split: float = typer.Option(
        0.7,
        "--split",
        min=0.05,
        max=0.95,
        help="Share of the log's time span to train on; the rest is held out.",
    ),
    k: int = typer.Option(10, "--k", min=1, help="The top k of recall, for recall@k."),
    write: str | None = typer.Option(
        None,
        "--write",
        metavar="FILE",
        help="Write a recommended change, with its provenance, into this policy file "
        "(e.g. playbook.toml). Nothing is written when the verdict is inert.",
    ),
    json_out: bool = json_option(),
) -> None:
    """Which policy would have predicted this playbook's own feedback best?

    Replays the feedback log in time order; on the held-out end, compares each candidate's
    view just before every mark with the current policy's (--policy / $PLAYBOOK_POLICY):
    log-loss (primary), AUC and recall@k, with paired 95% session-bootstrap intervals.
    Recommends a change only when the primary interval lies above zero; else "inert".
    """
    set_json(json_out)
    from ..policy_eval import CandidateError, evaluate, load_candidates  # lazy: every typer command

    current = load_policy_option() or DEFAULT_POLICY
    chosen = None
    if candidates is not None:
        try:
            chosen = load_candidates(candidates, current)
        except FileNotFoundError:
            raise CliError("file_not_found", f"no such candidates file: {candidates}") from None
        except CandidateError as exc:
            raise CliError("invalid_input", str(exc)) from None
    from .interchange import _ProgressBar  # lazy: the cli cycle through `app`

    bar = _ProgressBar("replaying the log", enabled=sys.stderr.isatty())
    try:
        with open_store(read_only=True) as store:
            report = evaluate(store, chosen, current=current, split=split, k=k, progress=bar)
    finally:
        bar.close()
    data = report.to_dict()
    data["written"] = _write(report, write) if write else None
    human = report.text()
    if write and data["written"] is None:
        note("playbook: nothing written: the verdict is inert")
    elif data["written"]:
        names = ", ".join(data["written"]["changes"])
        human += f"\nwrote {names} to {_one_line(write or '')}"
    emit(data, human)


def _write(report: Any, path: str) -> dict[str, Any] | None:
    """Record the recommended change and its provenance; None when there is nothing to."""
    from pydantic import ValidationError  # lazy: every typer command

    from ..core.policy_file import MEASURED, write_policy  # lazy: every typer command
    from ..policy_eval import PRIMARY  # lazy: every typer command

    row = report.recommended
    if row is None:
        return None
    est = row.metrics[PRIMARY]
    log = report.log
    current = report.rows[0].candidate.policy
    provenance = {
        name: {
            "value": value,
            "previous": getattr(current, name),
            "source": MEASURED,
            "date": report.at.date().isoformat(),
            "candidate": row.candidate.name,
            "log_span": log.span,
            "events": log.events,
            "heldout_events": est.events,
            "sessions": est.sessions,
            "metric": "held-out log-loss gain (nats per event)",
            "difference": est.diff,
            "interval": [est.lo, est.hi],
            "mde": est.mde,
            "split": log.split,
            "bootstrap": f"{log.replicates} session replicates, seed {log.seed}",
        }
        for name, value in row.candidate.changes.items()
    }
    import tomllib  # lazy: every typer command

    # The written file states the whole policy evaluated: the current one's own settings
    # (when it came from another file) plus the change.
    values = {name: getattr(current, name) for name in current.fields_set}
    values.update(row.candidate.changes)
    try:
        write_policy(path, values, provenance)
    except tomllib.TOMLDecodeError as exc:
        raise CliError("invalid_policy", f"{path}: not valid TOML ({exc})") from None
    except ValidationError as exc:
        err = exc.errors(include_url=False)[0]
        loc = ".".join(str(p) for p in err["loc"])
        raise CliError("invalid_policy", f"{path}: {loc}: {err['msg']}") from None
    return {"path": path, "changes": dict(row.candidate.changes)}
