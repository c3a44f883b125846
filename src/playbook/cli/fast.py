"""Reading a plain command line for the hot commands without the command-line framework.

Agents run `playbook mark`, `playbook recall` and `playbook outcome` on every task, and
`playbook hook prompt` before every prompt; loading typer and every command module costs
them tens of milliseconds. `read(args)` recognises exactly the plain forms of those
command lines:

    [G] mark ID helpful|harmful [--reason R] [--context C] [--session S] [--json]
    [G] recall QUERY [--limit N | -n N] [--as-of T] [--semantic] [--scope S]...
                     [--explain-hidden] [--json]
    [G] outcome RESULT ID... [--receipt R] [--context C] [--session S] [--json]
    [G] hook EVENT [JSON] [--reflector NAME]

where G is any of the global options `--db X`, `--policy Y`, `--read-db Z` (each at most
once, before the command)

(options in any order after the command, `--name=value` or `--name value`) and returns
what the command function is called with. Anything else (help, a version, an unknown or
repeated option, a value that looks like an option, a number out of range, `--`, any other
command) is None, and the full command line reads it, with its messages and exit codes.

`COMMANDS` mirrors what `cli/core.py` declares for typer, which stays the one definition
of each command: tests/test_startup.py fails when the two differ, and checks that both
ways of reading a command line run the same command with the same values.
"""

from __future__ import annotations

from typing import Any

from ..core.record import FrozenRecord

GLOBAL_OPTIONS = ("--db", "--policy", "--read-db")


class Option(FrozenRecord):
    names: tuple[str, ...]  # as on the command line, long name first
    dest: str  # the command function's parameter
    kind: str  # "flag", "text", "int" (at least `minimum`) or "many" (repeatable text)
    minimum: int | None

    def __init__(
        self, names: tuple[str, ...], dest: str, kind: str, minimum: int | None = None
    ) -> None:
        object.__setattr__(self, "names", names)
        object.__setattr__(self, "dest", dest)
        object.__setattr__(self, "kind", kind)
        object.__setattr__(self, "minimum", minimum)


class Command(FrozenRecord):
    arguments: tuple[str, ...]  # the command function's positional parameters, in order
    options: tuple[Option, ...]
    function: str  # its name in `playbook.cli.hot`
    variadic: bool  # the last argument takes one or more values (a list)

    def __init__(
        self,
        arguments: tuple[str, ...],
        options: tuple[Option, ...],
        function: str,
        variadic: bool = False,
    ) -> None:
        object.__setattr__(self, "arguments", arguments)
        object.__setattr__(self, "options", options)
        object.__setattr__(self, "function", function)
        object.__setattr__(self, "variadic", variadic)

    def option(self, name: str) -> Option | None:
        return next((o for o in self.options if name in o.names), None)


JSON_FLAG = Option(("--json",), "json_out", "flag")
COMMANDS = {
    "mark": Command(
        ("bullet_id", "kind"),
        (
            Option(("--reason",), "reason", "text"),
            Option(("--context",), "context", "text"),
            Option(("--session",), "session", "text"),
            JSON_FLAG,
        ),
        "mark_command",
    ),
    "recall": Command(
        ("query",),
        (
            Option(("--limit", "-n"), "limit", "int", minimum=1),
            Option(("--as-of",), "as_of", "text"),
            Option(("--semantic",), "semantic", "flag"),
            Option(("--scope",), "scope", "many"),
            Option(("--explain-hidden",), "explain_hidden", "flag"),
            JSON_FLAG,
        ),
        "recall_command",
    ),
    "outcome": Command(
        ("result", "bullet_ids"),
        (
            Option(("--receipt",), "receipt", "text"),
            Option(("--context",), "context", "text"),
            Option(("--session",), "session", "text"),
            JSON_FLAG,
        ),
        "outcome_command",
        variadic=True,
    ),
}


class Call(FrozenRecord):
    """A command line read: the global options given, the command, and its values (for a
    hook: the event and its argument)."""

    options: dict[str, str]
    command: str
    values: dict[str, Any]

    def __init__(self, options: dict[str, str], command: str, values: dict[str, Any]) -> None:
        object.__setattr__(self, "options", options)
        object.__setattr__(self, "command", command)
        object.__setattr__(self, "values", values)


def read(args: list[str]) -> Call | None:
    """The hot command `args` states in plain form, or None (the full command line)."""
    options: dict[str, str] = {}
    i = 0
    while i < len(args) and args[i].startswith("--"):
        name, eq, value = args[i].partition("=")
        if name not in GLOBAL_OPTIONS or name in options:
            return None
        if not eq:
            if i + 1 >= len(args):
                return None
            value = args[i + 1]
            i += 1
        if not value or value.startswith("-"):
            return None  # an empty path or a value like an option: the full reader says why
        options[name] = value
        i += 1
    rest = args[i:]
    if not rest:
        return None
    if rest[0] == "hook":
        return _hook(options, rest[1:])
    command = COMMANDS.get(rest[0])
    if command is None:
        return None
    values = _values(command, rest[1:])
    return None if values is None else Call(options, rest[0], values)


def _hook(options: dict[str, str], rest: list[str]) -> Call | None:
    """`hook EVENT [JSON] [--reflector NAME]`: the event, its one optional argument and the
    session end's reflector (anywhere after the event), nothing else."""
    reflector = None
    positional: list[str] = []
    i = 0
    while i < len(rest):
        name, eq, value = rest[i].partition("=")
        if name == "--reflector" and reflector is None:
            if not eq:
                if i + 1 >= len(rest):
                    return None
                value = rest[i + 1]
                i += 1
            if not value or value.startswith("-"):
                return None
            reflector = value
        elif rest[i].startswith("-"):
            return None
        else:
            positional.append(rest[i])
        i += 1
    if len(positional) not in (1, 2):
        return None
    argument = positional[1] if len(positional) == 2 else None
    return Call(
        options, "hook", {"event": positional[0], "argument": argument, "reflector": reflector}
    )


def _values(command: Command, rest: list[str]) -> dict[str, Any] | None:
    values: dict[str, Any] = {}
    positional: list[str] = []
    i = 0
    while i < len(rest):
        token = rest[i]
        i += 1
        if not token.startswith("-"):
            positional.append(token)
            continue
        name, eq, value = token.partition("=")
        option = command.option(name) if name.startswith("--") or not eq else None
        if option is None or (option.dest in values and option.kind != "many"):
            return None  # unknown, short-with-value, or repeated: the full reader decides
        if option.kind == "flag":
            if eq:
                return None
            values[option.dest] = True
            continue
        if not eq:
            if i >= len(rest):
                return None
            value = rest[i]
            i += 1
        if value.startswith("-"):
            return None
        if option.kind == "many":
            values.setdefault(option.dest, []).append(value)
        elif option.kind == "int":
            try:
                number = int(value)
            except ValueError:
                return None
            if option.minimum is not None and number < option.minimum:
                return None
            values[option.dest] = number
        else:
            values[option.dest] = value
    fixed = len(command.arguments) - command.variadic
    if len(positional) < len(command.arguments) or (
        not command.variadic and len(positional) != fixed
    ):
        return None
    values.update(zip(command.arguments[:fixed], positional[:fixed], strict=True))
    if command.variadic:
        values[command.arguments[-1]] = positional[fixed:]
    return values
