"""History reset as an intent: a user turn asks to start over; Intake's typed ``reset`` op closes
the live tasks and fences off older asynchronous writes (a late delegate result, a late memory
write, a queued plan), each refusal visible in the trace."""

from __future__ import annotations

from duplexagent.engine import Session
from duplexagent.ledger import Ledger, LedgerError, State
from duplexagent.loader import load_harness
from simulator.scenario import parse_scenario
from simulator.score import score_conversation
from tests._scenarios import FLIGHT_TASK
from tests.conftest import MODULES

PORTO = {**FLIGHT_TASK, "key": "porto", "slots": {"destination": "Porto", "day": "Saturday"}, "delay_s": 3}


def _reset_scenario():
    return parse_scenario(
        {
            "id": "t-reset",
            "seed": 4,
            "split": "example",
            "request_types": ["flight_search"],
            "patterns": ["single_request"],
            "duration_s": 60,
            "turns": [
                {
                    "id": "u1",
                    "text": "My seat is aisle. Could you find me a flight to Lisbon on Friday?",
                    "at": 0.5,
                    "intent": {"op": "new", "task": "flight"},
                },
                {
                    "id": "u2",
                    "text": "Hmm, forget all that, let's start over.",
                    "after": {"event": "delegate_dispatch", "ref": "u1", "delay_s": 1.0, "else_at": 8},
                    "intent": {"op": "cancel", "task": "flight"},
                },
                {
                    "id": "u3",
                    "text": "Could you find me a flight to Porto on Saturday?",
                    "after": {"event": "agent_speech_end", "ref": "u2", "delay_s": 1.0, "else_at": 16},
                    "intent": {"op": "new", "task": "porto"},
                },
            ],
            "world": {"tasks": [{**FLIGHT_TASK, "delay_s": 8}, PORTO]},
            "expect": [
                {"check": "never_heard", "absent": ["Lisbon", "aisle"]},
                {"check": "delivered", "task": "porto", "contains": ["Porto", "Saturday"], "by_s": 40},
            ],
        }
    )


def _run(**kw):
    return Session(_reset_scenario(), load_harness(MODULES, strict=False), **kw).run()


def test_reset_through_a_user_turn_refuses_the_late_result_and_the_late_memory_write():
    # the store takes 6 s to write, so the fact stated in u1 is still in flight when u2 resets
    events = _run(memory_write_s=6.0)
    intake = [e for e in events if e.kind == "harness.decision" and e.module == "intake" and e.turn == "u2"]
    assert intake and intake[0].accepted and [op["op"] for op in intake[0].decision["ops"]] == ["reset"]
    resets = [e for e in events if e.kind == "history.reset"]
    assert len(resets) == 1 and resets[0].turn == "u2" and resets[0].closed == ["T1"]
    # the Lisbon search was closed by the reset; its delegate result comes back later and is refused
    late = [e for e in events if e.kind == "delegate.return" and e.task == "T1"]
    assert late and late[0].t > resets[0].t
    refused = [e for e in events if e.kind == "ledger.transition" and e.refused and "predates a history reset" in e.reason]
    assert refused and refused[0].task == "T1" and refused[0].t == late[0].t
    # the memory write proposed before the reset lands after it and is refused
    fenced = [e for e in events if e.kind == "history.fenced"]
    assert len(fenced) == 1 and fenced[0].what == "memory_write" and "aisle" in fenced[0].detail
    assert fenced[0].t > resets[0].t and fenced[0].fence == resets[0].fence - 1
    # nothing from before the reset is spoken; the request after it is answered
    spoken = " ".join(e.text for e in events if e.kind == "agent.speech_start")
    assert "Lisbon" not in spoken and "aisle" not in spoken and "Porto" in spoken
    assert score_conversation(_reset_scenario(), events).passed


def test_without_the_reset_the_same_writes_land():
    sc = _reset_scenario()
    u2 = sc.turns[1].model_copy(update={"text": "Okay, thank you."})
    quiet = sc.model_copy(update={"turns": [sc.turns[0], u2, sc.turns[2]]})
    events = Session(quiet, load_harness(MODULES, strict=False), memory_write_s=6.0).run()
    assert not [e for e in events if e.kind in ("history.reset", "history.fenced")]
    spoken = " ".join(e.text for e in events if e.kind == "agent.speech_start")
    assert "Lisbon" in spoken


def test_a_queued_plan_from_before_a_reset_is_never_dispatched_nor_restored():
    ledger = Ledger()
    queued = ledger.create(0.0, request_type="search", slots={}, utterances=["u"])
    ledger.reset_history(1.0)  # a fence only: the version stays QUEUED, yet its plan is from before
    try:
        ledger.start_call(queued.task_id, 1, 1.5, call_id="c1", request="r")
    except LedgerError as err:
        assert err.reason == "dispatch: plan predates a history reset"
    else:
        raise AssertionError("a plan from before the reset was dispatched")
    ledger.reset_history(2.0, close=True)  # a user's reset closes it
    assert queued.state == State.CANCELLED
    try:
        ledger.restore(queued.task_id, 2.5)
    except LedgerError as err:
        assert err.reason == "restore: task predates a history reset"
    else:
        raise AssertionError("a task closed by a reset came back")
    fresh = ledger.create(3.0, request_type="search", slots={}, utterances=["again"])
    assert ledger.start_call(fresh.task_id, 1, 3.1, call_id="c2", request="r").state == State.RUNNING


def test_after_a_reset_intake_is_not_offered_the_tasks_it_closed():
    """Intake's view lists live tasks, then cancelled ones that could be restored; a task a reset
    closed cannot be, so the turn after a reset is not read against it (a harness that restored
    "the cancelled task" on the next request lost that request to a refused restore)."""
    from duplexagent import contract as C

    seen: list[tuple[str, list[tuple[str, str]]]] = []
    harness = load_harness(MODULES, strict=False)
    spec = harness.modules["intake"]
    inner = spec.hooks["interpret"]

    def spy(view: C.IntakeView):
        seen.append((view.turn.id, [(t.task_id, t.state) for t in view.tasks]))
        return inner(view)

    spec.hooks["interpret"] = spy
    events = Session(_reset_scenario(), harness).run()
    assert [e for e in events if e.kind == "history.reset"]
    after = [tasks for turn, tasks in seen if turn == "u3"]
    assert after and all(task != "T1" for task, _ in after[0])
