"""``duplexagent sim ...``: compose, render, export and grade timed test conversations."""

from __future__ import annotations

from pathlib import Path
from typing import Optional

import typer

from duplexagent._cli._common import fail, refuse_non_empty, write_or_fail

__all__ = ["app"]

app = typer.Typer(help="Compose, render, export and grade timed test conversations.", no_args_is_help=True, rich_markup_mode=None)


@app.command("catalogue")
def catalogue_cmd(
    as_json: bool = typer.Option(False, "--json", help="Print request types, patterns and compatible cells as JSON."),
    stats: bool = typer.Option(False, "--stats", help="Report the wording's variety: surfaces per kind and split, what splits share."),
    catalogue_dir: Optional[Path] = typer.Option(None, "--catalogue", help="Catalogue directory (default: the packaged one)."),
) -> None:
    """List the request types, interaction patterns and compatible (type, pattern) cells."""
    import json

    from simulator.catalogue import CatalogueError, load_catalogue

    try:
        cat = load_catalogue(catalogue_dir)
    except CatalogueError as err:
        fail(str(err))
    if stats:
        doc = cat.stats()
        if as_json:
            typer.echo(json.dumps(doc, indent=2))
            return
        from rich.console import Console
        from rich.table import Table

        table = Table(title="distinct surfaces per kind and split")
        table.add_column("kind")
        for sp in doc["splits"]:
            table.add_column(sp, justify="right")
        for row in doc["kinds"]:
            table.add_row(f"{row['what']} {row['kind']}", *(str(row["surfaces"].get(sp, 0)) for sp in doc["splits"]))
        for sp_row in ("connective_surfaces", "request_surfaces"):
            table.add_row(f"total {sp_row.split('_')[0]}", *(str(doc["totals"][sp][sp_row]) for sp in doc["splits"]))
        console = Console()
        console.print(table)
        for p in doc["pairs"]:
            a, b = p["splits"]
            console.print(
                f"{a} / {b}: shared surfaces {p['shared_surfaces']}, shared heads {p['shared_heads']}, "
                f"connective 3-grams in common {p['connective_trigram_share']:.1%}"
            )
        return
    if as_json:
        typer.echo(json.dumps(cat.to_json(), indent=2))
        return
    from rich.console import Console
    from rich.table import Table

    table = Table(title=f"{len(cat.request_types)} request types x {len(cat.patterns)} patterns: {len(cat.cells)} compatible cells")
    table.add_column("pattern")
    table.add_column("role")
    table.add_column("types", justify="right")
    table.add_column("combines with", justify="right")
    for name, spec in cat.patterns.items():
        n_types = sum(1 for c in cat.cells if c[1] == name)
        n_partners = sum(1 for c in cat.combinations if name in c)
        table.add_row(name, spec.role, str(n_types), f"{n_partners} patterns")
    Console().print(table)


@app.command("paraphrase")
def paraphrase_cmd(
    catalogue_dir: Path = typer.Option(..., "--catalogue", help="Catalogue directory to extend (a copy, not the packaged one)."),
    split: str = typer.Option(..., "--split", help="dev, protection or fixed_core."),
    kind: str = typer.Option(..., "--kind", help="Connective kind (refine, cancel, ...)."),
    model: str = typer.Option(..., "--model", help="litellm model name."),
    n: int = typer.Option(2, "--n", min=1, max=10, help="Families to ask for."),
    api_base: Optional[str] = typer.Option(None, "--api-base", help="Model endpoint (optional)."),
    cache_dir: Optional[Path] = typer.Option(None, "--cache", help="Reply cache (default: <catalogue>/.paraphrase_cache)."),
    as_json: bool = typer.Option(False, "--json", help="Print the result as JSON."),
) -> None:
    """Optional: a model writes extra connective families for one split (kept only if the loader accepts them)."""
    import json

    from simulator.catalogue import CatalogueError
    from simulator.paraphrase import ParaphraseError, paraphrase

    try:
        out = paraphrase(catalogue_dir, split=split, kind=kind, model=model, n=n, api_base=api_base, cache_dir=cache_dir)
    except (CatalogueError, ParaphraseError) as err:
        fail(str(err))
    if as_json:
        typer.echo(json.dumps(out, indent=2))
    else:
        typer.echo(f"added {len(out['added'])} famil{'y' if len(out['added']) == 1 else 'ies'}, refused {len(out['refused'])}{' (cached reply)' if out['cached'] else ''}")


