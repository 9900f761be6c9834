"""The ``duplexagent`` console script."""

from __future__ import annotations

import typer

from simulator.cli import app as sim_app

app = typer.Typer(help="DuplexAgent workbench: run, diagnose and improve a full-duplex voice-agent harness.", no_args_is_help=True)
app.add_typer(sim_app, name="sim")


def main() -> None:
    app()


if __name__ == "__main__":
    main()
