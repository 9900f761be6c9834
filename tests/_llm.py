"""Helpers for tests of the model backends: a loopback 'model' that plays Intake judge and delegate."""

from __future__ import annotations

import json
from typing import Any

from duplexagent.fakes import RecordedRequest

KEY_ENV = "DUPLEXAGENT_TEST_API_KEY"
PLANTED_KEY = "sk-planted-7f3a9c2e1b4d8a6f0e5c"


def view_of(req: RecordedRequest) -> dict[str, Any]:
    """The module view a judge request carries."""
    for m in req.body.get("messages", []):
        content = m.get("content") or ""
        if isinstance(content, str) and "View (JSON):\n" in content:
            return json.loads(content.split("View (JSON):\n", 1)[1].split("\n\nReply with", 1)[0])
    raise AssertionError("not a judge request")


def is_judge(req: RecordedRequest) -> bool:
    return "response_format" in req.body


def intake_decision(view: dict[str, Any]) -> dict[str, Any]:
    """What a sensible Intake judge answers for the flight scenarios."""
    turn = view["turn"]["text"]
    live = [t for t in view["tasks"] if t["state"] not in ("CANCELLED",)]
    if "saturday" in turn.lower() and live:
        t = live[0]
        return {
            "ops": [{"op": "refine", "task_id": t["task_id"], "version": t["version"], "slots": {"day": "Saturday"}, "text": turn}],
            "confidence": 0.9,
            "reason": "the user changed the day",
        }
    return {
        "ops": [{"op": "new", "request_type": "flight_search", "slots": {"destination": "Lisbon", "day": "Friday"}, "text": turn}],
        "confidence": 0.9,
        "reason": "a new flight request",
    }


def delegate_answer(req: RecordedRequest) -> str:
    """A delegate that answers what it was asked (the day in the request decides the answer)."""
    asked = req.body["messages"][-1]["content"]
    day = "Saturday" if "saturday" in asked.lower() else "Friday"
    return f"The best flight to Lisbon on {day} leaves at 9:40 and costs 120 euros."


def flight_handler(req: RecordedRequest) -> str:
    if is_judge(req):
        return json.dumps(intake_decision(view_of(req)))
    return delegate_answer(req)


def decisions(trace: str, module: str = "intake") -> list[dict[str, Any]]:
    out = []
    for line in trace.splitlines():
        e = json.loads(line)
        if e["kind"] == "harness.decision" and e["module"] == module:
            out.append(e)
    return out


def events(trace: str, kind: str) -> list[dict[str, Any]]:
    return [e for e in map(json.loads, trace.splitlines()) if e["kind"] == kind]
