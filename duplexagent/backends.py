"""Model backends of a run: LLM judges for modules and the delegation pool, with cache and budget.

A :class:`BackendsConfig` is what a user writes (TOML/JSON/YAML, or a campaign config section);
:class:`Backends` turns it into judges and pools for each session and collects what they used.
``duplexagent.runner.run_scenarios(..., backends=...)`` takes one.

```toml
[models."openai/gpt-4o-mini"]          # settings per model id (judges name it in params.toml)
api_key_env = "OPENAI_API_KEY"
[judges]                               # optional: judge modules without editing params.toml
intake = "openai/gpt-4o-mini"
[delegate]                             # optional: the litellm pool instead of the scripted one
model = "openai/gpt-4o-mini"           # (or backend = "command", command = [...]: a CLI tool per call)
[interaction]                          # optional: direct replies from a chat model (the text cascade)
kind = "cascade"
model = "openai/gpt-4o-mini"
[run]
delegate_latency_s = 2.0               # fixed latency: traces stay deterministic
cache = true
```
"""

from __future__ import annotations

import json
import tomllib
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable

import yaml
from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator
from pydantic_core import PydanticCustomError

from duplexagent.command_delegate import CommandDelegate, CommandDelegateConfig
from duplexagent.cascade import CascadeInteraction, CascadeUsage, InteractionConfig
from duplexagent.delegates import Delegate
from duplexagent.judges import LLMJudge, build_judges
from duplexagent.llm_delegates import LiteLLMPool
from duplexagent.loader import Harness
from duplexagent.models import Budget, BudgetLimits, ModelClient, ModelConfig, RequestCache, spend_scope
from simulator.registry import Registry, RegistryError
from simulator.scenario import Scenario
from simulator.vocab import MODULES

__all__ = ["DELEGATES", "INTERACTIONS", "Backends", "BackendsConfig", "DelegateBackend", "RunOptions", "delegate_backend_of", "load_backends_config"]

BACKENDS_SCHEMA_VERSION = 1


@dataclass(frozen=True)
class DelegateBackend:
    """A delegation backend: the config type it reads, how it reads a ``[delegate]`` table, and
    how it makes the pool of one conversation (``pool(backends, config) -> Delegate``)."""

    config_type: type[BaseModel]
    read: Callable[[dict[str, Any]], BaseModel]
    pool: Callable[["Backends", Any], Delegate]


def _litellm_pool(backends: "Backends", cfg: ModelConfig) -> Delegate:
    if backends._delegate_client is None:
        backends._delegate_client = ModelClient(cfg, cache=backends.cache, budget=backends.budget, purpose="delegate")
    return LiteLLMPool(backends._delegate_client, fixed_latency_s=backends.config.run.delegate_latency_s)


def _command_pool(backends: "Backends", cfg: CommandDelegateConfig) -> Delegate:
    return CommandDelegate(cfg, fixed_latency_s=backends.config.run.delegate_latency_s, budget=backends.budget)


DELEGATES: Registry[DelegateBackend] = Registry(
    "delegation backend", check=lambda o: isinstance(o, DelegateBackend), expected="a DelegateBackend"
)
"""Delegation backends by the ``backend`` key of a ``[delegate]`` table (default ``litellm``)."""
DELEGATES.register(
    "litellm",
    DelegateBackend(ModelConfig, lambda v: ModelConfig.model_validate({k: x for k, x in v.items() if k != "backend"}), _litellm_pool),
)
DELEGATES.register("command", DelegateBackend(CommandDelegateConfig, CommandDelegateConfig.model_validate, _command_pool))


def delegate_backend_of(cfg: BaseModel) -> DelegateBackend:
    """The backend a parsed ``[delegate]`` config belongs to (the most specific config type)."""
    for backend in reversed(DELEGATES.values()):
        if isinstance(cfg, backend.config_type):
            return backend
    raise RegistryError(f"delegation backend: no backend reads a {type(cfg).__name__}")


InteractionFactory = Callable[["Backends", Scenario, InteractionConfig], Any]
"""``factory(backends, scenario, config) -> interaction model | None`` (None: the simulated one)."""


