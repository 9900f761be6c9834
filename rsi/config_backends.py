"""Campaign backend settings checked at load: editor and planner options, judges, executor.

Each backend's settings form a pydantic model; together they are a discriminated union on
``backend`` (:data:`EditorBackend`, :data:`PlannerBackend`). ``rsi.config.load_config`` checks a
file's ``[editor]`` and ``[planner]`` against them (:func:`check_backends`) before anything is
written, so an unknown option, a key in the config, a model id without a provider or a missing
binary is one line naming the file and the field. Backends registered by other packages are not
checked here (their factories check their own options).

``[judges]`` puts LLM judges into every campaign evaluation (contract check, exams, protection,
fixed core), through the same model layer as ``duplexagent run``; ``[executor]`` chooses where
the conversations of an evaluation run (``processes`` on this machine, or ``dask``).
"""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Annotated, Any, Literal, Union

from pydantic import BaseModel, ConfigDict, Field, TypeAdapter, ValidationError, field_validator, model_validator

from duplexagent.models import ModelConfig
from simulator.registry import Registry

__all__ = [
    "EDITOR_OPTIONS",
    "PLANNER_OPTIONS",
    "CommandEditorOptions",
    "EditorBackend",
    "ExecutorConfig",
    "HeuristicPlannerOptions",
    "JudgesConfig",
    "LiteLLMEditorOptions",
    "LiteLLMPlannerOptions",
    "OfflineEditorOptions",
    "PlannerBackend",
    "check_backends",
    "configured_models",
]

_KEY_NAMES = ("api_key", "apikey", "key", "token", "secret")
_MODEL_FIELDS = tuple(k for k in ModelConfig.model_fields if k != "model")


class _Opt(BaseModel):
    model_config = ConfigDict(extra="forbid")

    @model_validator(mode="before")
    @classmethod
    def _no_keys(cls, data: Any) -> Any:
        if isinstance(data, dict):
            for k in data:
                if str(k).lower() in _KEY_NAMES:
                    raise ValueError(f"{k}: keys are never read from config files; set api_key_env to the name of an environment variable (or put the key in .env)")
        return data


def _provider(v: str | None) -> str | None:
    if v is not None and "/" not in v:
        raise ValueError(f"{v!r}: expected 'provider/model' (e.g. openai/gpt-4o-mini, fake/scripted)")
    return v


class _ModelSettings(_Opt):
    """The model settings a model-backed backend takes in ``options`` (see ``ModelConfig``)."""

    api_base: str | None = Field(default=None, description="Endpoint base URL (e.g. a local OpenAI-compatible server).")
    api_key_env: str | None = Field(default=None, description="Name of the environment variable holding the API key.")
    temperature: float | None = Field(default=0.0, description="Sampling temperature (None: the provider's default).")
    max_tokens: int | None = Field(default=None, ge=1, description="Output token limit.")
    timeout_s: float | None = Field(default=None, gt=0, description="Give up on one call after this many seconds (default: the backend's).")
    num_retries: int = Field(default=0, ge=0, description="Client-side retries of a failed call.")
    stream: bool = Field(default=False, description="Stream the reply (SSE) and assemble it.")
    input_cost_per_token: float | None = Field(default=None, ge=0, description="USD per input token (default: litellm's price list).")
    output_cost_per_token: float | None = Field(default=None, ge=0, description="USD per output token (default: litellm's price list).")
    options: dict[str, Any] = Field(default_factory=dict, description="Options of fake models (replies, default, function).")
    params: dict[str, Any] = Field(default_factory=dict, description="Extra provider parameters passed through (e.g. seed, top_p).")
    cache: bool = Field(default=True, description="Answer repeated requests from the campaign's response cache.")
    cache_dir: str | None = Field(default=None, description="A cache folder of its own (default: the campaign's cache/).")


class OfflineEditorOptions(_Opt):
    """``backend = "offline"``: the structural repair operators, no model."""

    backend: Literal["offline"] = "offline"
    model: None = Field(default=None, description="Not used.")
    command: None = Field(default=None, description="Not used.")


class LiteLLMEditorOptions(_ModelSettings):
    """``backend = "litellm"``: a model returns file edits as JSON."""

    backend: Literal["litellm"] = "litellm"
    model: str = Field(description="Model id, 'provider/model'.")
    command: None = Field(default=None, description="Not used.")

    @field_validator("model")
    @classmethod
    def _model_id(cls, v: str | None) -> str | None:
        return _provider(v)


