"""``duplexagent gate``: train a turn gate on generated conversations, or evaluate one."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Optional

import typer
from rich.console import Console

app = typer.Typer(help="The learned hand-off gate: train one on generated conversations, evaluate one.", no_args_is_help=True)
_console = Console()
_err = Console(stderr=True, soft_wrap=True)

_SPLITS = ("dev", "protection", "fixed_core")


def _fail(message: str) -> None:
    _err.print(f"error: {message}", markup=False, highlight=False)
    raise typer.Exit(2)


@app.command("train")
def train_cmd(
    split: str = typer.Option("dev", "--split", help="Split to compose training conversations from (dev: training never sees the others)."),
    n: int = typer.Option(3000, "--n", min=1, help="Number of conversations to cut prefixes from."),
    seed: int = typer.Option(1, "--seed", help="Seed: composition, initialisation and batches (same seed, same weight bytes)."),
    out: Path = typer.Option(..., "--out", help="Gate file to write (torch, loads with weights_only=True)."),
    epochs: int = typer.Option(8, "--epochs", min=1, help="Passes over the training prefixes."),
    open_cuts: float = typer.Option(0.0, "--open-cuts", min=0.0, max=1.0, help="Share of finished requests and chat turns also trained on cut after an open word (a preposition, determiner or conjunction), as LISTEN (0: none)."),
    scenarios: Optional[Path] = typer.Option(None, "--scenarios", help="Train on these scenario files instead (your own conversations; --split/--n ignored)."),
    modules: Optional[Path] = typer.Option(None, "--modules", help="Harness the conversations are played against to record the gate's inputs (default: g0)."),
    as_json: bool = typer.Option(False, "--json", help="Print the result as JSON."),
) -> None:
    """Train a gate on prefixes (every pause and turn end) of generated conversations."""
    if split != "dev":
        _fail(f"--split: a gate is trained on dev conversations only, not {split!r} (protection and fixed_core are for 'gate eval')")
    if modules is not None and not (modules / "MANIFEST.toml").is_file():
        _fail(f"--modules: {modules}: no MANIFEST.toml (not a harness directory)")
    own = None
    if scenarios is not None:
        from simulator.scenario import ScenarioError, load_scenarios

        try:
            own = load_scenarios(scenarios)
        except (ScenarioError, OSError, ValueError) as err:
            _fail(f"--scenarios: {err}")
        if not own:
            _fail(f"--scenarios: {scenarios}: no scenario files")
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

    from duplexagent.gate.train import TrainConfig, train_gate

    cfg = TrainConfig(split=split if own is None else f"files:{scenarios.name}", n=n if own is None else len(own), seed=seed, epochs=epochs, open_cuts=open_cuts, modules=str(modules) if modules else None)
    tasks: dict[str, int] = {}
    with Progress(TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn(), console=_err, transient=as_json) as prog:

        def progress(stage: str, done: int, total: int) -> None:
            if stage not in tasks:
                tasks[stage] = prog.add_task(stage, total=total)
            prog.update(tasks[stage], completed=done)

        try:
            r = train_gate(cfg, out, progress=progress, scenarios=own)
        except OSError as err:
            _fail(f"--out: {out}: cannot write: {err.strerror}")
        except ValueError as err:
            _fail(str(err))
    res = {
        "out": str(r.path),
        "bytes": len(r.data),
        "n_train": r.n_train,
        "n_holdout": r.n_holdout,
        "holdout_accuracy": round(r.holdout_accuracy, 4) if r.n_holdout else None,
        "temperature": r.temperature,
        "seconds": round(r.seconds, 2),
        "train_counts": r.counts,
        "holdout_confusion": r.confusion,
    }
    if as_json:
        typer.echo(json.dumps(res, indent=2))
    else:
        _console.print(
            f"wrote {r.path} ({len(r.data) / 1e6:.2f} MB): {r.n_train} training prefixes, "
            + (f"leave-family-out {r.holdout_accuracy:.1%} of {r.n_holdout}" if r.n_holdout else "no families to hold out")
            + f", temperature {r.temperature}, {r.seconds:.1f} s"
        )


@app.command("eval")
def eval_cmd(
    model: Optional[Path] = typer.Option(None, "--model", help="Gate file (default: the one shipped with the package)."),
    split: str = typer.Option("dev", "--split", help="dev, protection or fixed_core (the last two: their named sets unless --n/--seed)."),
    n: Optional[int] = typer.Option(None, "--n", min=1, help="Conversations to compose (default: the named set, or 200 for dev)."),
    seed: Optional[int] = typer.Option(None, "--seed", help="Composition seed (default: the named set's, or 1 for dev)."),
    as_json: bool = typer.Option(False, "--json", help="Print the full report as JSON."),
) -> None:
    """Accuracy per action and per pattern, confusion matrix, calibration and latency on a split's prefixes."""
    if split not in _SPLITS:
        _fail(f"--split: unknown split {split!r} ({', '.join(_SPLITS)})")
    from duplexagent.gate.evaluate import evaluate, set_scenarios
    from duplexagent.gate.model import GateModelError, load_gate

    try:
        gate = load_gate(model)
    except GateModelError as err:
        _fail(f"--model: {err}")
    rep = evaluate(gate, set_scenarios(split, n, seed))
    rep["split"] = split
    if as_json:
        typer.echo(json.dumps(rep, indent=2))
        return
    from rich.table import Table

    t = Table(title=f"gate on {split}: {rep['n_prefixes']} prefixes of {rep['n_conversations']} conversations")
    t.add_column("action")
    t.add_column("n", justify="right")
    t.add_column("accuracy", justify="right")
    for a, d in rep["per_action"].items():
        t.add_row(a, str(d["n"]), "-" if d["accuracy"] is None else f"{d['accuracy']:.1%}")
    _console.print(t)
    b = rep["band_0_8"]
    _console.print(
        f"accuracy {rep['accuracy']:.1%}  ECE {rep['ece']:.3f}  confidence > 0.8: learned {b['learned']['above']['right']}/{b['learned']['above']['n']}, "
        f"oracle {b['oracle']['above']['right']}/{b['oracle']['above']['n']}  latency p50 {rep['latency_ms']['p50']} ms, p99 {rep['latency_ms']['p99']} ms"
    )
