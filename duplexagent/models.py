"""The model-call layer: every call to a language model in the workbench goes through here.

- :class:`ModelConfig`: a model as configs name it (``provider/model`` as litellm spells it, or a
  ``fake/...`` in-process model), with its endpoint, the *name* of the environment variable that
  holds its key, timeouts, prices.
- :class:`ModelClient`: one call = cache lookup, budget check, the call (litellm, or an in-process
  fake), cost accounting, cache store. Errors come back as :class:`ModelCallError` subclasses.
- :class:`RequestCache`: on-disk cache keyed by the canonical request (sorted JSON of model,
  messages, schema and parameters), atomic writes; a repeated or resumed evaluation costs nothing twice.
- :class:`Budget`: spend per campaign (planning), per proposal and per evaluation, kept apart, with
  limits; a call that would start past a limit raises :class:`BudgetExhausted` before any money is spent.
- Secrets: keys come only from the environment or a ``.env`` file (:func:`load_env`); :func:`redact`
  scrubs them from any text, :func:`scrubbed_env` from a subprocess environment.

litellm is imported lazily (it is an optional dependency, ``duplexagent[models]``), always after
``LITELLM_LOCAL_MODEL_COST_MAP=True`` is set so it never fetches its price list from the network.
"""

from __future__ import annotations

import contextlib
import contextvars
import hashlib
import json
import os
import re
import threading
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Iterator, Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator

from duplexagent.clock import WallClock
from duplexagent.fakes.models import FakeModel, FakeRequest, fake_from_options
from duplexagent.fakes.replies import estimate_tokens
from simulator.atomic import atomic_write

__all__ = [
    "Budget",
    "BudgetExhausted",
    "BudgetLimits",
    "CallRecord",
    "Completion",
    "ModelCallError",
    "ModelClient",
    "ModelConfig",
    "ModelConnectionError",
    "ModelHTTPError",
    "ModelTimeout",
    "RequestCache",
    "Spend",
    "canonical_request",
    "default_cache_dir",
    "load_env",
    "model_config_from",
    "redact",
    "redact_obj",
    "register_secret",
    "scrubbed_env",
    "secret_values",
    "spend_scope",
]

os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")

CACHE_SCHEMA_VERSION = 1
SPEND_SCHEMA_VERSION = 1
REDACTED = "[REDACTED]"

# ====================================================================== secrets

_SECRET_NAME = re.compile(r"(?i)(api[_-]?key|_key$|^key$|token|secret|password|passwd|credential|private)")
_SECRET_SHAPE = re.compile(r"\b(?:sk|pk|rk|ak)-[A-Za-z0-9_\-]{16,}\b|\bBearer\s+[A-Za-z0-9_\-.=]{16,}")
_registered: set[str] = set()
_sec_lock = threading.Lock()


def is_secret_name(name: str) -> bool:
    """Whether an environment variable's name says it holds a credential."""
    return bool(_SECRET_NAME.search(name))


def register_secret(value: str | None) -> None:
    """Treat ``value`` as a secret from now on (redacted everywhere, never passed to subprocesses)."""
    if value and len(value) >= 6:
        with _sec_lock:
            _registered.add(value)


def load_env(path: str | Path | None = None) -> list[str]:
    """Load ``.env`` (the given file, or ``./.env`` when it exists) into the environment without
    overriding what is already set; every value whose name looks like a credential is registered as
    a secret. Returns the names loaded."""
    p = Path(path) if path is not None else Path.cwd() / ".env"
    if not p.is_file():
        if path is not None:
            raise FileNotFoundError(f"{p}: no such .env file")
        return []
    from dotenv import dotenv_values

    values = dotenv_values(p)
    loaded = []
    for name, value in values.items():
        if value is None:
            continue
        if is_secret_name(name):
            register_secret(value)
        if name not in os.environ:
            os.environ[name] = value
            loaded.append(name)
    return loaded


def secret_values() -> set[str]:
    """Every value known to be secret: registered ones and credential-named environment variables."""
    with _sec_lock:
        out = set(_registered)
    for name, value in os.environ.items():
        if value and len(value) >= 8 and is_secret_name(name):
            out.add(value)
    return out


def redact(text: str, _known: list[str] | None = None) -> str:
    """``text`` with every known secret (and anything shaped like an API key) replaced by [REDACTED]."""
    if not text:
        return text
    for value in _known if _known is not None else sorted(secret_values(), key=len, reverse=True):
        if value in text:
            text = text.replace(value, REDACTED)
    return _SECRET_SHAPE.sub(REDACTED, text)


