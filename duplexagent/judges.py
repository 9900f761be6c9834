"""LLM judges for harness modules.

A module whose ``params.toml`` says ``[runtime] judge = "provider/model"`` is decided by a model:
the engine calls :meth:`LLMJudge.decide` instead of the module's rule, then validates the returned
decision exactly like a rule's. The judge renders the module's ``instructions.md.j2`` (jinja2, the
view's fields as context), asks for the typed decision with a JSON schema (``response_format``),
and parses the reply. Malformed, empty or out-of-schema output gets one repair retry; after that,
or on a failed call (HTTP error, timeout), :class:`JudgeError` is raised, which the engine records
as a rejected decision (``harness.decision`` with ``accepted=false`` and the reason) before applying
the module's safe fallback. If ``rules.py`` defines ``post_<hook>(view, decision)``, it post-checks
the model's decision: it may return a corrected decision, None to keep it, or raise to reject it.

Token and cost usage of every call is kept per module and hook (:class:`JudgeUsage`) and charged to
the shared :class:`~duplexagent.models.Budget`, if any.
"""

from __future__ import annotations

import json
import re
import threading
from dataclasses import dataclass, field
from typing import Any, Callable

import jinja2
import jinja2.sandbox
from pydantic import BaseModel, ValidationError

from duplexagent.loader import Harness, ModuleSpec, find_post_hook
from duplexagent.models import Budget, ModelCallError, ModelClient, ModelConfig, RequestCache

__all__ = ["INFRASTRUCTURE", "JudgeError", "judge_messages", "render_source", "JudgeUsage", "LLMJudge", "build_judges", "decision_schema", "find_post_hook", "parse_decision", "render_instructions"]

_env = jinja2.sandbox.SandboxedEnvironment(undefined=jinja2.ChainableUndefined, autoescape=False, keep_trailing_newline=True)
_env.filters["tojson"] = lambda v, indent=None: json.dumps(v, indent=indent, ensure_ascii=False, default=str)
_template_cache: dict[str, jinja2.Template] = {}
_tlock = threading.Lock()


class JudgeError(RuntimeError):
    """The judge could not produce a valid decision (the engine records it and falls back)."""


@dataclass
class JudgeUsage:
    """Calls, tokens and cost of one judge, per ``module.hook``."""

    calls: dict[str, int] = field(default_factory=dict)
    repairs: dict[str, int] = field(default_factory=dict)
    failures: dict[str, int] = field(default_factory=dict)
    tokens: dict[str, int] = field(default_factory=dict)
    cost_usd: dict[str, float] = field(default_factory=dict)

    def add(self, key: str, *, tokens: int = 0, cost: float = 0.0, calls: int = 0, repairs: int = 0, failures: int = 0) -> None:
        self.calls[key] = self.calls.get(key, 0) + calls
        self.repairs[key] = self.repairs.get(key, 0) + repairs
        self.failures[key] = self.failures.get(key, 0) + failures
        self.tokens[key] = self.tokens.get(key, 0) + tokens
        self.cost_usd[key] = round(self.cost_usd.get(key, 0.0) + cost, 10)

    def as_dict(self) -> dict[str, Any]:
        keys = sorted(set(self.calls) | set(self.failures))
        return {
            k: {
                "calls": self.calls.get(k, 0),
                "repairs": self.repairs.get(k, 0),
                "failures": self.failures.get(k, 0),
                "tokens": self.tokens.get(k, 0),
                "cost_usd": round(self.cost_usd.get(k, 0.0), 6),
            }
            for k in keys
        }


def decision_schema(decision_type: type[BaseModel]) -> dict[str, Any]:
    """The JSON schema sent as ``response_format`` for a decision type."""
    return {
        "type": "json_schema",
        "json_schema": {"name": decision_type.__name__, "schema": decision_type.model_json_schema(), "strict": False},
    }


def render_instructions(spec: ModuleSpec, hook: str, view: BaseModel) -> str:
    """The module's ``instructions.md.j2`` rendered with the view (its fields are top-level variables)."""
    return render_source(spec.instructions or "", spec.path / "instructions.md.j2", spec.name, hook, view.model_dump(mode="json"), spec.params)


def render_source(source: str, path: Any, module: str, hook: str, ctx: dict[str, Any], params: dict[str, Any]) -> str:
    """An instructions template (its text) rendered with a view's JSON fields as variables."""
    if not source.strip():
        return f"You are the {module} module of a full-duplex voice agent's harness. Decide the {hook} hook."
    with _tlock:
        tpl = _template_cache.get(source)
        if tpl is None:
            try:
                tpl = _env.from_string(source)
            except jinja2.TemplateSyntaxError as err:
                raise JudgeError(f"{path}: line {err.lineno}: {err.message}") from None
            _template_cache[source] = tpl
    ctx = dict(ctx)
    ctx.update(view=ctx.copy(), hook=hook, module=module, params=ctx.get("params", params))
    try:
        return tpl.render(**ctx)
    except jinja2.TemplateError as err:
        raise JudgeError(f"{path}: cannot render for {hook}: {err}") from None


def judge_messages(system: str, module: str, hook: str, view_json: str, decision_type: type[BaseModel]) -> list[dict[str, Any]]:
    """The chat messages of one judge call: the rendered instructions, then the hook and its view."""
    user = (
        f"Hook: {module}.{hook}\n"
        f"View (JSON):\n{view_json}\n\n"
        f"Reply with one JSON object, a {decision_type.__name__}, matching the JSON schema you were given. "
        "Name only task ids, versions and option ids that appear in the view. No prose, no code fences."
    )
    return [{"role": "system", "content": system}, {"role": "user", "content": user}]