@app.command("generate")
def generate_cmd(
    split: str = typer.Option(..., "--split", help="dev, protection or fixed_core."),
    n: int = typer.Option(..., "--n", min=0, help="Number of conversations."),
    seed: int = typer.Option(..., "--seed", help="Composition seed (same seed, byte-identical files)."),
    out: Path = typer.Option(..., "--out", help="Directory for <id>.json scenario files."),
    pattern: Optional[list[str]] = typer.Option(None, "--pattern", help="Only these patterns (repeatable)."),
    request_type: Optional[list[str]] = typer.Option(None, "--request-type", help="Only these request types (repeatable)."),
    cell: Optional[list[str]] = typer.Option(None, "--cell", help="Only these cells, as request_type:pattern (repeatable)."),
    as_json: bool = typer.Option(False, "--json", help="Print the written files as JSON."),
    force: bool = typer.Option(False, "--force", help="Write into a non-empty --out (files of the same name are replaced)."),
) -> None:
    """Compose timed test conversations and write one scenario file per conversation."""
    import json

    refuse_non_empty(out, force)

    from simulator.catalogue import CatalogueError
    from simulator.compose import ComposeError, generate

    cells = []
    for c in cell or []:
        if c.count(":") != 1:
            fail(f"--cell: {c!r} is not request_type:pattern")
        cells.append(tuple(c.split(":")))
    try:
        paths = generate(split, n, seed, out, patterns=pattern or None, request_types=request_type or None, cells=cells or None)
    except (ComposeError, CatalogueError) as err:
        fail(str(err))
    except OSError as err:
        fail(f"{out}: cannot write: {err.strerror}")
    if as_json:
        typer.echo(json.dumps({"split": split, "n": len(paths), "seed": seed, "files": [str(p) for p in paths]}, indent=2))
    else:
        typer.echo(f"{len(paths)} {split} conversation(s) -> {out}")


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
        fail(str(err))
    if out is not None:
        write_or_fail(out, lambda: write_run(run, out))
    if as_json:
        typer.echo(run_to_json(run), nl=False)
    else:
        render_run(run, Console())


@app.command("score-audio")
def score_audio_cmd(
    bundles: Path = typer.Option(..., "--bundles", help="Bundles written by 'sim export --format bundle' (<id>/timeline.json, user.wav)."),
    outputs: Path = typer.Option(..., "--outputs", help="The system's output WAV per conversation: <id>.wav or <id>/output.wav (or one per session: <id>.<session>.wav, <id>/<session>/output.wav)."),
    as_json: bool = typer.Option(False, "--json", help="Print the timing metrics as JSON."),
    out: Optional[Path] = typer.Option(None, "--out", help="Also write the JSON to this file."),
) -> None:
    """Timing of an audio-only system: VAD finds its speech; take-over rate, latencies, yield and backchannels against the user channel."""
    from simulator.audio_score import AudioScoreError, score_audio
    from simulator.vad import VadUnavailable

    try:
        result = score_audio(bundles, outputs)
    except (AudioScoreError, VadUnavailable) as err:
        fail(str(err))
    text = result.model_dump_json(indent=2) + "\n"
    if out is not None:
        from simulator.atomic import atomic_write

        write_or_fail(out, lambda: atomic_write(out, text.encode(), mkdir=True))
    if as_json:
        typer.echo(text, nl=False)
        return
    m = result.metrics

    def ms(x: float | None) -> str:
        return "n/a" if x is None else f"{x * 1000:.0f} ms"

    def rate(x: float | None) -> str:
        return "n/a" if x is None else f"{x:.2f}"

    typer.echo(
        f"{result.n} conversation(s){f', {len(result.missing)} without output' if result.missing else ''}: "
        f"take-over rate {rate(m.takeover_rate)} ({m.takeovers}/{m.takeover_turns}); "
        f"response latency median {ms(m.response_latency.median_s)} (n={m.response_latency.n}, {m.responses_missing} missing); "
        f"yield rate {rate(m.yield_rate)} ({m.yielded}/{m.yield_cases}), latency median {ms(m.yield_latency.median_s)}; "
        f"backchannels kept {rate(m.backchannel_kept_rate)} ({m.backchannel_kept}/{m.backchannel_cases})"
    )


