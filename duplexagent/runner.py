"""Run a harness over a set of scenarios: one trace per conversation, then the score.

A run directory holds ``header.json`` (written first), ``traces/<scenario id>.jsonl`` and
``results.json`` (written last). Writes are atomic.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pydantic import BaseModel

from duplexagent.clock import VirtualClock
from duplexagent.engine import Session
from duplexagent.interaction import gate_setting
from duplexagent.memory_store import MemoryStore, SessionMemory, default_store_dir, remove_store
from duplexagent.executors import Executor, ExecutorError, LocalExecutor, make_executor
from duplexagent.loader import Harness, HarnessError, load_harness
from simulator.atomic import atomic_write, write_json_atomic
from simulator.scenario import Scenario, load_scenarios
from simulator.score import ConversationScore, RunScore, aggregate_scores, score_conversation
from simulator.migrate import Migrations
from simulator.trace import event_to_json

__all__ = ["RUN_HEADER_MIGRATIONS", "RUN_SCHEMA_VERSION", "RunResult", "run_header", "run_scenarios", "run_directory", "trace_text", "write_json_atomic"]

RUN_SCHEMA_VERSION = 1
RUN_HEADER_MIGRATIONS = Migrations("run_header", RUN_SCHEMA_VERSION)
"""Upgrades of older run headers, one step per version (golden files: tests/golden/run_header/)."""


def run_header(
    *,
    scenarios_dir: str | Path,
    modules: str | Path,
    seed: int | None,
    n: int,
    audio_dir: str | Path | None,
    executor: Any,
    interaction_gate: Any,
    memory_dir: str | Path,
    isolation: dict[str, Any],
) -> dict[str, Any]:
    """A run directory's header.json (written first; its format is RUN_SCHEMA_VERSION)."""
    return {
        "schema_version": RUN_SCHEMA_VERSION,
        "kind": "run",
        "scenarios": str(scenarios_dir),
        "modules": str(modules),
        "seed": seed,
        "n": n,
        "perception": "simulated-audio" if audio_dir is not None else "simulated",
        "audio": str(audio_dir) if audio_dir is not None else None,
        "executor": executor,
        "interaction_gate": interaction_gate,
        "memory": str(memory_dir),
        "isolation": isolation,
    }


def trace_text(events: list[BaseModel]) -> str:
    return "".join(event_to_json(e) + "\n" for e in events)


class RunResult(BaseModel):
    """What a run produced."""

    score: RunScore
    wall_s: float
    virtual_s: float
    events: int
    traces: dict[str, str] = {}
    usage: dict[str, Any] = {}


def _run_one(
    scenario: Scenario,
    harness: Harness,
    seed: int | None,
    backends: Any = None,
    audio_dir: str | None = None,
    memory_dir: str | None = None,
) -> tuple[str, list[BaseModel], float]:
    """Play one scenario: its sessions in order against one memory store (the user is the scenario id).

    ``memory_dir`` None: a private in-memory store; else the store file in that directory."""
    extra: dict[str, Any] = {}
    if audio_dir is not None:
        from duplexagent.interaction import audio_turn_segments

        extra["turn_segments_override"] = audio_turn_segments(scenario, audio_dir)
    store = MemoryStore.in_directory(memory_dir) if memory_dir is not None else MemoryStore()
    events: list[BaseModel] = []
    end = 0.0
    try:
        plan = scenario.session_plan()
        for i, (spec, part) in enumerate(plan):
            kw = dict(
                seed=seed,
                memory=SessionMemory(store, scenario.id, spec.id),
                clock=VirtualClock(spec.start_s),
                first_event_id=len(events),
                session_index=i if scenario.sessions else None,
                **extra,
            )
            if backends is None:
                session = Session(part, harness, **kw)
                events.extend(session.run())
            else:
                # model backends (duplexagent.backends.Backends): judges and pools per session, spend charged to the run
                with backends.scope():
                    session = Session(part, harness, **kw, **backends.session_kwargs(part, harness))
                    events.extend(session.run())
                backends.after_session(part, session)
            end = session.clock.now()
    finally:
        store.close()
    return scenario.id, events, end


@dataclass(frozen=True)
class _Chunk:
    """One executor task: scenarios to play and grade with one harness."""

    harness: Harness | str  # the loaded harness (in-process executors) or its directory (workers load it)
    label: str
    scenarios: list[Any]  # Scenario objects in-process, their JSON dicts for workers
    seed: int | None
    audio_dir: str | None
    keep: bool
    hook_timeout_s: float | None = None
    memory_dir: str | None = None