INFRASTRUCTURE = "infrastructure:"
"""Prefix of a JudgeError whose model call failed (HTTP error, timeout, refused connection): the
scorer and the diagnoser report such conversations apart, never blaming a module for them."""


_FENCE = re.compile(r"^\s*```(?:json)?\s*(.*?)\s*```\s*$", re.S)


def parse_decision(text: str, decision_type: type[BaseModel]) -> BaseModel:
    """Parse a model's reply into the decision type; raises ValueError with a short reason."""
    if not text or not text.strip():
        raise ValueError("empty reply")
    m = _FENCE.match(text)
    body = m.group(1) if m else text.strip()
    try:
        data = json.loads(body)
    except json.JSONDecodeError as err:
        raise ValueError(f"not JSON ({err.msg} at char {err.pos})") from None
    if not isinstance(data, dict):
        raise ValueError(f"expected a JSON object, got {type(data).__name__}")
    try:
        return decision_type.model_validate(data)
    except ValidationError as err:
        first = err.errors()[0]
        loc = ".".join(str(p) for p in first["loc"]) or "(root)"
        raise ValueError(f"out of schema: {loc}: {first['msg']}") from None


class LLMJudge:
    """Decides module hooks with a model (see the module docstring)."""

    def __init__(self, client: ModelClient, *, repair_retries: int = 1, samples: int = 1) -> None:
        self.client = client
        self.repair_retries = repair_retries
        self.samples = samples
        self.usage = JudgeUsage()
        self._lock = threading.Lock()

    @property
    def model(self) -> str:
        return self.client.config.model

    def _messages(self, module: str, hook: str, view: BaseModel, decision_type: type[BaseModel], spec: ModuleSpec) -> list[dict[str, Any]]:
        return judge_messages(render_instructions(spec, hook, view), module, hook, view.model_dump_json(), decision_type)

    def decide(self, module: str, hook: str, view: BaseModel, decision_type: type[BaseModel], spec: ModuleSpec) -> BaseModel:
        messages = self._messages(module, hook, view, decision_type, spec)
        decision = self.decide_messages(f"{module}.{hook}", messages, decision_type)
        return self._post_check(spec, hook, view, decision, decision_type)

    def decide_messages(self, key: str, messages: list[dict[str, Any]], decision_type: type[BaseModel]) -> BaseModel:
        """The model's decision for a rendered prompt (no post-check). A judge with temperature > 0
        and ``samples`` > 1 is asked ``samples`` times (each sample its own cache entry) and the most
        frequent decision wins (ties: the earliest)."""
        t = self.client.config.temperature
        k = self.samples if (t is not None and t > 0) else 1
        if k == 1:
            return self._one(key, messages, decision_type, None)
        votes: dict[str, tuple[int, int, BaseModel]] = {}
        last: JudgeError | None = None
        for i in range(k):
            try:
                d = self._one(key, messages, decision_type, i)
            except JudgeError as err:
                last = err
                continue
            sig = d.model_dump_json()
            n, first, _ = votes.get(sig, (0, i, d))
            votes[sig] = (n + 1, first, d)
        if not votes:
            assert last is not None
            raise last
        return max(votes.values(), key=lambda v: (v[0], -v[1]))[2]

    def _one(self, key: str, messages: list[dict[str, Any]], decision_type: type[BaseModel], sample: int | None) -> BaseModel:
        fmt = decision_schema(decision_type)
        problem = ""
        for attempt in range(self.repair_retries + 1):
            try:
                out = self.client.complete(messages, response_format=fmt, purpose="judge", sample=sample)
            except ModelCallError as err:
                with self._lock:
                    self.usage.add(key, calls=1, failures=1)
                raise JudgeError(f"{INFRASTRUCTURE} judge {self.model} call failed ({err.kind}): {err}") from None
            with self._lock:
                self.usage.add(key, calls=1, repairs=int(attempt > 0), tokens=out.tokens, cost=out.cost_usd)
            try:
                return parse_decision(out.text, decision_type)
            except ValueError as err:
                problem = str(err)
                messages = messages + [
                    {"role": "assistant", "content": out.text or "(empty)"},
                    {
                        "role": "user",
                        "content": f"That reply was unusable: {problem}. Reply again with only the JSON object for {decision_type.__name__}.",
                    },
                ]
        with self._lock:
            self.usage.add(key, failures=1)
        raise JudgeError(f"judge {self.model} gave no valid {decision_type.__name__} after {self.repair_retries} repair: {problem}")

    def _post_check(self, spec: ModuleSpec, hook: str, view: BaseModel, decision: BaseModel, decision_type: type[BaseModel]) -> BaseModel:
        post = find_post_hook(spec, hook)
        if post is None:
            return decision
        try:
            checked = post(view, decision)
        except Exception as err:
            raise JudgeError(f"{spec.name}.post_{hook} rejected the judge's decision: {type(err).__name__}: {str(err)[:200]}") from None
        if checked is None:
            return decision
        return checked


def build_judges(
    harness: Harness,
    *,
    models: dict[str, ModelConfig] | None = None,
    cache: RequestCache | None = None,
    budget: Budget | None = None,
) -> dict[str, LLMJudge]:
    """One judge per module whose params.toml names one; ``models`` supplies endpoint, key-variable
    and price settings per model id (a model not listed is used with defaults)."""
    judges: dict[str, LLMJudge] = {}
    clients: dict[str, ModelClient] = {}
    for name, spec in harness.modules.items():
        if not spec.judge:
            continue
        if spec.judge not in clients:
            cfg = (models or {}).get(spec.judge) or ModelConfig(model=spec.judge)
            clients[spec.judge] = ModelClient(cfg, cache=cache, budget=budget, purpose="judge")
        judges[name] = LLMJudge(clients[spec.judge])
    return judges
