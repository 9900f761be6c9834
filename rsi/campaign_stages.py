"""The stages a candidate passes, as plain functions: surface check, contract check, development
gate (early look on the screen, the rest of the exam, second look), protection gate, retain.

The campaign (rsi.campaign) calls them in that order with a :class:`CandidateRun` (the candidate's
evaluations, conversation count and timings) and stops at the first :class:`Outcome` that did not
pass. Each stage returns what it decided; the campaign alone writes records and sends events. The
decisions are the gates' (rsi.gates); nothing here chooses anything of its own.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable

from duplexagent.models import spend_scope
from duplexagent.runner import RunResult
from rsi.archive import DevGate
from rsi.checks_candidate import contract_check, surface_check
from rsi.gates import dev_gate, promising, protection_gate, screen_verdict
from simulator.scenario import Scenario

__all__ = [
    "CandidateRun",
    "DevInputs",
    "Outcome",
    "cause_count",
    "contract_stage",
    "dev_stage",
    "join_runs",
    "joined",
    "protection_stage",
    "retain_stage",
    "surface_stage",
]

EvaluateFn = Callable[[Path, list[Scenario], str, Any], "tuple[RunResult | None, str]"]
DiagnoseFn = Callable[[list[Scenario], RunResult], Any]


@dataclass
class Outcome:
    """What one stage decided. ``passed`` False stops the candidate (rejected at ``stage`` with
    ``reason``); ``verdict`` is a gate's verdict, reported as a progress event when present;
    ``fields`` go into the proposal record beside the earlier stages' results."""

    stage: str
    passed: bool
    reason: str = ""
    verdict: Any | None = None
    fields: dict[str, Any] = field(default_factory=dict)
    result: RunResult | None = None  # the candidate's run a later step keeps (protection, fixed core)


@dataclass
class CandidateRun:
    """One candidate's evaluations: its worktree, host pool, ids of its evaluations, conversations
    played, stage timings and the stage results gathered so far (surface, contract, dev, protection)."""

    rid: str
    root: Path
    evaluate_fn: EvaluateFn
    host: Any = None
    evaluations: list[str] = field(default_factory=list)
    conversations: int = 0
    timings: dict[str, float] = field(default_factory=dict)
    gathered: dict[str, Any] = field(default_factory=dict)
    tapes: dict[str, Any] = field(default_factory=dict)  # recorded runs by ``what`` (rsi._sandbox.Tapes)

    def play(self, scenarios: list[Scenario], what: str, reference: Any = None, record: bool = False) -> tuple[RunResult | None, str]:
        """Play ``scenarios`` on the candidate as evaluation ``<rid>:<what>`` (charged to it).
        ``reference``: the incumbent's recorded run of them (conversations the candidate answers
        alike are taken from it); ``record``: keep this run's calls in ``tapes[what]``."""
        eid = f"{self.rid}:{what}"
        self.evaluations.append(eid)
        with spend_scope("evaluation", eid):
            if reference is None and not record:
                out = self.evaluate_fn(self.root, scenarios, eid, self.host)
            else:
                out = self.evaluate_fn(self.root, scenarios, eid, self.host, reference=reference, record=record)
        if record and out[0] is not None:
            self.tapes[what] = getattr(self.host, "recorded", None)
        self.conversations += len(scenarios)
        return out

    def stop(self, stage: str, reason: str, **extra: Any) -> Outcome:
        """A failed stage: rejected with the results gathered so far and ``extra``."""
        return Outcome(stage=stage, passed=False, reason=reason, fields={**self.gathered, **extra})


@dataclass
class DevInputs:
    """What the development gate compares: the round's exam, the incumbent's run on it, the early
    look's screen and the target cause's failures before (the second look is made on demand)."""

    scenarios: list[Scenario]
    incumbent: RunResult
    screen: list[Scenario]
    rest: list[Scenario]
    target_cause: str | None
    target_before: int | None
    screen_target: int | None
    extension: Callable[[], tuple[list[Scenario], Any]]  # (conversations, incumbent's _Eval)
    reference: Any = None  # the incumbent's recorded exam run (rsi._sandbox.Tapes), None when not recorded