def _cascade(backends: "Backends", scenario: Scenario, cfg: InteractionConfig) -> CascadeInteraction:
    if backends._interaction_client is None:
        backends._interaction_client = ModelClient(cfg.llm, cache=backends.cache, budget=backends.budget, purpose="interaction")  # type: ignore[arg-type]
    return CascadeInteraction.from_config(scenario, cfg, client=backends._interaction_client, usage=backends.interaction_usage)


INTERACTIONS: Registry[InteractionFactory] = Registry("interaction model")
"""Interaction models by the ``kind`` of an ``[interaction]`` table (and ``run --interaction``)."""
INTERACTIONS.register("simulated", lambda backends, scenario, cfg: None)
INTERACTIONS.register("cascade", _cascade)


class RunOptions(BaseModel):
    """How model calls behave in a run."""

    model_config = ConfigDict(extra="forbid")

    delegate_latency_s: float | None = Field(default=None, gt=0, description="Fixed delegate latency in virtual time (None: measured).")
    cache: bool = Field(default=True, description="Use the on-disk request cache (false: every call is made again).")
    cache_dir: str | None = Field(default=None, description="Cache folder (default: the user cache).")


class BackendsConfig(BaseModel):
    """Judges, delegates, cache and budget of a run."""

    model_config = ConfigDict(extra="forbid")

    schema_version: int = Field(default=BACKENDS_SCHEMA_VERSION, description="Config format version.")
    models: dict[str, ModelConfig] = Field(default_factory=dict, description="Settings per model id (endpoint, key variable, prices).")
    judges: dict[str, str] = Field(default_factory=dict, description="Module -> judge model id (adds to params.toml's runtime.judge).")
    delegate: ModelConfig | CommandDelegateConfig | None = Field(
        default=None, description="The delegation pool: a litellm model, or backend 'command' (None: the scripted pool)."
    )
    interaction: InteractionConfig | None = Field(
        default=None, description="The interaction model (None: simulated; kind = cascade: direct replies from a chat model)."
    )
    run: RunOptions = Field(default_factory=RunOptions, description="Cache and latency options.")
    budget: BudgetLimits = Field(default_factory=BudgetLimits, description="Spend limits.")

    @field_validator("delegate", mode="before")
    @classmethod
    def _delegate_backend(cls, v: Any) -> Any:
        """``backend`` picks the pool (:data:`DELEGATES`): ``litellm`` (the default: a model config) or ``command``."""
        if not isinstance(v, dict):
            return v
        backend = v.get("backend", "litellm")
        if backend not in DELEGATES:
            msg = f"backend: unknown delegation backend {backend!r} ({', '.join(DELEGATES.names())})"
            raise PydanticCustomError("delegate_backend", "{msg}", {"msg": msg})
        try:
            return DELEGATES.get(backend).read(v)
        except ValidationError as err:  # one branch's first error, not a union's list
            first = err.errors()[0]
            msg = str(first["msg"]).removeprefix("Value error, ")
            if first["loc"]:
                msg = ".".join(str(x) for x in first["loc"]) + ": " + msg
            raise PydanticCustomError("delegate_config", "{msg}", {"msg": msg}) from None

    def model_post_init(self, __context: Any) -> None:
        for module in self.judges:
            if module not in MODULES:
                raise ValueError(f"judges.{module}: unknown module (expected one of {', '.join(MODULES)})")
        for key, cfg in self.models.items():
            if cfg.model != key:
                raise ValueError(f"models.{key}.model: {cfg.model!r} differs from its key")

    def _model(self, model_id: str) -> ModelConfig:
        return self.models.get(model_id) or ModelConfig(model=model_id)


def load_backends_config(path: str | Path) -> BackendsConfig:
    """Read a backends config; errors name the file, field and reason."""
    p = Path(path)
    try:
        text = p.read_text(encoding="utf-8")
    except OSError as err:
        raise ValueError(f"{p}: cannot be read: {err.strerror}") from None
    try:
        if p.suffix == ".toml":
            data = tomllib.loads(text)
        elif p.suffix in (".yaml", ".yml"):
            data = yaml.safe_load(text) or {}
        else:
            data = json.loads(text)
    except (tomllib.TOMLDecodeError, yaml.YAMLError, json.JSONDecodeError) as err:
        raise ValueError(f"{p}: not valid {p.suffix.lstrip('.') or 'JSON'}: {err}") from None
    if isinstance(data, dict):
        for key, cfg in (data.get("models") or {}).items():
            if isinstance(cfg, dict):
                cfg.setdefault("model", key)
    version = data.get("schema_version", BACKENDS_SCHEMA_VERSION) if isinstance(data, dict) else BACKENDS_SCHEMA_VERSION
    if isinstance(version, int) and version > BACKENDS_SCHEMA_VERSION:
        raise ValueError(f"{p}: schema_version: {version} is newer than supported ({BACKENDS_SCHEMA_VERSION})")
    try:
        return BackendsConfig.model_validate(data)
    except (ValidationError, ValueError) as err:
        if isinstance(err, ValidationError):
            first = err.errors()[0]
            loc = ".".join(str(x) for x in first["loc"]) or "(root)"
            raise ValueError(f"{p}: {loc}: {first['msg']}") from None
        raise ValueError(f"{p}: {err}") from None


