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

from duplexagent.contract import DeliverSpeechView, IntakeView, MemoryContext, PolicyView, SpeechInfo, TaskInfo, TurnInfo

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


@pytest.mark.parametrize("said", ["Oh, right, right", "Wow, okay", "Mm-hmm, yeah", "Ah, okay", "Whoa", "yeah yeah okay", "right, sure", "oh I see", "okay cool"])
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


def _task(rtype: str = "shopping_order") -> TaskInfo:
    return TaskInfo(
        task_id="t1", version=1, state="RUNNING", request_type=rtype, slots={}, missing=[], utterances=["order more coffee"],
        conditions={}, result=None, result_status=None, created_t=1.0, updated_t=1.0, delivered=False,
    )


def _interpret(said: str, tasks: list[TaskInfo]) -> list[str]:
    rules, params = _load("intake")
    turn = TurnInfo(id="u2", text=said, t_start=10.0, t_end=11.0, silence_s=0.9, agent_speaking=False, native_action="DELEGATE", native_confidence=0.9)
    view = IntakeView(now=11.5, turn=turn, history=[], tasks=tasks, context=MemoryContext(), params=params)
    return [op.op for op in rules.interpret(view).ops]


@pytest.mark.parametrize("said", ["cancel the coffee order", "never mind the coffee, thank you so much"])
def test_a_cancel_said_outright_cancels_the_task(said: str) -> None:
    assert _interpret(said, [_task()]) == ["cancel"]


@pytest.mark.parametrize("said", ["don't cancel the coffee order", "no need to cancel it"])
def test_a_cancel_cue_inside_a_negation_keeps_the_task(said: str) -> None:
    assert "cancel" not in _interpret(said, [_task()])


def test_a_statement_beside_a_request_is_not_a_task_of_its_own() -> None:
    # "dinner" is a word of the booking lexicon, but the first part only tells what happened
    assert _interpret("I had dinner with Sam yesterday; and also book a table for Friday at eight", []) == ["new"]
    assert _interpret("book a table for Friday at eight; and also order more coffee", []) == ["new", "new"]


@pytest.mark.parametrize(("said", "chat"), [("thank you so much", True), ("thanks a lot", True), ("never mind the order, thank you so much", False)])
def test_thanks_alone_is_chit_chat_but_not_a_cancel_said_with_thanks(said: str, chat: bool) -> None:
    rules, params = _load("policy")
    turn = TurnInfo(id="u2", text=said, t_start=10.0, t_end=11.0, silence_s=0.9, agent_speaking=False, native_action="RESPOND", native_confidence=0.9)
    view = PolicyView(now=11.5, turn=turn, history=[], tasks=[], agent_speaking=False, context=MemoryContext(), params=params)
    assert rules._is_chat(view, params) is chat


@pytest.mark.parametrize(("heard", "action"), [("yeah yeah", "continue"), ("mm-hm, right, sure", "continue"), ("yeah, wait, stop", "yield"), ("hang on", "yield")])
def test_deliver_keeps_speaking_through_a_murmur_of_several_words(heard: str, action: str) -> None:
    rules, params = _load("deliver")
    speech = SpeechInfo(speech_id="s1", purpose="answer", task_id="t1", text="Here is what I found.", elapsed_s=1.0, remaining_s=3.0)
    view = DeliverSpeechView(now=12.0, speech=speech, user_text=heard, user_speaking_s=1.0, params=params)
    assert rules.on_user_speech(view).action == action
