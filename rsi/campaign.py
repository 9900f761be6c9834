"""The improvement campaign (DESIGN §6): planner -> exam -> editor in a worktree -> checks -> gates -> archive.

A campaign directory holds::

    header.json     written first: schema_version, the resolved config, the protection set file
    state.json      running | stopped | done, the current round (replaced atomically)
    archive.jsonl   the repair archive (rsi.archive): the g0 baseline and one record per proposal
    harness/        the harness repository (rsi.repo): g0, g1, … tags; the working tree is the incumbent
    worktrees/      one git worktree per candidate while it is being checked
    STOP            create it to stop cleanly after the current step

Everything a round does is a function of the archive records before it, the incumbent and seeds
derived from (root seed, round, candidate index). That is what makes ``resume`` exact: the next
(round, candidate) is read off the archive, a candidate whose record was not written is redone
from scratch, and the same retained versions come out as in an uninterrupted run.

Modes: ``rsi`` (diagnosis, planner, archive), ``one-shot`` (one round, an edit from all failures
without diagnosis) and ``sequential`` (rounds of edits without diagnosis or archive memory); all
use the same budget and the same gates.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Literal

from pydantic import BaseModel, ConfigDict, Field

from duplexagent.loader import default_modules_dir
from duplexagent.runner import RunResult
from rsi import _sandbox
from rsi.archive import (
    Archive,
    BaselineRecord,
    Costs,
    DevGate,
    EditorInfo,
    ProposalRecord,
    ProtectionGate,
    StageResult,
    Timings,
    digest,
)
from rsi.checks_candidate import contract_check, load_manifest, surface_check
from rsi.config import CampaignConfig, ConfigError, load_protection_sets, parse_config
from rsi.gates import dev_gate, protection_gate
from rsi.interfaces import EditBrief, EditResult, Exam, FailureExample, PlannerInput
from rsi.registry import make_editor, make_planner
from rsi.repo import HarnessRepo
from simulator.scenario import Scenario

__all__ = [
    "Campaign",
    "CampaignError",
    "CampaignState",
    "Event",
    "derive_seed",
    "status",
]

HEADER_SCHEMA_VERSION = 1
EXAM_FOCUS = 0.85
STOP_FILE = "STOP"


class CampaignError(RuntimeError):
    """A campaign cannot start or continue; the message says which file or step and why."""


def derive_seed(root: int, *parts: Any) -> int:
    """A child seed from the root seed and a path of parts (round, candidate index, purpose)."""
    h = hashlib.sha256(":".join(str(p) for p in (root, *parts)).encode("utf-8")).digest()
    return int.from_bytes(h[:4], "big") & 0x7FFFFFFF


def _write_json(path: Path, data: Any) -> None:
    tmp = path.with_name(path.name + ".tmp")
    with open(tmp, "w", encoding="utf-8") as fh:
        fh.write(json.dumps(data, indent=2) + "\n")
        fh.flush()
        os.fsync(fh.fileno())
    os.replace(tmp, path)


class CampaignState(BaseModel):
    """state.json: where the campaign is."""

    model_config = ConfigDict(extra="forbid")

    schema_version: Literal[1] = Field(default=1, description="Format version.")
    state: Literal["running", "stopped", "done"] = Field(description="running, stopped (STOP file, kill or error) or done.")
    round: int = Field(default=0, description="Round in progress or last finished.")
    pid: int | None = Field(default=None, description="Process running the campaign, while running.")
    reason: str = Field(default="", description="Why the campaign stopped or finished.")


@dataclass
class Event:
    """A progress event for observers (the CLI draws them with rich)."""

    kind: str
    round: int = 0
    candidate: int = 0
    text: str = ""
    data: dict[str, Any] = field(default_factory=dict)


@dataclass
class _Eval:
    result: RunResult
    diagnosis: Any | None = None

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


def _cause_count(diagnosis: Any, cause: str | None) -> int | None:
    if cause is None or diagnosis is None:
        return None
    return int(diagnosis.causes.get(cause, 0))


def _parse_events(text: str) -> list[Any]:
    from simulator.trace import parse_event

    return [parse_event(json.loads(line)) for line in text.splitlines() if line.strip()]


class Campaign:
    """One campaign directory; ``run()`` works until done, stopped or out of budget."""

    def __init__(self, directory: str | Path, config: CampaignConfig, observer: Callable[[Event], None] | None = None) -> None:
        self.dir = Path(directory)
        self.config = config
        self.observer = observer or (lambda ev: None)
        self.archive = Archive(self.dir)
        self._evals: dict[tuple[str, str], _Eval] = {}
        self._sets: dict[str, list[Scenario]] = {}
        self.repo: HarnessRepo | None = None

    # ================================================================== opening
    @classmethod
    def create(cls, directory: str | Path, config: CampaignConfig, observer: Callable[[Event], None] | None = None) -> "Campaign":
        """A new campaign directory (header first); an existing one with the same config is resumed."""
        d = Path(directory)
        if (d / "header.json").exists():
            existing = cls.open(d, observer)
            if existing.config.model_dump(mode="json") != config.model_dump(mode="json"):
                raise CampaignError(f"{d}: already holds a campaign with a different config (use 'campaign resume')")
            return existing
        if d.exists() and any(d.iterdir()):
            raise CampaignError(f"{d}: exists and is not a campaign directory")
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
            },
        )
        camp = cls(d, config, observer)
        camp._set_state("running", 0, "created")
        HarnessRepo.create(d / "harness", d / "worktrees", modules)
        return camp

    @classmethod
    def open(cls, directory: str | Path, observer: Callable[[Event], None] | None = None) -> "Campaign":
        d = Path(directory)
        path = d / "header.json"
        try:
            header = json.loads(path.read_text(encoding="utf-8"))
        except OSError:
            raise CampaignError(f"{path}: <file>: not a campaign directory (no header.json)") from None
        except json.JSONDecodeError as err:
            raise CampaignError(f"{path}: <file>: not valid JSON: {err.msg}") from None
        version = header.get("schema_version")
        if not isinstance(version, int) or version > HEADER_SCHEMA_VERSION:
            raise CampaignError(f"{path}: schema_version: {version!r} is not supported (max {HEADER_SCHEMA_VERSION})")
        try:
            config = parse_config(header.get("config", {}), f"{path} config")
        except ConfigError as err:
            raise CampaignError(str(err)) from None
        return cls(d, config, observer)

    # ================================================================== state
    def _set_state(self, state: str, rnd: int, reason: str = "") -> None:
        _write_json(
            self.dir / "state.json",
            CampaignState(state=state, round=rnd, pid=os.getpid() if state == "running" else None, reason=reason).model_dump(mode="json"),
        )

    def _emit(self, kind: str, rnd: int = 0, cand: int = 0, text: str = "", **data: Any) -> None:
        self.observer(Event(kind=kind, round=rnd, candidate=cand, text=text, data=data))

    def stop_requested(self) -> bool:
        return (self.dir / STOP_FILE).exists()

    # ================================================================== conversation sets
    def _set(self, name: str) -> list[Scenario]:
        if name in self._sets:
            return self._sets[name]
        from simulator.compose import compose

        cfg = self.config.splits
        if name == "dev":
            out = compose("dev", cfg.dev_n, cfg.dev_seed)
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
    def _evaluate(self, root: Path, scenarios: list[Scenario]) -> tuple[RunResult | None, str]:
        cfg = self.config.sandbox
        tmp = Path(tempfile.mkdtemp(prefix="duplexagent-eval-"))
        try:
            src = tmp / "scenarios.json"
            src.write_text(json.dumps([s.model_dump(mode="json") for s in scenarios]), encoding="utf-8")
            dest = tmp / "result.json"
            res = _sandbox.run_child(
                ["evaluate", str(root), str(src), str(dest), str(self.config.workers)],
                timeout_s=cfg.eval_timeout_s + 0.25 * len(scenarios),
                memory_mb=cfg.memory_mb,
            )
            why = res.failure()
            if why is not None:
                return None, f"evaluation {why}"
            return RunResult.model_validate_json(dest.read_text(encoding="utf-8")), ""
        finally:
            shutil.rmtree(tmp, ignore_errors=True)

    def _diagnose(self, scenarios: list[Scenario], result: RunResult) -> Any:
        from rsi.diagnose import diagnose_run

        pairs = [(sc, _parse_events(result.traces.get(sc.id, ""))) for sc in scenarios]
        return diagnose_run(pairs, result.score), pairs

    def _incumbent_eval(self, tag: str, set_name: str, diagnose: bool = False) -> _Eval:
        key = (tag, set_name)
        ev = self._evals.get(key)
        if ev is None or (diagnose and ev.diagnosis is None):
            assert self.repo is not None
            scenarios = self._set(set_name)
            root = self._checkout(tag)
            result, why = self._evaluate(root, scenarios)
            if result is None:
                raise CampaignError(f"incumbent {tag} could not be evaluated on {set_name}: {why}")
            ev = _Eval(result=result)
            if diagnose:
                ev.diagnosis, _ = self._diagnose(scenarios, result)
            self._evals[key] = ev
        return ev

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
        if last.decision == "retained" or len(in_round) >= self.config.budget.candidates_per_round:
            return last.round + 1, 0
        return last.round, len(in_round)

    def _budget_left(self, rnd: int) -> str | None:
        b = self.config.budget
        props = self.archive.proposals()
        max_rounds = 1 if self.config.mode == "one-shot" else b.rounds
        if rnd > max_rounds:
            return f"round budget used ({max_rounds} rounds)"
        if len(props) >= b.candidate_evaluations:
            return f"candidate budget used ({b.candidate_evaluations} proposals)"
        spent = sum(p.costs.usd for p in props)
        if spent >= b.spend_usd and spent > 0:
            return f"spend budget used (${spent:.2f} of ${b.spend_usd:.2f})"
        return None

    def _recover(self) -> None:
        self.archive.recover()
        self.repo = HarnessRepo(self.dir / "harness", self.dir / "worktrees")
        removed = self.repo.prune()
        if removed:
            self._emit("recover", text=f"removed stale worktrees: {', '.join(removed)}")
        for p in self.archive.proposals():
            if p.decision == "retained" and p.commit and p.tag:
                self.repo.retain(p.commit, p.tag)

    def _baseline(self) -> BaselineRecord:
        base = self.archive.baseline()
        if base is not None:
            return base
        assert self.repo is not None
        t0 = time.perf_counter()
        self._emit("baseline", text="scoring g0 on the fixed core, the protection split and dev")
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
        self.archive.append(rec)
        self._emit("version", text=f"g0: fixed core Q {fixed.q:.1f}, protection Q {prot.q:.1f}", tag="g0", fixed_core_q=fixed.q, protection_q=prot.q)
        return rec

    def run(self) -> CampaignState:
        """Work until done, stopped (STOP file) or out of budget; returns the final state."""
        self._set_state("running", 0, "")
        try:
            self._recover()
            self._baseline()
            self.editor = make_editor(self.config)
            self.planner = make_planner(self.config) if self.config.mode == "rsi" else None
            current: _Round | None = None
            while True:
                rnd, cand = self._next_position()
                if self.stop_requested():
                    return self._finish("stopped", rnd, "STOP file found")
                why = self._budget_left(rnd)
                if why is not None:
                    return self._finish("done", rnd - (cand == 0), why)
                if current is None or current.number != rnd:
                    current = self._prepare_round(rnd)
                    if current is None:
                        return self._finish("done", rnd - 1, "no diagnosed failure left to target")
                rec = self._propose(current, cand)
                self.archive.append(rec)
                if rec.decision == "retained":
                    assert self.repo is not None and rec.commit and rec.tag
                    self.repo.retain(rec.commit, rec.tag)
                    self._emit(
                        "version",
                        rnd,
                        cand,
                        f"{rec.tag}: fixed core Q {rec.fixed_core_q:.1f}, protection Q {rec.protection_q:.1f}",
                        tag=rec.tag,
                        fixed_core_q=rec.fixed_core_q,
                        protection_q=rec.protection_q,
                    )
                    current = None
        except BaseException as err:
            if isinstance(err, (KeyboardInterrupt, SystemExit)):
                self._finish("stopped", 0, f"interrupted: {type(err).__name__}")
            else:
                self._finish("stopped", 0, f"error: {type(err).__name__}: {err}"[:500])
            raise
        finally:
            if self.repo is not None:
                self.repo.prune()

    def _finish(self, state: str, rnd: int, reason: str) -> CampaignState:
        st = CampaignState(state=state, round=max(0, rnd), reason=reason)
        self._set_state(state, max(0, rnd), reason)
        self._emit(state, rnd, text=reason)
        return st

    # ================================================================== rounds
    def _prepare_round(self, rnd: int) -> _Round | None:
        mode = self.config.mode
        incumbent = self._incumbent()
        cfg = self.config.splits
        seed = derive_seed(self.config.seed, rnd, "exam")
        if mode == "rsi":
            dev = self._incumbent_eval(incumbent, "dev", diagnose=True)
            diag = dev.diagnosis
            visible = [digest(p) for p in self.archive.proposals() if p.round < rnd]
            cause_modules: dict[str, dict[str, int]] = {}
            cause_patterns: dict[str, dict[str, int]] = {}
            for c in diag.conversations:
                if c.passed or not c.cause:
                    continue
                cm = cause_modules.setdefault(c.cause, {})
                cm[c.module or "?"] = cm.get(c.module or "?", 0) + 1
                cp = cause_patterns.setdefault(c.cause, {})
                for pat in c.patterns:
                    cp[pat] = cp.get(pat, 0) + 1
            from simulator.catalogue import default_catalogue

            inp = PlannerInput(
                round=rnd,
                incumbent=incumbent,
                cause_counts=dict(diag.causes),
                module_counts=dict(diag.modules),
                pattern_failures={p: r.n - r.passed for p, r in diag.per_pattern.items() if r.n > r.passed},
                cause_modules=cause_modules,
                cause_patterns=cause_patterns,
                archive=visible,
                available_cells=list(default_catalogue().cells),
                exam_size=cfg.exam_n,
                seed=seed,
            )
            assert self.planner is not None
            exam = self.planner.plan(inp)
            if exam.target_cause is None:
                self._emit("plan", rnd, text=exam.rationale)
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
        self._emit("plan", rnd, text=f"exam of {exam.n} targeting {exam.target_cause or 'nothing (no diagnosis)'}: {exam.rationale}")
        scenarios = self._exam_scenarios(exam)
        root = self._checkout(incumbent)
        result, why = self._evaluate(root, scenarios)
        if result is None:
            raise CampaignError(f"incumbent {incumbent} could not be evaluated on the exam of round {rnd}: {why}")
        inc = _Eval(result=result)
        target_module = target_cause = None
        if mode == "rsi":
            from rsi.diagnose import failure_examples, render_for_editor

            inc.diagnosis, pairs = self._diagnose(scenarios, result)
            target_cause = exam.target_cause
            on_exam = {}
            for c in inc.diagnosis.conversations:
                if c.cause == target_cause and c.module:
                    on_exam[c.module] = on_exam.get(c.module, 0) + 1
            preferred = [m for m in exam.target_modules if m in on_exam] or sorted(on_exam, key=lambda m: (-on_exam[m], m))
            target_module = preferred[0] if preferred else (exam.target_modules[0] if exam.target_modules else None)
            diag_text = render_for_editor(inc.diagnosis, module=target_module, cause=target_cause)
            failures = failure_examples(inc.diagnosis, pairs, module=target_module, cause=target_cause)
            if target_module is None:
                target_module = "policy"
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
                    failed_checks=[f"{o.check}: {o.detail}" for o in c.checks if not o.passed],
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
            target_before=_cause_count(inc.diagnosis, target_cause),
        )

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
        )

    def _propose(self, rd: _Round, cand: int) -> ProposalRecord:
        assert self.repo is not None
        t_start = time.perf_counter()
        rid = f"r{rd.number:02d}c{cand}"
        parent = self._incumbent()
        parent_commit = self.repo.commit_of(parent)
        seed = derive_seed(self.config.seed, rd.number, cand)
        self._emit("candidate", rd.number, cand, f"{rid}: editing {rd.target_module or '(no diagnosis)'} for {rd.target_cause or 'all failures'}")
        worktree = self.repo.add_worktree(rid, parent)
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
        timings: dict[str, float] = {}
        conversations = 0
        try:
            brief = self._brief(rd, cand, seed, parent)
            t0 = time.perf_counter()
            try:
                result = self.editor.propose(brief, worktree)
            except Exception as err:  # a broken editor rejects the proposal, never the campaign
                result = EditResult(summary=f"editor failed: {type(err).__name__}: {err}"[:300])
            timings["edit_s"] = time.perf_counter() - t0
            editor = EditorInfo(
                backend=getattr(self.editor, "name", self.config.editor.backend),
                summary=result.summary,
                operator=result.operator,
                log=result.log[-2000:],
            )
            costs = dict(usd=result.cost_usd, tokens=result.tokens)
            commit = self.repo.commit_worktree(worktree, f"{rid}: {result.summary}"[:200])
            changed = self.repo.changed_paths(parent_commit, commit) if commit else []
            diff = self.repo.diff(parent_commit, commit) if commit else ""
            base.update(editor=editor, commit=commit, changed_paths=changed, diff=diff)

            def reject(stage: str, reason: str, **extra: Any) -> ProposalRecord:
                timings["total_s"] = time.perf_counter() - t_start
                rec = ProposalRecord(
                    **base,
                    **extra,
                    decision="rejected",
                    stage=stage,
                    reason=reason,
                    costs=Costs(**costs, conversations=conversations),
                    timings=Timings(**{k: round(v, 3) for k, v in timings.items()}),
                )
                self._emit("rejected", rd.number, cand, f"{rid} rejected ({stage}): {reason}")
                return rec

            if commit is None:
                return reject("editor", f"the editor changed nothing: {result.summary}")
            manifest = load_manifest(self.repo.read(parent, "MANIFEST.toml"), "MANIFEST.toml")
            surface = surface_check(changed, manifest)
            if not surface.ok:
                return reject("surface", surface.reason, surface=surface)
            t0 = time.perf_counter()
            contract = contract_check(worktree, self.config.sandbox)
            timings["contract_s"] = time.perf_counter() - t0
            if not contract.ok:
                return reject("contract", contract.reason, surface=surface, contract=contract)
            self._emit("checks", rd.number, cand, f"{rid}: surface and contract checks passed")

            # development gate: same exam conversations as the incumbent
            t0 = time.perf_counter()
            cand_exam, why = self._evaluate(worktree, rd.scenarios)
            conversations += len(rd.scenarios)
            timings["dev_s"] = time.perf_counter() - t0
            if cand_exam is None:
                return reject("dev", f"development gate: candidate {why}", surface=surface, contract=contract)
            target_after = None
            if rd.target_cause is not None:
                cand_diag, _ = self._diagnose(rd.scenarios, cand_exam)
                target_after = _cause_count(cand_diag, rd.target_cause)
            dev = dev_gate(
                rd.incumbent_exam.result.score,
                cand_exam.score,
                self.config.gates,
                target_cause=rd.target_cause,
                target_before=rd.target_before,
                target_after=target_after,
            )
            self._emit("dev", rd.number, cand, f"{rid}: {dev.reason}", passed=dev.passed)
            if not dev.passed:
                return reject("dev", dev.reason, surface=surface, contract=contract, dev=dev)

            # protection gate: the hidden split
            t0 = time.perf_counter()
            inc_prot = self._incumbent_eval(parent, "protection")
            prot_scen = self._set("protection")
            cand_prot, why = self._evaluate(worktree, prot_scen)
            conversations += len(prot_scen)
            timings["protection_s"] = time.perf_counter() - t0
            if cand_prot is None:
                return reject("protection", f"protection gate: candidate {why}", surface=surface, contract=contract, dev=dev)
            prot = protection_gate(inc_prot.result.score, cand_prot.score, cand_prot.traces, self.config.gates)
            self._emit("protection", rd.number, cand, f"{rid}: {prot.reason}", passed=prot.passed)
            if not prot.passed:
                return reject(
                    "protection", prot.reason, surface=surface, contract=contract, dev=dev, protection=prot, protection_q=cand_prot.score.q
                )

            # retained: score the fixed core of the new version
            t0 = time.perf_counter()
            fixed_scen = self._set("fixed_core")
            cand_fixed, why = self._evaluate(worktree, fixed_scen)
            conversations += len(fixed_scen)
            timings["fixed_core_s"] = time.perf_counter() - t0
            if cand_fixed is None:
                return reject("protection", f"fixed core could not be scored: {why}", surface=surface, contract=contract, dev=dev, protection=prot)
            tag = f"g{len(self.repo.version_tags())}"
            self._evals[(tag, "protection")] = _Eval(result=cand_prot)
            self._evals[(tag, "fixed_core")] = _Eval(result=cand_fixed)
            timings["total_s"] = time.perf_counter() - t_start
            return ProposalRecord(
                **base,
                surface=surface,
                contract=contract,
                dev=dev,
                protection=prot,
                decision="retained",
                stage="retained",
                reason=f"{dev.reason}; {prot.reason}",
                tag=tag,
                fixed_core_q=cand_fixed.score.q,
                protection_q=cand_prot.score.q,
                costs=Costs(**costs, conversations=conversations),
                timings=Timings(**{k: round(v, 3) for k, v in timings.items()}),
            )
        finally:
            self.repo.remove_worktree(worktree)


# ====================================================================== status


def status(directory: str | Path) -> dict[str, Any]:
    """The ``campaign status --json`` document: rounds, versions (g0 on), state."""
    d = Path(directory)
    camp = Campaign.open(d)
    archive = camp.archive
    try:
        st = CampaignState.model_validate_json((d / "state.json").read_text(encoding="utf-8"))
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
