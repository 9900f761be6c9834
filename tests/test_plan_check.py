"""A plan is checked against speech heard since it was made: while that speech waits unjudged, the
worker's plan runs only if Worker.review (status ``plan``, the speech in ``new_speech``) finds it
unrelated and nothing changed during the check; otherwise it waits for Intake."""

from __future__ import annotations

from duplexagent.engine import Session
from duplexagent.contract import ReviewDecision
from duplexagent.loader import Harness, load_harness
from tests._scenarios import refine_scenario
from tests.conftest import MODULES

def wait_for_intake(view):
    """Worker.review that holds a plan back while any speech since it was made is unjudged."""
    if view.result.status == "plan":
        return ReviewDecision(task_id=view.task.task_id, version=view.task.version, verdict="wait" if view.new_speech else "accept")
    return ReviewDecision(task_id=view.task.task_id, version=view.task.version, verdict="accept" if view.result.status == "ok" else "fail")


def _quick_refinement():
    """The user goes on to change the day 0.1 s after the turn ends, before the plan is dispatched."""
    sc = refine_scenario()
    u2 = sc.turns[1].model_copy(update={"after": sc.turns[1].after.model_copy(update={"event": "user_turn_end", "delay_s": 0.9})})
    return sc.model_copy(update={"turns": [sc.turns[0], u2]})


def _run(harness):
    return Session(_quick_refinement(), harness if isinstance(harness, Harness) else load_harness(harness, strict=False)).run()


def test_a_worker_that_waits_for_intake_never_runs_the_stale_plan():
    events = _run(Harness.from_hooks({"worker.review": wait_for_intake}))
    dispatched = [(e.task, e.version) for e in events if e.kind == "delegate.dispatch"]
    assert dispatched == [("T1", 2)], dispatched  # only the refined version ever ran
    waits = [e for e in events if e.kind == "harness.decision" and e.module == "worker" and e.decision.get("verdict") == "wait"]
    assert waits, "the plan check was never asked"
    spoken = " ".join(e.text for e in events if e.kind == "agent.speech_start")
    assert "Saturday" in spoken and "Friday" not in spoken


def test_g0_clears_a_change_that_names_only_new_values_and_runs_the_stale_plan():
    events = _run(MODULES)
    checks = [e for e in events if e.kind == "harness.decision" and e.module == "worker" and e.decision.get("verdict") == "accept"
              and e.t < 6.0]
    assert checks, "g0's plan check should have cleared the speech as unrelated"
    dispatched = [(e.task, e.version) for e in events if e.kind == "delegate.dispatch"]
    assert dispatched[0] == ("T1", 1) and ("T1", 2) in dispatched  # the stale plan ran, then the refined one
    # the result check still keeps the stale answer from the speaker
    spoken = " ".join(e.text for e in events if e.kind == "agent.speech_start")
    assert "Friday" not in spoken


def test_a_late_answer_after_a_stale_plan_is_blamed_on_worker_review():
    from rsi.diagnose import diagnose_conversation

    sc = _quick_refinement()
    sc = sc.model_copy(update={"expect": [e.model_copy(update={"by_s": 12.0}) if e.check == "delivered" else e for e in sc.expect]})
    events = Session(sc, load_harness(MODULES, strict=False)).run()
    d = diagnose_conversation(sc, events)
    assert (d.cause, d.module, d.hook) == ("stale_plan", "worker", "review"), d
    assert any("cleared speech heard since the plan of T1 v1" in line for line in d.evidence)
