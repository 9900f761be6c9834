"""The scorer: grades traces against their scenarios' expectations and computes Q.

``score_conversation`` grades one trace, ``score_run`` aggregates many, ``grade_directory``
reads a folder of scenarios and a folder of ``<scenario id>.jsonl`` traces written by any
system. The rules are stated in ``docs/checks.md``.
"""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any, Iterable, Sequence

from pydantic import BaseModel, ConfigDict, Field

from simulator.checks import REGISTRY, emitted_kinds, expectation_problem, observe, untestable_reason
from simulator.metrics import Metrics, interaction_metrics
from simulator.scenario import Scenario, ScenarioError, load_scenario, scenario_files
from simulator.trace import ImNative, TraceError, TraceHeader, read_trace
from simulator.vocab import CHECKS

__all__ = [
    "CheckOutcome",
    "ConversationScore",
    "CheckCount",
    "PatternScore",
    "RunScore",
    "perception_failure",
    "score_conversation",
    "score_run",
    "aggregate_scores",
    "grade_directory",
    "wilson_interval",
    "render_run",
    "run_to_json",
    "write_run",
    "SCHEMA_VERSION",
]

SCHEMA_VERSION = 1
NO_TRACE = "no trace"


class _Model(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class CheckOutcome(_Model):
    """How one expectation of a conversation was graded."""

    check: str = Field(description="Check name, one of simulator.vocab.CHECKS.")
    passed: bool = Field(description="Whether the check passed (False when untested).")
    untested: bool = Field(default=False, description="The trace could not test it (nothing it is about happened, or the system does not report the events it needs): neither passed nor failed.")
    detail: str = Field(description="One line: what the check found or why it failed, with times.")
    turn: str | None = Field(default=None, description="Anchor turn id of the expectation, if any.")
    task: str | None = Field(default=None, description="World task key of the expectation, if any.")


class ConversationScore(_Model):
    """The grade of one conversation."""

    id: str = Field(description="Scenario id.")
    passed: bool = Field(description="True when every testable check passed (and at least one was testable).")
    excluded_perception: bool = Field(
        description="A failed conversation the interaction model explains (it took over in a pause, or missed a turn that mattered); left out of Q."
    )
    patterns: list[str] = Field(description="Interaction patterns of the scenario.")
    checks: list[CheckOutcome] = Field(description="One outcome per expectation, in the scenario's order.")
    excluded_infrastructure: bool = Field(
        default=False,
        description="A failed conversation in which a model call failed (HTTP error, timeout, refused connection); left out of Q, reported apart.",
    )
    untested: bool = Field(default=False, description="No check of the conversation was testable on its trace; left out of Q.")


class CheckCount(_Model):
    """Pass and fail counts of one check over a run."""

    passed: int = Field(default=0, ge=0, description="Expectations of this check that passed.")
    failed: int = Field(default=0, ge=0, description="Expectations of this check that failed.")
    untested: int = Field(default=0, ge=0, description="Expectations of this check the traces could not test.")


class PatternScore(_Model):
    """Results of the conversations that contain one interaction pattern."""

    n: int = Field(ge=0, description="Conversations with this pattern.")
    passed: int = Field(ge=0, description="Of those, how many passed.")
    excluded_perception: int = Field(default=0, ge=0, description="Of those, failures excluded as perception.")
    q: float = Field(description="Percent passed of the non-excluded conversations (1 decimal).")


class RunScore(_Model):
    """The grade of a set of conversations (``results.json``)."""

    schema_version: int = Field(default=SCHEMA_VERSION, description="Score document format version.")
    q: float = Field(description="Percent of passed conversations among those not excluded as perception (1 decimal).")
    q_ci95: tuple[float, float] = Field(description="95% Wilson interval of q, in percent (1 decimal).")
    n: int = Field(ge=0, description="Conversations graded.")
    passed: int = Field(ge=0, description="Conversations where every check passed.")
    failed: int = Field(ge=0, description="Conversations with at least one failed check (including excluded ones).")
    excluded_perception: int = Field(ge=0, description="Failed conversations excluded from q as perception failures.")
    excluded_infrastructure: int = Field(default=0, ge=0, description="Failed conversations excluded from q because a model call failed.")
    untested: int = Field(default=0, ge=0, description="Conversations none of whose checks their trace could test; left out of q (and of failed).")
    per_check: dict[str, CheckCount] = Field(description="Check name -> passed/failed counts, in CHECKS order.")
    per_pattern: dict[str, PatternScore] = Field(description="Pattern -> results of conversations with it, sorted by name.")
    conversations: list[ConversationScore] = Field(description="Each conversation's grade, in input order.")
    metrics: Metrics | None = Field(
        default=None, description="Interaction metrics over the graded traces (take-over rate, latencies, yield, backchannel handling), when the traces were at hand."
    )


def _q(passed: int, denominator: int) -> float:
    return round(100.0 * passed / denominator, 1) if denominator > 0 else 0.0


def wilson_interval(successes: int, n: int, z: float = 1.959963984540054) -> tuple[float, float]:
    """95% Wilson score interval of a proportion, in percent (1 decimal); (0, 100) when n == 0."""
    if n <= 0:
        return (0.0, 100.0)
    p = successes / n
    denom = 1.0 + z * z / n
    centre = (p + z * z / (2 * n)) / denom
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / denom
    return (round(max(0.0, centre - half) * 100, 1), round(min(1.0, centre + half) * 100, 1))


def check_expectations(scenario: Scenario, source: str | Path | None = None) -> None:
    """Raise ScenarioError (naming the file or scenario id, field and reason) for an unusable expectation."""
    where = str(source) if source is not None else scenario.id
    for i, exp in enumerate(scenario.expect):
        problem = expectation_problem(exp)
        if problem is not None:
            raise ScenarioError(f"{where}: expect[{i}].{problem[0]}: {problem[1]}")


# Turn intents the agent should not act on at all: missing one of them costs nothing by itself.
PASSIVE_OPS = frozenset({"side", "backchannel"})


def perception_failure(scenario: Scenario, events: Sequence[Any], outcomes: Sequence[CheckOutcome]) -> bool:
    """Whether the interaction model itself explains a failure: it took over inside a pause, or it never
    perceived a turn that mattered (one the agent had to act on, or one a failed check is about).
    The diagnoser blames exactly these failures on perception, so both leave the same ones out of Q."""
    turns = {t.id: t for t in scenario.turns}
    failed_turns = {o.turn for o in outcomes if not o.passed and not o.untested and o.turn is not None}
    for ev in events:
        if not isinstance(ev, ImNative):
            continue
        if ev.what == "takeover":
            return True
        turn = turns.get(ev.turn)
        if turn is not None and (turn.intent.op not in PASSIVE_OPS or ev.turn in failed_turns):
            return True
    return False


INFRASTRUCTURE_MARK = "JudgeError: infrastructure:"


def infrastructure_failure(events: Sequence[Any]) -> str | None:
    """The first failed model call recorded in a trace (a rejected decision whose judge's call failed:
    HTTP error, timeout, refused connection), or None. Such failures are no module's fault."""
    for ev in events:
        if getattr(ev, "kind", None) == "harness.decision" and not getattr(ev, "accepted", True):
            reason = str(getattr(ev, "reason", ""))
            if INFRASTRUCTURE_MARK in reason:
                return reason
    return None


def score_conversation(scenario: Scenario, events: Sequence[Any] | None) -> ConversationScore:
    """Grade one conversation's trace events against its scenario; ``None`` means no trace.

    Raises ScenarioError for an expectation its check cannot use, TraceError when the trace's
    header names another scenario or its agent speech events do not pair up.
    """
    check_expectations(scenario)
    if events is None:
        outcomes = [
            CheckOutcome(check=e.check, passed=False, detail=NO_TRACE, turn=e.turn, task=e.task) for e in scenario.expect
        ]
        return ConversationScore(
            id=scenario.id, passed=False, excluded_perception=False, patterns=list(scenario.patterns), checks=outcomes
        )
    header = events[0] if events and isinstance(events[0], TraceHeader) else None
    if header is not None and header.scenario_id != scenario.id:
        raise TraceError(f"scenario_id: the trace is for {header.scenario_id!r}, not scenario {scenario.id!r}")
    obs = observe(events)
    emitted = emitted_kinds(events)
    outcomes = []
    for exp in scenario.expect:
        why = untestable_reason(exp.check, emitted)
        if why is not None:
            outcomes.append(CheckOutcome(check=exp.check, passed=False, untested=True, detail=why, turn=exp.turn, task=exp.task))
            continue
        res = REGISTRY[exp.check](exp, obs)
        outcomes.append(
            CheckOutcome(check=exp.check, passed=res.passed, untested=res.untested, detail=res.detail, turn=exp.turn, task=exp.task)
        )
    tested = [o for o in outcomes if not o.untested]
    passed = bool(tested) and all(o.passed for o in tested)
    failed = bool(tested) and not passed
    infra = failed and infrastructure_failure(events) is not None
    return ConversationScore(
        id=scenario.id,
        passed=passed,
        excluded_infrastructure=infra,
        excluded_perception=failed and not infra and perception_failure(scenario, events, outcomes),
        untested=not tested,
        patterns=list(scenario.patterns),
        checks=outcomes,
    )


def aggregate_scores(scores: Sequence[ConversationScore], metrics: Metrics | None = None) -> RunScore:
    """Aggregate graded conversations (e.g. graded in worker processes) into a run score.

    Q is over the testable conversations: those with no testable check (``untested``) are left
    out, as are perception and infrastructure exclusions.
    """
    n = len(scores)
    passed = sum(s.passed for s in scores)
    untested = sum(s.untested for s in scores)
    excluded_infra = sum(s.excluded_infrastructure for s in scores)
    excluded = sum(s.excluded_perception for s in scores) + excluded_infra
    counts: dict[str, list[int]] = {}
    for s in scores:
        for o in s.checks:
            c = counts.setdefault(o.check, [0, 0, 0])
            c[2 if o.untested else 0 if o.passed else 1] += 1
    per_check = {
        name: CheckCount(passed=counts[name][0], failed=counts[name][1], untested=counts[name][2]) for name in CHECKS if name in counts
    }
    pats: dict[str, list[int]] = {}
    for s in scores:
        for p in dict.fromkeys(s.patterns):
            row = pats.setdefault(p, [0, 0, 0])
            row[0] += 1
            row[1] += s.passed
            row[2] += s.excluded_perception or s.excluded_infrastructure or s.untested
    per_pattern = {
        p: PatternScore(n=r[0], passed=r[1], excluded_perception=r[2], q=_q(r[1], r[0] - r[2])) for p, r in sorted(pats.items())
    }
    return RunScore(
        q=_q(passed, n - excluded - untested),
        q_ci95=wilson_interval(passed, n - excluded - untested),
        n=n,
        passed=passed,
        failed=n - passed - untested,
        excluded_perception=excluded - excluded_infra,
        excluded_infrastructure=excluded_infra,
        untested=untested,
        per_check=per_check,
        per_pattern=per_pattern,
        conversations=list(scores),
        metrics=metrics,
    )


def score_run(items: Iterable[tuple[Scenario, Sequence[Any] | None]]) -> RunScore:
    """Grade many conversations: (scenario, trace events or None for a missing trace) pairs."""
    items = list(items)
    metrics = interaction_metrics([ev for _sc, ev in items if ev is not None])
    return aggregate_scores([score_conversation(sc, ev) for sc, ev in items], metrics=metrics)


def grade_directory(scenarios_dir: str | Path, traces_dir: str | Path) -> RunScore:
    """Grade ``traces_dir/<scenario id>.jsonl`` against every scenario in ``scenarios_dir``.

    A scenario without a trace file is a failed conversation ("no trace"). Bad scenario or trace
    files raise ScenarioError / TraceError naming the file, field and reason.
    """
    traces_dir = Path(traces_dir)
    files = scenario_files(scenarios_dir)
    if not traces_dir.is_dir():
        raise TraceError(f"{traces_dir}: not a directory")
    if not files:
        raise ScenarioError(f"{scenarios_dir}: no scenario files (.json, .yaml, .yml, or an exported bundle folder)")
    loaded: list[tuple[Path, Scenario]] = []
    seen: dict[str, Path] = {}
    for path in files:
        sc = load_scenario(path)
        if sc.id in seen:
            raise ScenarioError(f"{path}: id: scenario id {sc.id!r} already used by {seen[sc.id]}")
        seen[sc.id] = path
        check_expectations(sc, path)
        loaded.append((path, sc))
    scores = []
    traces = []
    for _path, sc in loaded:
        trace_path = traces_dir / f"{sc.id}.jsonl"
        if not trace_path.is_file():
            scores.append(score_conversation(sc, None))
            continue
        events = read_trace(trace_path)
        try:
            scores.append(score_conversation(sc, events))
        except TraceError as err:
            raise TraceError(f"{trace_path}: {err}") from None
        traces.append(events)
    if not traces:
        if not any(p.suffix == ".jsonl" and p.is_file() for p in traces_dir.iterdir()):
            raise TraceError(f"{traces_dir}: no trace files (<scenario id>.jsonl): nothing to grade")
        raise TraceError(f"{traces_dir}: no trace is named after a scenario in {scenarios_dir} (<scenario id>.jsonl)")
    return aggregate_scores(scores, metrics=interaction_metrics(traces))


def render_run(run: RunScore, console: Any, max_failures: int = 20) -> None:
    """Print a run's grade as rich tables: per check, per pattern, failures, then Q with its interval."""
    from rich.table import Table

    checks = Table(title="Checks")
    checks.add_column("check")
    checks.add_column("passed", justify="right")
    checks.add_column("failed", justify="right")
    checks.add_column("untested", justify="right")
    for name, c in run.per_check.items():
        checks.add_row(name, str(c.passed), str(c.failed), str(c.untested))
    console.print(checks)
    patterns = Table(title="Patterns")
    for col in ("pattern", "n", "passed", "excluded", "Q %"):
        patterns.add_column(col, justify="left" if col == "pattern" else "right")
    for name, p in run.per_pattern.items():
        patterns.add_row(name, str(p.n), str(p.passed), str(p.excluded_perception), f"{p.q:.1f}")
    console.print(patterns)
    failed = [(c, o) for c in run.conversations if not c.passed for o in c.checks if not o.passed]
    if failed:
        fails = Table(title=f"Failed checks ({len(failed)})")
        for col in ("conversation", "check", "turn", "detail"):
            fails.add_column(col)
        for conv, o in failed[:max_failures]:
            conv_id = conv.id + (" (perception)" if conv.excluded_perception else "")
            fails.add_row(conv_id, o.check, o.turn or "", o.detail)
        console.print(fails)
        if len(failed) > max_failures:
            console.print(f"... and {len(failed) - max_failures} more failed checks (use --json for all)")
    lo, hi = run.q_ci95
    console.print(
        f"Q = {run.q:.1f}% [95% CI {lo:.1f}-{hi:.1f}]  n={run.n} passed={run.passed} failed={run.failed} "
        f"excluded_perception={run.excluded_perception}" + (f" untested={run.untested}" if run.untested else "")
    )
    m = run.metrics
    if m is not None:
        def rate(x: float | None) -> str:
            return "n/a" if x is None else f"{x:.2f}"

        def lat(x: float | None) -> str:
            return "n/a" if x is None else f"{x * 1000:.0f} ms"

        console.print(
            f"take-over rate {rate(m.takeover_rate)} ({m.takeovers}/{m.takeover_turns}); response latency median "
            f"{lat(m.response_latency.median_s)} (n={m.response_latency.n}); yield rate {rate(m.yield_rate)} "
            f"({m.yielded}/{m.yield_cases}), median {lat(m.yield_latency.median_s)}; backchannels kept "
            f"{rate(m.backchannel_kept_rate)} ({m.backchannel_kept}/{m.backchannel_cases})",
            markup=False, highlight=False,
        )


def run_to_json(run: RunScore) -> str:
    """Canonical JSON text of a run's grade (stable field order, trailing newline)."""
    return run.model_dump_json(indent=2) + "\n"


def write_run(run: RunScore, path: str | Path) -> None:
    """Write a run's grade as JSON atomically (temp file + rename)."""
    from simulator.atomic import atomic_write

    atomic_write(path, run_to_json(run))
