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


def _speech_progress(total: int, label: str):  # type: ignore[no-untyped-def]
    """A rich progress bar on stderr and the per-conversation callback that advances it."""
    from rich.console import Console
    from rich.progress import Progress

    progress = Progress(console=Console(stderr=True), transient=True)
    task = progress.add_task(label, total=total)
    return progress, lambda _id: progress.advance(task)


@app.command("render")
def render_cmd(
    directory: Path = typer.Argument(..., help="Directory of scenario files."),
    out: Path = typer.Option(..., "--out", help="Audio directory: <id>.wav, <id>.timeline.json, report.json."),
    workers: Optional[int] = typer.Option(None, "--workers", min=1, help="Worker processes (default: CPU count)."),
    cache: Optional[Path] = typer.Option(None, "--cache", help="Utterance cache directory (default: OUT/.tts-cache)."),
    force: bool = typer.Option(False, "--force", help="Re-render conversations that are already up to date."),
    as_json: bool = typer.Option(False, "--json", help="Print the render report as JSON."),
) -> None:
    """Render each scenario's user channel (16 kHz mono WAV) and its VAD-corrected timeline."""
    from simulator.render import RenderError, render_dir
    from simulator.scenario import ScenarioError, scenario_files

    try:
        total = len(scenario_files(directory))
        progress, advance = _speech_progress(total, "rendering")
        with progress:
            report = render_dir(directory, out, workers=workers, cache_dir=cache, force=force, progress=advance)
    except ScenarioError as err:
        typer.echo(f"error: {err}", err=True)
        raise typer.Exit(code=2) from None
    except RenderError as err:
        typer.echo(f"error: {err}", err=True)
        raise typer.Exit(code=1) from None
    if as_json:
        typer.echo(report.model_dump_json(indent=2))
        return
    per_core = f"{report.x_real_time_per_core}x real time per core" if report.x_real_time_per_core else "nothing rendered"
    onset = report.max_abs_rendered_onset_diff_s
    typer.echo(
        f"{len(report.scenarios)} conversation(s), {report.audio_s:.1f} s of audio in {report.wall_s:.2f} s "
        f"({per_core}; {report.reused} reused, {report.cache_hits}/{report.utterances} utterances cached); "
        f"worst placed-vs-VAD onset {'n/a' if onset is None else f'{onset * 1000:.0f} ms'} -> {out}"
    )


@app.command("export")
def export_cmd(
    directory: Path = typer.Argument(..., help="Directory of scenario files."),
    fmt: str = typer.Option(..., "--format", help="bundle (scenario.json, user.wav, timeline.json) or fdb (input.wav, timestamps.json)."),
    out: Path = typer.Option(..., "--out", help="Output directory: one folder per conversation."),
    audio: Optional[Path] = typer.Option(None, "--audio", help="Rendered audio directory (default: OUT/.audio); missing audio is rendered."),
    workers: Optional[int] = typer.Option(None, "--workers", min=1, help="Worker processes for rendering."),
    cache: Optional[Path] = typer.Option(None, "--cache", help="Utterance cache directory."),
    as_json: bool = typer.Option(False, "--json", help="Print the export manifest as JSON."),
) -> None:
    """Export conversations as bundles or Full-Duplex-Bench-style folders (rendering audio if needed)."""
    from simulator.export import ExportError, export_dir
    from simulator.render import RenderError
    from simulator.scenario import ScenarioError, scenario_files

    try:
        total = len(scenario_files(directory))
        progress, advance = _speech_progress(total, f"exporting ({fmt})")
        with progress:
            manifest = export_dir(directory, fmt, out, audio_dir=audio, workers=workers, cache_dir=cache, progress=advance)
    except (ScenarioError, ExportError) as err:
        typer.echo(f"error: {err}", err=True)
        raise typer.Exit(code=2) from None
    except RenderError as err:
        typer.echo(f"error: {err}", err=True)
        raise typer.Exit(code=1) from None
    if as_json:
        typer.echo(manifest.model_dump_json(indent=2))
        return
    typer.echo(f"{len(manifest.conversations)} conversation(s) exported as {manifest.format} -> {out}")
