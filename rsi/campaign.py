"""The improvement campaign (rsi/README.md, docs/campaign_config.md): planner -> exam -> editor in a worktree -> checks -> gates -> archive.

A campaign directory holds::

    header.json     written first: schema_version, the resolved config, the protection set file,
                    the interaction model's gate setting (interaction_gate)
                    (rewritten only when ``resume`` raises a budget; ``budget_changes`` lists those)
    state.json      running | stopped | done, the current round, a spend summary (replaced atomically)
    spend.json      the spend ledger (duplexagent.models.Spend): planning, per proposal, per
                    evaluation, kept apart; saved after every model call
    archive.jsonl   the repair archive (rsi.archive): the g0 baseline, one planning record per
                    round and one record per proposal
    harness/        the harness repository (rsi.repo): g0, g1, … tags; the working tree is the incumbent
    worktrees/      one git worktree per candidate while it is being checked
    STOP            create it to stop cleanly after the current step

Everything a round does is a function of the archive records before it, the incumbent and seeds
derived from (root seed, round, candidate index). That is what makes ``resume`` exact: the next
(round, candidate) is read off the archive, a candidate whose record was not written is redone
from scratch, and the same retained versions come out as in an uninterrupted run.

Spend goes through ``duplexagent.models``: the planner's calls are charged to the campaign scope
(ref ``plan-r<round>``), the editor's to the proposal scope (ref ``r<round>c<candidate>``), model
calls while evaluating to the evaluation scope (ref e.g. ``r01c0:exam``). ``budget.spend_usd`` is
the total limit, ``per_proposal_usd`` and ``per_evaluation_usd`` the others. A call that would start
past the total raises ``BudgetExhausted`` before anything is spent; the campaign then stops
(``stopped``, the reason names the limit) with every record already written, and ``resume`` with a
higher limit continues (a resumed round reuses its recorded exam; a redone proposal's earlier
calls come from the request cache). A proposal past its own limit is rejected and the campaign goes on.

Modes: ``rsi`` (diagnosis, planner, archive), ``one-shot`` (one round, an edit from all failures
without diagnosis), ``sequential`` (rounds of edits without diagnosis or archive memory) and
``best-of-n`` (one round of N = ``budget.candidate_evaluations`` candidates drawn independently
from g0 without diagnosis, each a one-shot style edit judged by the development gate on the same
exam; only the best goes on to the protection gate); all use the same budget and the same gates
(rsi.gates: the paired development gate with its early look on a screen of ``gates.screen_n``
exam conversations, where a plainly hopeless candidate stops before the rest of the exam, and its
second look at a promising candidate on ``gates.extend_n`` more conversations of the exam's cells,
and the paired protection gate).

A candidate's stages are plain functions in rsi.campaign_stages (surface, contract, dev, protection,
retain), called in order by ``Campaign._propose``; progress goes to the observer as the typed events
of rsi.campaign_events, all through ``Campaign._emit``. header.json and state.json are read through
their migration chains (``read_header``, ``read_state``; simulator.migrate).
"""

from __future__ import annotations

import hashlib
import dataclasses
import json
import os
import time
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path
from typing import Any, Callable, Literal

from pydantic import BaseModel, ConfigDict, Field

from duplexagent.interaction import gate_setting
from duplexagent.loader import default_modules_dir
from duplexagent.models import Bucket, Budget, BudgetExhausted, BudgetLimits, CallRecord, ModelClient, Spend, redact, spend_scope
from duplexagent.runner import RunResult
from rsi import _sandbox
from rsi.archive import (
    Archive,
    BaselineRecord,
    Costs,
    DevGate,
    EditorInfo,
    ModelCost,
    PlanningRecord,
    ProposalRecord,
    ProtectionGate,
    StageResult,
    Timings,
    digest,
    planning_id,
)
from rsi.campaign_models import CampaignModels, uses_judges
from rsi.campaign_events import (
    BaselineStarted,
    CampaignEvent,
    CandidateStarted,
    ChecksPassed,
    DevGateDecided,
    Event,
    Finished,
    Planned,
    ProtectionGateDecided,
    Recovered,
    Rejected,
    VersionScored,
    Warned,
)
from rsi.campaign_stages import (
    CandidateRun,
    DevInputs,
    Outcome,
    cause_count,
    contract_stage,
    dev_stage,
    protection_stage,
    retain_stage,
    surface_stage,
)
from rsi.checks_candidate import load_manifest
from rsi.config import BudgetConfig, CampaignConfig, ConfigError, load_protection_sets, parse_config, protection_sets_dir
from rsi.interfaces import EditBrief, EditResult, Exam, FailureExample, PlannerInput, TurnEvidence
from rsi.planner import plan_with_instances
from rsi.registry import make_editor, make_planner
from rsi.repo import HarnessRepo
from simulator.atomic import write_json_atomic
from simulator.migrate import MigrationError, Migrations
from simulator.scenario import Scenario

__all__ = [
    "Campaign",
    "best_candidate",
    "CampaignError",
    "CampaignState",
    "Event",
    "SpendSummary",
    "derive_seed",
    "read_header",
    "read_state",
    "spend_document",
    "status",
]

HEADER_SCHEMA_VERSION = 1
STATE_SCHEMA_VERSION = 1
HEADER_MIGRATIONS = Migrations("campaign_header", HEADER_SCHEMA_VERSION, register=False)
"""Upgrades of older header.json files, one step per version (not registered in
simulator.migrate.FORMATS: a header names machine paths, so it has no frozen golden file)."""
STATE_MIGRATIONS = Migrations("campaign_state", STATE_SCHEMA_VERSION)
"""Upgrades of older state.json files, one step per version (golden files: tests/golden/campaign_state/)."""
EXAM_FOCUS = 0.85
MAX_HANDLED = 1200  # dev turns handled right given to the editor as the contrast for induction
MAX_CONTRAST = 8000  # every dev turn of the round's sets and of CONTRAST_N more, passed or not: induction's contrast
CONTRAST_N = 480  # dev conversations composed once per campaign (never played) for that contrast
STOP_FILE = "STOP"
SPEND_FILE = "spend.json"


AHEAD_DIR = "ahead"
"""In the campaign directory: a copy of the candidate whose dev run was sent ahead (Campaign._dev_ahead)."""


class CampaignError(RuntimeError):
    """A campaign cannot start or continue; the message says which file or step and why."""


def derive_seed(root: int, *parts: Any) -> int:
    """A child seed from the root seed and a path of parts (round, candidate index, purpose)."""
    h = hashlib.sha256(":".join(str(p) for p in (root, *parts)).encode("utf-8")).digest()
    return int.from_bytes(h[:4], "big") & 0x7FFFFFFF


def _write_json(path: Path, data: Any) -> None:
    write_json_atomic(path, data, fsync=True)


class SpendSummary(BaseModel):
    """Model spend of a campaign so far, per kind (the full ledger is spend.json)."""

    model_config = ConfigDict(extra="forbid")

    total_usd: float = Field(default=0.0, description="Everything: planning + proposals + evaluations.")
    planning_usd: float = Field(default=0.0, description="The planner's calls (campaign scope).")
    proposals_usd: float = Field(default=0.0, description="The editor's calls (proposal scope).")
    evaluations_usd: float = Field(default=0.0, description="Model calls while evaluating (evaluation scope).")
    tokens: int = Field(default=0, description="Model tokens, input + output, over all scopes.")
    limit_usd: float | None = Field(default=None, description="budget.spend_usd when this was written.")


class CampaignState(BaseModel):
    """state.json: where the campaign is."""

    model_config = ConfigDict(extra="forbid")

    schema_version: Literal[1] = Field(default=STATE_SCHEMA_VERSION, description="Format version.")
    state: Literal["running", "stopped", "done"] = Field(
        description="running, stopped (STOP file, kill, error or the spend budget; resumable) or done."
    )
    round: int = Field(default=0, description="Round in progress or last finished.")
    pid: int | None = Field(default=None, description="Process running the campaign, while running.")
    reason: str = Field(default="", description="Why the campaign stopped or finished.")
    spend: SpendSummary | None = Field(default=None, description="Model spend when the state was written.")


def read_header(path: Path) -> dict[str, Any]:
    """header.json at ``path``, an older version upgraded step by step (HEADER_MIGRATIONS)."""
    try:
        header = json.loads(path.read_text(encoding="utf-8"))
    except OSError:
        raise CampaignError(f"{path}: <file>: not a campaign directory (no header.json)") from None
    except json.JSONDecodeError as err:
        raise CampaignError(f"{path}: <file>: not valid JSON: {err.msg}") from None
    version = header.get("schema_version") if isinstance(header, dict) else None
    if not isinstance(version, int) or version > HEADER_SCHEMA_VERSION:
        raise CampaignError(f"{path}: schema_version: {version!r} is not supported (max {HEADER_SCHEMA_VERSION})")
    try:
        return HEADER_MIGRATIONS.upgrade(header, version, str(path))
    except MigrationError as err:
        raise CampaignError(str(err)) from None


