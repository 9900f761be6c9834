"""The ``duplexagent`` console script: one file per command group, every one mounted below.

A new command is one line in :func:`_mount` (``app.command("NAME")(module.function)`` for a
command, ``app.add_typer(module.app, name="NAME")`` for a group); an import error or a misspelled
module name fails at start-up instead of silently dropping the command.
"""

from __future__ import annotations

import typer

from duplexagent._cli import archive, campaign, diagnose, gate, live, run, sim
from duplexagent.check import check_command

__all__ = ["app", "main"]

app = typer.Typer(
    help="DuplexAgent workbench: run, diagnose and improve a full-duplex voice-agent harness.",
    no_args_is_help=True,
    rich_markup_mode=None,  # help text is plain: [budget] and [interaction] show as written
)


def _version(value: bool) -> None:
    if value:
        from duplexagent import __version__

        typer.echo(f"duplexagent {__version__}")
        raise typer.Exit()


@app.callback()
def _main(
    version: bool = typer.Option(False, "--version", callback=_version, is_eager=True, help="Print the version and exit."),
) -> None:
    """DuplexAgent workbench: run, diagnose and improve a full-duplex voice-agent harness."""


def _mount(app: typer.Typer) -> None:
    """Every command and command group, in the order ``--help`` lists them."""
    app.command("diagnose")(diagnose.diagnose_command)
    app.command("report")(diagnose.report_command)
    app.command("drive")(live.drive)
    app.command("serve")(live.serve)
    app.command("run")(run.run)
    app.command("check")(check_command)
    app.add_typer(sim.app, name="sim")
    app.add_typer(gate.app, name="gate")
    app.add_typer(campaign.app, name="campaign")
    app.add_typer(archive.app, name="archive")


_mount(app)


def main() -> None:
    """Entry point of the ``duplexagent`` console script."""
    app()