def _worker(chunk: _Chunk) -> list[tuple[str, Any, str, float, int]]:
    """Play and grade one chunk where it runs; returns (id, graded, trace text, virtual s, events) rows."""
    if isinstance(chunk.harness, Harness):
        harness, remote = chunk.harness, False
    else:
        harness, remote = load_harness(chunk.harness, label=chunk.label, strict=False), True
        harness.hook_timeout_s = chunk.hook_timeout_s
    out = []
    for d in chunk.scenarios:
        sc = d if isinstance(d, Scenario) else Scenario.model_validate(d)
        sid, events, vt = _run_one(sc, harness, chunk.seed, audio_dir=chunk.audio_dir, memory_dir=chunk.memory_dir)
        graded = score_conversation(sc, events)
        out.append((sid, graded.model_dump(mode="json") if remote else graded, trace_text(events) if chunk.keep else "", vt, len(events)))
    return out


def _resolve_executor(executor: Executor | str | None, workers: int, scheduler: str | None) -> tuple[Executor, bool]:
    """The executor to use and whether this run owns it (and must close it)."""
    if executor is None:
        if scheduler is not None:
            return make_executor("dask", workers=workers, scheduler=scheduler), True
        return make_executor("processes" if workers > 1 else "local", workers=workers), True
    if isinstance(executor, str):
        return make_executor(executor, workers=workers, scheduler=scheduler), True
    return executor, False


def run_scenarios(
    scenarios: list[Scenario],
    harness: Harness | str | Path,
    *,
    seed: int | None = None,
    workers: int = 1,
    keep_traces: bool = True,
    backends: Any = None,
    audio_dir: str | Path | None = None,
    executor: Executor | str | None = None,
    scheduler: str | None = None,
    memory_dir: str | Path | None = None,
) -> RunResult:
    """Play every scenario; returns the score and (optionally) the trace texts by scenario id.

    ``executor`` says where conversations run (``duplexagent.executors``): an :class:`Executor`
    (the caller keeps and closes it), or a backend name (``local``, ``processes``, ``dask``) built
    with ``workers`` and ``scheduler`` and closed afterwards. None keeps the old meaning: ``local``,
    or ``processes`` when ``workers`` > 1. Each conversation is graded where it ran, and the traces
    are byte-identical whichever executor ran them.
    ``backends`` (a ``duplexagent.backends.Backends``) supplies LLM judges and a delegation pool;
    such runs stay in this process (their spend is accounted here) and their traces are redacted.
    ``memory_dir``: the durable memory store's directory (None: a private in-memory store per
    conversation); each scenario's sessions share it, keyed by scenario id.
    """
    t0 = time.perf_counter()
    mem = str(Path(memory_dir).resolve()) if memory_dir is not None else None
    audio = str(Path(audio_dir).resolve()) if audio_dir is not None else None
    if not isinstance(harness, Harness):
        harness = load_harness(harness, strict=False)
    # scenario id -> (graded conversation, trace text, virtual seconds, events)
    results: dict[str, tuple[ConversationScore, str, float, int]] = {}
    if backends is not None:
        # judges and pools hold this process's cache, budget and spend: such runs stay here
        if executor is not None and not (isinstance(executor, str) and executor == "local") and not getattr(executor, "in_process", False):
            raise ExecutorError("executor: runs with model backends stay in this process (their spend is accounted here); use 'local'")
        from duplexagent.models import redact

        for sc in scenarios:
            sid, events, vt = _run_one(sc, harness, seed, backends, audio, mem)
            text = redact(trace_text(events)) if keep_traces else ""
            results[sid] = (score_conversation(sc, events), text, vt, len(events))
    elif scenarios:
        pool, owned = _resolve_executor(executor, workers, scheduler)
        try:
            if harness.in_process_only and not pool.in_process:
                raise HarnessError(
                    f"harness {harness.label!r}: built from callables (Harness.from_hooks), it runs in this process only; "
                    f"use the local executor, not {getattr(pool, 'name', type(pool).__name__)!r}"
                )
            n = 1 if pool.in_process else max(1, min(pool.slots, len(scenarios)))
            chunks: list[list[Any]] = [[] for _ in range(n)]
            for i, sc in enumerate(scenarios):
                chunks[i % n].append(sc if pool.in_process else sc.model_dump(mode="json"))
            where: Harness | str = harness if pool.in_process else str(Path(harness.root).resolve())
            jobs = [_Chunk(where, harness.label, c, seed, audio, keep_traces, harness.hook_timeout_s, mem) for c in chunks if c]
            for out in pool.map(_worker, jobs):
                for sid, graded, text, vt, nev in out:
                    if not isinstance(graded, ConversationScore):
                        graded = ConversationScore.model_validate(graded)
                    results[sid] = (graded, text, vt, nev)
        finally:
            if owned:
                pool.close()
    score = aggregate_scores([results[sc.id][0] for sc in scenarios])
    traces = {sc.id: results[sc.id][1] for sc in scenarios} if keep_traces else {}
    usage = backends.usage() if backends is not None else {}
    return RunResult(
        score=score,
        wall_s=time.perf_counter() - t0,
        virtual_s=sum(r[2] for r in results.values()),
        events=sum(r[3] for r in results.values()),
        traces=traces,
        usage=usage,
    )


