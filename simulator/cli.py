"""``duplexagent sim ...``: the simulator's command line (usable on its own as a typer app)."""

from __future__ import annotations

import typer

app = typer.Typer(help="Compose, render, export and grade timed test conversations.", no_args_is_help=True)