def _speech_progress(total: int, label: str):  # type: ignore[no-untyped-def]
    """Progress on stderr and the per-conversation callback that advances it: a rich bar on a
    terminal, else one plain line per conversation (``rendering 3/20 dev-0003``) for logs and CI."""
    import contextlib
    import sys

    if not (sys.stdout.isatty() and sys.stderr.isatty()):
        done = [0]

        def line(conv_id: str) -> None:
            done[0] += 1
            print(f"{label} {done[0]}/{total} {conv_id}", file=sys.stderr, flush=True)

        return contextlib.nullcontext(), line
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
    force: bool = typer.Option(
        False, "--force", help="Write into a non-empty --out that is not an earlier render, and re-render conversations that are already up to date."
    ),
    as_json: bool = typer.Option(False, "--json", help="Print the render report as JSON."),
) -> None:
    """Render each scenario's user channel (16 kHz mono WAV) and its VAD-corrected timeline.

    An --out holding an earlier render (report.json) is updated: unchanged conversations are reused."""
    refuse_non_empty(out, force, previous="report.json")
    from simulator.render import RenderError, render_dir
    from simulator.scenario import ScenarioError, scenario_files

    try:
        total = len(scenario_files(directory))
        progress, advance = _speech_progress(total, "rendering")
        with progress:
            report = render_dir(directory, out, workers=workers, cache_dir=cache, force=force, progress=advance)
    except ScenarioError as err:
        fail(str(err))
    except RenderError as err:
        fail(str(err), code=1)
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
    fmt: str = typer.Option(..., "--format", help="bundle (scenario.json, user.wav, timeline.json) or fdb (Full-Duplex-Bench task folders: input.wav, pause.json, turn_taking.json, interrupt.json, transcription.json)."),
    out: Path = typer.Option(..., "--out", help="Output directory: one folder per conversation."),
    audio: Optional[Path] = typer.Option(None, "--audio", help="Rendered audio directory (default: OUT/.audio); missing audio is rendered."),
    workers: Optional[int] = typer.Option(None, "--workers", min=1, help="Worker processes for rendering."),
    cache: Optional[Path] = typer.Option(None, "--cache", help="Utterance cache directory."),
    as_json: bool = typer.Option(False, "--json", help="Print the export manifest as JSON."),
    force: bool = typer.Option(False, "--force", help="Write into a non-empty --out that is not an earlier export."),
) -> None:
    """Export conversations as bundles or Full-Duplex-Bench task folders (rendering audio if needed).

    An --out holding an earlier export (manifest.json) is updated in place."""
    refuse_non_empty(out, force, previous="manifest.json")
    from simulator.export import ExportError, export_dir
    from simulator.render import RenderError
    from simulator.scenario import ScenarioError, scenario_files

    try:
        total = len(scenario_files(directory))
        progress, advance = _speech_progress(total, f"exporting ({fmt})")
        with progress:
            manifest = export_dir(directory, fmt, out, audio_dir=audio, workers=workers, cache_dir=cache, progress=advance)
    except (ScenarioError, ExportError) as err:
        fail(str(err))
    except RenderError as err:
        fail(str(err), code=1)
    if as_json:
        typer.echo(manifest.model_dump_json(indent=2))
        return
    typer.echo(f"{len(manifest.conversations)} conversation(s) exported as {manifest.format} -> {out}")
