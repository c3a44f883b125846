"""The one typer application every command module declares its commands on.

A leaf: it imports typer and nothing of the CLI, so a command module (`@app.command()`)
never imports back the package or the module that loads it. `typer_app` adds the root
options and imports the command modules in the order of `playbook --help`.
"""

from __future__ import annotations

import typer

app = typer.Typer(
    name="playbook",
    help="A decaying rule playbook for coding agents, with a curation workbench.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
    rich_markup_mode=None,
    context_settings={"help_option_names": ["-h", "--help"]},
)