def read_state(path: Path) -> CampaignState:
    """state.json at ``path``, an older version upgraded step by step (STATE_MIGRATIONS). Raises
    OSError or ValueError (not JSON, a bad field, no upgrade) and CampaignError for a newer version."""
    doc = json.loads(path.read_text(encoding="utf-8"))
    version = doc.get("schema_version") if isinstance(doc, dict) else None
    if isinstance(version, int) and not isinstance(version, bool) and version > STATE_SCHEMA_VERSION:
        raise CampaignError(f"{path}: schema_version: {version} is newer than supported {STATE_SCHEMA_VERSION}")
    return CampaignState.model_validate(STATE_MIGRATIONS.upgrade(doc, version, str(path)))


class _Ledger(Budget):
    """The campaign's Budget, saved to spend.json after every charge (a kill loses no paid call)."""

    def charge(self, record: CallRecord) -> None:
        super().charge(record)
        self.save()

    def touch(self, scope: str, ref: str) -> None:
        """Make ``scope``/``ref`` visible in the ledger even if it never spends (an offline
        evaluation); saved with the next charge or ``flush`` (before every archive record), not
        rewritten for each evaluation."""
        with self._lock:
            self.spend.bucket(scope, ref)
            self._unsaved = True

    def save(self, path: str | Path | None = None) -> None:
        self._unsaved = False
        super().save(path)

    def flush(self) -> None:
        """Save what ``touch`` added since the last save."""
        if getattr(self, "_unsaved", False):
            self.save()


def _fig(buckets: list[Bucket]) -> dict[str, Any]:
    pt = sum(b.prompt_tokens for b in buckets)
    ct = sum(b.completion_tokens for b in buckets)
    return {
        "usd": round(sum(b.cost_usd for b in buckets), 6),
        "tokens": pt + ct,
        "prompt_tokens": pt,
        "completion_tokens": ct,
        "calls": sum(b.calls for b in buckets),
        "cached_calls": sum(b.cached_calls for b in buckets),
        "failed_calls": sum(b.failed_calls for b in buckets),
        "saved_usd": round(sum(b.saved_usd for b in buckets), 6),
        "cache_hits": sum(b.cached_calls for b in buckets),
        "cache_misses": sum(b.calls - b.cached_calls for b in buckets),
    }


def spend_document(spend: Spend, limits: BudgetLimits) -> dict[str, Any]:
    """The ``spend`` object of ``campaign status --json``: total, planning, proposals, evaluations."""
    props = list(spend.proposals.values())
    evals = list(spend.evaluations.values())
    total = _fig([spend.campaign, *props, *evals])
    return {
        "total": total,
        "planning": _fig([spend.campaign]),
        "proposals": {**_fig(props), "count": len(props)},
        "evaluations": {**_fig(evals), "count": len(evals)},
        "limits": limits.model_dump(mode="json"),
        "remaining_usd": None if limits.total_usd is None else round(max(0.0, limits.total_usd - total["usd"]), 6),
    }


def _summary(spend: Spend, limits: BudgetLimits) -> SpendSummary:
    doc = spend_document(spend, limits)
    return SpendSummary(
        total_usd=doc["total"]["usd"],
        planning_usd=doc["planning"]["usd"],
        proposals_usd=doc["proposals"]["usd"],
        evaluations_usd=doc["evaluations"]["usd"],
        tokens=doc["total"]["tokens"],
        limit_usd=limits.total_usd,
    )


def _load_spend(directory: Path) -> Spend:
    path = directory / SPEND_FILE
    if not path.exists():
        return Spend()
    try:
        return Spend.model_validate_json(path.read_text(encoding="utf-8"))
    except ValueError as err:
        raise CampaignError(f"{path}: <file>: not a spend ledger: {str(err).splitlines()[0]}") from None


_LIMIT_FIELD = {"campaign": "budget.spend_usd", "proposal": "budget.per_proposal_usd", "evaluation": "budget.per_evaluation_usd"}


def _budget_reason(err: BudgetExhausted) -> str:
    return f"{err} ({_LIMIT_FIELD.get(err.scope, 'budget')}); raise it and 'campaign resume' to continue"


@dataclass
class _Eval:
    result: RunResult
    diagnosis: Any | None = None
    tapes: _sandbox.Tapes | None = None  # its recorded hook calls: the reference of a later run (rsi._sandbox)

    @property
    def q(self) -> float:
        return self.result.score.q


@dataclass
class _Round:
    number: int
    exam: Exam
    scenarios: list[Scenario]
    incumbent_exam: _Eval
    target_module: str | None
    target_cause: str | None
    diagnosis_text: str
    failures: list[FailureExample]
    target_before: int | None
    handled: list[TurnEvidence] = field(default_factory=list)
    contrast: list[TurnEvidence] = field(default_factory=list)
    failing_turns: list[TurnEvidence] = field(default_factory=list)
    incumbent: str = "g0"
    extension: tuple[list[Scenario], "_Eval"] | None = None  # the second look's conversations, incumbent's run
    screen: list[str] | None = None  # the early look's conversation ids (rsi.gates.screen_verdict); None = not made yet
    screen_target: int | None = None  # the incumbent's target-cause failures among them


def _model_cost(b: Bucket) -> ModelCost:
    return ModelCost(
        usd=round(b.cost_usd, 10),
        prompt_tokens=b.prompt_tokens,
        completion_tokens=b.completion_tokens,
        calls=b.calls,
        cached_calls=b.cached_calls,
        failed_calls=b.failed_calls,
        saved_usd=round(b.saved_usd, 10),
    )


def best_candidate(records: list[ProposalRecord]) -> ProposalRecord | None:
    """Best-of-n's choice: among the candidates that passed the development gate, the largest fixed -
    broken; ties go to fewer broken, then to the earlier draw. None when none passed."""
    passed = [r for r in records if r.dev is not None and r.dev.passed]
    if not passed:
        return None
    return max(passed, key=lambda r: (r.dev.fixed - r.dev.broken, -r.dev.broken, -r.candidate))  # type: ignore[union-attr]


_DIAGNOSED_MAX = 4096


def _diagnosis_key(sc: Scenario, trace: str) -> tuple[int, str]:
    """What a failed conversation's diagnosis is a function of: the scenario (the very object, kept
    in the value) and its trace after the header line, whose only field that differs between two
    harnesses playing alike is the harness label; nothing in diagnosis or scoring reads it."""
    return id(sc), trace.partition("\n")[2]


def _parse_events(text: str) -> list[Any]:
    from rsi.diagnose import parse_trace_text

    return parse_trace_text(text)  # one pydantic JSON parse per trace, unchanged traces not re-parsed


