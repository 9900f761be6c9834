"""What a campaign needs for real models and remote evaluation, kept out of the loop in rsi.campaign.

- **Judges.** When ``[judges]`` names a model for a module (or an evaluated harness's params.toml
  does), evaluations run with a :class:`~duplexagent.judge_service.JudgeService` in the campaign
  process: the sandboxed child asks it for every judged decision, and the call is made here, with
  the module's rendered instructions, through the campaign's cache and ledger (spend scope: the
  evaluation). Candidate code never makes a model call.
- **Response cache.** One :class:`~duplexagent.models.RequestCache` in ``<campaign>/cache``, shared
  by judges, planner and editor (unless one names a ``cache_dir`` of its own): incumbent and
  candidate reuse identical calls, a paired rerun is reproducible and resume does not pay twice.
- **Executor.** ``[executor] backend = "dask"``: an evaluation's conversations are split into
  chunks, one dask task each; every task runs the same sandboxed child as a local evaluation
  (``python -m rsi._sandbox evaluate``) on its worker, and the graded conversations are put back
  in scenario order, so scores, traces and archive decisions equal the local ones.
- **Failed rounds.** :meth:`CampaignModels.check_round` stops a campaign whose model calls all
  failed during a round, with one line naming the backend and the reason.
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import tempfile
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


def evaluate_chunk(root: str, scenarios: list[dict[str, Any]], timeout_s: float, memory_mb: int, env: dict[str, str]) -> tuple[str | None, str]:
    """One dask task: the sandboxed evaluation of some conversations; (failure or None, RunResult JSON)."""
    from rsi import _sandbox

    tmp = Path(tempfile.mkdtemp(prefix="duplexagent-eval-"))
    try:
        src = tmp / "scenarios.json"
        src.write_text(json.dumps(scenarios), encoding="utf-8")
        dest = tmp / "result.json"
        with _environ(env):
            res = _sandbox.run_child(["evaluate", root, str(src), str(dest), "1"], timeout_s=timeout_s, memory_mb=memory_mb)
        why = res.failure()
        if why is not None:
            return why, ""
        return None, dest.read_text(encoding="utf-8")
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


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
            ).start()
        return self._service

    def allowed_models(self) -> set[str]:
        """Judge models the campaign pays for: those in [judges] and those g0's params.toml names."""
        from duplexagent.judge_service import _module_judge
        from duplexagent.loader import default_modules_dir
        from simulator.vocab import MODULES

        g0 = Path(self.config.modules) if self.config.modules else default_modules_dir()
        named = {_module_judge(g0, m) for m in MODULES}
        return set(self.config.judges.modules.values()) | set(self.config.judges.models) | {m for m in named if m}

    @contextlib.contextmanager
    def environment(self, root: str | Path, eval_id: str) -> Iterator[dict[str, str]]:
        """While evaluating ``root``: the judge service's entry in the child's environment (if any)."""
        if not uses_judges(self.config, root):
            yield {}
            return
        with self.service().evaluation(root, eval_id) as env, _environ(env):
            yield env

    # ------------------------------------------------------------------ executor
    @property
    def remote(self) -> bool:
        return self.config.executor.backend == "dask"

    def _dask(self) -> Any:
        if self._executor is None:
            from duplexagent.executors import make_executor

            self._executor = make_executor("dask", workers=self.config.workers, scheduler=self.config.executor.scheduler)
        return self._executor

    def evaluate_remote(self, root: Path, scenarios: list[Any], env: dict[str, str]) -> tuple[RunResult | None, str]:
        """The conversations fanned out to dask workers, each chunk in its own sandboxed child."""
        t0 = time.perf_counter()
        pool = self._dask()
        n = max(1, min(pool.slots, len(scenarios)))
        chunks: list[list[dict[str, Any]]] = [[] for _ in range(n)]
        for i, sc in enumerate(scenarios):
            chunks[i % n].append(sc.model_dump(mode="json"))
        cfg = self.config.sandbox
        jobs = [(str(Path(root).resolve()), c, cfg.eval_timeout_s + 0.25 * len(c), cfg.memory_mb, env) for c in chunks if c]
        outs = pool.map(_run_job, jobs)
        parts = []
        for why, text in outs:
            if why is not None:
                return None, f"evaluation {why}"
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


def _run_job(job: tuple[str, list[dict[str, Any]], float, int, dict[str, str]]) -> tuple[str | None, str]:
    return evaluate_chunk(*job)
