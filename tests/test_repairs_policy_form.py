"""What the structural Policy operators make the router do with wording it was not written for.

Each test applies operators to a copy of the shipped g0 harness, loads the edited ``policy/rules.py``
and asks its ``route`` hook about turns a user might say. The turns are general English, not text of
any catalogue family, and the interaction model's gate is always set to the opposite of the right
answer, with full confidence, so a passing rule cannot be leaning on it.
"""

from __future__ import annotations

import importlib.util
import shutil
import tomllib
from pathlib import Path

import pytest

from duplexagent.contract import MemoryContext, PolicyView, TaskInfo, TurnInfo, Utterance
from duplexagent.loader import HOOKS
from rsi.repairs import by_name
from rsi.repairs._base import apply_operator

ROOT = Path(__file__).resolve().parent.parent


def _router(tmp_path: Path, *operators: str):
    h = tmp_path / ("h_" + "_".join(o.split(".")[-1] for o in operators) if operators else "g0")
    shutil.copytree(ROOT / "modules", h, ignore=shutil.ignore_patterns("__pycache__"))
    for name in operators:
        apply_operator(by_name(name), h, HOOKS["policy"])
    spec = importlib.util.spec_from_file_location(f"policy_rules_{h.name}_{tmp_path.name}", h / "policy" / "rules.py")
    rules = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(rules)
    params = tomllib.loads((h / "policy" / "params.toml").read_text(encoding="utf-8"))["params"]

    def route(said: str, *, tasks: list[TaskInfo] = (), history: list[Utterance] = (), speaking: bool = False, gate: str = "RESPOND") -> str:
        turn = TurnInfo(id="u9", text=said, t_start=10.0, t_end=12.0, silence_s=0.9, agent_speaking=speaking, native_action=gate, native_confidence=0.99)
        view = PolicyView(now=13.0, turn=turn, history=list(history), tasks=list(tasks), agent_speaking=speaking, context=MemoryContext(), params=params)
        return rules.route(view).action

    return route


def _task(state: str, said: str = "Could you track down a used bicycle under two hundred pounds?", missing: list[str] | None = None) -> TaskInfo:
    return TaskInfo(
        task_id="T1", version=1, state=state, request_type="shopping_order", slots={}, missing=missing or [], utterances=[said],
        conditions={}, result="A blue one, 180 pounds." if state in ("READY", "DELIVERED") else None,
        result_status="ok" if state in ("READY", "DELIVERED") else None, created_t=1.0, updated_t=1.0, delivered=state == "DELIVERED",
    )


@pytest.fixture
def g0(tmp_path):
    return _router(tmp_path)


# ---------------------------------------------------------------- policy.delegate_by_form

REQUESTS_WITHOUT_A_KNOWN_VERB = [
    "Could you dig up the opening hours of the botanical garden?",
    "Hmm, please put together a packing list for a week in Lisbon.",
    "Would you mind converting sixty miles into kilometres for me?",
    "I'd like you to pick out a birthday present for my niece.",
]


@pytest.mark.parametrize("said", REQUESTS_WITHOUT_A_KNOWN_VERB)
def test_a_request_by_its_form_is_delegated_with_no_request_verb_known(tmp_path, g0, said):
    route = _router(tmp_path, "policy.delegate_by_form")
    assert g0(said) == "RESPOND"  # g0 follows the (here wrong) gate: the user's request is lost
    assert route(said) == "DELEGATE"


def test_a_question_after_thanks_is_work_and_plain_thanks_stays_chat(tmp_path, g0):
    route = _router(tmp_path, "policy.delegate_by_form")
    answered = [_task("DELIVERED")]
    said = "Oh, thanks. And what colour is the frame?"
    # (g0 itself no longer calls it chit-chat: it reads the chat cues once the toolkit takes the thanks off)
    assert route(said, tasks=answered) == "DELEGATE"
    assert route("Thanks, that's lovely.", tasks=answered, gate="DELEGATE") == "RESPOND"
    assert route("Hello, how are you doing?", gate="DELEGATE") == "RESPOND"


def test_a_question_out_of_the_blue_or_over_a_running_task_it_ignores_is_not_delegated_by_form(tmp_path):
    route = _router(tmp_path, "policy.delegate_by_form")
    running = [_task("RUNNING")]
    # asking something that has nothing to do with the running errand is left to the other rules
    assert route("Hmm, which river runs through Vienna?", tasks=running) == "RESPOND"
    # a question that points back at the errand is about it
    assert route("Is that bicycle still available?", tasks=running) == "DELEGATE"


