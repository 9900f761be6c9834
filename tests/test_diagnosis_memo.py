"""The campaign diagnoses a failed conversation once per scenario and trace: a candidate whose
conversation came out as the incumbent's (its trace relabelled) gets the same diagnosis as a fresh
one, without parsing or diagnosing it again."""

from __future__ import annotations

from types import SimpleNamespace

from duplexagent.loader import default_modules_dir, load_harness
from duplexagent.runner import run_scenarios
from rsi._sandbox import _relabel
from rsi.campaign import Campaign
from rsi.diagnose import diagnose_run, parse_trace_text, run_diagnosis_json
from simulator.compose import compose


def test_a_relabelled_trace_gets_the_diagnosis_a_fresh_one_gets() -> None:
    scenarios = compose("dev", 24, 7)
    result = run_scenarios(scenarios, load_harness(default_modules_dir()))
    failed = [c.id for c in result.score.conversations if not c.passed]
    assert failed  # g0 fails some of them: there is something to diagnose
    camp = SimpleNamespace(_diagnosed={})
    first, _ = Campaign._diagnose(camp, scenarios, result)  # type: ignore[arg-type]
    kept = len(camp._diagnosed)
    assert 0 < kept <= len(failed)

    relabelled = result.model_copy(update={"traces": {sid: _relabel(t, "r01c0") for sid, t in result.traces.items()}})
    assert relabelled.traces != result.traces
    again, pairs = Campaign._diagnose(camp, scenarios, relabelled)  # type: ignore[arg-type]
    fresh = diagnose_run([(sc, parse_trace_text(relabelled.traces[sc.id])) for sc in scenarios], relabelled.score)
    assert run_diagnosis_json(again) == run_diagnosis_json(fresh) == run_diagnosis_json(first)
    assert len(camp._diagnosed) == kept  # nothing diagnosed anew
    assert all(events for sc, events in pairs if sc.id in failed)  # the caller still gets the events
