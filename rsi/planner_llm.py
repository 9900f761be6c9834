"""The ``litellm`` Exam Planner: a model chooses the round's target and exam from visible material.

The model sees the :class:`~rsi.interfaces.PlannerInput` (the incumbent's diagnosed weaknesses on the
dev split, the visible archive, the patterns it may pick) and answers with an :class:`ExamChoice`:
a target cause, the modules it expects to need repair, the patterns to focus on, optionally an exam
size. The planner turns that into an :class:`~rsi.interfaces.Exam` the runtime can trust: the
cause must be one that was diagnosed, modules must be harness modules, patterns must come from the
available cells, the size is clamped, the seed and round are the campaign's. Malformed or
out-of-schema output gets one repair retry; after that (or a failed call) the fallback planner
(the heuristic one when built from a config) decides, and the rationale says so.

Spend accumulates in ``spent_usd`` / ``tokens`` and in the shared budget (campaign scope).
"""

from __future__ import annotations

import json
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from duplexagent.judges import parse_decision
from duplexagent.models import Budget, ModelCallError, ModelClient, RequestCache, model_config_from
from rsi.interfaces import Exam, Planner, PlannerInput
from simulator.vocab import MODULES

__all__ = ["ExamChoice", "LiteLLMPlanner", "PlannerError", "make_litellm_planner"]


class PlannerError(RuntimeError):
    """The model gave no usable exam and there is no fallback planner."""


class ExamChoice(BaseModel):
    """The model's choice for the next exam."""

    model_config = ConfigDict(extra="forbid")

    target_cause: str | None = Field(description="The diagnosed failure cause to work on (one of the listed causes).")
    target_modules: list[str] = Field(description="Modules expected to need repair.")
    patterns: list[str] = Field(description="Interaction patterns the exam should focus on.")
    n: int | None = Field(default=None, description="Conversations in the exam (default: the configured size).")
    rationale: str = Field(default="", description="One line: why.")


SYSTEM = """You are the Exam Planner of a harness-improvement campaign for a full-duplex voice agent.
Pick the next exam: the failure cause to repair next, the modules to target, and the interaction
patterns where that cause shows up. Prefer frequent causes that have not already failed at the
current incumbent (see the archive: a rejected round on a cause is evidence the obvious repair
does not work). Never target 'perception'. Reply with one JSON object:
{"target_cause": "...", "target_modules": ["..."], "patterns": ["..."], "n": <int or null>, "rationale": "..."}"""


class LiteLLMPlanner:
    """Plans exams with a model (see the module docstring)."""

    name = "litellm"

    def __init__(self, client: ModelClient, *, fallback: Planner | None = None, repair_retries: int = 1, max_n_factor: float = 2.0) -> None:
        self.client = client
        self.fallback = fallback
        self.repair_retries = repair_retries
        self.max_n_factor = max_n_factor
        self.spent_usd = 0.0
        self.tokens = 0
        self.log: list[str] = []

    @property
    def budget(self) -> Budget | None:
        return self.client.budget

    @budget.setter
    def budget(self, value: Budget | None) -> None:
        self.client.budget = value

    def messages(self, inp: PlannerInput) -> list[dict[str, Any]]:
        patterns = sorted({p for _, p in inp.available_cells})
        doc = {
            "round": inp.round,
            "incumbent": inp.incumbent,
            "cause_counts": inp.cause_counts,
            "module_counts": inp.module_counts,
            "pattern_failures": inp.pattern_failures,
            "cause_modules": inp.cause_modules,
            "cause_patterns": inp.cause_patterns,
            "archive": [d.model_dump(mode="json") for d in inp.archive],
            "patterns_available": patterns,
            "modules": list(MODULES),
            "exam_size": inp.exam_size,
        }
        return [{"role": "system", "content": SYSTEM}, {"role": "user", "content": "Planner input (JSON):\n" + json.dumps(doc, indent=1)}]

    def _exam(self, choice: ExamChoice, inp: PlannerInput) -> Exam:
        """Check a choice against the input; raises ValueError naming the field."""
        causes = {c for c, n in inp.cause_counts.items() if n > 0 and c != "perception"}
        if choice.target_cause is not None and choice.target_cause not in causes:
            raise ValueError(f"target_cause: {choice.target_cause!r} is not a diagnosed cause ({', '.join(sorted(causes)) or 'none'})")
        bad = [m for m in choice.target_modules if m not in MODULES]
        if bad:
            raise ValueError(f"target_modules: {bad[0]!r} is not a module")
        available = {p for _, p in inp.available_cells}
        unknown = [p for p in choice.patterns if p not in available]
        if unknown:
            raise ValueError(f"patterns: {unknown[0]!r} is not an available pattern")
        cells = [c for c in inp.available_cells if c[1] in choice.patterns] or list(inp.available_cells)
        hi = max(1, int(inp.exam_size * self.max_n_factor))
        n = min(max(choice.n or inp.exam_size, 1), hi)
        return Exam(
            round=inp.round,
            cells=cells,
            patterns=list(dict.fromkeys(choice.patterns)),
            n=n,
            seed=inp.seed,
            target_modules=list(dict.fromkeys(choice.target_modules)),
            target_cause=choice.target_cause,
            rationale=(choice.rationale or "chosen by the LLM planner").strip().splitlines()[0][:300],
        )

    def plan(self, inp: PlannerInput) -> Exam:
        messages = self.messages(inp)
        fmt = {"type": "json_schema", "json_schema": {"name": "ExamChoice", "schema": ExamChoice.model_json_schema(), "strict": False}}
        problem = ""
        for attempt in range(self.repair_retries + 1):
            try:
                out = self.client.complete(messages, response_format=fmt, purpose="planner")
            except ModelCallError as err:
                problem = f"call failed ({err.kind}): {err}"
                break
            self.spent_usd = round(self.spent_usd + out.cost_usd, 10)
            self.tokens += out.tokens
            try:
                choice = parse_decision(out.text, ExamChoice)
                return self._exam(choice, inp)  # type: ignore[arg-type]
            except ValueError as err:
                problem = str(err)
                messages = messages + [
                    {"role": "assistant", "content": out.text or "(empty)"},
                    {"role": "user", "content": f"That reply was unusable: {problem}. Reply again with only the JSON object."},
                ]
        self.log.append(f"round {inp.round}: {problem}")
        if self.fallback is None:
            raise PlannerError(f"LLM planner gave no usable exam: {problem}")
        exam = self.fallback.plan(inp)
        return exam.model_copy(update={"rationale": f"LLM planner fell back to {self.fallback.name} ({problem[:150]}): {exam.rationale}"})


def make_litellm_planner(config: Any) -> LiteLLMPlanner:
    """Registry factory: ``[planner] backend = "litellm"``, ``model``, and ``options`` holding the
    model settings (api_base, api_key_env, prices, ...) plus ``cache``, ``cache_dir``, and
    ``fallback`` (default ``heuristic``; ``none`` to fail instead)."""
    from rsi.registry import PLANNERS

    pl = config.planner
    opts = dict(pl.options)
    mc = model_config_from(pl.model, opts, where="planner.options", backend_keys=("cache", "cache_dir", "fallback", "max_failed_rounds", "focus_patterns"))
    cache = RequestCache(opts.get("cache_dir")) if opts.get("cache", True) else None
    fb_name = opts.get("fallback", "heuristic")
    fallback = None if fb_name in (None, "none") else PLANNERS.make(fb_name, config)
    return LiteLLMPlanner(ModelClient(mc, cache=cache, purpose="planner"), fallback=fallback)
