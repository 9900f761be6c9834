"""``duplexagent diagnose`` (one run) and ``duplexagent report`` (one campaign as an HTML page)."""

from __future__ import annotations

from pathlib import Path
from typing import Optional

import typer

from duplexagent._cli._common import console, err_console

__all__ = ["diagnose_command", "report_command"]


def diagnose_command(
    run_dir: Path = typer.Argument(..., help="A run directory written by 'duplexagent run' (header.json, traces/)."),
    as_json: bool = typer.Option(False, "--json", help="Print the diagnosis as JSON."),
    scenarios: Optional[Path] = typer.Option(None, "--scenarios", help="Scenario directory (default: the one in header.json)."),
    out: Optional[Path] = typer.Option(None, "--out", help="Also write the full diagnosis JSON to this file."),
) -> None:
    """Diagnose a run: one terminal failure cause per failed conversation, the blamed module, and Q."""
    from rsi.diagnose import DiagnosisError, diagnose_directory, render_run_diagnosis, run_diagnosis_json

    try:
        diag = diagnose_directory(run_dir, scenarios)
    except DiagnosisError as err:
        err_console.print(f"error: {err}", markup=False, highlight=False)
        raise typer.Exit(2)
    text = run_diagnosis_json(diag)
    if out is not None:
        from simulator.atomic import atomic_write

        atomic_write(out, text)
    if as_json:
        print(text, end="")
        return
    render_run_diagnosis(diag, console)


def report_command(
    directory: Path = typer.Argument(..., help="Campaign directory."),
    out: Path = typer.Option(..., "--out", help="HTML file to write (one self-contained page)."),
    no_replay: bool = typer.Option(False, "--no-replay", help="Skip replaying each round's exam (no cause counts or failure timelines)."),
) -> None:
    """One self-contained HTML page of a campaign: staircase, lineage, a card per proposal, failure timelines."""
    from rsi.report import ReportError, write_report

    try:
        path = write_report(directory, out, replay=not no_replay)
    except ReportError as err:
        err_console.print(f"error: {err}", markup=False, highlight=False, soft_wrap=True)
        raise typer.Exit(2)
    except OSError as err:
        err_console.print(f"error: {out}: cannot write: {err.strerror}", markup=False, highlight=False, soft_wrap=True)
        raise typer.Exit(2)
    console.print(f"wrote {path}", markup=False, highlight=False)

