"""A chat turn that Policy sends down the delegation path is Policy's mistake even when Intake makes
no task of it but changes the task in hand instead: the diagnosis names extra_delegation, not an
undelivered answer."""

from __future__ import annotations

from pathlib import Path

from duplexagent.runner import run_scenarios
from rsi.diagnose import diagnose_conversation, parse_trace_text
from simulator.scenario import parse_scenario
from tests.variants import Variant, build_harness


def _scenario():
    return parse_scenario(
        {
            "schema_version": 1,
            "split": "dev",
            "duration_s": 60,
            "id": "v-chat-during-task",
            "seed": 11,
            "request_types": ["flight_search", "quick_fact"],
            "patterns": ["request_then_chat"],
            "turns": [
                {"id": "u1", "text": "Could you find me a flight to Lisbon on Friday?", "at": 0.5, "intent": {"op": "new", "task": "flight", "slots": {"destination": "Lisbon", "day": "Friday"}}},
                {"id": "u2", "text": "Oh, I forgot, so do you know the capital of Chile?", "at": 6.0, "intent": {"op": "chat"}},
            ],
            "world": {
                "tasks": [
                    {
                        "key": "flight",
                        "request_type": "flight_search",
                        "slots": {"destination": "Lisbon", "day": "Friday"},
                        "keywords": ["flight"],
                        "delay_s": 12,
                        "answer_template": "The best flight to {destination} on {day} leaves at 9:40.",
                    }
                ],
                "direct": [{"match": ["capital", "Chile"], "reply": "The capital of Chile is Santiago."}],
            },
            "expect": [
                {"check": "responded_directly", "turn": "u2", "within_s": 3.0, "contains": ["Santiago"]},
                {"check": "delivered", "task": "flight", "contains": ["Lisbon"], "by_s": 50},
            ],
        },
        "<v-chat-during-task>",
    )


# Policy takes every turn heard while a task runs for work, and Intake reads such a turn as a change
# to that task: the chat question becomes a refinement of the flight search.
_BROKEN = Variant(
    "policy_delegates_all_and_intake_refines",
    "policy",
    "every turn is work; a turn during a live task refines it",
    lambda: [_scenario()],
    "policy",
    "def _needs_delegation(view, p):\n    return True\n",
)


def _intake_refines_live(dest: Path) -> None:
    rules = dest / "intake" / "rules.py"
    rules.write_text(
        rules.read_text(encoding="utf-8")
        + "\n\n_orig_interpret = interpret\n\n"
        "def interpret(view):\n"
        "    live = [t for t in view.tasks if t.state in ('QUEUED', 'RUNNING')]\n"
        "    if live:\n"
        "        return IntakeDecision(ops=[IntakeOp(op='refine', task_id=live[0].task_id, version=live[0].version, text=view.turn.text)], reason='refine')\n"
        "    return _orig_interpret(view)\n",
        encoding="utf-8",
    )


def test_chat_taken_as_a_change_to_the_task_in_hand_is_extra_delegation(tmp_path: Path) -> None:
    root = build_harness(_BROKEN, tmp_path)
    _intake_refines_live(root)
    sc = _scenario()
    res = run_scenarios([sc], root)
    conv = res.score.conversations[0]
    assert not conv.passed
    events = parse_trace_text(res.traces[sc.id])
    d = diagnose_conversation(sc, events, conv)
    assert (d.cause, d.module) == ("extra_delegation", "policy")
    assert any("change to a task in hand" in e for e in d.evidence)
    refine = [e for e in events if getattr(e, "kind", "") == "harness.decision" and getattr(e, "module", "") == "intake" and "refine" in str(getattr(e, "decision", ""))]
    assert refine, "the broken Intake must have read the chat turn as a refinement"
