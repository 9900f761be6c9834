"""``duplexagent sim ...``: the simulator's command line (usable on its own as a typer app)."""

from __future__ import annotations

from pathlib import Path
from typing import Optional

import typer

app = typer.Typer(help="Compose, render, export and grade timed test conversations.", no_args_is_help=True)


@app.command("score")
def score_cmd(
    scenarios: Path = typer.Option(..., "--scenarios", help="Directory of scenario files."),
    traces: Path = typer.Option(..., "--traces", help="Directory of <scenario id>.jsonl traces (any system's)."),
    as_json: bool = typer.Option(False, "--json", help="Print the score as JSON."),
    out: Optional[Path] = typer.Option(None, "--out", help="Also write the score JSON to this file."),
) -> None:
    """Grade traces against their scenarios' checks; prints Q (percent passed) and per-check counts."""
    from rich.console import Console

    from simulator.scenario import ScenarioError
    from simulator.score import grade_directory, render_run, run_to_json, write_run
    from simulator.trace import TraceError

    try:
        run = grade_directory(scenarios, traces)
    except (ScenarioError, TraceError) as err:
        typer.echo(f"error: {err}", err=True)
        raise typer.Exit(code=2) from None
    if out is not None:
        try:
            write_run(run, out)
        except OSError as err:
            typer.echo(f"error: {out}: cannot write: {err.strerror}", err=True)
            raise typer.Exit(code=2) from None
    if as_json:
        typer.echo(run_to_json(run), nl=False)
    else:
        render_run(run, Console())
