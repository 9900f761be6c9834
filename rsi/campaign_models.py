"""What a campaign needs for real models and remote evaluation, kept out of the loop in rsi.campaign.

- **Judges.** When ``[judges]`` names a model for a module (or an evaluated harness's params.toml
  does), evaluations run with a :class:`~duplexagent.judge_service.JudgeService` in the campaign
  process. The engine plays the conversations here (the candidate's module code runs in jailed
  module hosts), so every judged decision is asked for here and the call is made here, with the
  module's rendered instructions, through the campaign's cache and ledger (spend scope: the
  evaluation). Candidate code never makes a model call.
- **Response cache.** One :class:`~duplexagent.models.RequestCache` in ``<campaign>/cache``, shared
  by judges, planner and editor (unless one names a ``cache_dir`` of its own): incumbent and
  candidate reuse identical calls, a paired rerun is reproducible and resume does not pay twice.
- **Executor.** ``[executor] backend = "dask"``: an evaluation's conversations are split into
  chunks, one dask task each; every task is played and graded by trusted code on its worker
  against module hosts of its own (an :class:`rsi._sandbox.Evaluator` built there, jailed like a
  local one), and the graded conversations are put back in scenario order, so scores, traces and
  archive decisions equal the local ones. Judged hooks on a worker ask the campaign's judge
  service over HTTP on 127.0.0.1: only workers on the campaign's machine can reach it.
- **Failed rounds.** :meth:`CampaignModels.check_round` stops a campaign whose model calls all
  failed during a round, with one line naming the backend and the reason.
"""

from __future__ import annotations

import contextlib
import os
import time
from pathlib import Path
from typing import Any, Iterator

from duplexagent.models import CallRecord, ModelClient, RequestCache, default_cache_dir
from duplexagent.runner import RunResult

__all__ = ["CampaignModels", "evaluate_chunk", "merge_results", "uses_judges"]

CACHE_DIR = "cache"


def uses_judges(config: Any, root: str | Path) -> bool:
    """Whether evaluating the harness at ``root`` involves an LLM judge."""
    if config.judges.modules:
        return True
    from duplexagent.judge_service import _module_judge
    from simulator.vocab import MODULES

    return any(_module_judge(Path(root), m) for m in MODULES)


@contextlib.contextmanager
def _environ(extra: dict[str, str]) -> Iterator[None]:
    saved = {k: os.environ.get(k) for k in extra}
    os.environ.update(extra)
    try:
        yield
    finally:
        for k, v in saved.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v


def evaluate_chunk(root: str, scenarios: list[dict[str, Any]], cfg: Any, mode: str, env: dict[str, str]) -> tuple[str | None, str]:
    """One dask task: play and grade some conversations here, the module code in jailed hosts of
    this worker; (failure or None, RunResult JSON)."""
    from duplexagent.judge_service import backends_from_env
    from rsi import _sandbox
    from simulator.scenario import Scenario

    scs = [Scenario.model_validate(d) for d in scenarios]
    with _environ(env), _sandbox.Evaluator(root, cfg, workers=1, mode=mode) as ev:
        backends = None
        if env and ev._start() is None:
            try:
                backends = backends_from_env(ev._harnesses(strict=False)[0])
            except Exception:  # a harness that does not load: evaluate() says why
                backends = None
        result, why = ev.evaluate(scs, backends)
    if result is None:
        return why, ""
    return None, result.model_dump_json()


def merge_results(scenario_ids: list[str], parts: list[RunResult], wall_s: float) -> RunResult:
    """Chunks' results as one run, conversations in scenario order (as a local run orders them)."""
    from simulator.score import aggregate_scores

    convs = {c.id: c for r in parts for c in r.score.conversations}
    traces: dict[str, str] = {}
    for r in parts:
        traces.update(r.traces)
    return RunResult(
        score=aggregate_scores([convs[i] for i in scenario_ids]),
        wall_s=wall_s,
        virtual_s=sum(r.virtual_s for r in parts),
        events=sum(r.events for r in parts),
        traces={i: traces.get(i, "") for i in scenario_ids},
        usage={},
    )