class CommandEditorOptions(_ModelSettings):
    """``backend = "command"``: a coding-agent CLI (the Codex CLI, or any argv) edits the worktree."""

    backend: Literal["command"] = "command"
    model: str | None = Field(default=None, description="Model id, 'provider/model' (the Codex CLI needs one).")
    command: list[str] | None = Field(default=None, description="Argv template for other agent CLIs (none: the Codex CLI).")
    agent: Literal["codex", "template"] | None = Field(default=None, description="codex (default without command) or template.")
    binary: str | None = Field(default=None, description="The Codex CLI to run (default: $DUPLEXAGENT_CODEX_BIN or codex on PATH).")
    template: str | None = Field(default=None, description="Brief template (jinja2) instead of the shipped one.")
    state_dir: str | None = Field(default=None, description="Where the agent's private state lives.")
    strict_config: bool = Field(default=False, description="Fail when the agent reports an unknown config key.")
    codex_config: dict[str, Any] = Field(default_factory=dict, description="Extra top-level keys of the Codex config.toml.")

    @field_validator("model")
    @classmethod
    def _model_id(cls, v: str | None) -> str | None:
        return _provider(v)

    def program(self) -> str | None:
        """The binary this backend runs (None: the Codex CLI was not found)."""
        if self.command:
            return self.command[0]
        from rsi.editor_command import find_codex

        return find_codex(self.binary)


class HeuristicPlannerOptions(_Opt):
    """``backend = "heuristic"``: the rule-based Exam Planner, no model."""

    backend: Literal["heuristic"] = "heuristic"
    model: None = Field(default=None, description="Not used.")


class LiteLLMPlannerOptions(_ModelSettings):
    """``backend = "litellm"``: a model chooses the round's exam."""

    backend: Literal["litellm"] = "litellm"
    model: str = Field(description="Model id, 'provider/model'.")
    fallback: str | None = Field(default="heuristic", description="Planner used when the model gives no usable exam ('none': fail).")
    max_failed_rounds: int | None = Field(default=None, ge=1, description="Stop using the model after this many failed rounds.")
    focus_patterns: Any = Field(default=None, description="Patterns the planner should favour.")

    @field_validator("model")
    @classmethod
    def _model_id(cls, v: str | None) -> str | None:
        return _provider(v)


EditorBackend = Annotated[Union[OfflineEditorOptions, LiteLLMEditorOptions, CommandEditorOptions], Field(discriminator="backend")]
PlannerBackend = Annotated[Union[HeuristicPlannerOptions, LiteLLMPlannerOptions], Field(discriminator="backend")]
_EDITOR = TypeAdapter(EditorBackend)
_PLANNER = TypeAdapter(PlannerBackend)


def _is_options(obj: Any) -> bool:
    return isinstance(obj, type) and issubclass(obj, _Opt)


EDITOR_OPTIONS: Registry[type[_Opt]] = Registry("editor options", check=_is_options, expected="an options model")
"""The options model of each built-in editor backend (one per branch of :data:`EditorBackend`)."""
PLANNER_OPTIONS: Registry[type[_Opt]] = Registry("planner options", check=_is_options, expected="an options model")
"""The options model of each built-in planner backend (one per branch of :data:`PlannerBackend`)."""
for _m in (OfflineEditorOptions, LiteLLMEditorOptions, CommandEditorOptions):
    EDITOR_OPTIONS.register(_m.model_fields["backend"].default, _m)
for _m in (HeuristicPlannerOptions, LiteLLMPlannerOptions):
    PLANNER_OPTIONS.register(_m.model_fields["backend"].default, _m)


class JudgesConfig(_Opt):
    """LLM judges in every campaign evaluation (contract check, exams, protection, fixed core).

    ``modules`` names a judge per module (as ``[runtime] judge`` in a module's params.toml does);
    ``models`` holds settings per model id. The judge call is made by the campaign process (the
    trusted side), with the module's rendered ``instructions.md.j2``; candidate code never calls
    a model. Replies are kept in the campaign's response cache."""

    modules: dict[str, str] = Field(default_factory=dict, description="Module -> judge model id ('provider/model').")
    models: dict[str, ModelConfig] = Field(default_factory=dict, description="Settings per model id (api_base, api_key_env, prices, temperature, ...).")
    samples: int = Field(default=1, ge=1, le=16, description="Samples per prompt for a judge with temperature > 0 (majority vote; each sample cached on its own).")
    cache: bool = Field(default=True, description="Keep replies in the campaign's response cache (cache/ in the campaign directory).")

    @model_validator(mode="before")
    @classmethod
    def _model_keys(cls, data: Any) -> Any:
        if isinstance(data, dict) and isinstance(data.get("models"), dict):
            data = dict(data)
            data["models"] = {k: ({"model": k, **v} if isinstance(v, dict) else v) for k, v in data["models"].items()}
        return data

    @model_validator(mode="after")
    def _check(self) -> "JudgesConfig":
        from simulator.vocab import MODULES

        for module, model in self.modules.items():
            if module not in MODULES:
                raise ValueError(f"modules.{module}: unknown module (expected one of {', '.join(MODULES)})")
            if "/" not in model:
                raise ValueError(f"modules.{module}: {model!r}: expected 'provider/model' (e.g. openai/gpt-4o-mini)")
        for key, cfg in self.models.items():
            if cfg.model != key:
                raise ValueError(f"models.{key}.model: {cfg.model!r} differs from its key")
        return self

    def model_for(self, model_id: str) -> ModelConfig:
        return self.models.get(model_id) or ModelConfig(model=model_id)


