"""``duplexagent run``: play scenarios against a harness and write a run directory."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Optional

import typer

from duplexagent._cli import _common
from duplexagent._cli._common import console, err_console, refuse_non_empty

__all__ = ["run"]


def fail(message: str, code: int = 2) -> None:
    """One ``error:`` line and exit; run's errors wrap at the terminal width, as they always have."""
    _common.fail(message, code, soft_wrap=False)


def run(
    scenarios: Path = typer.Option(..., "--scenarios", help="Directory of scenario files (.json/.yaml)."),
    out: Path = typer.Option(..., "--out", help="Run directory to write (header.json, traces/, results.json)."),
    modules: Optional[Path] = typer.Option(None, "--modules", help="Harness directory (default: the shipped g0 modules)."),
    seed: Optional[int] = typer.Option(None, "--seed", help="Override every scenario's seed."),
    workers: int = typer.Option(1, "--workers", min=1, help="Worker processes (processes executor) or local dask workers."),
    executor: Optional[str] = typer.Option(
        None, "--executor", help="Where conversations run: local, processes or dask (default: local, or processes with --workers > 1)."
    ),
    scheduler: Optional[str] = typer.Option(
        None, "--scheduler", help="dask: scheduler address (tcp://HOST:PORT); without it a local cluster on 127.0.0.1 is started."
    ),
    as_json: bool = typer.Option(False, "--json", help="Print results as JSON."),
    backends_file: Optional[Path] = typer.Option(
        None, "--backends", help="Model backends (TOML/JSON/YAML): LLM judges, litellm delegates, cache, budget (docs/models.md)."
    ),
    env_file: Optional[Path] = typer.Option(None, "--env-file", help="A .env file with API keys (default: ./.env when present)."),
    perception: str = typer.Option(
        "simulated", "--perception", help="simulated (turn ends from the script) or simulated-audio (from VAD on rendered audio)."
    ),
    audio: Optional[Path] = typer.Option(None, "--audio", help="For simulated-audio: the 'sim render' output directory."),
    interaction: Optional[str] = typer.Option(
        None,
        "--interaction",
        help="Who answers chat turns: simulated (the scenario's table) or cascade (the chat model in the backends file's [interaction] table).",
    ),
    isolate: bool = typer.Option(
        False,
        "--isolate",
        help="Run the harness's module code only in a jailed module host (bubblewrap: no network, no files but its own); for harness code you did not write.",
    ),
    hook_timeout: float = typer.Option(1.0, "--hook-timeout", min=0.001, help="Longest a hook call may take (seconds); a late hook is a recorded no-op."),
    memory: Optional[Path] = typer.Option(
        None,
        "--memory",
        help="Directory of the durable memory store (memory.sqlite), kept and shareable across runs; default: RUN_DIR/memory, afresh each run.",
    ),
    force: bool = typer.Option(False, "--force", help="Write into a non-empty --out (an earlier run's traces are replaced)."),
) -> None:
    """Play scenarios against a harness; write one trace per conversation and the score."""
    refuse_non_empty(out, force)
    if perception not in ("simulated", "simulated-audio"):
        fail(f"--perception: unknown perception {perception!r} (simulated, simulated-audio)")
    from duplexagent.backends import INTERACTIONS

    if interaction is not None and interaction not in INTERACTIONS:
        fail(f"--interaction: unknown interaction model {interaction!r} ({', '.join(INTERACTIONS.names())})")
    if perception == "simulated-audio" and audio is None:
        fail("--audio: simulated-audio needs the directory written by 'duplexagent sim render'")
    from duplexagent.executors import ExecutorError, executor_names
    from duplexagent.loader import HarnessError, default_modules_dir
    from duplexagent.memory_store import MemoryStoreError
    from duplexagent.runner import run_directory
    from duplexagent.interaction import gate_setting

    try:  # the interaction model's turn gate (environment): refuse a bad setting before writing anything
        gate_setting()
    except ValueError as err:
        fail(str(err))

    if executor is not None and executor not in executor_names():
        fail(f"--executor: unknown executor {executor!r} ({', '.join(executor_names())})")
    if scheduler is not None and executor not in (None, "dask"):
        fail(f"--scheduler: only the dask executor connects to a scheduler (--executor is {executor!r})")
    if executor == "local" and workers > 1:
        fail("--workers: the local executor runs in this process with 1 worker (use --executor processes or dask)")
    if backends_file is not None and (executor not in (None, "local") or scheduler is not None):
        fail("--executor: runs with --backends stay in this process (their spend is accounted here); use --executor local")
    from simulator.scenario import ScenarioError
    from simulator.score import render_run

    backends = None
    if backends_file is not None:
        from duplexagent.backends import Backends, load_backends_config
        from duplexagent.models import load_env

        try:
            load_env(env_file)
            backends = Backends(load_backends_config(backends_file), evaluation=out.name)
        except (ValueError, FileNotFoundError) as err:
            fail(str(err))
            return
    if interaction == "cascade":
        cfg = backends.config.interaction if backends is not None else None
        if cfg is None or cfg.llm is None:
            fail("--interaction cascade: needs --backends FILE with an [interaction] table naming the chat model (docs/models.md)")
            return
        cfg.kind = "cascade"
    elif interaction == "simulated" and backends is not None:
        backends.config.interaction = None
    limits = None
    if isolate:
        from duplexagent.isolation import HostLimits, bwrap_problem

        if backends is not None:
            fail("--isolate: runs with --backends keep their judges in this process; drop --backends or --isolate")
        problem = bwrap_problem()
        if problem is not None:
            fail(f"--isolate: {problem}")
        limits = HostLimits(mode="bwrap", hook_timeout_s=hook_timeout, late_limit=1000)
    try:
        result = run_directory(
            scenarios,
            out,
            modules=modules or default_modules_dir(),
            seed=seed,
            workers=workers,
            backends=backends,
            audio_dir=audio if perception == "simulated-audio" else None,
            executor=executor,
            scheduler=scheduler,
            hook_timeout_s=hook_timeout,
            isolate=limits,
            memory_dir=memory,
        )
    except (ScenarioError, HarnessError, ExecutorError, FileNotFoundError, MemoryStoreError) as err:
        fail(str(err))
        return
    except RuntimeError as err:  # BudgetExhausted, a missing key variable: stop cleanly with the reason
        fail(str(err), code=3)
        return
    score = result.score
    if backends is not None:
        failed = [r for r in backends.budget.records if not r.ok]
        if failed:  # on stderr, so --json output stays parseable
            err_console.print(
                f"warning: {len(failed)} of {len(backends.budget.records)} model calls failed (first: {failed[0].model} "
                f"{failed[0].purpose}: {failed[0].error}); conversations they touched are reported as infrastructure, outside Q",
                markup=False, highlight=False, soft_wrap=True,
            )
    if as_json:
        data = score.model_dump(mode="json")
        data.pop("conversations", None)
        print(json.dumps(data, indent=2))
        return
    render_run(score, console)
    rate = result.virtual_s / result.wall_s if result.wall_s > 0 else float("inf")
    console.print(
        f"{score.n} conversations, {result.virtual_s:.0f} virtual s in {result.wall_s:.2f} wall s "
        f"({rate:,.0f}x real time); traces in {out / 'traces'}"
    )