class Backends:
    """Judges and pools for each session of a run, and what they used."""

    def __init__(
        self,
        config: BackendsConfig | None = None,
        *,
        budget: Budget | None = None,
        cache: RequestCache | None = None,
        evaluation: str = "",
    ) -> None:
        self.config = config or BackendsConfig()
        self.budget = budget or Budget(self.config.budget)
        if cache is None and self.config.run.cache:
            cache = RequestCache(self.config.run.cache_dir)
        self.cache = cache if self.config.run.cache else None
        self.evaluation = evaluation
        self._judges: dict[int, dict[str, LLMJudge]] = {}
        self._delegate_client: ModelClient | None = None
        self._interaction_client: ModelClient | None = None
        self.interaction_usage = CascadeUsage()
        self.pools: dict[str, LiteLLMPool | CommandDelegate] = {}
        self.per_scenario: dict[str, dict[str, Any]] = {}

    def judges_for(self, harness: Harness) -> dict[str, LLMJudge]:
        key = id(harness)
        if key not in self._judges:
            for module, model_id in self.config.judges.items():
                harness.modules[module].judge = model_id
            models = {m: self.config._model(m) for m in {s.judge for s in harness.modules.values() if s.judge}}
            self._judges[key] = build_judges(harness, models=models, cache=self.cache, budget=self.budget)
        return self._judges[key]

    def pool_for(self, scenario: Scenario) -> Delegate | None:
        if self.config.delegate is None:
            return None
        pool = delegate_backend_of(self.config.delegate).pool(self, self.config.delegate)
        self.pools[scenario.id] = pool  # type: ignore[assignment]
        return pool

    def interaction_for(self, scenario: Scenario) -> CascadeInteraction | None:
        """The interaction model for one conversation (:data:`INTERACTIONS`), or None for the simulated one."""
        cfg = self.config.interaction
        if cfg is None or cfg.llm is None:
            return None
        return INTERACTIONS.get(cfg.kind)(self, scenario, cfg)  # type: ignore[no-any-return]

    def session_kwargs(self, scenario: Scenario, harness: Harness) -> dict[str, Any]:
        kw: dict[str, Any] = {"judges": self.judges_for(harness)}
        pool = self.pool_for(scenario)
        if pool is not None:
            kw["pool"] = pool
        im = self.interaction_for(scenario)
        if im is not None:
            kw["interaction"] = im
        return kw

    def scope(self) -> Any:
        """The spend scope model calls of this run are charged to."""
        return spend_scope("evaluation", self.evaluation)

    def after_session(self, scenario: Scenario, session: Any) -> None:
        pool = self.pools.get(scenario.id)
        self.per_scenario[scenario.id] = {
            "delegates": pool.totals() if pool is not None else None,
            "tasks": pool.usage_by_task(session.calls) if pool is not None else {},
        }
        self.budget.raise_if_tripped()

    def usage(self) -> dict[str, Any]:
        """Tokens and cost of the run: per judge hook, per conversation and task, and the budget summary."""
        judges: dict[str, Any] = {}
        for table in self._judges.values():
            for module, judge in table.items():
                for key, row in judge.usage.as_dict().items():
                    judges[key] = {"model": judge.model, **row}
        return {
            "judges": judges,
            "conversations": self.per_scenario,
            "interaction": self.interaction_usage.as_dict() if self._interaction_client is not None else None,
            "spend": self.budget.summary(),
            "cache": {"hits": self.cache.hits, "misses": self.cache.misses} if self.cache is not None else None,
        }
