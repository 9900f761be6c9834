"""Campaign configuration: a TOML file validated into pydantic models, with offline defaults.

``CampaignConfig()`` alone is a complete offline campaign (heuristic planner, offline editor,
the default protection set). A config file overrides any part of it; unknown keys are errors.
``load_config`` names the file, the field and the reason on bad input.
"""

from __future__ import annotations

import tomllib
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator, model_validator

from rsi.config_backends import ExecutorConfig, JudgesConfig, check_backends

__all__ = [
    "BudgetConfig",
    "CampaignConfig",
    "ConfigError",
    "EditorConfig",
    "GateConfig",
    "PlannerConfig",
    "SandboxConfig",
    "SplitsConfig",
    "load_config",
    "protection_sets_dir",
    "load_protection_sets",
    "parse_config",
    "CONFIG_SCHEMA_VERSION",
]

CONFIG_SCHEMA_VERSION = 1

Mode = Literal["rsi", "one-shot", "sequential", "best-of-n"]


class ConfigError(ValueError):
    """A campaign config cannot be used; the message names the file, field and reason."""


class _Cfg(BaseModel):
    model_config = ConfigDict(extra="forbid")


class PlannerConfig(_Cfg):
    """Which Exam Planner chooses the next exam."""

    backend: str = Field(default="heuristic", description="Planner backend name (see rsi.registry).")
    model: str | None = Field(default=None, description="For an LLM planner: the model id, 'provider/model'.")
    options: dict[str, Any] = Field(default_factory=dict, description="Backend-specific settings.")


class EditorConfig(_Cfg):
    """Which Harness Editor proposes candidates."""

    backend: str = Field(default="offline", description="Editor backend name: offline, litellm or command (see rsi.registry).")
    model: str | None = Field(default=None, description="For the litellm backend: the model id, 'provider/model'.")
    command: list[str] | None = Field(default=None, description="For the command backend: the argv to run in the worktree.")
    timeout_s: float = Field(default=600.0, gt=0, description="Longest an editor may take for one proposal.")
    options: dict[str, Any] = Field(default_factory=dict, description="Backend-specific settings.")


