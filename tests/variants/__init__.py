"""Deliberately broken harness variants and the labelled diagnosis bench built from them.

Each :class:`Variant` copies the shipped ``modules/`` harness and breaks one decision point (by
appending a redefinition of one helper to a module's ``rules.py``), or keeps the harness and
degrades the interaction model through scenario conditions (perception). Running the variant on
scenarios that exercise the broken behaviour gives failed conversations whose true culprit is
known. A conversation is labelled only if the unbroken harness passes it and the variant fails
it; :func:`measure` reports how often the diagnoser blames the right module.
"""

from __future__ import annotations

import shutil
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

from duplexagent.loader import default_modules_dir
from duplexagent.runner import run_scenarios
from rsi.diagnose import diagnose_run, parse_trace_text
from simulator.scenario import Scenario

from tests.variants import scenarios as S

__all__ = ["VARIANTS", "Variant", "VariantResult", "BenchResult", "build_harness", "measure", "measure_generated"]


@dataclass(frozen=True)
class Variant:
    """One broken harness (or degraded interaction model) with the module a diagnosis must blame."""

    name: str
    blame: str
    description: str
    scenarios: Callable[[], list[Scenario]]
    module: str | None = None
    patch: str = ""
    reference: Callable[[], list[Scenario]] | None = None  # the same conversations without the break


VARIANTS: tuple[Variant, ...] = (
    Variant(
        "intake_never_refines",
        "intake",
        "Intake's refinement helper always says no: a refinement becomes a new task",
        S.refine_scenarios,
        "intake",
        "def _is_refinement(t, rtype, target, p):\n    return False\n",
    ),
    Variant(
        "worker_last_utterance",
        "worker",
        "Worker sends only the task's last utterance to the delegate",
        S.refine_scenarios,
        "worker",
        "def _request_text(view, p):\n"
        "    task = view.task\n"
        "    return f\"[{task.request_type or 'request'}] The user said: \" + task.utterances[-1]\n",
    ),
    Variant(
        "intake_never_cancels",
        "intake",
        "Intake's cancel helper never recognises a cancellation",
        S.cancel_scenarios,
        "intake",
        "def _is_cancel(t, p):\n    return False\n",
    ),
    Variant(
        "intake_never_resets",
        "intake",
        "Intake's reset helper never recognises a request to start over",
        S.reset_scenarios,
        "intake",
        "def _is_reset(t, p):\n    return False\n",
    ),
    Variant(
        "hold_never_acknowledges",
        "hold",
        "Hold plans only progress updates: no acknowledgement, status or question",
        S.slow_scenarios,
        "hold",
        "def plan(view):\n    return HoldDecision(announcements=_progress(view, view.params) if view.trigger == 'tick' else [],\n"
        "                        next_check_s=_next_check(view, view.params))\n",
    ),
    Variant(
        "deliver_always_waits",
        "deliver",
        "Deliver never finds a good moment to speak",
        S.refine_scenarios,
        "deliver",
        "def _should_wait(view, p):\n    return True\n",
    ),
    Variant(
        "memory_hides_facts",
        "memory",
        "Memory saves facts but shows no module any of them",
        S.memory_scenarios,
        "memory",
        "def context(view):\n    return ContextDecision()\n",
    ),
    Variant(
        "hold_never_reports_progress",
        "hold",
        "Hold never plans a progress update (nor a filler)",
        S.slow_scenarios,
        "hold",
        "def _progress(view, p):\n    return []\n\n\ndef _filler(view, p):\n    return []\n",
    ),
    Variant(
        "deliver_never_yields",
        "deliver",
        "Deliver keeps talking whatever the user says",
        S.barge_in_scenarios,
        "deliver",
        "def _should_yield(view, p):\n    return False\n",
    ),
    Variant(
        "memory_saves_nothing",
        "memory",
        "Memory never saves a durable fact",
        S.memory_scenarios,
        "memory",
        "def observe(view):\n    return ObserveDecision()\n",
    ),
    Variant(
        "policy_never_delegates",
        "policy",
        "Policy answers every request directly instead of delegating it",
        S.slow_scenarios,
        "policy",
        "def _needs_delegation(view, p):\n    return False\n\n\n"
        "def _native(view, p):\n    return RouteDecision(action='RESPOND', reason='answer everything directly')\n",
    ),
    Variant(
        "policy_replies_in_pauses",
        "policy",
        "Policy treats every turn end as final, even mid-sentence after a filler",
        S.pause_scenarios,
        "policy",
        "def _is_incomplete(view, p):\n    return False\n",
    ),
    Variant(
        "worker_never_retries",
        "worker",
        "Worker gives up on the first delegate error",
        S.retry_scenarios,
        "worker",
        "def _verdict(view, p):\n    return 'accept' if view.result.status == 'ok' else 'fail'\n",
    ),
    Variant(
        "im_native_takeover",
        "perception",
        "The interaction model's own turn-end fires after 0.3 s of mid-sentence silence",
        lambda: S.pause_scenarios(native_takeover_silence_s=0.3),
        reference=S.pause_scenarios,
    ),
    Variant(
        "im_missed_turn",
        "perception",
        "The interaction model never perceives the request",
        S.missed_turn_scenarios,
        reference=lambda: S.missed_turn_scenarios(miss=False),
    ),
)


