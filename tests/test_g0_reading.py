"""What the shipped g0 harness does with general spoken English that its word lists do not hold.

g0 is a deliberately partial harness, but what it reads it reads through the module contract's
text toolkit: a murmur of interjections while the agent talks is a backchannel (not a question to
answer), and values said the way people say them reach the task's slots in canonical form.
"""

from __future__ import annotations

import importlib.util
import tomllib
from pathlib import Path

import pytest

from duplexagent.contract import MemoryContext, PolicyView, TurnInfo

ROOT = Path(__file__).resolve().parent.parent


def _load(module: str):
    spec = importlib.util.spec_from_file_location(f"g0_{module}_rules_reading", ROOT / "modules" / module / "rules.py")
    rules = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(rules)
    params = tomllib.loads((ROOT / "modules" / module / "params.toml").read_text(encoding="utf-8"))["params"]
    return rules, params


def _route(said: str, gate: str = "RESPOND") -> str:
    rules, params = _load("policy")
    turn = TurnInfo(id="u2", text=said, t_start=10.0, t_end=11.0, silence_s=0.9, agent_speaking=True, native_action=gate, native_confidence=0.99)
    view = PolicyView(now=11.5, turn=turn, history=[], tasks=[], agent_speaking=True, context=MemoryContext(), params=params)
    return rules.route(view).action


@pytest.mark.parametrize("said", ["Oh, right, right", "Wow, okay", "Mm-hmm, yeah", "Ah, okay", "Whoa"])
def test_a_murmur_of_interjections_while_the_agent_talks_is_ignored(said: str) -> None:
    # the interaction model's gate says RESPOND with full confidence: the agent would stop and answer a murmur
    assert _route(said) == "IGNORE"


@pytest.mark.parametrize("said", ["No, no", "Hey", "Wait", "Oh, why?"])
def test_a_refusal_a_greeting_a_command_or_a_question_is_not_a_backchannel(said: str) -> None:
    assert _route(said) != "IGNORE"


@pytest.mark.parametrize(
    ("said", "slots"),
    [
        ("Book a table for the four of us at half seven on Friday", {"time": "07:30", "day": "friday", "party_size": "4"}),
        ("Remind me at 7.30 pm tomorrow", {"time": "19:30", "day": "tomorrow"}),
        ("Find a flight to Lisbon under two grand", {"amount": "2000 USD", "place": "Lisbon"}),
        ("Set up a meeting at seven forty-five next Tuesday", {"time": "07:45", "day": "next tuesday"}),
    ],
)
def test_spoken_values_reach_the_slots_in_canonical_form(said: str, slots: dict[str, str]) -> None:
    rules, _ = _load("intake")
    assert rules.extract_slots(said) == slots