def cause_count(diagnosis: Any, cause: str | None) -> int | None:
    """How often ``cause`` was diagnosed (None without a target cause or a diagnosis)."""
    if cause is None or diagnosis is None:
        return None
    return int(diagnosis.causes.get(cause, 0))


def joined(a: Any, b: Any) -> Any:
    """One RunScore of two runs' conversations (the exam and its second look)."""
    from simulator.score import aggregate_scores

    return aggregate_scores(list(a.conversations) + list(b.conversations))


def join_runs(scenarios: list[Scenario], *runs: RunResult) -> RunResult:
    """One RunResult of runs over disjoint parts of ``scenarios`` (the screen and the rest of an
    exam), its conversations in ``scenarios`` order."""
    from simulator.score import aggregate_scores

    by_id = {c.id: c for r in runs for c in r.score.conversations}
    traces: dict[str, str] = {}
    usage: dict[str, Any] = {}
    for r in runs:
        traces.update(r.traces)
        usage.update(r.usage)
    return RunResult(
        score=aggregate_scores([by_id[sc.id] for sc in scenarios if sc.id in by_id]),
        wall_s=sum(r.wall_s for r in runs),
        virtual_s=sum(r.virtual_s for r in runs),
        events=sum(r.events for r in runs),
        traces=traces,
        usage=usage,
    )


def surface_stage(run: CandidateRun, changed: list[str], manifest: Any, modes: Any, diff: str) -> Outcome:
    """The changed paths against the manifest (rsi.checks_candidate.surface_check)."""
    surface = surface_check(changed, manifest, modes, diff)
    if not surface.ok:
        return run.stop("surface", surface.reason, surface=surface)
    run.gathered["surface"] = surface
    return Outcome(stage="surface", passed=True)


def contract_stage(run: CandidateRun, sandbox: Any, judges: Any) -> Outcome:
    """The harness loads and keeps its contract (rsi.checks_candidate.contract_check)."""
    t0 = time.perf_counter()
    contract = contract_check(run.root, sandbox, run.host, judges)
    run.timings["contract_s"] = time.perf_counter() - t0
    if not contract.ok:
        return run.stop("contract", contract.reason, contract=contract)
    run.gathered["contract"] = contract
    return Outcome(stage="contract", passed=True)


def _target(diagnose: DiagnoseFn, scenarios: list[Scenario], result: RunResult, cause: str | None) -> int | None:
    """The target cause's failures in ``result`` (None without a target cause: nothing diagnosed)."""
    if cause is None:
        return None
    return cause_count(diagnose(scenarios, result), cause)


def dev_stage(run: CandidateRun, inp: DevInputs, gates: Any, diagnose: DiagnoseFn) -> Outcome:
    """The development gate (rsi.gates) on the incumbent's exam conversations: the early look on
    the screen (a plainly hopeless candidate stops there), the rest of the exam, then the second
    look at a promising candidate on more conversations of the exam's cells."""
    t0 = time.perf_counter()
    if inp.screen:
        cand_screen, why = run.play(inp.screen, "exam", inp.reference)
        if cand_screen is None:
            run.timings["dev_s"] = time.perf_counter() - t0
            return run.stop("dev", f"development gate: candidate {why}")
        early = screen_verdict(
            inp.incumbent.score,
            cand_screen.score,
            gates,
            exam_n=len(inp.scenarios),
            target_cause=inp.target_cause,
            target_before=inp.screen_target,
            target_after=_target(diagnose, inp.screen, cand_screen, inp.target_cause),
        )
        if early is not None:
            run.timings["dev_s"] = time.perf_counter() - t0
            out = run.stop("dev", early.reason, dev=early)
            out.verdict = early
            return out
        cand_rest, why = run.play(inp.rest, "exam:rest", inp.reference)
        cand_exam = None if cand_rest is None else join_runs(inp.scenarios, cand_screen, cand_rest)
    else:
        cand_exam, why = run.play(inp.scenarios, "exam", inp.reference)
    run.timings["dev_s"] = time.perf_counter() - t0
    if cand_exam is None:
        return run.stop("dev", f"development gate: candidate {why}")
    target_after = _target(diagnose, inp.scenarios, cand_exam, inp.target_cause)
    dev = dev_gate(
        inp.incumbent.score,
        cand_exam.score,
        gates,
        target_cause=inp.target_cause,
        target_before=inp.target_before,
        target_after=target_after,
    )
    if promising(dev) and gates.extend_n > 0:
        t1 = time.perf_counter()
        dev_or_stop = _second_look(run, inp, gates, diagnose, cand_exam, dev, target_after)
        if isinstance(dev_or_stop, Outcome):
            return dev_or_stop
        dev = dev_or_stop
        run.timings["dev_s"] += time.perf_counter() - t1
    if not dev.passed:
        out = run.stop("dev", dev.reason, dev=dev)
    else:
        run.gathered["dev"] = dev
        out = Outcome(stage="dev", passed=True, reason=dev.reason)
    out.verdict = dev
    return out


