"""A replace that keeps the task id of the task in hand is a replace done: when its conversation
fails because the old answer was spoken over the user's change, the diagnosis blames Deliver's
stale delivery, not Intake's binding or a missed replace."""

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
            "id": "v-replace-keeps-id",
            "seed": 5,
            "request_types": ["weather", "reminder"],
            "patterns": ["replace_running"],
            "turns": [
                {"id": "u1", "text": "What's it doing weather-wise in Galway on Sunday?", "at": 0.5, "intent": {"op": "new", "task": "wx", "slots": {"city": "Galway", "day": "Sunday"}}},
                {
                    "id": "u2",
                    "text": "Hmm, scratch the weather one, I've just remembered something more pressing, I really do need a nudge to put the recycling out at 8 pm instead.",
                    "at": 5.0,
                    "intent": {"op": "replace", "task": "nudge", "slots": {"chore": "put the recycling out", "time": "8 pm"}},
                },
            ],
            "world": {
                "tasks": [
                    {
                        "key": "wx",
                        "request_type": "weather",
                        "slots": {"city": "Galway", "day": "Sunday"},
                        "keywords": ["weather"],
                        "delay_s": 4,
                        "answer_template": "In {city} on {day} expect showers and a stiff westerly.",
                    },
                    {
                        "key": "nudge",
                        "request_type": "reminder",
                        "slots": {"chore": "put the recycling out", "time": "8 pm"},
                        "keywords": ["recycling"],
                        "delay_s": 3,
                        "answer_template": "Done, I'll nudge you to {chore} at {time}.",
                    },
                ],
            },
            "expect": [
                {"check": "never_heard", "absent": ["stiff westerly"]},
                {"check": "delivered", "task": "nudge", "contains": ["recycling"], "by_s": 55},
            ],
        },
        "<v-replace-keeps-id>",
    )


# Intake reads the second turn as what it is: a replace of the task in hand, which keeps its task id
_REPLACES = Variant(
    "intake_replaces_in_place",
    "intake",
    "a turn saying 'instead' while a task is live replaces it in place",
    lambda: [_scenario()],
    "intake",
    "_orig_interpret = interpret\n\n"
    "def interpret(view):\n"
    "    live = [t for t in view.tasks if t.state in ('QUEUED', 'RUNNING', 'READY')]\n"
    "    if live and 'instead' in view.turn.text:\n"
    "        op = IntakeOp(op='replace', task_id=live[0].task_id, version=live[0].version, request_type='reminder',\n"
    "                      slots={'time': '20:00'}, text=view.turn.text)\n"
    "        return IntakeDecision(ops=[op], reason='replace')\n"
    "    return _orig_interpret(view)\n",
)


def test_the_old_answer_spoken_over_a_replace_is_a_stale_delivery_not_a_binding(tmp_path: Path) -> None:
    root = build_harness(_REPLACES, tmp_path)
    sc = _scenario()
    res = run_scenarios([sc], root)
    conv = res.score.conversations[0]
    assert not conv.passed
    events = parse_trace_text(res.traces[sc.id])
    replaced = [e for e in events if getattr(e, "kind", "") == "ledger.transition" and getattr(e, "reason", "") == "replaced" and getattr(e, "version", 0) == 2]
    assert replaced, "the replace must have made version 2 of the task in hand"
    spoken = [e for e in events if getattr(e, "kind", "") == "agent.speech_start" and "westerly" in getattr(e, "text", "")]
    assert spoken, "g0's Deliver must have spoken the old answer as the user's turn ended"
    d = diagnose_conversation(sc, events, conv)
    assert (d.cause, d.module) == ("stale_delivery", "deliver"), (d.cause, d.module, d.evidence)