def build_harness(variant: Variant, workdir: Path) -> Path:
    """Copy the shipped harness into ``workdir/<variant>`` and apply the variant's break."""
    dest = workdir / variant.name
    if dest.exists():
        shutil.rmtree(dest)
    shutil.copytree(default_modules_dir(), dest)
    if variant.module is not None:
        rules = dest / variant.module / "rules.py"
        rules.write_text(rules.read_text(encoding="utf-8") + "\n\n# --- broken on purpose (diagnosis bench)\n" + variant.patch, encoding="utf-8")
    return dest


@dataclass
class VariantResult:
    """How the diagnoser did on one variant."""

    name: str
    blame: str
    scenarios: int
    labelled: int
    correct: int
    wrong: list[tuple[str, str, str]]  # (scenario id, cause, module) of misattributed conversations
    causes: dict[str, int]

    @property
    def accuracy(self) -> float:
        return self.correct / self.labelled if self.labelled else 0.0


@dataclass
class BenchResult:
    """The whole bench."""

    variants: list[VariantResult]

    @property
    def labelled(self) -> int:
        return sum(v.labelled for v in self.variants)

    @property
    def correct(self) -> int:
        return sum(v.correct for v in self.variants)

    @property
    def accuracy(self) -> float:
        return self.correct / self.labelled if self.labelled else 0.0


def _run(scenarios: list[Scenario], harness: Path | str):
    res = run_scenarios(scenarios, harness)
    pairs = [(sc, parse_trace_text(res.traces[sc.id])) for sc in scenarios]
    return res.score, pairs


def measure(workdir: Path | None = None, variants: tuple[Variant, ...] = VARIANTS) -> BenchResult:
    """Run every variant on its scenarios and score the diagnoser's module attribution."""
    own = workdir is None
    root = Path(tempfile.mkdtemp(prefix="diag-bench-")) if workdir is None else Path(workdir)
    try:
        reference = default_modules_dir()
        out = []
        for v in variants:
            scenarios = v.scenarios()
            ref_score, _ = _run(v.reference() if v.reference is not None else scenarios, reference)
            harness = build_harness(v, root) if v.module is not None else reference
            score, pairs = _run(scenarios, harness)
            diag = diagnose_run(pairs, score)
            ref_pass = {c.id: c.passed for c in ref_score.conversations}
            labelled = [d for d in diag.conversations if not d.passed and ref_pass.get(d.scenario_id, False)]
            wrong = [(d.scenario_id, d.cause or "", d.module or "") for d in labelled if d.module != v.blame]
            causes: dict[str, int] = {}
            for d in labelled:
                causes[d.cause or ""] = causes.get(d.cause or "", 0) + 1
            out.append(VariantResult(v.name, v.blame, len(scenarios), len(labelled), len(labelled) - len(wrong), wrong, causes))
        return BenchResult(out)
    finally:
        if own:
            shutil.rmtree(root, ignore_errors=True)


def measure_generated(n: int = 300, seed: int = 11, workdir: Path | None = None, variants: tuple[Variant, ...] = VARIANTS) -> BenchResult:
    """The same attribution check on composed dev conversations (``simulator.compose``).

    Every harness-breaking variant runs on the same ``n`` conversations; a conversation is
    labelled for a variant when the unbroken harness passes it and the variant fails it. These
    conversations were not written for the variants, so a failure may come from a latent fault
    the unbroken harness got away with; the diagnoser must still blame the broken module.
    """
    from simulator.compose import compose

    scenarios = compose("dev", n, seed)
    own = workdir is None
    root = Path(tempfile.mkdtemp(prefix="diag-bench-gen-")) if workdir is None else Path(workdir)
    try:
        ref_score, _ = _run(scenarios, default_modules_dir())
        ref_pass = {c.id for c in ref_score.conversations if c.passed}
        out = []
        for v in variants:
            if v.module is None:
                continue
            score, pairs = _run(scenarios, build_harness(v, root))
            diag = diagnose_run(pairs, score)
            labelled = [d for d in diag.conversations if not d.passed and d.scenario_id in ref_pass]
            wrong = [(d.scenario_id, d.cause or "", d.module or "") for d in labelled if d.module != v.blame]
            causes: dict[str, int] = {}
            for d in labelled:
                causes[d.cause or ""] = causes.get(d.cause or "", 0) + 1
            out.append(VariantResult(v.name, v.blame, len(scenarios), len(labelled), len(labelled) - len(wrong), wrong, causes))
        return BenchResult(out)
    finally:
        if own:
            shutil.rmtree(root, ignore_errors=True)
