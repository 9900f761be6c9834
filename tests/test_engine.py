"""The session engine: end-to-end behaviour, robustness against foreign module code, determinism."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from duplexagent.clock import VirtualClock, WallClock
from duplexagent.contract import PrepareDecision, RouteDecision
from duplexagent.engine import Session
from duplexagent.events import CONTROL, DATA, priority
from duplexagent.loader import Harness, load_harness
from duplexagent.runner import trace_text
from simulator.score import score_conversation
from tests._scenarios import barge_in_scenario, refine_scenario
from tests.conftest import MODULES, ROOT


def _run(scenario, harness_dir=MODULES, **kw):
    harness = load_harness(harness_dir, strict=False)
    return Session(scenario, harness, **kw).run()


def _kinds(events, kind):
    return [e for e in events if e.kind == kind]


def test_refinement_supersedes_and_late_result_is_refused_not_spoken():
    events = _run(refine_scenario())
    refused = [e for e in _kinds(events, "ledger.transition") if e.refused and e.version == 1]
    assert refused and "replaced by version 2" in refused[0].reason
    spoken = " ".join(e.text for e in _kinds(events, "agent.speech_start"))
    assert "Saturday" in spoken and "Friday" not in spoken
    delivered = [e for e in _kinds(events, "ledger.transition") if e.to_state == "DELIVERED"]
    assert [(e.task, e.version) for e in delivered] == [("T1", 2)]
    assert score_conversation(refine_scenario(), events).passed


def test_barge_in_yields_then_replays_the_answer_in_a_new_epoch():
    sc = barge_in_scenario()
    events = _run(sc)
    ends = _kinds(events, "agent.speech_end")
    interrupted = [e for e in ends if e.interrupted]
    assert interrupted, "the answer should be cut off by the barge-in"
    # the cut-off answer was not marked delivered; a later full playback was
    answer_starts = [e for e in _kinds(events, "agent.speech_start") if e.purpose == "answer"]
    assert len(answer_starts) >= 2
    delivered = [e for e in _kinds(events, "ledger.transition") if e.to_state == "DELIVERED" and e.task == "T1"]
    assert len(delivered) == 1 and delivered[0].epoch >= 1
    assert score_conversation(sc, events).passed


def test_same_scenario_same_seed_gives_identical_bytes():
    a = trace_text(_run(refine_scenario()))
    b = trace_text(_run(refine_scenario()))
    assert a == b
    c = trace_text(_run(barge_in_scenario()))
    assert c == trace_text(_run(barge_in_scenario()))


def _raise_boom(view):
    raise RuntimeError("boom")


def _prepare_a_version_never_offered(view):
    return PrepareDecision(task_id=view.task.task_id, version=view.task.version + 7, request="x")


@pytest.mark.parametrize(
    "hook,fn,reason",
    [
        ("intake.interpret", _raise_boom, "hook raised RuntimeError: boom"),
        ("intake.interpret", lambda view: 42, "returned int, expected IntakeDecision"),
        ("intake.interpret", lambda view: {"ops": [{"op": "explode"}]}, "invalid decision"),
        ("policy.route", lambda view: {"action": "DANCE"}, "invalid decision"),
        ("deliver.choose", lambda view: {"action": "speak", "option_id": "nope"}, "unknown option nope"),
        ("worker.prepare", _prepare_a_version_never_offered, "prepare named T1 v8, offered T1 v1"),
    ],
)
def test_broken_module_is_rejected_with_reason_and_conversation_goes_on(hook, fn, reason):
    module = hook.split(".")[0]
    events = Session(refine_scenario(), Harness.from_hooks({hook: fn})).run()
    rejected = [e for e in _kinds(events, "harness.decision") if e.module == module and not e.accepted]
    assert rejected, f"no rejected {module} decision"
    assert any(reason in e.reason for e in rejected), [e.reason for e in rejected]
    # the session did not stop: the user's second turn was heard and the engine kept going
    assert any(e.kind == "user.speech_end" and e.turn == "u2" for e in events)
    assert events[-1].t > 10


def test_stale_version_in_intake_op_is_a_recorded_no_op():
    real = load_harness(MODULES).hook("intake", "interpret")

    def interpret(view):
        d = real(view)
        for op in d.ops:
            if op.op == "refine":
                op.version = op.version - 1 if op.version > 1 else 99
        return d

    events = Session(refine_scenario(), Harness.from_hooks({"intake.interpret": interpret})).run()
    no_ops = [e for e in _kinds(events, "harness.decision") if e.module == "intake" and not e.accepted]
    assert no_ops and "refine not applied" in no_ops[0].reason
    # the ledger never got version 2, so the old request's (Friday) answer is what was heard
    assert not any(e.kind == "ledger.transition" and e.version == 2 for e in events)


def test_module_that_fails_to_import_falls_back_safely(harness_copy):
    variant = harness_copy({"hold": "raise ImportError('broken on purpose')"})
    events = _run(refine_scenario(), variant)
    hold = [e for e in _kinds(events, "harness.decision") if e.module == "hold"]
    assert hold and all(not e.accepted for e in hold)
    assert "import failed" in hold[0].reason
    assert any(e.kind == "agent.speech_end" for e in events)


def test_low_confidence_decision_falls_back():
    harness = Harness.from_hooks({"policy.route": lambda view: RouteDecision(action="DELEGATE", confidence=0.2)})
    events = Session(refine_scenario(), harness).run()
    route = [e for e in _kinds(events, "harness.decision") if e.module == "policy"][0]
    assert not route.accepted and "below threshold" in route.reason
    asks = [e for e in _kinds(events, "agent.speech_start") if e.purpose == "ask"]
    assert asks, "the safe fallback asks the user to repeat"


def test_two_harness_versions_run_side_by_side():
    a = load_harness(MODULES)
    b = Harness.from_hooks({"policy.route": lambda view: RouteDecision(action="IGNORE")})
    ev_a = Session(refine_scenario(), a).run()
    ev_b = Session(refine_scenario(), b).run()
    assert _kinds(ev_a, "delegate.dispatch") and not _kinds(ev_b, "delegate.dispatch")
    # and a again, after b was built: unaffected
    assert trace_text(Session(refine_scenario(), a).run()) == trace_text(ev_a)


def test_every_module_decides_in_a_conversation():
    events = _run(refine_scenario())
    modules = {e.module for e in _kinds(events, "harness.decision")}
    assert {"policy", "intake", "hold", "worker", "deliver", "memory"} <= modules


def test_control_events_run_before_data_events_due_at_the_same_time():
    assert priority("delegate_result") == CONTROL
    assert priority("barge_check") == CONTROL
    assert priority("segment_start") == DATA
    sc = refine_scenario()
    s = Session(sc, load_harness(MODULES))
    from duplexagent import events as E

    s._push(E.SegmentStart(t=5.0, turn="u1", segment=0))
    s._push(E.DelegateResult(t=5.0, call="C9"))
    s._push(E.SegmentEnd(t=5.0, turn="u1", segment=0))
    s._push(E.DelegateTimeout(t=5.0, call="C9"))
    import heapq

    order = [heapq.heappop(s._queue)[3].kind for _ in range(4)]
    assert order == ["delegate_result", "delegate_timeout", "segment_start", "segment_end"]


def test_virtual_clock_jumps_and_never_goes_back():
    c = VirtualClock()
    c.advance_to(12.5)
    assert c.now() == 12.5
    with pytest.raises(ValueError):
        c.advance_to(3.0)
    w = WallClock()
    t0 = w.now()
    w.advance_to(t0 + 0.02)
    assert w.now() >= t0 + 0.02


def test_runtime_code_never_reads_the_time_directly():
    offenders = []
    for path in sorted([*(ROOT / "duplexagent").glob("*.py"), *(ROOT / "duplexagent" / "engine").glob("*.py")]):
        if path.name in {"clock.py", "runner.py", "cli.py"}:
            continue
        src = path.read_text()
        if re.search(r"\btime\.(time|sleep|monotonic|perf_counter)\(", src) or re.search(r"^\s*import time\b", src, re.M):
            offenders.append(path.name)
    assert offenders == []


def test_perception_miss_means_the_turn_is_never_acted_on():
    sc = refine_scenario(conditions={"perception_miss": ["u2"]})
    events = _run(sc)
    assert any(e.kind == "im.native" and e.what == "missed_turn" and e.turn == "u2" for e in events)
    assert not any(e.kind == "im.turn_end" and e.turn == "u2" for e in events)
    result = score_conversation(sc, events)
    assert not result.passed and result.excluded_perception


def test_mid_sentence_pause_ends_the_turn_early_when_longer_than_the_threshold():
    sc = refine_scenario(
        turns=[
            {
                "id": "u1",
                "text": "Could you find me a flight to Lisbon on Friday?",
                "at": 0.5,
                "pauses": [{"after_word": 3, "duration_s": 1.5}],
                "intent": {"op": "new", "task": "flight"},
            }
        ],
        expect=[{"check": "no_takeover", "turn": "u1"}],
    )
    events = _run(sc)
    ends = [e for e in events if e.kind == "im.turn_end"]
    assert ends[0].text == "Could you find" and ends[0].final is False
    assert ends[-1].final is True


def test_a_harness_from_hooks_runs_in_this_process_only():
    from duplexagent.loader import HarnessError
    from duplexagent.runner import run_scenarios

    harness = Harness.from_hooks({"policy.route": lambda view: RouteDecision(action="IGNORE")})
    result = run_scenarios([refine_scenario()], harness)  # the local executor: fine
    assert '"delegate.dispatch"' not in result.traces[refine_scenario().id]
    with pytest.raises(HarnessError, match=r"Harness.from_hooks.*local executor, not 'processes'"):
        run_scenarios([refine_scenario()], harness, executor="processes", workers=2)


@pytest.mark.parametrize(
    "key,message",
    [
        ("policy.rout", "policy has no hook 'rout'"),
        ("polcy.route", "unknown module 'polcy'"),
        ("intake.post_route", "intake has no hook 'post_route'"),
    ],
)
def test_from_hooks_refuses_a_misspelled_hook(key, message):
    from duplexagent.loader import HarnessError

    with pytest.raises(HarnessError, match=f"from_hooks: {key}: {message}"):
        Harness.from_hooks({key: lambda view: None})
