"""Small hand-built scenarios for runtime tests."""

from __future__ import annotations

from simulator.scenario import Scenario, parse_scenario

FLIGHT_TASK = {
    "key": "flight",
    "request_type": "flight_search",
    "slots": {"destination": "Lisbon", "day": "Friday"},
    "vocab": {"destination": ["Lisbon", "Porto"], "day": ["Friday", "Saturday"]},
    "keywords": ["flight", "fly"],
    "delay_s": 6,
    "answer_template": "The best flight to {destination} on {day} leaves at 9:40 and costs 120 euros.",
}


def refine_scenario(**over) -> Scenario:
    data = {
        "id": "t-refine",
        "seed": 3,
        "split": "example",
        "request_types": ["flight_search"],
        "patterns": ["refine_running"],
        "duration_s": 60,
        "turns": [
            {
                "id": "u1",
                "text": "Could you find me a flight to Lisbon on Friday?",
                "at": 0.5,
                "intent": {"op": "new", "task": "flight"},
            },
            {
                "id": "u2",
                "text": "Actually, make it Saturday.",
                "after": {"event": "delegate_dispatch", "ref": "u1", "delay_s": 1.5, "else_at": 6},
                "intent": {"op": "refine", "task": "flight", "slots": {"day": "Saturday"}},
            },
        ],
        "world": {"tasks": [FLIGHT_TASK]},
        "expect": [
            {"check": "delivered", "contains": ["Lisbon", "Saturday"], "by_s": 40},
            {"check": "never_heard", "absent": ["Friday"]},
        ],
    }
    data.update(over)
    return parse_scenario(data)


def barge_in_scenario() -> Scenario:
    return parse_scenario(
        {
            "id": "t-barge",
            "seed": 5,
            "split": "example",
            "request_types": ["flight_search"],
            "patterns": ["barge_in_delivery"],
            "duration_s": 60,
            "turns": [
                {"id": "u1", "text": "Find me a flight to Lisbon on Friday.", "at": 0.5, "intent": {"op": "new", "task": "flight"}},
                {
                    "id": "u2",
                    "text": "Sorry, one thing, is that the morning one?",
                    "after": {"event": "agent_speech_start", "ref": "u1", "contains": "9:40", "delay_s": 1.0, "else_at": 30},
                    "intent": {"op": "follow_up", "task": "flight"},
                },
            ],
            "world": {"tasks": [FLIGHT_TASK]},
            "expect": [
                {"check": "yielded", "turn": "u2", "within_s": 1.0},
                {"check": "delivered", "contains": ["9:40"], "by_s": 50},
            ],
        }
    )