def redact_obj(obj: Any, _known: list[str] | None = None) -> Any:
    """A copy of a JSON-like value with every string redacted (the secrets known when it is
    called, read once for the whole value, not once per string)."""
    if _known is None:
        _known = sorted(secret_values(), key=len, reverse=True)
    if isinstance(obj, str):
        return redact(obj, _known)
    if isinstance(obj, dict):
        return {k: redact_obj(v, _known) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return [redact_obj(v, _known) for v in obj]
    return obj


def scrubbed_env(base: dict[str, str] | None = None, *, allow: tuple[str, ...] = ()) -> dict[str, str]:
    """A copy of the environment safe to hand to a subprocess: no credential-named variables, no
    variable whose value is a known secret (names in ``allow`` are kept)."""
    env = dict(os.environ if base is None else base)
    secrets = secret_values()
    return {k: v for k, v in env.items() if k in allow or (not is_secret_name(k) and v not in secrets)}


# ====================================================================== config


class ModelConfig(BaseModel):
    """A model as a config names it. Keys are never part of a config: only the name of the
    environment variable that holds one."""

    model_config = ConfigDict(extra="forbid")

    model: str = Field(description="Model id: 'provider/model' as litellm spells it, or 'fake/scripted', 'fake/function'.")
    api_base: str | None = Field(default=None, description="Endpoint base URL (e.g. a local OpenAI-compatible server).")
    api_key_env: str | None = Field(default=None, description="Name of the environment variable holding the API key.")
    temperature: float | None = Field(default=0.0, description="Sampling temperature (None: the provider's default).")
    max_tokens: int | None = Field(default=None, ge=1, description="Output token limit.")
    timeout_s: float = Field(default=60.0, gt=0, description="Give up on one call after this many seconds.")
    num_retries: int = Field(default=0, ge=0, description="Client-side retries of a failed call.")
    stream: bool = Field(default=False, description="Stream the reply (SSE) and assemble it.")
    input_cost_per_token: float | None = Field(default=None, ge=0, description="USD per input token (default: litellm's price list).")
    output_cost_per_token: float | None = Field(default=None, ge=0, description="USD per output token (default: litellm's price list).")
    options: dict[str, Any] = Field(default_factory=dict, description="Options of fake models (replies, default, function).")
    params: dict[str, Any] = Field(default_factory=dict, description="Extra provider parameters passed through (e.g. seed, top_p).")

    @model_validator(mode="before")
    @classmethod
    def _no_keys(cls, data: Any) -> Any:
        if isinstance(data, dict):
            for where, d in (("", data), ("params.", data.get("params") or {})):
                if not isinstance(d, dict):
                    continue
                for k in d:
                    if str(k).lower() in ("api_key", "apikey", "key", "token", "secret"):
                        raise ValueError(
                            f"{where}{k}: keys are never read from config files; set api_key_env to the name of an "
                            "environment variable (or put the key in .env)"
                        )
        if isinstance(data, str):
            return {"model": data}
        return data

    @model_validator(mode="after")
    def _model_id(self) -> "ModelConfig":
        if "/" not in self.model:
            raise ValueError(f"model: {self.model!r}: expected 'provider/model' (e.g. openai/gpt-4o-mini, fake/scripted)")
        return self

    @property
    def is_fake(self) -> bool:
        return self.model.startswith("fake/")

    def api_key(self) -> str | None:
        """The key from the environment (``api_key_env``), or None to let litellm use its provider default."""
        if self.api_key_env is None:
            return None
        value = os.environ.get(self.api_key_env)
        if not value:
            raise ModelCallError(f"{self.model}: environment variable {self.api_key_env} (api_key_env) is not set")
        register_secret(value)
        return value


def model_config_from(model: str | None, options: dict[str, Any], *, where: str, backend_keys: tuple[str, ...] = ()) -> ModelConfig:
    """A ModelConfig from a backend's ``model`` and its ``options`` table: keys of ModelConfig, plus
    ``backend_keys`` the backend reads itself; anything else is an error naming ``where``."""
    if not model:
        raise ValueError(f"{where.rsplit('.', 1)[0]}.model: a model id ('provider/model') is required for this backend")
    fields = set(ModelConfig.model_fields) - {"model"}
    picked = {k: v for k, v in options.items() if k in fields}
    for k in options:
        if str(k).lower() in ("api_key", "apikey", "key", "token", "secret"):
            raise ValueError(f"{where}.{k}: keys are never read from config files; set api_key_env to the name of an environment variable")
        if k not in fields and k not in backend_keys:
            raise ValueError(f"{where}.{k}: unknown option (known: {', '.join(sorted(fields | set(backend_keys)))})")
    try:
        return ModelConfig(model=model, **picked)
    except ValueError as err:
        raise ValueError(f"{where}: {str(err).splitlines()[-1] if str(err) else err}") from None


# ====================================================================== records


class CallRecord(BaseModel):
    """One model call as the spend ledger keeps it (no request text, no keys)."""

    model: str = Field(description="Model id.")
    purpose: str = Field(description="judge, delegate, editor, planner, ...")
    scope: Literal["campaign", "proposal", "evaluation"] = Field(description="Which spend bucket the call belongs to.")
    ref: str = Field(default="", description="Proposal or evaluation id within the scope.")
    prompt_tokens: int = Field(default=0, description="Input tokens.")
    completion_tokens: int = Field(default=0, description="Output tokens.")
    cost_usd: float = Field(default=0.0, description="Money spent on this call (0 for a cache hit).")
    saved_usd: float = Field(default=0.0, description="For a cache hit: what the original call cost.")
    cached: bool = Field(default=False, description="Answered from the request cache.")
    ok: bool = Field(default=True, description="False when the call failed.")
    error: str = Field(default="", description="Error kind and message for a failed call (redacted).")


@dataclass
class Completion:
    """A model's reply and what it cost."""

    text: str
    prompt_tokens: int = 0
    completion_tokens: int = 0
    cost_usd: float = 0.0
    cached: bool = False
    latency_s: float = 0.0
    record: CallRecord | None = None

    @property
    def tokens(self) -> int:
        return self.prompt_tokens + self.completion_tokens


class ModelCallError(RuntimeError):
    """A model call failed (connection, malformed reply, configuration); the message is redacted."""

    kind = "error"

    def __init__(self, message: str, *, status: int | None = None) -> None:
        super().__init__(redact(message))
        self.status = status


class ModelHTTPError(ModelCallError):
    """The provider answered with an HTTP error status."""

    kind = "http"


class ModelConnectionError(ModelCallError):
    """The endpoint could not be reached (refused connection, DNS, TLS)."""

    kind = "connection"


class ModelTimeout(ModelCallError):
    """No reply within the call's timeout."""

    kind = "timeout"


class BudgetExhausted(RuntimeError):
    """A call would start past a spend limit; nothing was spent on it."""

    def __init__(self, scope: str, ref: str, spent: float, limit: float) -> None:
        where = f"{scope} {ref}".strip()
        super().__init__(f"budget exhausted: {where} has spent ${spent:.4f} of its ${limit:.4f} limit")
        self.scope = scope
        self.ref = ref
        self.spent = spent
        self.limit = limit


# ====================================================================== spend scopes and budget

_scope: contextvars.ContextVar[tuple[str, str]] = contextvars.ContextVar("duplexagent_spend_scope", default=("campaign", ""))


@contextlib.contextmanager
def spend_scope(scope: Literal["campaign", "proposal", "evaluation"], ref: str = "") -> Iterator[None]:
    """Charge model calls made inside the block to ``scope``/``ref`` (e.g. ``proposal``, ``r3``)."""
    token = _scope.set((scope, ref))
    try:
        yield
    finally:
        _scope.reset(token)


def current_scope() -> tuple[str, str]:
    return _scope.get()


class BudgetLimits(BaseModel):
    """Spend limits in USD; None means unlimited."""

    model_config = ConfigDict(extra="forbid")

    total_usd: float | None = Field(default=None, ge=0, description="Whole campaign (planning + proposals + evaluations).")
    per_proposal_usd: float | None = Field(default=None, ge=0, description="One proposal (the editor's calls).")
    per_evaluation_usd: float | None = Field(default=None, ge=0, description="One evaluation (judges and delegates over an exam).")


class Bucket(BaseModel):
    """Spend of one scope entry."""

    cost_usd: float = Field(default=0.0, description="Money spent.")
    saved_usd: float = Field(default=0.0, description="Money not spent thanks to cache hits.")
    prompt_tokens: int = Field(default=0, description="Input tokens.")
    completion_tokens: int = Field(default=0, description="Output tokens.")
    calls: int = Field(default=0, description="Calls made (cache hits included).")
    cached_calls: int = Field(default=0, description="Calls answered from the cache.")
    failed_calls: int = Field(default=0, description="Calls that failed.")
    cache_misses: int = Field(default=0, description="Calls not answered from the cache (made to the model; cache hits are cached_calls).")

    def add(self, r: CallRecord) -> None:
        self.cost_usd = round(self.cost_usd + r.cost_usd, 10)
        self.saved_usd = round(self.saved_usd + r.saved_usd, 10)
        self.prompt_tokens += r.prompt_tokens
        self.completion_tokens += r.completion_tokens
        self.calls += 1
        self.cached_calls += int(r.cached)
        self.failed_calls += int(not r.ok)
        self.cache_misses += int(not r.cached)


class Spend(BaseModel):
    """Model spend of a campaign, kept apart per campaign-level planning, proposal and evaluation."""

    schema_version: int = Field(default=SPEND_SCHEMA_VERSION, description="Spend document version.")
    campaign: Bucket = Field(default_factory=Bucket, description="Campaign-level calls (the planner).")
    proposals: dict[str, Bucket] = Field(default_factory=dict, description="Per proposal id: the editor's calls.")
    evaluations: dict[str, Bucket] = Field(default_factory=dict, description="Per evaluation id: judges and delegates.")

    @property
    def total_usd(self) -> float:
        return round(self.campaign.cost_usd + sum(b.cost_usd for b in self.proposals.values()) + sum(b.cost_usd for b in self.evaluations.values()), 10)

    def bucket(self, scope: str, ref: str) -> Bucket:
        if scope == "campaign":
            return self.campaign
        table = self.proposals if scope == "proposal" else self.evaluations
        return table.setdefault(ref, Bucket())


class Budget:
    """Spend accounting with limits. Thread-safe; ``save``/``load`` persist it atomically.

    A call is refused (``BudgetExhausted``) only *before* it starts, so work already paid for is
    never thrown away: it is in the cache and in the archive. ``tripped`` remembers the first refusal
    so a caller whose foreign-code guard swallowed it (a judge inside the engine) can still stop.
    """

    def __init__(self, limits: BudgetLimits | None = None, spend: Spend | None = None, *, path: str | Path | None = None) -> None:
        self.limits = limits or BudgetLimits()
        self.spend = spend or Spend()
        self.path = Path(path) if path is not None else None
        self.records: list[CallRecord] = []
        self.tripped: BudgetExhausted | None = None
        self._lock = threading.Lock()

    @classmethod
    def load(cls, path: str | Path, limits: BudgetLimits | None = None) -> "Budget":
        p = Path(path)
        spend = None
        if p.exists():
            data = json.loads(p.read_text(encoding="utf-8"))
            version = data.get("schema_version", 1)
            if version > SPEND_SCHEMA_VERSION:
                raise ValueError(f"{p}: schema_version: {version} is newer than this version supports ({SPEND_SCHEMA_VERSION})")
            spend = Spend.model_validate(data)
        return cls(limits, spend, path=p)

    def save(self, path: str | Path | None = None) -> None:
        p = Path(path) if path is not None else self.path
        if p is None:
            return
        with self._lock:
            text = self.spend.model_dump_json(indent=2) + "\n"
        atomic_write(p, text, mkdir=True)

    @property
    def total_usd(self) -> float:
        with self._lock:
            return self.spend.total_usd

    def spent(self, scope: str, ref: str = "") -> float:
        with self._lock:
            if scope == "campaign" and not ref:
                return self.spend.total_usd
            table = {"proposal": self.spend.proposals, "evaluation": self.spend.evaluations}.get(scope)
            if table is None:
                return self.spend.campaign.cost_usd
            return table[ref].cost_usd if ref in table else 0.0

    def remaining_usd(self) -> float | None:
        if self.limits.total_usd is None:
            return None
        return max(0.0, self.limits.total_usd - self.total_usd)

    def check(self, scope: str | None = None, ref: str | None = None) -> None:
        """Raise BudgetExhausted if a new call in ``scope``/``ref`` (default: the current spend scope) may not start."""
        if scope is None:
            scope, ref = current_scope()
        ref = ref or ""
        with self._lock:
            total = self.spend.total_usd
            err = None
            if self.limits.total_usd is not None and total >= self.limits.total_usd:
                err = BudgetExhausted("campaign", "", total, self.limits.total_usd)
            elif scope == "proposal" and self.limits.per_proposal_usd is not None:
                spent = self.spend.proposals[ref].cost_usd if ref in self.spend.proposals else 0.0
                if spent >= self.limits.per_proposal_usd:
                    err = BudgetExhausted("proposal", ref, spent, self.limits.per_proposal_usd)
            elif scope == "evaluation" and self.limits.per_evaluation_usd is not None:
                spent = self.spend.evaluations[ref].cost_usd if ref in self.spend.evaluations else 0.0
                if spent >= self.limits.per_evaluation_usd:
                    err = BudgetExhausted("evaluation", ref, spent, self.limits.per_evaluation_usd)
            if err is not None:
                if self.tripped is None:
                    self.tripped = err
                raise err

    def raise_if_tripped(self) -> None:
        """Re-raise the first refusal, if any (for callers whose guards swallowed it)."""
        if self.tripped is not None:
            raise self.tripped

    def reset_trip(self) -> None:
        self.tripped = None

    def charge(self, record: CallRecord) -> None:
        with self._lock:
            self.records.append(record)
            self.spend.bucket(record.scope, record.ref).add(record)

    def summary(self) -> dict[str, Any]:
        """Figures for reports: totals per scope kind."""
        with self._lock:
            s = self.spend
            return {
                "total_usd": round(s.total_usd, 6),
                "campaign_usd": round(s.campaign.cost_usd, 6),
                "proposals_usd": round(sum(b.cost_usd for b in s.proposals.values()), 6),
                "evaluations_usd": round(sum(b.cost_usd for b in s.evaluations.values()), 6),
                "saved_usd": round(s.campaign.saved_usd + sum(b.saved_usd for b in [*s.proposals.values(), *s.evaluations.values()]), 6),
                "limit_usd": self.limits.total_usd,
            }


# ====================================================================== cache


def default_cache_dir() -> Path:
    """``$DUPLEXAGENT_CACHE/models`` or the user cache folder."""
    base = os.environ.get("DUPLEXAGENT_CACHE")
    root = Path(base) if base else Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "duplexagent"
    return root / "models"


def canonical_request(config: ModelConfig, messages: list[dict[str, Any]], response_format: dict[str, Any] | None, sample: int | None = None) -> str:
    """The canonical text of a request: sorted JSON of model, messages, schema and parameters.

    Endpoint, key and timeout are not part of it: the same question to the same model is the same
    request wherever it is served from."""
    doc = {
        "model": config.model,
        "messages": messages,
        "response_format": response_format,
        "params": {
            "temperature": config.temperature,
            "max_tokens": config.max_tokens,
            **config.params,
        },
        "options": {k: v for k, v in config.options.items() if k != "function"} if config.is_fake else {},
    }
    if sample is not None:  # one of k deliberate samples at temperature > 0: each is its own entry
        doc["sample"] = sample
    return json.dumps(doc, sort_keys=True, separators=(",", ":"), ensure_ascii=False, default=str)


class RequestCache:
    """Model replies on disk, keyed by the SHA-256 of the canonical request."""

    def __init__(self, root: str | Path | None = None) -> None:
        self.root = Path(root) if root is not None else default_cache_dir()
        self.hits = 0
        self.misses = 0

    @staticmethod
    def key(canonical: str) -> str:
        return hashlib.sha256(canonical.encode("utf-8")).hexdigest()

    def _path(self, key: str) -> Path:
        return self.root / key[:2] / f"{key}.json"

    def get(self, key: str) -> dict[str, Any] | None:
        p = self._path(key)
        try:
            data = json.loads(p.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            self.misses += 1
            return None
        if data.get("schema_version") != CACHE_SCHEMA_VERSION or data.get("key") != key:
            self.misses += 1
            return None
        self.hits += 1
        return data

    def put(self, key: str, entry: dict[str, Any]) -> None:
        doc = {"schema_version": CACHE_SCHEMA_VERSION, "key": key, **entry}
        atomic_write(self._path(key), json.dumps(redact_obj(doc), sort_keys=True) + "\n", mkdir=True)


# ====================================================================== client

_litellm_lock = threading.Lock()
_litellm_mod: Any = None


def _litellm() -> Any:
    global _litellm_mod
    with _litellm_lock:
        if _litellm_mod is None:
            os.environ["LITELLM_LOCAL_MODEL_COST_MAP"] = "True"
            try:
                import litellm
            except ImportError as err:  # pragma: no cover - depends on the install
                raise ModelCallError("litellm is not installed: pip install 'duplexagent[models]'") from err
            litellm.suppress_debug_info = True
            litellm.telemetry = False
            litellm.drop_params = True
            _litellm_mod = litellm
    return _litellm_mod


@dataclass
class ModelClient:
    """Calls one configured model; see the module docstring for what a call does."""

    config: ModelConfig
    cache: RequestCache | None = None
    budget: Budget | None = None
    purpose: str = "model"
    fake: FakeModel | None = None
    records: list[CallRecord] = field(default_factory=list)

    def __post_init__(self) -> None:
        if self.config.is_fake and self.fake is None:
            self.fake = fake_from_options(self.config.model, self.config.options)

    # ------------------------------------------------------------------ public
    def complete(
        self,
        messages: list[dict[str, Any]],
        *,
        response_format: dict[str, Any] | None = None,
        purpose: str | None = None,
        timeout_s: float | None = None,
        sample: int | None = None,
    ) -> Completion:
        purpose = purpose or self.purpose
        scope, ref = current_scope()
        key = None
        if self.cache is not None:
            key = self.cache.key(canonical_request(self.config, messages, response_format, sample))
            hit = self.cache.get(key)
            if hit is not None:
                rec = CallRecord(
                    model=self.config.model,
                    purpose=purpose,
                    scope=scope,  # type: ignore[arg-type]
                    ref=ref,
                    prompt_tokens=int(hit.get("prompt_tokens", 0)),
                    completion_tokens=int(hit.get("completion_tokens", 0)),
                    cost_usd=0.0,
                    saved_usd=float(hit.get("cost_usd", 0.0)),
                    cached=True,
                )
                self._charge(rec)
                return Completion(
                    text=str(hit.get("text", "")),
                    prompt_tokens=rec.prompt_tokens,
                    completion_tokens=rec.completion_tokens,
                    cached=True,
                    latency_s=float(hit.get("latency_s", 0.0)),
                    record=rec,
                )
        if self.budget is not None:
            self.budget.check(scope, ref)
        timeout = timeout_s or self.config.timeout_s
        try:
            if self.fake is not None:
                text, pt, ct, latency, raw_cost = self._call_fake(messages, response_format, timeout)
            else:
                text, pt, ct, latency, raw_cost = self._call_litellm(messages, response_format, timeout)
        except ModelCallError as err:
            self._charge(
                CallRecord(model=self.config.model, purpose=purpose, scope=scope, ref=ref, ok=False, error=f"{err.kind}: {str(err)[:200]}")  # type: ignore[arg-type]
            )
            raise
        cost = self._cost(pt, ct, raw_cost)
        rec = CallRecord(
            model=self.config.model, purpose=purpose, scope=scope, ref=ref, prompt_tokens=pt, completion_tokens=ct, cost_usd=cost  # type: ignore[arg-type]
        )
        self._charge(rec)
        if self.cache is not None and key is not None:
            self.cache.put(
                key,
                {
                    "model": self.config.model,
                    "text": text,
                    "prompt_tokens": pt,
                    "completion_tokens": ct,
                    "cost_usd": cost,
                    "latency_s": round(latency, 3),
                    "sampling": {
                        "temperature": self.config.temperature,
                        "seed": self.config.params.get("seed"),
                        "n": self.config.params.get("n"),
                        "sample": sample,
                    },
                },
            )
        return Completion(text=text, prompt_tokens=pt, completion_tokens=ct, cost_usd=cost, latency_s=latency, record=rec)

    # ------------------------------------------------------------------ internals
    def _charge(self, rec: CallRecord) -> None:
        self.records.append(rec)
        if self.budget is not None:
            self.budget.charge(rec)

    def _cost(self, pt: int, ct: int, raw_cost: float | None) -> float:
        c = self.config
        if c.input_cost_per_token is not None or c.output_cost_per_token is not None:
            return round(pt * (c.input_cost_per_token or 0.0) + ct * (c.output_cost_per_token or 0.0), 10)
        return round(raw_cost or 0.0, 10)

    def _call_fake(
        self, messages: list[dict[str, Any]], response_format: dict[str, Any] | None, timeout: float
    ) -> tuple[str, int, int, float, float | None]:
        assert self.fake is not None
        req = FakeRequest(model=self.config.model, messages=[dict(m) for m in messages], response_format=response_format, params=dict(self.config.params))
        reply = self.fake.reply(req)
        if reply.delay_s > timeout:
            raise ModelTimeout(f"{self.config.model}: no reply within {timeout:g} s")
        if reply.kind == "http_error":
            raise ModelHTTPError(f"{self.config.model}: HTTP {reply.status}: {reply.body[:200]}", status=reply.status)
        if reply.kind == "raw":
            raise ModelCallError(f"{self.config.model}: malformed response: {reply.body[:200]!r}")
        if reply.kind in ("tool_call", "shell"):
            text = json.dumps({"tool": reply.tool or "shell", "arguments": reply.arguments if reply.arguments is not None else reply.command})
        else:
            text = reply.text
        pt = reply.prompt_tokens if reply.prompt_tokens is not None else estimate_tokens(req.text())
        ct = reply.completion_tokens if reply.completion_tokens is not None else estimate_tokens(text)
        return text, pt, ct, reply.delay_s, None

    def _call_litellm(
        self, messages: list[dict[str, Any]], response_format: dict[str, Any] | None, timeout: float
    ) -> tuple[str, int, int, float, float | None]:
        litellm = _litellm()
        c = self.config
        kwargs: dict[str, Any] = dict(c.params)
        kwargs.update(model=c.model, messages=messages, timeout=timeout, num_retries=c.num_retries, max_retries=c.num_retries)
        if c.api_base:
            kwargs["api_base"] = c.api_base
        key = c.api_key()
        if key:
            kwargs["api_key"] = key
        if c.temperature is not None:
            kwargs["temperature"] = c.temperature
        if c.max_tokens is not None:
            kwargs["max_tokens"] = c.max_tokens
        if response_format is not None:
            kwargs["response_format"] = response_format
        if c.stream:
            kwargs["stream"] = True
            kwargs["stream_options"] = {"include_usage": True}
        stopwatch = WallClock()  # wall latency of a real call, reported; never the engine's clock
        try:
            resp = litellm.completion(**kwargs)
            if c.stream:
                pieces: list[str] = []
                pt = ct = 0
                for chunk in resp:
                    if getattr(chunk, "choices", None):
                        delta = chunk.choices[0].delta
                        if getattr(delta, "content", None):
                            pieces.append(delta.content)
                    usage = getattr(chunk, "usage", None)
                    if usage:
                        pt = int(getattr(usage, "prompt_tokens", 0) or 0)
                        ct = int(getattr(usage, "completion_tokens", 0) or 0)
                text = "".join(pieces)
                raw_cost = None
            else:
                text = resp.choices[0].message.content or ""
                usage = getattr(resp, "usage", None)
                pt = int(getattr(usage, "prompt_tokens", 0) or 0)
                ct = int(getattr(usage, "completion_tokens", 0) or 0)
                raw_cost = None
                if c.input_cost_per_token is None and c.output_cost_per_token is None:
                    try:
                        raw_cost = float(litellm.completion_cost(completion_response=resp) or 0.0)
                    except Exception:  # unmapped model: no price known
                        raw_cost = 0.0
        except ModelCallError:
            raise
        except Exception as err:  # map provider errors to the workbench's three kinds
            raise _map_error(c.model, err, timeout) from None
        return text, pt, ct, stopwatch.now(), raw_cost


def _map_error(model: str, err: Exception, timeout: float) -> ModelCallError:
    name = type(err).__name__
    msg = str(err).replace("\n", " ")[:300]
    if "Timeout" in name or "timed out" in msg.lower():
        return ModelTimeout(f"{model}: no reply within {timeout:g} s")
    if "APIConnectionError" in name or "Connection error" in msg or "Connection refused" in msg:
        return ModelConnectionError(f"{model}: cannot connect: {msg}")
    status = getattr(err, "status_code", None)
    if isinstance(status, int) and status >= 400 and "Expecting" not in msg and "Received response" not in msg:
        return ModelHTTPError(f"{model}: HTTP {status}: {msg}", status=status)
    if "Received response" in msg or "Expecting" in msg or "JSONDecodeError" in msg:
        return ModelCallError(f"{model}: malformed response from the provider: {msg}")
    return ModelCallError(f"{model}: {name}: {msg}", status=status if isinstance(status, int) else None)