def test_a_short_request_over_the_agents_own_speech_is_not_work(tmp_path):
    route = _router(tmp_path, "policy.delegate_by_form")
    ready = [_task("READY")]
    assert route("Hmm, go slower.", tasks=ready, speaking=True) == "RESPOND"
    assert route("Could you also find me a helmet to go with it?", tasks=ready, speaking=True) == "DELEGATE"


# ---------------------------------------------------------------- policy.task_reference_turns


def test_an_answer_to_the_agents_question_goes_to_intake_whatever_the_gate_says(tmp_path, g0):
    route = _router(tmp_path, "policy.task_reference_turns")
    waiting = [_task("NEEDS_INPUT", missing=["budget"])]
    assert g0("Around ninety quid, I reckon.", tasks=waiting) == "RESPOND"
    assert route("Around ninety quid, I reckon.", tasks=waiting) == "DELEGATE"


def test_a_change_of_mind_about_a_running_task_goes_to_intake_and_small_talk_does_not(tmp_path, g0):
    route = _router(tmp_path, "policy.task_reference_turns")
    running = [_task("RUNNING")]
    said = "Hmm, we won't be needing that after all."
    assert g0(said, tasks=running) == "RESPOND"
    assert route(said, tasks=running) == "DELEGATE"
    assert route("My cat just knocked a plant over.", tasks=running, gate="DELEGATE") == "RESPOND"


def test_a_task_control_cue_in_small_talk_does_not_overrule_a_confident_gate(tmp_path):
    route = _router(tmp_path, "policy.trust_confident_gate", "policy.task_turns_by_form")
    running = [_task("RUNNING")]
    # "how long" is one of g0's task-control cues; said of something else it is small talk
    assert route("How long does a tortoise usually live?", tasks=running) == "RESPOND"
    assert route("Is it likely that tortoises outlive their owners?", tasks=running) == "RESPOND"
    # said of the task in hand (a pointer back), it is about the task whatever the gate says
    assert route("How long will it take, roughly?", tasks=running) == "DELEGATE"


def test_a_pointer_the_turn_itself_gives_a_referent_is_not_about_the_task(tmp_path):
    route = _router(tmp_path, "policy.trust_confident_gate", "policy.task_turns_by_form")
    running = [_task("RUNNING")]
    # "that" is what the first clause says; "that chestnut tree" is a thing of its own: small talk
    assert route("My cousin just got a new bike, isn't that great?", tasks=running) == "RESPOND"
    assert route("How tall do you reckon that chestnut tree in my street is?", tasks=running) == "RESPOND"
    # a question that points back at the task in hand still goes to Intake whatever the gate says
    assert route("Could you tell me whether that's ready yet?", tasks=running) == "DELEGATE"


def test_a_stop_that_names_the_work_in_hand_is_not_a_stop_of_speech(tmp_path):
    route = _router(tmp_path, "policy.control_by_content")
    history = [Utterance(who="agent", text="Sure, I'm on it.", t=5.0, purpose="ack", task_id="T1")]
    said = "Stop the bicycle hunt now."
    # the agent has just spoken, so a stop cue reads as control of its speech ...
    assert route("Stop, please, that's plenty.", tasks=[_task("RUNNING")], history=history) == "CONTROL"
    # ... unless the turn names the work still being done: then Intake reads it
    assert route(said, tasks=[_task("RUNNING")], history=history) != "CONTROL"
    # with an answer ready, a stop is about the answer being said
    assert route(said, tasks=[_task("READY")], history=history) == "CONTROL"


def test_a_stop_word_that_describes_something_asks_nobody_to_be_silent(tmp_path):
    route = _router(tmp_path, "policy.control_by_content")
    history = [Utterance(who="agent", text="Sure, I'm on it.", t=5.0, purpose="ack", task_id="T1")]
    running = [_task("RUNNING")]
    assert route("Quiet, please!", tasks=running, history=history) == "CONTROL"
    # "quiet" after an indefinite pronoun or a determiner, or before a noun, says what something is like
    assert route("Oh, it needs to be somewhere quiet.", tasks=running, history=history) != "CONTROL"
    assert route("Ideally a quiet street.", tasks=running, history=history) != "CONTROL"