def _second_look(
    run: CandidateRun, inp: DevInputs, gates: Any, diagnose: DiagnoseFn, cand_exam: RunResult, dev: DevGate, target_after: int | None
) -> DevGate | Outcome:
    """The second look (rsi.gates): more conversations of the exam's cells, both sides, judged
    together with the exam."""
    ext_scen, inc_ext = inp.extension()
    cand_ext, why = run.play(ext_scen, "exam+", getattr(inc_ext, "tapes", None))
    if cand_ext is None:
        return run.stop("dev", f"development gate, second look: candidate {why}", dev=dev)
    before = after = None
    if inp.target_cause is not None:
        before = (inp.target_before or 0) + (cause_count(inc_ext.diagnosis, inp.target_cause) or 0)
        after = (target_after or 0) + (_target(diagnose, ext_scen, cand_ext, inp.target_cause) or 0)
    return dev_gate(
        joined(inp.incumbent.score, inc_ext.result.score),
        joined(cand_exam.score, cand_ext.score),
        gates,
        target_cause=inp.target_cause,
        target_before=before,
        target_after=after,
        extended=len(ext_scen),
    )


def protection_stage(
    run: CandidateRun, scenarios: list[Scenario], incumbent: Any, floor: Callable[[], Any], gates: Any, reference: Any = None
) -> Outcome:
    """The paired protection gate (rsi.gates) on the hidden split against the incumbent's score
    ``incumbent``; ``floor`` gives the best retained version's score (the drift floor), asked for
    after the candidate has played. ``reference``: the incumbent's recorded protection run."""
    t0 = time.perf_counter()
    cand_prot, why = run.play(scenarios, "protection", reference, record=True)
    run.timings["protection_s"] = time.perf_counter() - t0
    if cand_prot is None:
        return run.stop("protection", f"protection gate: candidate {why}")
    prot = protection_gate(incumbent, cand_prot.score, cand_prot.traces, gates, floor=floor())
    if not prot.passed:
        out = run.stop("protection", prot.reason, protection=prot, protection_q=cand_prot.score.q)
    else:
        run.gathered["protection"] = prot
        out = Outcome(stage="protection", passed=True, reason=prot.reason, result=cand_prot)
    out.verdict = prot
    return out


def retain_stage(run: CandidateRun, scenarios: list[Scenario], reference: Any = None) -> Outcome:
    """A candidate past every gate: its fixed-core score (the figure of the new version).
    ``reference``: the incumbent's recorded fixed-core run, when at hand."""
    t0 = time.perf_counter()
    cand_fixed, why = run.play(scenarios, "fixed_core", reference, record=True)
    run.timings["fixed_core_s"] = time.perf_counter() - t0
    if cand_fixed is None:
        return run.stop("protection", f"fixed core could not be scored: {why}")
    return Outcome(stage="retained", passed=True, result=cand_fixed)