def run_directory(
    scenarios_dir: str | Path,
    out_dir: str | Path,
    *,
    modules: str | Path,
    seed: int | None = None,
    workers: int = 1,
    backends: Any = None,
    audio_dir: str | Path | None = None,
    executor: Executor | str | None = None,
    scheduler: str | None = None,
    hook_timeout_s: float | None = 1.0,
    isolate: Any = None,
    memory_dir: str | Path | None = None,
) -> RunResult:
    """The ``duplexagent run`` job: header first, one trace per conversation, results last.

    ``executor``, ``workers`` and ``scheduler`` as for :func:`run_scenarios`; the resolved
    executor (name, workers, scheduler address) is recorded in the header. ``hook_timeout_s``:
    a hook call running longer is a recorded no-op. ``isolate`` (``duplexagent.isolation.HostLimits``):
    the harness's module code runs only in a jailed module host; this process plays and grades.
    ``memory_dir``: the durable memory store to use and keep (shareable across runs); None: the
    run's own store in ``RUN_DIR/memory``, started afresh each time the run is played.
    """
    scenarios = load_scenarios(scenarios_dir)
    host = None
    if isolate is not None:
        from dataclasses import replace

        from duplexagent.isolation import HostError, ModuleHost

        if workers > 1 or executor not in (None, "local") or scheduler is not None:
            raise ExecutorError("executor: --isolate runs conversations here against one module host; use --executor local")
        try:
            host = ModuleHost(modules, replace(isolate, hook_timeout_s=hook_timeout_s or isolate.hook_timeout_s))
        except HostError as err:
            raise HarnessError(f"{modules}: {err}") from None
        try:
            harness = load_harness(modules, host=host)
        except HarnessError:
            host.close()
            raise
    else:
        harness = load_harness(modules)
        harness.hook_timeout_s = hook_timeout_s
    try:
        return _run_directory(scenarios, scenarios_dir, out_dir, harness, modules, seed, workers, backends, audio_dir, executor, scheduler, host, memory_dir)
    finally:
        if host is not None:
            host.close()


def _run_directory(
    scenarios: list[Scenario],
    scenarios_dir: str | Path,
    out_dir: str | Path,
    harness: Harness,
    modules: str | Path,
    seed: int | None,
    workers: int,
    backends: Any,
    audio_dir: str | Path | None,
    executor: Executor | str | None,
    scheduler: str | None,
    host: Any,
    memory_dir: str | Path | None = None,
) -> RunResult:
    out = Path(out_dir)
    if memory_dir is None:  # the run's own store: afresh on every play of this run directory
        memory_dir = default_store_dir(out)
        remove_store(memory_dir)
    # made once here, so worker processes open a store that is already in WAL mode with its tables
    MemoryStore.in_directory(memory_dir).close()
    owned = False
    if backends is None:
        pool, owned = _resolve_executor(executor, workers, scheduler)
    elif scheduler is None and (executor is None or executor == "local" or getattr(executor, "in_process", False)):
        pool = executor if isinstance(executor, LocalExecutor) else LocalExecutor()
    else:
        raise ExecutorError("executor: runs with model backends stay in this process (their spend is accounted here); use 'local'")
    try:
        gate = gate_setting()  # before anything is written: a bad gate setting fails here
        (out / "traces").mkdir(parents=True, exist_ok=True)
        isolation = {"jail": host.limits.mode, "hook_timeout_s": host.limits.hook_timeout_s} if host is not None else {"jail": None, "hook_timeout_s": harness.hook_timeout_s}
        write_json_atomic(
            out / "header.json",
            run_header(
                scenarios_dir=scenarios_dir, modules=modules, seed=seed, n=len(scenarios), audio_dir=audio_dir,
                executor=pool.describe(), interaction_gate=gate, memory_dir=memory_dir, isolation=isolation,
            ),
        )
        try:
            result = run_scenarios(
                scenarios, harness, seed=seed, workers=workers, backends=backends, audio_dir=audio_dir, executor=pool, memory_dir=memory_dir
            )
        except BaseException as err:
            if host is not None and type(err).__name__ == "HostError":
                raise HarnessError(f"{modules}: {err}") from None
            raise
    finally:
        if owned:
            pool.close()
    for sid, text in result.traces.items():
        atomic_write(out / "traces" / f"{sid}.jsonl", text)
    # the interaction metrics of the run (take-over rate, latencies, yield, backchannels), from its traces
    from simulator.metrics import interaction_metrics

    result.score = result.score.model_copy(update={"metrics": interaction_metrics(out / "traces" / f"{sc.id}.jsonl" for sc in scenarios)})
    write_json_atomic(
        out / "timing.json",
        {"wall_s": round(result.wall_s, 4), "virtual_s": round(result.virtual_s, 3), "events": result.events},
    )
    if backends is not None:
        write_json_atomic(out / "usage.json", {"schema_version": RUN_SCHEMA_VERSION, **result.usage})
    write_json_atomic(out / "results.json", result.score.model_dump(mode="json"))
    return result
