"""The policy file (`playbook.toml`): a policy read from it, and constants written to it
with the evidence they were measured on (`playbook policy eval --write`)."""

from __future__ import annotations

import json
import math
import re
from pathlib import Path
from typing import Any

from .files import read_toml, write_file
from .policy import Policy


def load_policy(path: str | Path) -> Policy:
    """Read a policy from a TOML file; unknown keys are an error (no silent typos)."""
    data = read_toml(path)
    # [reflect] (the hooks' reflector) shares the file; it is not a policy constant.
    table = data.get("policy", {k: v for k, v in data.items() if k != "reflect"})
    return Policy(**table)


# ----------------------------------------------------------------------------- provenance
# A constant measured by `playbook policy eval --write` carries the evidence it was chosen
# on, in the same file as its value: `[policy]` holds the values (what `load_policy` reads),
# `[provenance.NAME]` what each measured value rests on. `playbook policy show` prints it.

MEASURED = "measured by playbook policy eval"


def load_provenance(path: str | Path) -> dict[str, dict[str, Any]]:
    """The `[provenance.NAME]` tables of a policy file (empty when it has none)."""
    table = read_toml(path).get("provenance", {})
    return (
        {k: v for k, v in table.items() if isinstance(v, dict)} if isinstance(table, dict) else {}
    )


def write_policy(
    path: str | Path, values: dict[str, Any], provenance: dict[str, dict[str, Any]]
) -> Policy:
    """Set `values` in the policy file at `path` with their provenance, keeping the file's
    other settings and provenance; the values are validated before anything is written,
    and the file is replaced whole (a crash leaves the old file or the new one).

    Comments in an existing file are not kept (TOML is rewritten from its data)."""
    path = Path(path)
    data: dict[str, Any] = {}
    if path.is_file():  # (a device or a FIFO to write through holds no settings)
        data = read_toml(path)
    if "policy" in data:
        table = dict(data.pop("policy"))
    else:  # the top-level form: its plain keys are the policy
        table = {k: data.pop(k) for k in list(data) if not isinstance(data[k], dict)}
    table.update(values)
    policy = Policy(**table)
    prov = dict(data.pop("provenance", {}))
    prov.update(provenance)
    text = dump_toml({"policy": table, "provenance": prov, **data})
    write_file(path, text)  # a regular file replaced whole; never a device or a link out
    return policy


def describe_provenance(p: dict[str, Any]) -> str:
    """One line: when and on what evidence a constant was measured."""
    interval = p.get("interval") or [float("nan"), float("nan")]
    return (
        f"measured {p.get('date', '?')} by policy eval ({p.get('candidate', '?')}): "
        f"{p.get('metric', '?')} {p.get('difference', float('nan')):+z.4f} "
        f"[95% CI {interval[0]:+z.4f}, {interval[1]:+z.4f}] over {p.get('heldout_events', '?')} "
        f"held-out events in {p.get('sessions', '?')} sessions, log {p.get('log_span', '?')}"
    )


def dump_toml(tables: dict[str, Any]) -> str:
    """TOML for plain data: strings, numbers, booleans, lists of those, nested tables."""

    def key(k: str) -> str:
        return k if re.fullmatch(r"[A-Za-z0-9_-]+", k) else json.dumps(k)

    def value(v: Any) -> str:
        if isinstance(v, bool):
            return "true" if v else "false"
        if isinstance(v, int):
            return str(v)
        if isinstance(v, float):
            if math.isnan(v):
                return "nan"
            return repr(v) if math.isfinite(v) else ("inf" if v > 0 else "-inf")
        if isinstance(v, str):
            return json.dumps(v).replace("\x7f", "\\u007f")
        if isinstance(v, (list, tuple)):
            return "[" + ", ".join(value(x) for x in v) + "]"
        raise TypeError(f"cannot write {type(v).__name__} to TOML")

    lines: list[str] = []

    def table(name: str, body: dict[str, Any]) -> None:
        plain = [(k, v) for k, v in body.items() if not isinstance(v, dict)]
        nested = [(k, v) for k, v in body.items() if isinstance(v, dict)]
        if plain or not nested:
            if lines:
                lines.append("")
            lines.append(f"[{name}]")
            lines.extend(f"{key(k)} = {value(v)}" for k, v in plain)
        for k, v in nested:
            table(f"{name}.{key(k)}", v)

    lines.extend(f"{key(k)} = {value(v)}" for k, v in tables.items() if not isinstance(v, dict))
    for name, body in tables.items():
        if isinstance(body, dict) and body:
            table(key(name), body)
    return "\n".join(lines) + "\n"
