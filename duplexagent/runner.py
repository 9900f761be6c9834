"""Run a harness over a set of scenarios: one trace per conversation, then the score.

A run directory holds ``header.json`` (written first), ``traces/<scenario id>.jsonl`` and
``results.json`` (written last). Writes are atomic.
"""

from __future__ import annotations

import json
import os
import time
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path
from typing import Any

from pydantic import BaseModel

from duplexagent.engine import Session
from duplexagent.loader import Harness, load_harness
from simulator.scenario import Scenario, load_scenarios
from simulator.score import ConversationScore, RunScore, aggregate_scores, score_conversation
from simulator.trace import event_to_json

__all__ = ["RunResult", "run_scenarios", "run_directory", "trace_text", "write_json_atomic"]

RUN_SCHEMA_VERSION = 1


def write_json_atomic(path: Path, data: Any) -> None:
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_text(json.dumps(data, indent=2, sort_keys=False) + "\n", encoding="utf-8")
    os.replace(tmp, path)


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
    scenario: Scenario, harness: Harness, seed: int | None, backends: Any = None, audio_dir: str | None = None
) -> tuple[str, list[BaseModel], float]:
    extra: dict[str, Any] = {}
    if audio_dir is not None:
        from duplexagent.interaction import audio_turn_segments

        extra["turn_segments_override"] = audio_turn_segments(scenario, audio_dir)
    if backends is None:
        session = Session(scenario, harness, seed=seed, **extra)
        events = session.run()
        return scenario.id, events, session.clock.now()
    # model backends (duplexagent.backends.Backends): judges and pools per session, spend charged to the run
    with backends.scope():
        session = Session(scenario, harness, seed=seed, **extra, **backends.session_kwargs(scenario, harness))
        events = session.run()
    backends.after_session(scenario, session)
    return scenario.id, events, session.clock.now()


def _worker(args: tuple[str, list[dict[str, Any]], int | None, str | None, bool]) -> list[tuple[str, dict[str, Any], str, float, int]]:
    root, scenario_dicts, seed, audio_dir, keep = args
    harness = load_harness(root, strict=False)
    out = []
    for d in scenario_dicts:
        sc = Scenario.model_validate(d)
        sid, events, vt = _run_one(sc, harness, seed, audio_dir=audio_dir)
        graded = score_conversation(sc, events).model_dump(mode="json")
        out.append((sid, graded, trace_text(events) if keep else "", vt, len(events)))
    return out


def run_scenarios(
    scenarios: list[Scenario],
    harness: Harness | str | Path,
    *,
    seed: int | None = None,
    workers: int = 1,
    keep_traces: bool = True,
    backends: Any = None,
    audio_dir: str | Path | None = None,
) -> RunResult:
    """Play every scenario; returns the score and (optionally) the trace texts by scenario id.

    With ``workers`` > 1 conversations run in worker processes, each graded where it ran.
    ``backends`` (a ``duplexagent.backends.Backends``) supplies LLM judges and a delegation pool;
    such runs stay in this process (their spend is accounted here) and their traces are redacted.
    """
    t0 = time.perf_counter()
    audio = str(audio_dir) if audio_dir is not None else None
    if not isinstance(harness, Harness):
        harness = load_harness(harness, strict=False)
    # scenario id -> (graded conversation, trace text, virtual seconds, events)
    results: dict[str, tuple[ConversationScore, str, float, int]] = {}
    if backends is None and workers > 1 and len(scenarios) > 1:
        chunks: list[list[dict[str, Any]]] = [[] for _ in range(workers)]
        for i, sc in enumerate(scenarios):
            chunks[i % workers].append(sc.model_dump(mode="json"))
        with ProcessPoolExecutor(max_workers=workers) as pool:
            jobs = [(str(harness.root), c, seed, audio, keep_traces) for c in chunks if c]
            for out in pool.map(_worker, jobs):
                for sid, graded, text, vt, n in out:
                    results[sid] = (ConversationScore.model_validate(graded), text, vt, n)
    else:
        redact = None
        if backends is not None:
            from duplexagent.models import redact
        for sc in scenarios:
            sid, events, vt = _run_one(sc, harness, seed, backends, audio)
            text = trace_text(events) if keep_traces else ""
            if redact is not None:
                text = redact(text)
            results[sid] = (score_conversation(sc, events), text, vt, len(events))
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
) -> RunResult:
    """The ``duplexagent run`` job: header first, one trace per conversation, results last."""
    scenarios = load_scenarios(scenarios_dir)
    harness = load_harness(modules)
    out = Path(out_dir)
    (out / "traces").mkdir(parents=True, exist_ok=True)
    write_json_atomic(
        out / "header.json",
        {
            "schema_version": RUN_SCHEMA_VERSION,
            "kind": "run",
            "scenarios": str(scenarios_dir),
            "modules": str(modules),
            "seed": seed,
            "n": len(scenarios),
            "perception": "simulated-audio" if audio_dir is not None else "simulated",
            "audio": str(audio_dir) if audio_dir is not None else None,
        },
    )
    result = run_scenarios(scenarios, harness, seed=seed, workers=workers, backends=backends, audio_dir=audio_dir)
    for sid, text in result.traces.items():
        path = out / "traces" / f"{sid}.jsonl"
        tmp = path.with_name(path.name + ".tmp")
        tmp.write_text(text, encoding="utf-8")
        os.replace(tmp, path)
    write_json_atomic(
        out / "timing.json",
        {"wall_s": round(result.wall_s, 4), "virtual_s": round(result.virtual_s, 3), "events": result.events},
    )
    if backends is not None:
        write_json_atomic(out / "usage.json", {"schema_version": RUN_SCHEMA_VERSION, **result.usage})
    write_json_atomic(out / "results.json", result.score.model_dump(mode="json"))
    return result