def test_what_the_work_in_hand_must_be_goes_to_intake_when_the_gate_is_unsure(tmp_path):
    h = tmp_path / "tcg"
    shutil.copytree(ROOT / "modules", h, ignore=shutil.ignore_patterns("__pycache__"))
    apply_operator(by_name("policy.trust_confident_gate"), h, HOOKS["policy"])
    spec = importlib.util.spec_from_file_location(f"policy_rules_tcg_{tmp_path.name}", h / "policy" / "rules.py")
    rules = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(rules)
    params = tomllib.loads((h / "policy" / "params.toml").read_text(encoding="utf-8"))["params"]

    def route(said: str, tasks: list[TaskInfo]) -> str:
        # the gate hears small talk, but not surely enough to be followed before the rules
        turn = TurnInfo(id="u9", text=said, t_start=10.0, t_end=12.0, silence_s=0.9, agent_speaking=False, native_action="RESPOND", native_confidence=0.6)
        view = PolicyView(now=13.0, turn=turn, history=[], tasks=tasks, agent_speaking=False, context=MemoryContext(), params=params)
        return rules.route(view).action

    running = [_task("RUNNING")]
    assert route("Hang on, it must have lift access.", running) == "DELEGATE"
    assert route("Oh, and the bicycle needs a basket on the front.", running) == "DELEGATE"
    # a question, or no work in hand: the gate's answer stands; so does a negation, which Intake
    # would read as turning the task down ("it doesn't need to ...")
    assert route("It must be hard answering questions all day?", running) == "RESPOND"
    assert route("It doesn't need to be new.", running) == "RESPOND"
    assert route("Hang on, it must have lift access.", []) == "RESPOND"


def test_a_point_back_after_a_task_ended_is_about_that_task(tmp_path):
    route = _router(tmp_path, "policy.task_reference_turns")
    history = [Utterance(who="agent", text="Okay, I've dropped the bicycle search.", t=5.0, purpose="status", task_id="T1")]
    assert route("Hmm, let's carry on with that one anyway.", history=history) == "DELEGATE"
    assert route("My back hurts today.", history=history, gate="DELEGATE") == "RESPOND"


# ---------------------------------------------------------------- policy.wait_for_sentence_end


@pytest.mark.parametrize("heard", ["So what I'd really like is", "Could you look into the", "Hmm, can you tell me whether the museum opens"])
def test_the_router_keeps_listening_to_a_clause_with_no_sentence_end(tmp_path, g0, heard):
    route = _router(tmp_path, "policy.wait_for_sentence_end")
    assert g0(heard, gate="DELEGATE") == "DELEGATE"  # g0 jumps in mid-sentence
    assert route(heard, gate="DELEGATE") == "LISTEN"


def test_a_finished_sentence_or_a_bare_fragment_is_not_held(tmp_path):
    route = _router(tmp_path, "policy.wait_for_sentence_end", "policy.delegate_by_form")
    assert route("Could you look into the museum's opening hours?") == "DELEGATE"
    assert route("Lovely") != "LISTEN"  # a one-word reaction is a whole turn


# ---------------------------------------------------------------- policy.side_talk_vocative


@pytest.mark.parametrize("said", ["Mum, could you pass me the salt?", "Sorry, darling, shut the window!", "Hey Priya, are you coming down?", "Can somebody let the dog out?"])
def test_talk_to_someone_else_in_the_room_is_ignored(tmp_path, g0, said):
    route = _router(tmp_path, "policy.side_talk_vocative")
    assert g0(said, gate="RESPOND") == "RESPOND"
    assert route(said, gate="RESPOND") == "IGNORE"


@pytest.mark.parametrize("said", ["Wait, could you repeat the price?", "Honestly, tell me the price.", "Okay, what's the price?"])
def test_an_opening_word_that_is_no_call_to_a_person_does_not_make_side_talk(tmp_path, said):
    route = _router(tmp_path, "policy.side_talk_vocative")
    assert route(said, gate="DELEGATE") != "IGNORE"


# ---------------------------------------------------------------- policy.trust_confident_gate


def test_a_finished_sentence_the_gate_calls_unfinished_is_answered_not_left_waiting(tmp_path, g0):
    route = _router(tmp_path, "policy.trust_confident_gate")
    said = "Would you spin me a yarn about pirates?"
    assert g0(said, gate="LISTEN") == "LISTEN"  # g0 waits for words that will not come
    assert route(said, gate="LISTEN") == "RESPOND"
    # words that stop where a sentence cannot end are still waited for
    assert route("Would you spin me a yarn about", gate="LISTEN") == "LISTEN"


def test_a_question_naming_the_work_in_hand_is_about_it_whatever_chat_cue_it_holds(tmp_path, g0):
    route = _router(tmp_path, "policy.trust_confident_gate")
    running = [_task("RUNNING")]
    said = "How are you getting on with that bicycle?"
    assert g0(said, tasks=running, gate="DELEGATE") == "RESPOND"  # "how are you" is a chat cue
    assert route(said, tasks=running, gate="DELEGATE") == "DELEGATE"
    # with nothing in hand it is still small talk
    assert route("How are you getting on with that bicycle?", gate="DELEGATE") == "RESPOND"