class SplitsConfig(_Cfg):
    """Conversation sets: the dev split the planner and editor see, exams, and the hidden sets."""

    dev_n: int = Field(default=160, ge=4, le=5000, description="Dev conversations used to diagnose each incumbent.")
    dev_seeds: list[int] = Field(
        default_factory=lambda: [11, 29, 47],
        min_length=1,
        max_length=16,
        description="Seeds for composing the dev diagnosis set: dev_n is shared out over them (more wordings and value combinations than one seed).",
    )
    exam_n: int = Field(default=64, ge=4, le=2000, description="Conversations in one exam (the development gate's set).")
    protection_set: str = Field(
        default="default",
        description="Protection set definition: a name in protection_sets/ or a path to a TOML file with [protection] and [fixed_core].",
    )
    protection_n: int | None = Field(default=None, ge=4, le=5000, description="Override of the protection set size.")
    fixed_core_n: int | None = Field(default=None, ge=4, le=5000, description="Override of the fixed-core size.")

    @model_validator(mode="before")
    @classmethod
    def _one_dev_seed(cls, data: Any) -> Any:
        # ``dev_seed = N`` (the older single-seed form) means ``dev_seeds = [N]``.
        if isinstance(data, dict) and "dev_seed" in data:
            data = dict(data)
            if "dev_seeds" in data:
                raise ValueError("dev_seed: give dev_seed or dev_seeds, not both")
            seed = data.pop("dev_seed")
            data["dev_seeds"] = [seed]
        return data

    @model_validator(mode="after")
    def _dev_split(self) -> "SplitsConfig":
        if len(self.dev_seeds) > self.dev_n:
            raise ValueError("dev_seeds: more seeds than dev_n conversations")
        return self

    def dev_parts(self) -> list[tuple[int, int]]:
        """(seed, conversations) for each part of the dev set: dev_n shared out over dev_seeds."""
        k = len(self.dev_seeds)
        return [(seed, self.dev_n // k + (1 if i < self.dev_n % k else 0)) for i, seed in enumerate(self.dev_seeds)]


class BudgetConfig(_Cfg):
    """Limits of the campaign; it ends at the first one reached."""

    rounds: int = Field(default=24, ge=1, le=1000, description="Most rounds (an exam and its proposals).")
    candidates_per_round: int = Field(default=3, ge=1, le=50, description="Most proposals in one round.")
    candidate_evaluations: int = Field(default=40, ge=1, le=10000, description="Most proposals in the whole campaign.")
    spend_usd: float = Field(
        default=10.0, ge=0, description="Most model spend in USD over the campaign: planning, proposals and evaluations (offline backends spend 0)."
    )
    per_proposal_usd: float | None = Field(
        default=None, ge=0, description="Most model spend of one proposal (the editor's calls); None = unlimited."
    )
    per_evaluation_usd: float | None = Field(
        default=None, ge=0, description="Most model spend of one evaluation (judges and delegates over a set); None = unlimited."
    )

    def limits(self) -> Any:
        """These limits as ``duplexagent.models.BudgetLimits`` (spend_usd is the total)."""
        from duplexagent.models import BudgetLimits

        return BudgetLimits(total_usd=self.spend_usd, per_proposal_usd=self.per_proposal_usd, per_evaluation_usd=self.per_evaluation_usd)


class GateConfig(_Cfg):
    """When a candidate is kept."""

    margin: int = Field(default=2, ge=0, description="Development gate: fixed - broken must be at least this.")
    test: Literal["sign", "mcnemar"] = Field(
        default="sign", description="Development gate's one-sided paired test: exact sign test or mid-p McNemar."
    )
    alpha: float = Field(default=0.05, gt=0, lt=1, description="Significance level of the paired test.")
    require_target_repair: bool = Field(default=True, description="The target cause must occur less often on the exam.")
    extend_n: int = Field(
        default=64,
        ge=0,
        le=2000,
        description=(
            "Development gate, second look: a candidate that fixed more than it broke (and reduced its target) but missed "
            "the test is played with the incumbent on this many more conversations of the exam's cells, and the whole "
            "exam is tested again at alpha / 2 (0 = one look only)."
        ),
    )
    screen_n: int = Field(
        default=16,
        ge=0,
        le=2000,
        description=(
            "Development gate, early look: a candidate first plays this many of the exam's conversations (the "
            "incumbent's failures of the target cause first, then conversations it passed) and is rejected there "
            "when it lost screen_breaks or more net, or repaired none of the target failures the screen held; "
            "otherwise it plays the rest of the exam and the full gate decides (0 = off; used when the exam holds "
            "at least twice as many conversations)."
        ),
    )
    screen_breaks: int = Field(
        default=3,
        ge=1,
        le=1000,
        description="Development gate, early look: broken - fixed on the screen at which a candidate is rejected early.",
    )
    protection_regressions: int = Field(
        default=0,
        ge=0,
        le=1000,
        description=(
            "Protection gate, paired: most conversations the candidate may lose net (broken - fixed on the same "
            "protection conversations) against the incumbent, and against the best retained version so far "
            "(0 = protection Q never lower)."
        ),
    )
    protection_alpha: float = Field(
        default=0.05,
        gt=0,
        lt=1,
        description="Protection gate: a regression significant at this level (one-sided sign test, broken vs fixed) rejects, whatever the count.",
    )
    protection_tolerance: float | None = Field(
        default=None, ge=0, le=100, description="Optional further limit: largest allowed drop of protection Q in points (None = the paired rule alone)."
    )


class SandboxConfig(_Cfg):
    """Where and under which limits a candidate's module code runs: a jailed module host process."""

    jail: Literal["bwrap", "rlimits"] = Field(
        default="bwrap",
        description=(
            "bwrap: module hosts run in a bubblewrap jail (no network, own pid namespace, read-only root with only "
            "the candidate's module files and a private tmp). rlimits: the same host and limits without namespaces; "
            "needed to evaluate command or litellm editor candidates where bubblewrap cannot create namespaces."
        ),
    )
    contract_timeout_s: float = Field(default=20.0, gt=0, le=600, description="Time limit of a host's start-up, module import and the contract check.")
    eval_timeout_s: float = Field(
        default=60.0, gt=0, le=3600, description="Base time limit of one evaluation; 0.25 s per conversation is added."
    )
    memory_mb: int = Field(default=2048, ge=256, le=65536, description="Address-space limit of a module host (RLIMIT_AS).")
    cpu_s: int = Field(default=300, ge=1, le=86400, description="CPU seconds a module host may use over its life (RLIMIT_CPU).")
    processes: int = Field(default=64, ge=1, le=4096, description="Processes of the unprivileged host user (RLIMIT_NPROC).")
    file_mb: int = Field(default=16, ge=1, le=4096, description="Largest file a module host may write (RLIMIT_FSIZE).")
    hook_timeout_s: float = Field(default=1.0, gt=0, le=60, description="Deadline of one hook call; a late hook is a recorded no-op.")
    late_hooks: int = Field(default=3, ge=1, le=1000, description="Late hook calls after which the candidate is rejected.")
    static_rules: bool = Field(
        default=True,
        description=(
            "Before the smoke conversations, run duplexagent check's static rules on the candidate's files (imports, no clock, "
            "randomness or I/O, a range on every numeric parameter); nothing runs for a candidate that breaks one. Off only "
            "to exercise the jail behind them: the jail, not a file scan, is what contains hostile code."
        ),
    )

    def limits(self) -> Any:
        """These limits as ``duplexagent.isolation.HostLimits``."""
        from duplexagent.isolation import HostLimits

        return HostLimits(
            mode=self.jail,
            memory_mb=self.memory_mb,
            cpu_s=self.cpu_s,
            processes=self.processes,
            file_mb=self.file_mb,
            hook_timeout_s=self.hook_timeout_s,
            load_timeout_s=self.contract_timeout_s,
            late_limit=self.late_hooks,
        )


class CampaignConfig(_Cfg):
    """A whole campaign. Defaults give a complete offline campaign."""

    schema_version: Literal[1] = Field(default=1, description="Config format version.")
    mode: Mode = Field(
        default="rsi",
        description=(
            "rsi (diagnosis + planner + archive), one-shot (one edit from all failures), sequential (edits without diagnosis "
            "or archive) or best-of-n (N = budget.candidate_evaluations independent undiagnosed edits of g0, the best by the "
            "development gate kept)."
        ),
    )
    seed: int = Field(default=7, description="Root seed; every other seed is derived from it.")
    workers: int = Field(default=2, ge=1, le=256, description="Processes for evaluation.")
    planner: PlannerConfig = Field(default_factory=PlannerConfig, description="Exam Planner.")
    editor: EditorConfig = Field(default_factory=EditorConfig, description="Harness Editor.")
    splits: SplitsConfig = Field(default_factory=SplitsConfig, description="Conversation sets.")
    budget: BudgetConfig = Field(default_factory=BudgetConfig, description="Budgets.")
    gates: GateConfig = Field(default_factory=GateConfig, description="Gate settings.")
    sandbox: SandboxConfig = Field(default_factory=SandboxConfig, description="Module host jail and limits (``sandbox = \"rlimits\"`` is short for ``[sandbox] jail = \"rlimits\"``).")
    modules: str | None = Field(default=None, description="g0 harness directory (default: the shipped modules/).")
    judges: JudgesConfig = Field(default_factory=JudgesConfig, description="LLM judges in every evaluation (rsi.config_backends).")
    executor: ExecutorConfig = Field(default_factory=ExecutorConfig, description="Where evaluations run: processes or dask.")

    @field_validator("sandbox", mode="before")
    @classmethod
    def _sandbox_short(cls, v: Any) -> Any:
        return {"jail": v} if isinstance(v, str) else v

    @field_validator("modules")
    @classmethod
    def _modules(cls, v: str | None) -> str | None:
        if v is not None and not v.strip():
            raise ValueError("must be a directory path")
        return v

    @model_validator(mode="after")
    def _budget(self) -> "CampaignConfig":
        if self.budget.candidates_per_round > self.budget.candidate_evaluations:
            raise ValueError("budget.candidates_per_round: larger than budget.candidate_evaluations")
        return self


def protection_sets_dir() -> Path:
    """The protection set definitions shipped with the project."""
    return Path(__file__).resolve().parent.parent / "protection_sets"


def _loc(loc: tuple[Any, ...]) -> str:
    out = ""
    for part in loc:
        out += f"[{part}]" if isinstance(part, int) else ("." if out else "") + str(part)
    return out or "<root>"


def parse_config(data: Any, source: str | Path = "<config>") -> CampaignConfig:
    """Validate parsed TOML data; raises ConfigError naming source, field and reason."""
    if not isinstance(data, dict):
        raise ConfigError(f"{source}: <root>: expected a table")
    version = data.get("schema_version", CONFIG_SCHEMA_VERSION)
    if isinstance(version, int) and version > CONFIG_SCHEMA_VERSION:
        raise ConfigError(f"{source}: schema_version: {version} is newer than supported {CONFIG_SCHEMA_VERSION}")
    try:
        return CampaignConfig.model_validate(data)
    except ValidationError as err:
        first = err.errors()[0]
        msg = first["msg"].removeprefix("Value error, ")
        loc = _loc(tuple(first["loc"]))
        if ": " in msg and msg.split(": ", 1)[0].replace(".", "").replace("_", "").isalnum():
            head, msg = msg.split(": ", 1)
            loc = head if loc == "<root>" else f"{loc}.{head}"
        if first["type"] == "extra_forbidden":
            msg = "unknown field"
        raise ConfigError(f"{source}: {loc}: {msg}") from None


def load_config(path: str | Path | None) -> CampaignConfig:
    """Read a campaign config file; None gives the offline defaults."""
    if path is None:
        return CampaignConfig()
    p = Path(path)
    try:
        raw = p.read_text(encoding="utf-8")
    except OSError as err:
        raise ConfigError(f"{p}: <file>: cannot read: {err.strerror}") from None
    try:
        data = tomllib.loads(raw)
    except tomllib.TOMLDecodeError as err:
        raise ConfigError(f"{p}: <file>: not valid TOML: {err}") from None
    cfg = parse_config(data, p)
    try:  # each backend's options against its model, and its program on PATH (rsi.config_backends)
        check_backends(cfg)
    except ValueError as err:
        raise ConfigError(f"{p}: {err}") from None
    return cfg


def load_protection_sets(name_or_path: str) -> tuple[Path, dict[str, Any]]:
    """Resolve ``splits.protection_set`` (a name in protection_sets/ or a path) and read its sets.

    Returns the file and its set definitions (``simulator.compose.SetDefinition``); the file must
    define ``protection`` and ``fixed_core``.
    """
    from simulator.compose import ComposeError, load_set_definitions

    p = Path(name_or_path)
    if not p.suffix:
        p = protection_sets_dir() / f"{name_or_path}.toml"
    try:
        sets = load_set_definitions(p)
    except ComposeError as err:
        raise ConfigError(str(err)) from None
    for name, split in (("protection", "protection"), ("fixed_core", "fixed_core")):
        if name not in sets:
            raise ConfigError(f"{p}: {name}: missing table (a protection set file needs [protection] and [fixed_core])")
        if sets[name].split != split:
            raise ConfigError(f"{p}: {name}.split: must be {split!r}, got {sets[name].split!r}")
    return p, sets