class ExecutorConfig(_Opt):
    """Where the conversations of each evaluation run. Wherever they run, trusted code plays and
    grades them and the candidate's module code runs only in jailed module hosts there."""

    backend: Literal["processes", "dask"] = Field(default="processes", description="processes (this machine, `workers` processes) or dask.")
    scheduler: str | None = Field(default=None, description="For dask: the scheduler address (tcp://host:port); none = a LocalCluster on 127.0.0.1 with `workers` workers.")

    @model_validator(mode="before")
    @classmethod
    def _short(cls, data: Any) -> Any:
        if isinstance(data, str):  # executor = "dask"
            return {"backend": data}
        return data

    @model_validator(mode="after")
    def _sched(self) -> "ExecutorConfig":
        if self.scheduler is not None and self.backend != "dask":
            raise ValueError("scheduler: only the dask executor connects to a scheduler")
        return self


def _first(err: ValidationError, prefix: str) -> str:
    first = err.errors()[0]
    loc = [str(p) for p in first["loc"]]
    if loc and (loc[0] in EDITOR_OPTIONS or loc[0] in PLANNER_OPTIONS):
        loc = loc[1:]  # the union's branch tag
    msg = str(first["msg"]).removeprefix("Value error, ")
    if first["type"] == "extra_forbidden":
        msg = "unknown option"
    if not loc and ": " in msg and msg.split(": ", 1)[0].replace("_", "").isalnum():
        head, msg = msg.split(": ", 1)
        loc = [head]
    if first["type"] == "union_tag_invalid":
        loc, msg = ["backend"], msg
    if loc and loc[0] not in ("model", "command", "backend"):
        return f"{prefix}.options.{'.'.join(loc)}: {msg}"
    return f"{prefix}.{'.'.join(loc) or 'options'}: {msg}"


def _flat(section: Any) -> dict[str, Any]:
    d: dict[str, Any] = {"backend": section.backend, **dict(section.options)}
    if getattr(section, "model", None) is not None:
        d["model"] = section.model
    if getattr(section, "command", None) is not None:
        d["command"] = list(section.command)
    return d


def check_backends(cfg: Any, *, binaries: bool = True) -> Any:
    """Validate ``[editor]``/``[planner]`` of a CampaignConfig against the backend models; raises
    ValueError ``field: reason``. With ``binaries``, a command backend's program must exist.
    Returns (editor options, planner options) as models (None for a backend registered elsewhere)."""
    from rsi.registry import EDITORS, PLANNERS

    ed = pl = None
    for where, reg, section in (("editor", EDITORS, cfg.editor), ("planner", PLANNERS, cfg.planner)):
        if section.backend not in reg.names():
            raise ValueError(f"{where}.backend: unknown {where} backend {section.backend!r} (known: {', '.join(reg.names())})")
    if cfg.editor.backend in EDITOR_OPTIONS:
        try:
            ed = _EDITOR.validate_python(_flat(cfg.editor))
        except ValidationError as err:
            raise ValueError(_first(err, "editor")) from None
        if binaries and isinstance(ed, CommandEditorOptions):
            prog = ed.program()
            if ed.command:
                if not (Path(prog).is_file() or shutil.which(prog)):
                    raise ValueError(f"editor.command[0]: {prog!r}: no such program")
            elif prog is None:
                what = ed.binary or "codex"
                raise ValueError(f"editor.options.binary: {what!r}: the Codex CLI was not found (set options.binary, $DUPLEXAGENT_CODEX_BIN, or put codex on PATH)")
    if cfg.planner.backend in PLANNER_OPTIONS:
        try:
            pl = _PLANNER.validate_python(_flat(cfg.planner))
        except ValidationError as err:
            raise ValueError(_first(err, "planner")) from None
    return ed, pl


def configured_models(cfg: Any) -> list[tuple[str, ModelConfig]]:
    """(where, model config) of every model the campaign calls: judges, planner, editor."""
    out: list[tuple[str, ModelConfig]] = []
    seen: set[str] = set()
    for module, mid in sorted(cfg.judges.modules.items()):
        if mid not in seen:
            seen.add(mid)
            out.append((f"judges.modules.{module}", cfg.judges.model_for(mid)))
    for where, section in (("planner", cfg.planner), ("editor", cfg.editor)):
        if section.backend == "litellm" and section.model:
            fields = {k: v for k, v in section.options.items() if k in _MODEL_FIELDS}
            out.append((f"{where}.model", ModelConfig(model=section.model, **fields)))
    return out