class Campaign:
    """One campaign directory; ``run()`` works until done, stopped or out of budget."""

    def __init__(self, directory: str | Path, config: CampaignConfig, observer: Callable[[CampaignEvent], None] | None = None) -> None:
        self.dir = Path(directory)
        self.config = config
        self.observer = observer or (lambda ev: None)
        self.archive = Archive(self.dir)
        self._evals: dict[tuple[str, str], _Eval] = {}
        self._sets: dict[str, list[Scenario]] = {}
        self._contrast: list[TurnEvidence] | None = None  # induction contrast turns (_contrast_turns)
        self._exam_runs: dict[str, Any] = {}
        self._exam_tapes: dict[str, _sandbox.Tapes | None] = {}
        self._recorded: _sandbox.Tapes | None = None  # the last recorded evaluation's calls (_evaluate)
        self._diagnosed: dict[tuple[int, str], Any] = {}  # failed conversations diagnosed: (scenario, diagnosis, events) (_diagnose)
        self.repo: HarnessRepo | None = None
        self.budget: _Ledger | None = None
        self.models: CampaignModels | None = None  # cache, judge service, executor (rsi.campaign_models)

    # ================================================================== opening
    @classmethod
    def create(cls, directory: str | Path, config: CampaignConfig, observer: Callable[[CampaignEvent], None] | None = None) -> "Campaign":
        """A new campaign directory (header first); an existing one with the same config is resumed."""
        d = Path(directory)
        if (d / "header.json").exists():
            existing = cls.open(d, observer)
            existing.update_budget(config)
            return existing
        if d.exists() and any(p.name != "cache" for p in d.iterdir()):  # a kept response cache alone may be reused
            raise CampaignError(f"{d}: exists and is not a campaign directory")
        try:  # before anything is written: a bad gate setting or gate file fails here
            gate = gate_setting()
        except ValueError as err:
            raise CampaignError(str(err)) from None
        d.mkdir(parents=True, exist_ok=True)
        prot_path, _ = load_protection_sets(config.splits.protection_set)
        modules = Path(config.modules) if config.modules else default_modules_dir()
        if not (modules / "MANIFEST.toml").exists():
            raise CampaignError(f"{modules}: no MANIFEST.toml (not a harness directory)")
        _write_json(
            d / "header.json",
            {
                "schema_version": HEADER_SCHEMA_VERSION,
                "kind": "campaign",
                "config": config.model_dump(mode="json"),
                "seed": config.seed,
                "protection_set": str(prot_path),
                "modules": str(modules),
                "sandbox": _sandbox.jail_record(config.sandbox.jail),
                "interaction_gate": gate,
            },
        )
        camp = cls(d, config, observer)
        camp._set_state("running", 0, "created")
        HarnessRepo.create(d / "harness", d / "worktrees", modules)
        return camp

    @classmethod
    def open(cls, directory: str | Path, observer: Callable[[CampaignEvent], None] | None = None) -> "Campaign":
        d = Path(directory)
        path = d / "header.json"
        header = read_header(path)
        try:
            config = parse_config(header.get("config", {}), f"{path} config")
        except ConfigError as err:
            raise CampaignError(str(err)) from None
        return cls(d, config, observer)

    # ================================================================== state
    def _set_state(self, state: str, rnd: int, reason: str = "") -> CampaignState:
        spend = _summary(self.budget.spend if self.budget is not None else _load_spend(self.dir), self.config.budget.limits())
        st = CampaignState(state=state, round=rnd, pid=os.getpid() if state == "running" else None, reason=redact(reason), spend=spend)  # type: ignore[arg-type]
        _write_json(self.dir / "state.json", st.model_dump(mode="json"))
        return st

    def _emit(self, event: CampaignEvent) -> None:
        """The one dispatch point of progress events: redacted, then to the observer."""
        self.observer(dataclasses.replace(event, text=redact(event.text)))

    # ================================================================== budget
    def update_budget(self, config: CampaignConfig) -> bool:
        """Take ``config``'s [budget] (e.g. a raised spend limit) for this campaign; every other field
        must equal the campaign's. Rewrites header.json and notes the change; True when it changed."""
        mine = self.config.model_dump(mode="json")
        theirs = config.model_dump(mode="json")
        differ = [k for k in sorted(set(mine) | set(theirs)) if k != "budget" and mine.get(k) != theirs.get(k)]
        if differ:
            raise CampaignError(
                f"{self.dir}: already holds a campaign with a different config ({', '.join(differ)} "
                f"differ{'s' if len(differ) == 1 else ''}; only [budget] may change on resume)"
            )
        if mine["budget"] == theirs["budget"]:
            return False
        path = self.dir / "header.json"
        header = read_header(path)
        changes = header.setdefault("budget_changes", [])
        changes.append({"after_proposals": len(self.archive.proposals()), "from": mine["budget"], "to": theirs["budget"]})
        header["config"] = theirs
        _write_json(path, header)
        self.config = config
        return True

    def set_budget(self, **changes: Any) -> bool:
        """Change [budget] fields (``spend_usd=5.0``); validated like a config file."""
        data = self.config.model_dump(mode="json")
        data["budget"].update(changes)
        return self.update_budget(parse_config(data, "budget override"))

    def _open_budget(self) -> _Ledger:
        return _Ledger(self.config.budget.limits(), _load_spend(self.dir), path=self.dir / SPEND_FILE)

    def _attach(self, backend: Any) -> None:
        """Charge a backend's model client to the campaign's ledger and give it the campaign's cache."""
        assert self.models is not None
        self.models.attach(backend)

    def stop_requested(self) -> bool:
        return (self.dir / STOP_FILE).exists()

    # ================================================================== conversation sets
    def _set(self, name: str) -> list[Scenario]:
        if name in self._sets:
            return self._sets[name]
        from simulator.compose import compose

        cfg = self.config.splits
        if name == "dev":
            out = []
            for dev_seed, n in cfg.dev_parts():
                out += compose("dev", n, dev_seed)
            seen: set[str] = set()
            for i, sc in enumerate(out):
                if sc.id in seen:
                    out[i] = sc = sc.model_copy(update={"id": f"{sc.id}-x{i}"})
                seen.add(sc.id)
        else:
            _, sets = load_protection_sets(cfg.protection_set)
            d = sets[name]
            n = cfg.protection_n if name == "protection" and cfg.protection_n else cfg.fixed_core_n if name == "fixed_core" and cfg.fixed_core_n else d.n
            out = compose(d.split, n, d.seed, patterns=d.patterns, request_types=d.request_types)
        self._sets[name] = out
        return out

    def _exam_scenarios(self, exam: Exam) -> list[Scenario]:
        from simulator.compose import compose

        if exam.target_cause is None or not exam.cells:
            out = compose("dev", exam.n, exam.seed)
        else:
            # Most of the exam on the target cause's cells, so a real repair can win the paired
            # test (a one-sided sign test at 0.05 needs about 5 fixed and 0 broken); the rest is a
            # general sample that catches what the repair breaks elsewhere.
            focus = max(1, round(exam.n * EXAM_FOCUS))
            out = compose("dev", focus, exam.seed, cells=[list(c) for c in exam.cells])
            out += compose("dev", exam.n - focus, derive_seed(exam.seed, "general"))
        seen: set[str] = set()
        unique = []
        for i, sc in enumerate(out):
            if sc.id in seen:
                sc = sc.model_copy(update={"id": f"{sc.id}-x{i}"})
            seen.add(sc.id)
            unique.append(sc)
        return unique

    # ================================================================== evaluation (sandboxed)
    def _jail_mode(self) -> str:
        return getattr(self, "_jail", None) or _sandbox.jail_mode(self.config.sandbox.jail)[0]

    def _pooled(self, root: Path) -> bool:
        """Whether the harness at ``root`` is evaluated by the evaluation workers (``_evaluator``)."""
        assert self.models is not None
        return self.config.workers > 1 and not self.models.remote and not uses_judges(self.config, root)

    def _evaluator(self, root: Path) -> _sandbox.Evaluator:
        """Module hosts (jailed, pre-imported) for the harness at ``root``; the caller closes them.

        A judged harness plays here against one host (the judges' ledger and budget are this
        process's); so does a Dask campaign's contract check (its evaluations run on the workers).
        Otherwise, with workers > 1, trusted evaluation workers each play against their own host."""
        if self._pooled(root):
            return _sandbox.PooledEvaluator(root, self.config.sandbox, workers=self.config.workers, mode=self._jail_mode())
        return _sandbox.Evaluator(root, self.config.sandbox, workers=1, mode=self._jail_mode())

    def _evaluate(
        self,
        root: Path,
        scenarios: list[Scenario],
        eval_id: str,
        evaluator: _sandbox.Evaluator | None = None,
        *,
        reference: _sandbox.Tapes | None = None,
        record: bool = False,
    ) -> tuple[RunResult | None, str]:
        """Play ``scenarios`` on the harness at ``root`` as evaluation ``eval_id``: this process plays
        and grades, the module code runs in ``evaluator``'s jailed hosts (a pool started and closed
        here when None), or, with ``executor = "dask"``, trusted code on the Dask workers plays each
        chunk against jailed hosts of its own. A host that fails gives (None, reason), never an exception.

        The hosts have no API keys: a judged hook's LLM call is made by the trusted side (this
        process, through rsi.campaign_models) and charged to the evaluation; the ledger lists
        every evaluation, an offline one with spend 0.

        ``reference``: another version's recorded run on (some of) these conversations; one on
        which this harness answers every hook call as that version did is taken from it, the same
        score and trace bytes (rsi._sandbox.Tapes; judged and remote runs play everything).
        ``record``: this run's calls go to ``self._recorded`` (a reference for a later run)."""
        assert self.models is not None and self.budget is not None
        if getattr(self, "_ahead_dev", None) is not None and evaluator is not self._ahead_dev[3]:
            # Anything else sent to the workers while they play (and answer) the run sent ahead could
            # fill both ends of a pipe: that run is called off first (played again when asked for).
            self._drop_dev_ahead()
        self._recorded = None
        self.budget.touch("evaluation", eval_id)
        self.budget.reset_trip()
        if self.models.remote:
            result, why = self.models.evaluate_remote(root, scenarios, eval_id, self._jail_mode())
        else:
            backends = self.models.judges(root, eval_id)  # LLM judges: called by this process
            ev = evaluator if evaluator is not None else self._evaluator(root)
            try:
                if backends is not None:
                    result, why = ev.evaluate(scenarios, backends)
                else:
                    if self.config.mode == "rsi" and isinstance(ev, _sandbox.PooledEvaluator) and not eval_id.endswith((":protection", ":fixed_core")):
                        ev.on_rows = self._prediagnose  # (this run is diagnosed: begin while a worker still plays)
                    try:
                        result, why = ev.evaluate(scenarios, reference=reference, record=record)
                    finally:
                        if isinstance(ev, _sandbox.PooledEvaluator):
                            ev.on_rows = None
                    self._recorded = ev.recorded if record else None
            finally:
                if evaluator is None:
                    ev.close()
        tripped, self.budget.tripped = self.budget.tripped, None
        if tripped is not None and tripped.scope == "campaign":
            raise tripped  # the total: stop the campaign (resume continues)
        if tripped is not None:  # a judge refused by per_evaluation_usd: this evaluation is not usable
            return None, f"{tripped} (budget.per_evaluation_usd)"
        return (result, "") if result is not None else (None, f"evaluation failed: {why}")

    def _diagnose(self, scenarios: list[Scenario], result: RunResult) -> Any:
        from rsi.diagnose import diagnose_run

        # A passed conversation has no cause and its trace is never read (rsi.diagnose returns
        # before looking at the events): only failed conversations' traces are parsed.
        passed = {c.id for c in result.score.conversations if c.passed}
        pairs = []
        known: dict[str, Any] = {}
        for sc in scenarios:
            if sc.id in passed:
                pairs.append((sc, []))
                continue
            hit = self._diagnosed.get(_diagnosis_key(sc, result.traces.get(sc.id, "")))
            if hit is not None and hit[0] is sc:
                known[sc.id] = hit[1]
                pairs.append((sc, hit[2]))
            else:
                pairs.append((sc, _parse_events(result.traces.get(sc.id, ""))))
        run = diagnose_run(pairs, result.score, known=known)
        for (sc, events), d in zip(pairs, run.conversations):
            if sc.id in passed or sc.id in known or 0 in d.event_ids:  # one citing the header (the harness label) is not kept
                continue
            if len(self._diagnosed) >= _DIAGNOSED_MAX:
                self._diagnosed.pop(next(iter(self._diagnosed)))
            self._diagnosed[_diagnosis_key(sc, result.traces.get(sc.id, ""))] = (sc, d, events)
        return run, pairs

    def _prediagnose(self, scenarios: list[Scenario], rows: dict[str, Any]) -> None:
        """Diagnose the failed conversations of one worker's share of a run as it comes, while the
        other worker still plays (``PooledEvaluator.on_rows``): kept in ``_diagnosed`` as
        ``_diagnose`` keeps them, which then finds them there (the same diagnosis, made sooner).
        Conversations taken from a reference were diagnosed with it."""
        from rsi.diagnose import diagnose_conversation

        by_id = {sc.id: sc for sc in scenarios}
        for sid, row in rows.items():
            graded, text, sc = row[0], row[1], by_id.get(sid)
            if graded is None or graded.passed or sc is None:
                continue
            key = _diagnosis_key(sc, text)
            if key in self._diagnosed:
                continue
            events = _parse_events(text)
            d = diagnose_conversation(sc, events, graded)
            if 0 in d.event_ids:  # cites the header (the harness label): not kept, as in _diagnose
                continue
            if len(self._diagnosed) >= _DIAGNOSED_MAX:
                self._diagnosed.pop(next(iter(self._diagnosed)))
            self._diagnosed[key] = (sc, d, events)

    def _dev_ahead(self, worktree: Path, commit: str, parent: str) -> None:
        """A candidate whose fixed core is scored is retained, and its dev run is the next round's
        first evaluation: send that run to the workers now (they are idle: every answer of the
        candidate's own evaluations has been read, so no pipe is full both ways), to play while
        this process records the decision (``_incumbent_eval`` takes it). Played as it will be
        asked for: fresh hosts of the same files (a copy: the worktree goes with the decision),
        the parent's dev run as the reference; only its harness label differs, and is put right."""
        self._drop_dev_ahead()
        if self.config.mode != "rsi" or self.config.workers <= 1 or self.models is None or self.models.remote or uses_judges(self.config, worktree):
            return  # (only where the dev run is the next evaluation asked for: see _evaluate)
        import shutil

        ref = self._evals.get((parent, "dev"))
        tapes = ref.tapes if ref is not None else None
        copy = self.dir / AHEAD_DIR / "harness"
        shutil.rmtree(copy.parent, ignore_errors=True)
        shutil.copytree(worktree, copy, ignore=shutil.ignore_patterns(".git"), symlinks=True)
        ev = _sandbox.PooledEvaluator(copy, self.config.sandbox, workers=self.config.workers, mode=self._jail_mode())
        ev.ahead([(self._set("dev"), tapes, True)])
        ev.send_ahead()
        self._ahead_dev = (commit, parent, tapes, ev, copy)

    def _drop_dev_ahead(self) -> None:
        got, self._ahead_dev = getattr(self, "_ahead_dev", None), None
        if got is not None:
            import shutil

            got[3].close()
            shutil.rmtree(got[4].parent, ignore_errors=True)

    def _incumbent_eval(self, tag: str, set_name: str, diagnose: bool = False) -> _Eval:
        key = (tag, set_name)
        ev = self._evals.get(key)
        if ev is None or (diagnose and ev.diagnosis is None):
            assert self.repo is not None
            scenarios = self._set(set_name)
            root = self._checkout(tag)
            parent = self._parent_of(tag)
            ref = self._evals.get((parent, set_name)) if parent is not None else None
            ahead = getattr(self, "_ahead_dev", None)
            if (
                ahead is not None and set_name == "dev" and ahead[0] == self.repo.commit_of(tag)
                and ahead[1] == parent and ahead[2] is (ref.tapes if ref else None)
            ):
                try:  # sent ahead by _dev_ahead: collected, its traces naming this checkout
                    result, why = self._evaluate(root, scenarios, f"{tag}:{set_name}", ahead[3], reference=ahead[2], record=True)
                    if result is not None:
                        result.traces = {sid: _sandbox._relabel(t, root.name) for sid, t in result.traces.items()}
                finally:
                    self._drop_dev_ahead()
            else:
                result, why = self._evaluate(root, scenarios, f"{tag}:{set_name}", reference=ref.tapes if ref else None, record=True)
            if result is None:
                raise CampaignError(f"incumbent {tag} could not be evaluated on {set_name}: {why}")
            ev = _Eval(result=result, tapes=self._recorded)
            if ref is not None:
                ref.tapes = None  # an old parent is not replayed against twice: drop its recorded hook calls
            if diagnose:
                ev.diagnosis, _ = self._diagnose(scenarios, result)
            self._evals[key] = ev
        return ev

    def _parent_of(self, tag: str) -> str | None:
        """The version a retained version was edited from (None for g0 or an unknown tag)."""
        for p in self.archive.proposals():
            if p.decision == "retained" and p.tag == tag:
                return p.parent
        return None

    def _protection_floor(self, parent: str) -> Any:
        """The protection score of the best retained version so far (the protection gate's drift
        floor; rsi.gates), None when that is the parent itself. The earliest of equals."""
        best_tag, best_q = "g0", None
        base = self.archive.baseline()
        if base is not None:
            best_q = base.protection_q
        for p in self.archive.proposals():
            if p.decision == "retained" and p.tag and p.protection_q is not None and (best_q is None or p.protection_q > best_q):
                best_tag, best_q = p.tag, p.protection_q
        if best_tag == parent:
            return None
        return self._incumbent_eval(best_tag, "protection").result.score

    def _checkout(self, tag: str) -> Path:
        """A directory holding version ``tag``: the main working tree when it is the incumbent."""
        assert self.repo is not None
        if self.repo.head() == self.repo.commit_of(tag):
            return self.repo.root
        return self.repo.add_worktree(f"view-{tag}", tag)

    # ================================================================== the loop
    def _incumbent(self) -> str:
        retained = [p for p in self.archive.proposals() if p.decision == "retained"]
        return retained[-1].tag if retained and retained[-1].tag else "g0"

    def _next_position(self) -> tuple[int, int]:
        """(round, candidate index) of the next proposal, read off the archive."""
        props = self.archive.proposals()
        if not props:
            return 1, 0
        last = props[-1]
        in_round = [p for p in props if p.round == last.round]
        if last.decision == "retained" or len(in_round) >= self._per_round():
            return last.round + 1, 0
        return last.round, len(in_round)

    def _budget_left(self, rnd: int) -> tuple[str, str] | None:
        """(state, reason) when a budget ends the campaign before round ``rnd``'s next step."""
        b = self.config.budget
        props = self.archive.proposals()
        max_rounds = 1 if self.config.mode in ("one-shot", "best-of-n") else b.rounds
        if rnd > max_rounds:
            return "done", f"round budget used ({max_rounds} rounds)"
        if len(props) >= b.candidate_evaluations:
            return "done", f"candidate budget used ({b.candidate_evaluations} proposals)"
        assert self.budget is not None
        spent = self.budget.total_usd
        if spent > 0 and spent >= b.spend_usd:
            err = BudgetExhausted("campaign", "", spent, b.spend_usd)
            return "stopped", _budget_reason(err)
        return None

    def _recover(self) -> None:
        import shutil

        shutil.rmtree(self.dir / AHEAD_DIR, ignore_errors=True)  # a run sent ahead by a killed campaign
        self.archive.recover()
        self.repo = HarnessRepo(self.dir / "harness", self.dir / "worktrees")
        removed = self.repo.prune()
        self.repo.drop_candidate_branches()  # a killed run's: every candidate without a record is redone
        if removed:
            self._emit(Recovered(text=f"removed stale worktrees: {', '.join(removed)}"))
        for p in self.archive.proposals():
            if p.decision == "retained" and p.commit and p.tag:
                self.repo.retain(p.commit, p.tag)

    def _baseline(self) -> BaselineRecord:
        base = self.archive.baseline()
        if base is not None:
            return base
        assert self.repo is not None
        t0 = time.perf_counter()
        self._emit(BaselineStarted(text="scoring g0 on the fixed core, the protection split and dev"))
        fixed = self._incumbent_eval("g0", "fixed_core")
        prot = self._incumbent_eval("g0", "protection")
        dev = self._incumbent_eval("g0", "dev", diagnose=self.config.mode == "rsi")
        rec = BaselineRecord(
            commit=self.repo.commit_of("g0"),
            fixed_core_q=fixed.q,
            protection_q=prot.q,
            dev_q=dev.q,
            timings_s=round(time.perf_counter() - t0, 3),
        )
        assert self.budget is not None
        self.budget.flush()
        self.archive.append(rec)
        self._emit(VersionScored(text=f"g0: fixed core Q {fixed.q:.1f}, protection Q {prot.q:.1f}", tag="g0", fixed_core_q=fixed.q, protection_q=prot.q))
        return rec

    def run(self) -> CampaignState:
        """Work until done, stopped (STOP file) or out of budget; returns the final state."""
        self.budget = self._open_budget()
        self.models = CampaignModels(self.config, self.dir, self.budget)
        self._set_state("running", 0, "")
        try:
            self._jail, problem = _sandbox.jail_mode(self.config.sandbox.jail)
            if problem is not None:
                backend = self.config.editor.backend
                if backend in ("command", "litellm"):
                    raise CampaignError(
                        f"{problem}: refusing to evaluate candidates of the {backend} editor without the jail "
                        '(set sandbox = "rlimits" in the config to accept rlimits alone)'
                    )
                self._emit(Warned(text=f"{problem}: module hosts run under rlimits alone"))
            self._recover()
            if self._pooled(self.repo.root):  # the workers start their jails while g0's sets are composed
                _sandbox.start_workers(self.config.workers, self.config.sandbox, self._jail)
            first = len(self.budget.records)
            self._baseline()
            self._all_failed(0, first)
            self.editor = make_editor(self.config)
            if hasattr(self.editor, "hidden_paths"):  # a jailed editor (command): what it must not see
                from simulator import catalogue

                prot_path, _ = load_protection_sets(self.config.splits.protection_set)
                self.editor.hidden_paths = [
                    self.dir.resolve(),  # archive, spend, other candidates, the harness repository's work tree
                    prot_path.resolve(),
                    protection_sets_dir().resolve(),
                    Path(catalogue.__file__).resolve().parent / "catalogue",  # the hidden sets' families and values
                    Path.home(),  # credentials in dotfiles: the editor gets only the key it needs, by environment
                    Path.cwd() / ".env",
                ]
                self.editor.git_dir = (self.dir / "harness" / ".git").resolve()
                from duplexagent.isolation import bwrap_problem

                self.editor.jail_mode = "bwrap" if bwrap_problem() is None else "none"
            self.planner = make_planner(self.config) if self.config.mode == "rsi" else None
            self._attach(self.editor)
            self._attach(self.planner)
            current: _Round | None = None
            while True:
                rnd, cand = self._next_position()
                if self.stop_requested():
                    return self._finish("stopped", rnd, "STOP file found")
                ended = self._budget_left(rnd)
                if ended is not None:
                    return self._finish(ended[0], rnd - (cand == 0), ended[1])
                try:
                    if current is None or current.number != rnd:
                        first = len(self.budget.records)
                        current = self._prepare_round(rnd)
                        if current is None:
                            return self._finish("done", rnd - 1, "no diagnosed failure left to target")
                    recs = self._best_of_n(current, cand) if self.config.mode == "best-of-n" else [self._propose(current, cand)]
                    self._all_failed(rnd, first)
                except BudgetExhausted as err:
                    # Refused before any money was spent on the refused call; every record written so
                    # far stays, the half-done step wrote nothing (its paid calls are in spend.json
                    # and the request cache), and resume redoes it.
                    return self._finish("stopped", rnd, _budget_reason(err))
                for rec in recs:
                    self.budget.flush()  # the ledger lists the record's evaluations before it lands
                    self.archive.append(rec)
                    if rec.decision == "retained":
                        assert self.repo is not None and rec.commit and rec.tag
                        self.repo.retain(rec.commit, rec.tag)
                        self._emit(
                            VersionScored(
                                round=rnd,
                                candidate=rec.candidate,
                                text=f"{rec.tag}: fixed core Q {rec.fixed_core_q:.1f}, protection Q {rec.protection_q:.1f}",
                                tag=rec.tag,
                                fixed_core_q=rec.fixed_core_q,
                                protection_q=rec.protection_q,
                            )
                        )
                        current = None
        except BaseException as err:
            if isinstance(err, (KeyboardInterrupt, SystemExit)):
                self._finish("stopped", 0, f"interrupted: {type(err).__name__}")
            else:
                self._finish("stopped", 0, f"error: {type(err).__name__}: {err}"[:500])
            raise
        finally:
            from duplexagent.isolation import close_hosts

            self._drop_dev_ahead()
            close_hosts()  # no module host outlives the run
            _sandbox.close_workers()
            if self.repo is not None:
                try:  # the clean-up thread's last work, and a prepared worktree nobody took
                    self.repo.wait_cleanup()
                    self.repo.discard_prepared()
                except Exception:  # noqa: BLE001  (prune removes whatever is left)
                    pass
                self.repo.prune()
            if self.budget is not None:
                self.budget.save()
            if self.models is not None:
                self.models.close()

    def _all_failed(self, rnd: int, first: int) -> None:
        """Stop (CampaignError, one line) when every model call since ``first`` failed."""
        assert self.budget is not None and self.models is not None
        why = self.models.check_round(rnd, self.budget.records[first:])
        if why is not None:
            raise CampaignError(why)

    def _per_round(self) -> int:
        """Most proposals in one round: best-of-n draws all its N (= the candidate budget) in one."""
        b = self.config.budget
        return b.candidate_evaluations if self.config.mode == "best-of-n" else b.candidates_per_round

    def _best_of_n(self, rd: _Round, start: int) -> list[ProposalRecord]:
        """Best-of-n: N candidates drawn independently from the incumbent (g0) without diagnosis, each
        through the checks and the development gate on the same exam; the best (largest fixed -
        broken among those that passed; ties: fewer broken, then the earlier draw) is proposed again
        in full (deterministic: the same edit) through the protection gate. Records from candidate
        ``start`` on, in draw order (an interrupted round is redone)."""
        n = self._per_round()
        recs = [self._propose(rd, c, hold=True) for c in range(n)]
        best = best_candidate(recs)
        if best is not None:
            self._emit(Planned(round=rd.number, candidate=best.candidate, text=f"best of {n}: {best.id} ({best.dev.reason if best.dev else ''})"))
            recs[best.candidate] = self._propose(rd, best.candidate)
        return recs[start:]

    def _finish(self, state: str, rnd: int, reason: str) -> CampaignState:
        st = self._set_state(state, max(0, rnd), reason)
        self._emit(Finished(state=state, round=rnd, text=reason))
        return st

    # ================================================================== rounds
    def _prepare_round(self, rnd: int) -> _Round | None:
        mode = self.config.mode
        incumbent = self._incumbent()
        cfg = self.config.splits
        seed = derive_seed(self.config.seed, rnd, "exam")
        planned = self.archive.planning(rnd) if mode == "rsi" else None
        if planned is not None and planned.incumbent == incumbent:
            # A resumed round: the exam was chosen (and paid for) before the interruption.
            exam = Exam.model_validate(planned.exam)
            if exam.target_cause is None:
                self._emit(Planned(round=rnd, text=exam.rationale))
                return None
        elif mode == "rsi":
            dev = self._incumbent_eval(incumbent, "dev", diagnose=True)
            diag = dev.diagnosis
            visible = [digest(p) for p in self.archive.proposals() if p.round < rnd]
            from simulator.catalogue import default_catalogue

            available = list(default_catalogue().cells)
            cellset = set(available)
            dev_scen = {sc.id: sc for sc in self._set("dev")}
            cause_modules: dict[str, dict[str, int]] = {}
            cause_patterns: dict[str, dict[str, int]] = {}
            cause_cells: dict[str, dict[tuple[str, str], int]] = {}
            for c in diag.conversations:
                if c.passed or not c.cause:
                    continue
                cm = cause_modules.setdefault(c.cause, {})
                cm[c.module or "?"] = cm.get(c.module or "?", 0) + 1
                cp = cause_patterns.setdefault(c.cause, {})
                for pat in c.patterns:
                    cp[pat] = cp.get(pat, 0) + 1
                sc = dev_scen.get(c.scenario_id)
                cc = cause_cells.setdefault(c.cause, {})
                for cell in {(rt, pat) for rt in (sc.request_types if sc else []) for pat in c.patterns} & cellset:
                    cc[cell] = cc.get(cell, 0) + 1

            inp = PlannerInput(
                round=rnd,
                incumbent=incumbent,
                cause_counts=dict(diag.causes),
                module_counts=dict(diag.modules),
                pattern_failures={p: r.n - r.passed for p, r in diag.per_pattern.items() if r.n > r.passed},
                cause_modules=cause_modules,
                cause_patterns=cause_patterns,
                cause_cells={c: [(rt, pat, n) for (rt, pat), n in sorted(cells.items())] for c, cells in cause_cells.items()},
                archive=visible,
                available_cells=available,
                exam_size=cfg.exam_n,
                seed=seed,
            )
            assert self.planner is not None and self.budget is not None
            pid = planning_id(rnd)
            first = len(self.budget.records)

            def instances(ex: Exam) -> int:
                run = self._exam_run(ex, incumbent, rnd)
                return cause_count(run[2], ex.target_cause) or 0

            with spend_scope("campaign", pid):
                exam, notes = plan_with_instances(self.planner, inp, instances)
            if notes:
                exam = exam.model_copy(update={"rationale": f"{exam.rationale}; " + "; ".join(notes)})
            bucket = Bucket()
            for r in self.budget.records[first:]:
                if r.scope == "campaign" and r.ref == pid:
                    bucket.add(r)
            self.budget.flush()
            self.archive.append(
                PlanningRecord(
                    id=pid,
                    round=rnd,
                    incumbent=incumbent,
                    planner=getattr(self.planner, "name", self.config.planner.backend),
                    exam=exam.model_dump(mode="json"),
                    costs=_model_cost(bucket),
                )
            )
            if exam.target_cause is None:
                self._emit(Planned(round=rnd, text=exam.rationale))
                return None
        else:
            exam = Exam(
                round=rnd,
                cells=[],
                patterns=[],
                n=cfg.exam_n,
                seed=seed,
                target_modules=[],
                target_cause=None,
                rationale=f"{mode} baseline: a general dev sample, no diagnosis",
            )
        self._emit(Planned(round=rnd, text=f"exam of {exam.n} targeting {exam.target_cause or 'nothing (no diagnosis)'}: {exam.rationale}"))
        scenarios, result, exam_diag, pairs = self._exam_run(exam, incumbent, rnd)
        inc = _Eval(result=result, tapes=self._exam_tapes.get(exam.model_dump_json()))
        self._exam_runs.clear()
        self._exam_tapes.clear()
        target_module = target_cause = None
        handled: list[TurnEvidence] = []
        contrast: list[TurnEvidence] = []
        failing_turns: list[TurnEvidence] = []
        if mode == "rsi":
            from rsi.diagnose import failure_examples, render_for_editor

            inc.diagnosis = exam_diag
            target_cause = exam.target_cause
            on_exam = {}
            for c in inc.diagnosis.conversations:
                if c.cause == target_cause and c.module:
                    on_exam[c.module] = on_exam.get(c.module, 0) + 1
            preferred = [m for m in exam.target_modules if m in on_exam] or sorted(on_exam, key=lambda m: (-on_exam[m], m))
            target_module = preferred[0] if preferred else (exam.target_modules[0] if exam.target_modules else None)
            diag_text = render_for_editor(inc.diagnosis, module=target_module, cause=target_cause)
            failures = failure_examples(inc.diagnosis, pairs, module=target_module, cause=target_cause)
            failing_turns = [t for f in failure_examples(inc.diagnosis, pairs, module=target_module, cause=target_cause, limit=10**6) for t in f.turns]
            if target_module is None:
                target_module = "policy"
            handled, contrast = self._round_turns(scenarios, result, incumbent)
        else:
            # Baselines: dev failures as the scorer reports them (which checks failed), no attribution.
            dev = self._incumbent_eval(incumbent, "dev")
            diag_text = f"{dev.result.score.n - dev.result.score.passed} of {dev.result.score.n} dev conversations failed (no diagnosis)"
            failures = [
                FailureExample(
                    scenario_id=c.id,
                    patterns=list(c.patterns),
                    cause="",
                    module="",
                    evidence="",
                    failed_checks=[f"{o.check}: {o.detail}" for o in c.checks if not o.passed and not o.untested],
                )
                for c in dev.result.score.conversations
                if not c.passed and not c.excluded_perception
            ]
        return _Round(
            number=rnd,
            exam=exam,
            scenarios=scenarios,
            incumbent_exam=inc,
            target_module=target_module,
            target_cause=target_cause,
            diagnosis_text=diag_text,
            failures=failures,
            target_before=cause_count(inc.diagnosis, target_cause),
            handled=handled,
            contrast=contrast,
            failing_turns=failing_turns,
            incumbent=incumbent,
        )

    def _extension(self, rd: _Round) -> tuple[list[Scenario], _Eval]:
        """The round's second-look conversations (``gates.extend_n`` more of the exam's cells, or of
        the general dev split for an exam without cells) and the incumbent's run on them; made once
        per round, a function of the exam's seed."""
        if rd.extension is None:
            from simulator.compose import compose

            n = self.config.gates.extend_n
            seed = derive_seed(rd.exam.seed, "second-look")
            if rd.exam.target_cause is not None and rd.exam.cells:
                out = compose("dev", n, seed, cells=[list(c) for c in rd.exam.cells])
            else:
                out = compose("dev", n, seed)
            seen = {sc.id for sc in rd.scenarios}
            scen = []
            for i, sc in enumerate(out):
                if sc.id in seen:
                    sc = sc.model_copy(update={"id": f"{sc.id}-y{i}"})
                seen.add(sc.id)
                scen.append(sc)
            root = self._checkout(rd.incumbent)
            result, why = self._evaluate(root, scen, f"r{rd.number:02d}:exam+:{rd.incumbent}", record=True)
            if result is None:
                raise CampaignError(f"incumbent {rd.incumbent} could not be evaluated on the second look of round {rd.number}: {why}")
            ev = _Eval(result=result, tapes=self._recorded)
            if self.config.mode == "rsi":
                ev.diagnosis, _ = self._diagnose(scen, result)
            rd.extension = (scen, ev)
        return rd.extension

    def _screen(self, rd: _Round) -> tuple[list[Scenario], list[Scenario]]:
        """(screen, rest) of the round's exam for the development gate's early look (rsi.gates):
        the incumbent's failures of the target cause first, at most half the screen when it has
        passed conversations to fill the other half, then conversations it passed, in exam order
        (no target: its failures, then its passes). ([], exam) when ``gates.screen_n`` is 0 or the
        exam holds fewer than twice as many conversations. Made once per round."""
        if rd.screen is None:
            n = self.config.gates.screen_n
            if n <= 0 or len(rd.scenarios) < 2 * n:
                rd.screen, rd.screen_target = [], None
            else:
                score = rd.incumbent_exam.result.score
                passed = {c.id for c in score.conversations if c.passed}
                if rd.target_cause is not None and rd.incumbent_exam.diagnosis is not None:
                    bad = {c.scenario_id for c in rd.incumbent_exam.diagnosis.conversations if c.cause == rd.target_cause}
                else:
                    bad = {c.id for c in score.conversations if not c.passed and not c.excluded_perception and not c.excluded_infrastructure}
                failing = [sc.id for sc in rd.scenarios if sc.id in bad]
                good = [sc.id for sc in rd.scenarios if sc.id in passed]
                k = min(len(failing), max(n // 2, n - len(good)))
                chosen = set(failing[:k]) | set(good[: n - k])
                rd.screen = [sc.id for sc in rd.scenarios if sc.id in chosen]
                rd.screen_target = k if rd.target_cause is not None else None
        chosen = set(rd.screen)
        if not chosen:
            return [], list(rd.scenarios)
        return [sc for sc in rd.scenarios if sc.id in chosen], [sc for sc in rd.scenarios if sc.id not in chosen]

    def _exam_run(self, exam: Exam, incumbent: str, rnd: int) -> tuple[list[Scenario], RunResult, Any | None, list[Any]]:
        """(scenarios, incumbent's result, its diagnosis in rsi mode, (scenario, events) pairs) of an
        exam; cached within the round's planning so a checked exam is not evaluated twice."""
        key = exam.model_dump_json()
        if key in self._exam_runs:
            return self._exam_runs[key]
        scenarios = self._exam_scenarios(exam)
        root = self._checkout(incumbent)
        k = len(self._exam_runs)
        result, why = self._evaluate(root, scenarios, f"r{rnd:02d}:exam{k or ''}:{incumbent}", record=True)
        if result is None:
            raise CampaignError(f"incumbent {incumbent} could not be evaluated on the exam of round {rnd}: {why}")
        self._exam_tapes[key] = self._recorded
        diag, pairs = self._diagnose(scenarios, result) if self.config.mode == "rsi" else (None, [])
        self._exam_runs[key] = (scenarios, result, diag, pairs)
        return self._exam_runs[key]

    def _round_turns(self, exam: list[Scenario], exam_result: RunResult, incumbent: str) -> tuple[list[TurnEvidence], list[TurnEvidence]]:
        """Dev turns the incumbent handled right (every turn of a dev conversation it passed, at
        most MAX_HANDLED) and every turn of the round's dev conversations, passed or not (at most
        MAX_CONTRAST), on the exam and on the dev diagnosis set (visible material only)."""
        from rsi.diagnose import turn_evidence

        out: list[TurnEvidence] = []
        every: list[TurnEvidence] = []
        dev = self._incumbent_eval(incumbent, "dev")
        dev_turns = self.__dict__.setdefault("_dev_turns", {})  # the dev set's turns by scenario id: the same set every round
        for scenarios, result, kept in ((exam, exam_result, None), (self._set("dev"), dev.result, dev_turns)):
            passed = {c.id for c in result.score.conversations if c.passed}
            for sc in scenarios:
                turns = kept.get(sc.id) if kept is not None else None
                if turns is None:
                    turns = turn_evidence(sc)
                    if kept is not None:
                        kept[sc.id] = turns
                every += turns
                if sc.id in passed:
                    out += turns
        return out[:MAX_HANDLED], (every + self._contrast_turns())[:MAX_CONTRAST]

    def _contrast_turns(self) -> list[TurnEvidence]:
        """The user turns of CONTRAST_N dev conversations composed for the editor's vocabulary
        contrast (text and ground-truth op only; never played), the same for the whole campaign."""
        if self._contrast is None:
            from rsi.diagnose import turn_evidence
            from simulator.compose import compose

            self._contrast = [t for sc in compose("dev", CONTRAST_N, derive_seed(self.config.seed, "contrast")) for t in turn_evidence(sc)]
        return self._contrast

    # ================================================================== one proposal
    def _brief(self, rd: _Round, cand: int, seed: int, parent: str) -> EditBrief:
        assert self.repo is not None
        manifest = load_manifest(self.repo.read(parent, "MANIFEST.toml"), "MANIFEST.toml")
        if self.config.mode == "rsi":
            visible = [digest(p) for p in self.archive.proposals() if (p.round, p.candidate) < (rd.number, cand)]
        else:
            visible = []  # baselines: no archive memory
        contract = self.repo.read(parent, "AGENTS.md")
        return EditBrief(
            round=rd.number,
            parent=parent,
            target_module=rd.target_module or "",
            target_cause=rd.target_cause or "",
            diagnosis=rd.diagnosis_text,
            failures=rd.failures if self.config.mode == "rsi" else rd.failures[:200],
            archive=visible,
            editable=manifest.editable,
            contract=contract,
            seed=seed,
            handled=rd.handled if self.config.mode == "rsi" else [],
            contrast=rd.contrast if self.config.mode == "rsi" else [],
            failing_turns=rd.failing_turns if self.config.mode == "rsi" else [],
        )

    def _propose(self, rd: _Round, cand: int, hold: bool = False) -> ProposalRecord:
        """One proposal through every check and gate (rsi.campaign_stages, in order); ``hold`` stops
        after the development gate (best-of-n: the protection gate is only for the best of the N)."""
        assert self.repo is not None and self.models is not None
        t_start = time.perf_counter()
        rid = f"r{rd.number:02d}c{cand}"
        parent = self._incumbent()
        parent_commit = self.repo.commit_of(parent)
        seed = derive_seed(self.config.seed, rd.number, cand)
        self._emit(CandidateStarted(round=rd.number, candidate=cand, text=f"{rid}: editing {rd.target_module or '(no diagnosis)'} for {rd.target_cause or 'all failures'}"))
        worktree = self.repo.take_prepared(rid, parent) or self.repo.add_worktree(rid, parent)
        base: dict[str, Any] = dict(
            id=rid,
            round=rd.number,
            candidate=cand,
            mode=self.config.mode,
            parent=parent,
            parent_commit=parent_commit,
            target_module=rd.target_module if self.config.mode == "rsi" else None,
            target_cause=rd.target_cause,
            diagnosis=rd.diagnosis_text.splitlines()[2] if len(rd.diagnosis_text.splitlines()) > 2 else rd.diagnosis_text[:300],
            exam=rd.exam.model_dump(mode="json"),
            seed=seed,
        )
        run = CandidateRun(rid=rid, root=worktree, evaluate_fn=self._evaluate)
        self._drop_dev_ahead()  # (see _evaluate; in rsi mode the dev run was taken before any proposal)
        try:
            brief = self._brief(rd, cand, seed, parent)
            result, refused = self._edit(rid, brief, worktree, run.timings)
            commit = None if refused is not None else self.repo.commit_worktree(worktree, f"{rid}: {result.summary}"[:200])
            changed = self.repo.changed_paths(parent_commit, commit) if commit else []
            diff = self.repo.diff(parent_commit, commit) if commit else ""
            base.update(editor=self._editor_info(result), commit=commit, changed_paths=changed, diff=diff)
            if refused is not None:
                return self._reject(base, run, t_start, run.stop("editor", f"{refused} (budget.per_proposal_usd)"))
            if commit is None:
                return self._reject(base, run, t_start, run.stop("editor", f"the editor changed nothing: {result.summary}"))
            manifest = load_manifest(self.repo.read(parent, "MANIFEST.toml"), "MANIFEST.toml")
            out = surface_stage(run, changed, manifest, self.repo.changed_modes(parent_commit, commit), diff)
            if not out.passed:
                return self._reject(base, run, t_start, out)
            run.host = self._evaluator(worktree)  # one pool for the contract check and every evaluation
            inputs = self._dev_inputs(rd)
            # the early look and the rest of the exam go to the hosts with the contract check: each
            # worker goes on to them while the other still plays (called off if the candidate stops)
            run.host.ahead([(inputs.screen, inputs.reference, False), (inputs.rest, inputs.reference, False)] if inputs.screen else [(inputs.scenarios, inputs.reference, False)])
            smoke = self._smoke_keys(run.host, parent_commit)
            out = contract_stage(run, self.config.sandbox, self.models.judges(worktree, f"{rid}:contract"))
            if not out.passed:
                return self._reject(base, run, t_start, out)
            if smoke is not None:  # its smoke run, recorded in the worker, stands for the next checks
                self._smoke_runs[commit] = smoke[1]
                self._smoke_runs["last"] = smoke[1]
            self._emit(ChecksPassed(round=rd.number, candidate=cand, text=f"{rid}: surface and contract checks passed"))
            self._prepare_next(rd.number, cand, parent)
            out = dev_stage(run, inputs, self.config.gates, self._diagnosis)
            self._report_verdict(out, rd.number, cand, rid)
            if out.passed and hold:
                out = run.stop("dev", f"{out.reason}; best-of-n: not the best of the candidates")
            if not out.passed:
                return self._reject(base, run, t_start, out)
            inc_prot = self._incumbent_eval(parent, "protection")
            prot_scen = self._set("protection")
            inc_fixed = self._evals.get((parent, "fixed_core"))  # only when already at hand (never scored anew for this)
            fixed_ref = inc_fixed.tapes if inc_fixed else None
            run.host.ahead([(prot_scen, inc_prot.tapes, True), (self._set("fixed_core"), fixed_ref, True)])  # the fixed core queued behind
            prot = protection_stage(run, prot_scen, inc_prot.result.score, partial(self._protection_floor, parent), self.config.gates, reference=inc_prot.tapes)
            self._report_verdict(prot, rd.number, cand, rid)
            if not prot.passed:
                return self._reject(base, run, t_start, prot)
            fixed = retain_stage(run, self._set("fixed_core"), reference=fixed_ref)
            if not fixed.passed:
                return self._reject(base, run, t_start, fixed)
            self._dev_ahead(worktree, commit, parent)
            return self._retain(base, run, t_start, prot.result, fixed.result)
        finally:
            if run.host is not None:
                run.host.close()
            # the decision is in the archive (redacted): the branch goes; a credential with it, at
            # once; otherwise on the repository's clean-up thread while the campaign goes on
            if "[REDACTED]" in redact(base.get("diff") or ""):
                self.repo.remove_worktree(worktree)
                self.repo.drop_branch(rid, purge=True)
            else:
                self.repo.discard_later(worktree, rid)

    def _smoke_keys(self, host: Any, parent_commit: str) -> tuple[int | None, int] | None:
        """The contract check's smoke runs (rsi._sandbox._smoke_contract): this candidate's is
        recorded in the evaluation worker under a new key, and its parent's (else the last passing
        candidate's) is the reference, so the smoke conversations the candidate answers as that
        run did are taken from it, exactly as any reference run."""
        if not isinstance(host, _sandbox.PooledEvaluator):
            return None
        runs = self.__dict__.setdefault("_smoke_runs", {})
        self._smoke_serial = getattr(self, "_smoke_serial", 0) + 1
        keys = (runs.get(parent_commit, runs.get("last")), self._smoke_serial)
        host.smoke_keys = keys
        return keys

    def _prepare_next(self, rnd: int, cand: int, parent: str) -> None:
        """While the workers play this candidate, the repository's clean-up thread checks out the
        worktree of the proposal that comes next if this one is rejected (most are): the next
        candidate of the round, or the next round's first. Taken only when it is that proposal's
        (same name, same parent); otherwise removed."""
        if self.config.mode != "rsi" or self.repo is None:
            return
        nxt = (rnd, cand + 1) if cand + 1 < self._per_round() else (rnd + 1, 0)
        self.repo.prepare_later(f"r{nxt[0]:02d}c{nxt[1]}", parent)

    def _edit(self, rid: str, brief: EditBrief, worktree: Path, timings: dict[str, float]) -> tuple[EditResult, BudgetExhausted | None]:
        """The editor's proposal in ``worktree``, charged to proposal ``rid``; the per-proposal
        limit that refused it, if one did. A broken editor gives a summary, never an exception."""
        assert self.budget is not None
        budget = self.budget
        t0 = time.perf_counter()
        refused: BudgetExhausted | None = None
        first = len(budget.records)
        try:
            with spend_scope("proposal", rid):
                if self.config.editor.backend != "offline":
                    budget.check("proposal", rid)  # also for editors that report cost without the ledger
                result = self.editor.propose(brief, worktree)
        except BudgetExhausted as err:
            if err.scope != "proposal":
                raise  # the campaign's total: stop, write nothing for this proposal
            refused = err
            result = EditResult(summary=f"stopped by the per-proposal budget: {err}"[:300])
        except Exception as err:  # a broken editor rejects the proposal, never the campaign
            result = EditResult(summary=f"editor failed: {type(err).__name__}: {err}"[:300])
        timings["edit_s"] = time.perf_counter() - t0
        charged = any(r.scope == "proposal" and r.ref == rid for r in budget.records[first:])
        if not charged and (result.cost_usd > 0 or result.tokens > 0):
            # an editor that spends outside the model layer (a coding-agent CLI) reports its cost
            budget.charge(
                CallRecord(
                    model=self.config.editor.model or self.config.editor.backend,
                    purpose="editor",
                    scope="proposal",
                    ref=rid,
                    prompt_tokens=result.tokens,
                    cost_usd=result.cost_usd,
                )
            )
        # never commit what an editor cut short by its budget may have left half done (the caller)
        return result, refused

    def _editor_info(self, result: EditResult) -> EditorInfo:
        return EditorInfo(
            backend=getattr(self.editor, "name", self.config.editor.backend),
            summary=result.summary,
            operator=result.operator,
            log=result.log[-2000:],
            evidence=list(result.evidence),
        )

    def _dev_inputs(self, rd: _Round) -> DevInputs:
        screen, rest = self._screen(rd)
        return DevInputs(
            scenarios=rd.scenarios,
            incumbent=rd.incumbent_exam.result,
            reference=rd.incumbent_exam.tapes,
            screen=screen,
            rest=rest,
            target_cause=rd.target_cause,
            target_before=rd.target_before,
            screen_target=rd.screen_target,
            extension=partial(self._extension, rd),
        )

    def _diagnosis(self, scenarios: list[Scenario], result: RunResult) -> Any:
        return self._diagnose(scenarios, result)[0]

    def _report_verdict(self, out: Outcome, rnd: int, cand: int, rid: str) -> None:
        """A gate's verdict as a progress event (a stage stopped before its gate sends none)."""
        if out.verdict is None:
            return
        kind = DevGateDecided if out.stage == "dev" else ProtectionGateDecided
        self._emit(kind(round=rnd, candidate=cand, text=f"{rid}: {out.verdict.reason}", passed=out.passed))

    def _costs(self, rid: str, run: CandidateRun) -> Costs:
        assert self.budget is not None
        ed = self.budget.spend.proposals.get(rid, Bucket())
        ev = [self.budget.spend.evaluations.get(e, Bucket()) for e in run.evaluations]
        return Costs(
            usd=round(ed.cost_usd, 10),
            tokens=ed.prompt_tokens + ed.completion_tokens,
            calls=ed.calls,
            cached_calls=ed.cached_calls,
            saved_usd=round(ed.saved_usd, 10),
            evaluation_usd=round(sum(b.cost_usd for b in ev), 10),
            evaluation_tokens=sum(b.prompt_tokens + b.completion_tokens for b in ev),
            evaluations=list(run.evaluations),
            conversations=run.conversations,
        )

    def _reject(self, base: dict[str, Any], run: CandidateRun, t_start: float, out: Outcome) -> ProposalRecord:
        run.timings["total_s"] = time.perf_counter() - t_start
        rec = ProposalRecord(
            **base,
            **out.fields,
            decision="rejected",
            stage=out.stage,
            reason=out.reason,
            costs=self._costs(run.rid, run),
            timings=Timings(**{k: round(v, 3) for k, v in run.timings.items()}),
        )
        self._emit(Rejected(round=base["round"], candidate=base["candidate"], text=f"{run.rid} rejected ({out.stage}): {out.reason}"))
        return rec

    def _retain(self, base: dict[str, Any], run: CandidateRun, t_start: float, cand_prot: Any, cand_fixed: Any) -> ProposalRecord:
        assert self.repo is not None
        g = run.gathered
        tag = f"g{len(self.repo.version_tags())}"
        self._evals[(tag, "protection")] = _Eval(result=cand_prot, tapes=run.tapes.get("protection"))
        self._evals[(tag, "fixed_core")] = _Eval(result=cand_fixed, tapes=run.tapes.get("fixed_core"))
        for name in ("protection", "fixed_core"):
            old = self._evals.get((base["parent"], name))
            if old is not None:
                old.tapes = None  # the parent is never a parent again
        run.timings["total_s"] = time.perf_counter() - t_start
        return ProposalRecord(
            **base,
            surface=g["surface"],
            contract=g["contract"],
            dev=g["dev"],
            protection=g["protection"],
            decision="retained",
            stage="retained",
            reason=f"{g['dev'].reason}; {g['protection'].reason}",
            tag=tag,
            fixed_core_q=cand_fixed.score.q,
            protection_q=cand_prot.score.q,
            costs=self._costs(run.rid, run),
            timings=Timings(**{k: round(v, 3) for k, v in run.timings.items()}),
        )


# ====================================================================== status


def status(directory: str | Path) -> dict[str, Any]:
    """The ``campaign status --json`` document: rounds, versions (g0 on), state."""
    d = Path(directory)
    camp = Campaign.open(d)
    archive = camp.archive
    try:
        st = read_state(d / "state.json")
    except (OSError, ValueError):
        st = CampaignState(state="stopped", reason="no state file")
    state = st.state
    if state == "running" and st.pid is not None and not _alive(st.pid):
        state = "stopped"
    versions = []
    base = archive.baseline()
    if base is not None:
        versions.append({"tag": "g0", "fixed_core_q": base.fixed_core_q, "protection_q": base.protection_q})
    props = archive.proposals()
    for p in props:
        if p.decision == "retained":
            versions.append({"tag": p.tag, "fixed_core_q": p.fixed_core_q, "protection_q": p.protection_q, "record": p.id, "round": p.round})
    rounds = max((p.round for p in props), default=0)
    spend = spend_document(_load_spend(d), camp.config.budget.limits())
    spend["planning"]["rounds"] = {
        str(r.round): {"usd": r.costs.usd, "tokens": r.costs.tokens, "calls": r.costs.calls} for r in archive.plannings()
    }
    return {
        "schema_version": 1,
        "state": state,
        "reason": st.reason,
        "mode": camp.config.mode,
        "rounds": rounds,
        "proposals": len(props),
        "retained": sum(1 for p in props if p.decision == "retained"),
        "rejected": sum(1 for p in props if p.decision == "rejected"),
        "versions": versions,
        "spend": spend,
    }


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    # a zombie counts as dead
    try:
        with open(f"/proc/{pid}/stat", encoding="utf-8") as fh:
            return fh.read().split()[2] != "Z"
    except OSError:
        return True
