"""Trace diagnosis: one terminal failure cause per failed conversation, blamed on one module, and Q.

For each failed conversation the diagnoser runs the cause detectors of
:mod:`rsi.diagnose.causes` (one file per concern, each detector registered with its cause, help
and priority by ``@detector``) in priority order (``CAUSES``) and keeps the first that applies: its cause, the module it blames (``policy, intake, hold, worker, deliver, memory``, or
``perception`` for the interaction model, which is not editable and is left out of Q), and the
evidence (event ids, times, the decision that went wrong). The detectors read the scenario's
ground truth (turn intents, world tasks); the harness never does.

Public API (used by the improvement campaign): :func:`diagnose_conversation`,
:func:`diagnose_run`, :func:`render_for_editor`, :func:`failure_examples`, and
:func:`diagnose_directory` for a ``duplexagent run`` directory. The rules are in
``docs/diagnosis.md``.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any, Sequence

from pydantic import BaseModel, ConfigDict, Field

from rsi.diagnose import causes as _causes  # noqa: F401  (registers every detector)
from rsi.diagnose._detectors import Cause, Detector, Failed, Finding, causes, detector, detectors
from rsi.diagnose._index import Index, build_index
from rsi.diagnose.causes._common import PERCEPTION
from rsi.interfaces import FailureExample, TurnEvidence
from simulator.scenario import Scenario, ScenarioError, load_scenarios
from simulator.score import ConversationScore, RunScore, infrastructure_failure, score_conversation, score_run, wilson_interval
from simulator.trace import TraceError, parse_event, read_trace
from simulator.vocab import MODULES

__all__ = [
    "CAUSES",
    "CAUSE_HELP",
    "DETECTORS",
    "Cause",
    "Detector",
    "detector",
    "BLAME",
    "VISIBLE_SPLITS",
    "TURN_SPLITS",
    "CONNECTIVE_OPS",
    "cited_turns",
    "turn_families",
    "turn_evidence",
    "Diagnosis",
    "PatternDiagnosis",
    "RunDiagnosis",
    "DiagnosisError",
    "diagnose_conversation",
    "diagnose_run",
    "diagnose_directory",
    "render_for_editor",
    "render_run_diagnosis",
    "failure_examples",
    "parse_trace_text",
]

SCHEMA_VERSION = 1

DETECTORS: list[tuple[str, Detector]] = [(d.name, d) for d in detectors()]
"""(name, detector) in priority order. A detector may end in a cause it names in ``also`` (the
wrong_answer walk ends in memory_loss when a durable fact never reached the request)."""
CAUSES: tuple[str, ...] = tuple(c.name for c in causes())
"""Every cause the diagnoser reports, in priority order (highest first)."""
CAUSE_HELP: dict[str, str] = {c.name: c.help for c in causes()}
"""What each cause means, in priority order."""
BLAME: tuple[str, ...] = MODULES + (PERCEPTION,)
"""Everything a failure can be blamed on: the six modules, and perception (the interaction model)."""

INFRASTRUCTURE = "infrastructure"
"""The cause of a failure in which a model call failed (HTTP error, timeout, refused connection):
never blamed on a module, left out of Q and reported apart (``excluded_infrastructure``)."""

VISIBLE_SPLITS = frozenset({"dev", "fixed_core", "example"})
# Splits whose user turns (text and ground-truth op) an editor may learn vocabulary from: the fixed
# core is scored to draw the staircase, never mined for wording.
TURN_SPLITS = frozenset({"dev", "example"})
"""Splits whose conversations an editor may see in detail; anything else (protection) only as counts."""

_CHECK_FALLBACK: dict[str, tuple[str, str]] = {
    "delivered": ("undelivered", "deliver"),
    "never_heard": ("stale_delivery", "deliver"),
    "no_task": ("extra_delegation", "policy"),
    "task_count": ("duplicate_task", "intake"),
    "responded_directly": ("undelivered", "policy"),
    "acknowledged": ("silent_wait", "hold"),
    "progress_given": ("missing_progress", "hold"),
    "asked_for": ("guessed_missing_info", "intake"),
    "reported_failure": ("concealed_failure", "deliver"),
    "yielded": ("not_yielded", "deliver"),
    "kept_speaking": ("false_yield", "deliver"),
    "no_takeover": ("takeover", "policy"),
    "no_overlap": ("overlap", "deliver"),
    "memory_used": ("memory_loss", "memory"),
}


class DiagnosisError(ValueError):
    """A run directory cannot be diagnosed; the message names the file, field and reason."""


class _Model(BaseModel):
    model_config = ConfigDict(extra="forbid")


class Diagnosis(_Model):
    """The diagnosis of one conversation."""

    scenario_id: str = Field(description="Scenario id.")
    split: str = Field(description="Split of the scenario (dev, protection, fixed_core, example).")
    patterns: list[str] = Field(default_factory=list, description="Interaction patterns of the scenario.")
    passed: bool = Field(description="True when every check passed (then cause and module are None).")
    cause: str | None = Field(default=None, description="Terminal failure cause, one of CAUSES.")
    module: str | None = Field(default=None, description="Blamed module (policy..memory) or 'perception'.")
    hook: str | None = Field(default=None, description="The hook whose decision went wrong, if known.")
    evidence: list[str] = Field(default_factory=list, description="Readable evidence lines: decisions, events, times.")
    event_ids: list[int] = Field(default_factory=list, description="Trace event ids the evidence cites.")
    failed_checks: list[str] = Field(default_factory=list, description="Failed checks as 'check: detail'.")
    trace_excerpt: list[str] = Field(default_factory=list, description="The cited trace lines (JSON Lines).")
    other_causes: list[str] = Field(default_factory=list, description="Lower-priority causes that also applied.")

    @property
    def perception_only(self) -> bool:
        return not self.passed and self.module == PERCEPTION

    @property
    def infrastructure(self) -> bool:
        return not self.passed and self.cause == INFRASTRUCTURE


class PatternDiagnosis(_Model):
    """Results and causes of the conversations that contain one interaction pattern."""

    n: int = Field(ge=0, description="Conversations with this pattern.")
    passed: int = Field(ge=0, description="Of those, how many passed.")
    excluded_perception: int = Field(ge=0, description="Of those, failures blamed on perception.")
    q: float = Field(description="Percent passed among the non-perception conversations (1 decimal).")
    causes: dict[str, int] = Field(default_factory=dict, description="Terminal cause -> count among its failures.")


class RunDiagnosis(_Model):
    """The diagnosis of a set of conversations (``diagnose --json``)."""

    schema_version: int = Field(default=SCHEMA_VERSION, description="Diagnosis document format version.")
    q: float = Field(description="Percent of passed conversations among those not failed by perception alone (1 decimal).")
    q_ci95: tuple[float, float] = Field(description="95% Wilson interval of q, in percent (1 decimal).")
    n: int = Field(ge=0, description="Conversations diagnosed.")
    passed: int = Field(ge=0, description="Conversations where every check passed.")
    failed: int = Field(ge=0, description="Failed conversations (including perception ones); equals sum(causes).")
    excluded_perception: int = Field(ge=0, description="Failed conversations whose terminal cause is perception.")
    excluded_infrastructure: int = Field(
        default=0, ge=0, description="Failed conversations in which a model call failed (cause 'infrastructure'): no module is blamed, left out of q and of causes."
    )
    causes: dict[str, int] = Field(description="Terminal cause -> count of failed conversations, in priority order.")
    modules: dict[str, int] = Field(description="Blamed module (and 'perception') -> count of failed conversations.")
    per_pattern: dict[str, PatternDiagnosis] = Field(description="Pattern -> results and causes, sorted by name.")
    per_split: dict[str, dict[str, int]] = Field(default_factory=dict, description="Split -> {n, passed, failed, excluded_perception}.")
    conversations: list[Diagnosis] = Field(description="Each conversation's diagnosis, in input order.")


# ---------------------------------------------------------------------------------------------


def _failed(scenario: Scenario, conv_score: ConversationScore) -> list[Failed]:
    out = []
    for exp, outcome in zip(scenario.expect, conv_score.checks):
        if not outcome.passed and not outcome.untested:
            out.append(Failed(outcome=outcome, exp=exp))
    return out


def _fallback(failed: list[Failed]) -> Finding:
    f = failed[0]
    cause, module = _CHECK_FALLBACK.get(f.check, ("undelivered", "deliver"))
    return Finding(cause, module, None, [f"no decision in the trace explains it; blamed by the failed check {f.check}", f"failed: {f.outcome.detail}"])


def diagnose_conversation(scenario: Scenario, events: Sequence[Any] | None, conv_score: ConversationScore | None = None) -> Diagnosis:
    """Diagnose one conversation: its terminal cause, blamed module and evidence.

    ``events`` are the trace's event models (``None`` when there is no trace); ``conv_score`` is
    its grade (computed here when omitted).
    """
    if conv_score is None:
        conv_score = score_conversation(scenario, events)
    base = dict(
        scenario_id=scenario.id,
        split=scenario.split,
        patterns=list(scenario.patterns),
        failed_checks=[f"{o.check}: {o.detail}" for o in conv_score.checks if not o.passed and not o.untested],
    )
    if conv_score.passed:
        return Diagnosis(passed=True, **base)  # type: ignore[arg-type]
    failed = _failed(scenario, conv_score)
    infra = infrastructure_failure(events) if events else None
    if infra is not None:
        return Diagnosis(passed=False, cause=INFRASTRUCTURE, module=None, evidence=[f"a model call failed: {infra[:300]}"], **base)  # type: ignore[arg-type]
    if not events:
        f = _fallback(failed)
        return Diagnosis(passed=False, cause=f.cause, module=f.module, evidence=["no trace"] + f.evidence, **base)  # type: ignore[arg-type]
    ix: Index = build_index(scenario, events)
    findings: list[Finding] = []
    for _name, det in DETECTORS:
        found = det(ix, failed)
        if found is not None:
            findings.append(found)
    if not findings:
        findings.append(_fallback(failed))
    top = findings[0]
    ids = sorted(set(top.event_ids))
    return Diagnosis(
        passed=False,
        cause=top.cause,
        module=top.module,
        hook=top.hook,
        evidence=[e for e in top.evidence if e],
        event_ids=ids,
        trace_excerpt=ix.excerpt(ids),
        other_causes=list(dict.fromkeys(f"{f.cause}/{f.module}" for f in findings[1:])),
        **base,  # type: ignore[arg-type]
    )


def _q(passed: int, denominator: int) -> float:
    return round(100.0 * passed / denominator, 1) if denominator > 0 else 0.0


def _aggregate(diags: list[Diagnosis]) -> RunDiagnosis:
    n = len(diags)
    passed = sum(d.passed for d in diags)
    infra = sum(d.infrastructure for d in diags)
    excluded = sum(d.perception_only for d in diags) + infra
    causes_raw: dict[str, int] = {}
    modules_raw: dict[str, int] = {}
    for d in diags:
        if d.passed or d.infrastructure:
            continue
        causes_raw[d.cause or "undelivered"] = causes_raw.get(d.cause or "undelivered", 0) + 1
        modules_raw[d.module or "deliver"] = modules_raw.get(d.module or "deliver", 0) + 1
    causes = {c: causes_raw[c] for c in CAUSES if c in causes_raw}
    modules = {m: modules_raw[m] for m in BLAME if m in modules_raw}
    pats: dict[str, list[Any]] = {}
    for d in diags:
        for p in dict.fromkeys(d.patterns):
            row = pats.setdefault(p, [0, 0, 0, {}])
            row[0] += 1
            row[1] += d.passed
            row[2] += d.perception_only or d.infrastructure
            if not d.passed and d.cause:
                row[3][d.cause] = row[3].get(d.cause, 0) + 1
    per_pattern = {
        p: PatternDiagnosis(
            n=r[0], passed=r[1], excluded_perception=r[2], q=_q(r[1], r[0] - r[2]), causes={c: r[3][c] for c in CAUSES if c in r[3]}
        )
        for p, r in sorted(pats.items())
    }
    splits: dict[str, dict[str, int]] = {}
    for d in diags:
        s = splits.setdefault(d.split, {"n": 0, "passed": 0, "failed": 0, "excluded_perception": 0})
        s["n"] += 1
        s["passed"] += d.passed
        s["failed"] += not d.passed
        s["excluded_perception"] += d.perception_only
        if d.infrastructure:
            s["excluded_infrastructure"] = s.get("excluded_infrastructure", 0) + 1
    return RunDiagnosis(
        q=_q(passed, n - excluded),
        q_ci95=wilson_interval(passed, n - excluded),
        n=n,
        passed=passed,
        failed=n - passed,
        excluded_perception=excluded - infra,
        excluded_infrastructure=infra,
        causes=causes,
        modules=modules,
        per_pattern=per_pattern,
        per_split=dict(sorted(splits.items())),
        conversations=diags,
    )


def diagnose_run(pairs: list[tuple[Scenario, Sequence[Any] | None]], score: RunScore | None = None, known: dict[str, Diagnosis] | None = None) -> RunDiagnosis:
    """Diagnose many conversations; ``score`` (a RunScore of the same pairs, in order) saves re-grading;
    ``known``: diagnoses by scenario id already made of the same scenario and events (taken as they are)."""
    if score is None:
        score = score_run(pairs)
    by_id = {c.id: c for c in score.conversations}
    diags = []
    for sc, events in pairs:
        hit = known.get(sc.id) if known else None
        diags.append(hit if hit is not None else diagnose_conversation(sc, events, by_id.get(sc.id)))
    return _aggregate(diags)


def parse_trace_text(text: str) -> list[Any]:
    """Trace events from JSON Lines text (as ``RunResult.traces`` holds them).

    The lines are validated as one JSON array by pydantic's own parser (the same models as
    ``parse_event(json.loads(line))`` line by line, faster); a text seen before is not parsed
    again (the events are shared: callers must not modify them)."""
    hit = _PARSED.get(text)
    if hit is not None:
        return list(hit)
    lines = [line for line in text.splitlines() if line.strip()]
    events = _events_adapter().validate_json("[" + ",".join(lines) + "]") if lines else []
    if len(_PARSED) >= _PARSED_MAX:
        _PARSED.pop(next(iter(_PARSED)))
    _PARSED[text] = events
    return list(events)


# A candidate plays the incumbent's exam conversations and most traces come out the same: the
# parsed events of a trace text are kept (the oldest dropped first) and shared, never modified.
_PARSED: dict[str, list[Any]] = {}
_PARSED_MAX = 2048
_EVENTS: Any = None


def _events_adapter() -> Any:
    global _EVENTS
    if _EVENTS is None:
        from pydantic import TypeAdapter

        from simulator.trace import TraceEvent

        _EVENTS = TypeAdapter(list[TraceEvent])
    return _EVENTS


def _resolve_scenarios(run_dir: Path, header: dict[str, Any], override: Path | None) -> Path:
    if override is not None:
        return override
    raw = header.get("scenarios")
    if not isinstance(raw, str) or not raw:
        raise DiagnosisError(f"{run_dir / 'header.json'}: scenarios: missing; pass --scenarios")
    p = Path(raw)
    for cand in ([p] if p.is_absolute() else [p, run_dir / p, run_dir.parent / p]):
        if cand.is_dir():
            return cand
    raise DiagnosisError(f"{run_dir / 'header.json'}: scenarios: directory {raw!r} not found; pass --scenarios")


def diagnose_directory(run_dir: str | Path, scenarios_dir: str | Path | None = None) -> RunDiagnosis:
    """Diagnose a ``duplexagent run`` directory (header.json, traces/<id>.jsonl)."""
    run_dir = Path(run_dir)
    header_path = run_dir / "header.json"
    if not run_dir.is_dir():
        raise DiagnosisError(f"{run_dir}: not a directory")
    try:
        header = json.loads(header_path.read_text(encoding="utf-8"))
    except OSError as err:
        raise DiagnosisError(f"{header_path}: cannot read: {err.strerror}") from None
    except json.JSONDecodeError as err:
        raise DiagnosisError(f"{header_path}: not valid JSON: {err.msg}") from None
    if not isinstance(header, dict):
        raise DiagnosisError(f"{header_path}: <root>: expected a mapping")
    from duplexagent.runner import RUN_HEADER_MIGRATIONS, RUN_SCHEMA_VERSION
    from simulator.migrate import MigrationError

    version = header.get("schema_version")
    if isinstance(version, int) and version > RUN_SCHEMA_VERSION:
        raise DiagnosisError(f"{header_path}: schema_version: {version} is newer than supported {RUN_SCHEMA_VERSION}")
    try:
        header = RUN_HEADER_MIGRATIONS.upgrade(header, version, str(header_path))
    except MigrationError as err:
        raise DiagnosisError(str(err)) from None
    sdir = _resolve_scenarios(run_dir, header, Path(scenarios_dir) if scenarios_dir is not None else None)
    try:
        scenarios = load_scenarios(sdir)
    except ScenarioError as err:
        raise DiagnosisError(str(err)) from None
    pairs: list[tuple[Scenario, Sequence[Any] | None]] = []
    for sc in scenarios:
        path = run_dir / "traces" / f"{sc.id}.jsonl"
        if not path.is_file():
            pairs.append((sc, None))
            continue
        try:
            pairs.append((sc, read_trace(path)))
        except TraceError as err:
            raise DiagnosisError(str(err)) from None
    try:
        return diagnose_run(pairs)
    except (TraceError, ScenarioError) as err:
        raise DiagnosisError(str(err)) from None


# --------------------------------------------------------------------------------------------- views


def _visible(d: Diagnosis) -> bool:
    return d.split in VISIBLE_SPLITS


def _counts_line(counts: dict[str, int]) -> str:
    return ", ".join(f"{k} {v}" for k, v in counts.items()) or "none"


def render_for_editor(run: RunDiagnosis, max_examples: int = 8, module: str | None = None, cause: str | None = None) -> str:
    """A readable diagnosis an editor may see.

    Visible conversations (dev, fixed_core, example) appear with failed checks, cause, module,
    evidence and a trace excerpt; anything else (protection) appears only as aggregate counts:
    never its scenario ids, text, turns, values or trace lines.
    """
    vis = [d for d in run.conversations if _visible(d)]
    hidden = [d for d in run.conversations if not _visible(d)]
    lines = ["# Diagnosis", ""]
    sub = _aggregate(vis) if vis else None
    if sub is not None:
        lo, hi = sub.q_ci95
        lines.append(
            f"Visible conversations: n={sub.n}, passed={sub.passed}, failed={sub.failed}, "
            f"perception-only={sub.excluded_perception}, Q={sub.q:.1f}% [95% CI {lo:.1f}-{hi:.1f}]"
        )
        lines.append(f"Terminal causes: {_counts_line(sub.causes)}")
        lines.append(f"Blamed modules: {_counts_line(sub.modules)}")
        pat = [f"{p} {r.n - r.passed}/{r.n}" for p, r in sub.per_pattern.items() if r.n > r.passed]
        if pat:
            lines.append(f"Failing patterns (failed/n): {', '.join(pat)}")
    if hidden:
        hsub = _aggregate(hidden)
        lines.append(
            f"Hidden conversations (aggregate only): n={hsub.n}, failed={hsub.failed}, "
            f"perception-only={hsub.excluded_perception}; causes: {_counts_line(hsub.causes)}; modules: {_counts_line(hsub.modules)}"
        )
    chosen = [d for d in vis if not d.passed and (module is None or d.module == module) and (cause is None or d.cause == cause)]
    if chosen:
        lines += ["", f"## Failed visible conversations ({min(len(chosen), max_examples)} of {len(chosen)})"]
    for d in chosen[:max_examples]:
        lines += ["", f"### {d.scenario_id} ({', '.join(d.patterns)}): {d.cause} -> {d.module}" + (f".{d.hook}" if d.hook else "")]
        lines += [f"- failed {c}" for c in d.failed_checks]
        lines += [f"- {e}" for e in d.evidence]
        if d.trace_excerpt:
            lines += ["", "```jsonl", *d.trace_excerpt, "```"]
    return "\n".join(lines) + "\n"


_CITED_TURN = re.compile(r"\bturn (\S+) at ")


def cited_turns(d: Diagnosis, scenario: Scenario | None) -> list[TurnEvidence]:
    """The user turns a visible diagnosis's evidence cites, with their text and ground-truth op
    (read from the scenario; never for a hidden split)."""
    if scenario is None or scenario.split not in TURN_SPLITS:
        return []
    by_id = {t.id: t for t in scenario.turns}
    out: list[TurnEvidence] = []
    for line in d.evidence:
        for tid in _CITED_TURN.findall(line):
            turn = by_id.get(tid)
            if turn is not None and all(x.turn_id != tid for x in out):
                out.append(_evidence(scenario, turn))
    return out


# Connective kind of the catalogue (the first part of a family id, ``<kind>/<split>/<family>``) ->
# the ground-truth op of the user turn the simulator words with it. Family ids of other kinds are
# request-type families: they word the requests themselves (ops ``new``, ``batch``, ``chat``).
CONNECTIVE_OPS: dict[str, str] = {
    "refine": "refine",
    "correction": "new",
    "replace": "replace",
    "cancel": "cancel",
    "restore": "restore",
    "status": "status",
    "barge_in": "stop",
    "stop": "stop",
    "resume": "resume",
    "backchannel": "backchannel",
    "side_talk": "side",
    "also": "new",
    "batch_join": "batch",
    "repeat": "new",
    "provide": "provide",
    "remember": "remember",
    "task_only": "new",
    "recheck": "follow_up",
    "follow_up": "follow_up",
    "history_reset": "reset",
}
_REQUEST_OPS = ("new", "batch", "chat")


def turn_families(scenario: Scenario, op: str) -> list[str]:
    """The paraphrase families (of ``scenario.families``) a user turn of ground-truth op ``op`` can
    have been worded from: the connective families of the kinds that make turns of that op, and for
    request turns the request-type families too. Empty when the scenario records none."""
    out = []
    for fid in scenario.families:
        kind = fid.split("/", 1)[0]
        made = CONNECTIVE_OPS.get(kind)
        if made == op or (made is None and op in _REQUEST_OPS):
            out.append(fid)
    return out


def _evidence(scenario: Scenario, turn: Any) -> TurnEvidence:
    """One user turn of a visible scenario: text, ground-truth op, the families it was worded from,
    and whether an answer is to be heard in full after it (a ``delivered`` check names the turn)."""
    after = any(e.check == "delivered" and getattr(e, "turn", None) == turn.id for e in scenario.expect)
    op = turn.intent.op
    return TurnEvidence(
        scenario_id=scenario.id, turn_id=turn.id, text=turn.text, op=op, answer_after=after, families=turn_families(scenario, op)
    )


def turn_evidence(scenario: Scenario) -> list[TurnEvidence]:
    """Every user turn of a visible scenario as editor evidence (empty for a hidden split)."""
    if scenario.split not in TURN_SPLITS:
        return []
    return [_evidence(scenario, t) for t in scenario.turns]


def failure_examples(
    run: RunDiagnosis,
    pairs: list[tuple[Scenario, Sequence[Any] | None]] | None = None,
    module: str | None = None,
    cause: str | None = None,
    limit: int = 8,
) -> list[FailureExample]:
    """Visible failed conversations (dev, fixed_core, example; never protection) as editor examples.

    ``pairs`` (the scenarios and traces the diagnosis was made from) widen each trace excerpt by
    one neighbouring event on each side of the cited events.
    """
    traces: dict[str, Sequence[Any] | None] = {sc.id: ev for sc, ev in (pairs or []) if sc.split in VISIBLE_SPLITS}
    scen: dict[str, Scenario] = {sc.id: sc for sc, _ in (pairs or []) if sc.split in VISIBLE_SPLITS}
    out: list[FailureExample] = []
    for d in run.conversations:
        if d.passed or not _visible(d):
            continue
        if module is not None and d.module != module:
            continue
        if cause is not None and d.cause != cause:
            continue
        excerpt = d.trace_excerpt
        events = traces.get(d.scenario_id)
        if events and d.scenario_id in scen and d.event_ids:
            excerpt = build_index(scen[d.scenario_id], events).excerpt(d.event_ids, context=1, limit=24)
        out.append(
            FailureExample(
                scenario_id=d.scenario_id,
                patterns=list(d.patterns),
                cause=d.cause or "",
                module=d.module or "",
                evidence="\n".join(d.evidence),
                failed_checks=list(d.failed_checks),
                trace_excerpt="\n".join(excerpt),
                turns=cited_turns(d, scen.get(d.scenario_id)),
            )
        )
        if len(out) >= limit:
            break
    return out


def run_diagnosis_json(run: RunDiagnosis, conversations: bool = True) -> str:
    data = run.model_dump(mode="json")
    if conversations:
        data["conversations"] = [
            {k: c[k] for k in ("scenario_id", "split", "passed", "cause", "module", "hook", "evidence", "event_ids", "failed_checks")}
            | {"id": c["scenario_id"]}
            for c in data["conversations"]
        ]
    else:
        data.pop("conversations")
    return json.dumps(data, indent=2) + "\n"


def render_run_diagnosis(run: RunDiagnosis, console: Any, max_rows: int = 25) -> None:
    """Print a run's diagnosis as rich tables: causes, modules, patterns, failed conversations, Q."""
    from rich.markup import escape
    from rich.table import Table

    t = Table(title="Terminal causes")
    t.add_column("cause")
    t.add_column("count", justify="right")
    t.add_column("meaning")
    for c, k in run.causes.items():
        t.add_row(c, str(k), CAUSE_HELP.get(c, ""))
    console.print(t)
    m = Table(title="Blamed modules")
    m.add_column("module")
    m.add_column("count", justify="right")
    for c, k in run.modules.items():
        m.add_row(c, str(k))
    console.print(m)
    p = Table(title="Patterns")
    for col in ("pattern", "n", "passed", "perception", "Q %", "causes"):
        p.add_column(col, justify="left" if col in ("pattern", "causes") else "right")
    for name, r in run.per_pattern.items():
        p.add_row(name, str(r.n), str(r.passed), str(r.excluded_perception), f"{r.q:.1f}", escape(_counts_line(r.causes)))
    console.print(p)
    failed = [d for d in run.conversations if not d.passed]
    if failed:
        f = Table(title=f"Failed conversations ({len(failed)})")
        for col in ("conversation", "cause", "module", "evidence"):
            f.add_column(col)
        for d in failed[:max_rows]:
            f.add_row(
                escape(d.scenario_id), d.cause or "", (d.module or "") + (f".{d.hook}" if d.hook else ""), escape("\n".join(d.evidence[:2]))
            )
        console.print(f)
        if len(failed) > max_rows:
            console.print(f"... and {len(failed) - max_rows} more (use --json for all)")
    lo, hi = run.q_ci95
    console.print(
        f"Q = {run.q:.1f}% [95% CI {lo:.1f}-{hi:.1f}]  n={run.n} passed={run.passed} failed={run.failed} "
        f"excluded_perception={run.excluded_perception}"
        + (f" excluded_infrastructure={run.excluded_infrastructure} (model calls failed; no module blamed)" if run.excluded_infrastructure else "")
    )