class CampaignModels:
    """The campaign's cache, judge service and executor (built lazily, closed with the run)."""

    def __init__(self, config: Any, directory: Path, budget: Any) -> None:
        self.config = config
        self.dir = directory
        self.budget = budget
        self.cache = RequestCache(directory / CACHE_DIR)
        self._service: Any = None
        self._executor: Any = None

    # ------------------------------------------------------------------ model clients
    def attach(self, backend: Any) -> None:
        """Charge a planner's or editor's model client to the ledger and give it the campaign's cache."""
        client = getattr(backend, "client", None)
        if isinstance(client, ModelClient):
            client.budget = self.budget
            if client.cache is not None and client.cache.root == default_cache_dir():
                client.cache = self.cache

    def service(self) -> Any:
        if self._service is None:
            from duplexagent.judge_service import JudgeService

            j = self.config.judges
            self._service = JudgeService(
                modules=j.modules,
                models={k: v for k, v in j.models.items()},
                cache=self.cache if j.cache else None,
                budget=self.budget,
                samples=j.samples,
                allowed=self.allowed_models(),
            )
        return self._service

    def allowed_models(self) -> set[str]:
        """Judge models the campaign pays for: those in [judges] and those g0's params.toml names."""
        from duplexagent.judge_service import _module_judge
        from duplexagent.loader import default_modules_dir
        from simulator.vocab import MODULES

        g0 = Path(self.config.modules) if self.config.modules else default_modules_dir()
        named = {_module_judge(g0, m) for m in MODULES}
        return set(self.config.judges.modules.values()) | set(self.config.judges.models) | {m for m in named if m}

    def judges(self, root: str | Path, eval_id: str) -> Any:
        """The ``backends`` for evaluating ``root`` here as ``eval_id`` (trusted judges), or None without judges."""
        if not uses_judges(self.config, root):
            return None
        return self.service().evaluation_judges(root, eval_id)

    # ------------------------------------------------------------------ executor
    @property
    def remote(self) -> bool:
        return self.config.executor.backend == "dask"

    def _dask(self) -> Any:
        if self._executor is None:
            from duplexagent.executors import make_executor

            self._executor = make_executor("dask", workers=self.config.workers, scheduler=self.config.executor.scheduler)
        return self._executor

    def evaluate_remote(self, root: Path, scenarios: list[Any], eval_id: str, mode: str) -> tuple[RunResult | None, str]:
        """The conversations fanned out to dask workers, each chunk played by trusted code there."""
        t0 = time.perf_counter()
        pool = self._dask()
        n = max(1, min(pool.slots, len(scenarios)))
        chunks: list[list[dict[str, Any]]] = [[] for _ in range(n)]
        for i, sc in enumerate(scenarios):
            chunks[i % n].append(sc.model_dump(mode="json"))
        judged = uses_judges(self.config, root)
        with self.service().evaluation(root, eval_id) if judged else contextlib.nullcontext({}) as env:
            jobs = [(str(Path(root).resolve()), c, self.config.sandbox, mode, env) for c in chunks if c]
            outs = pool.map(_run_job, jobs)
        parts = []
        for why, text in outs:
            if why is not None:
                return None, why
            parts.append(RunResult.model_validate_json(text))
        return merge_results([s.id for s in scenarios], parts, time.perf_counter() - t0), ""

    # ------------------------------------------------------------------ failures
    def check_round(self, rnd: int, records: list[CallRecord]) -> str | None:
        """One line when every model call of a round failed (None otherwise)."""
        if not records or any(r.ok for r in records):
            return None
        r = records[-1]
        return f"round {rnd}: every model call failed ({len(records)} calls); last: {r.model} ({r.purpose}): {r.error}"

    def close(self) -> None:
        if self._service is not None:
            self._service.close()
            self._service = None
        if self._executor is not None:
            self._executor.close()
            self._executor = None


def _run_job(job: tuple[str, list[dict[str, Any]], Any, str, dict[str, str]]) -> tuple[str | None, str]:
    return evaluate_chunk(*job)
