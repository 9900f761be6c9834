"""What the structural repair operators make a harness do with wording it was not written for.

Each test applies operators to a copy of the shipped g0 harness, loads the edited ``rules.py`` and
asks its helpers about turns a user would say; the turns use no phrase from any split's catalogue
families beyond general English.
"""

from __future__ import annotations

import importlib.util
import shutil
import tomllib
from pathlib import Path
from types import SimpleNamespace

import pytest

from duplexagent.loader import HOOKS
from rsi.repairs import by_name
from rsi.repairs._base import apply_operator

ROOT = Path(__file__).resolve().parent.parent


def _edited(tmp_path: Path, module: str, *operators: str):
    h = tmp_path / "h"
    if not h.exists():
        shutil.copytree(ROOT / "modules", h, ignore=shutil.ignore_patterns("__pycache__"))
    for name in operators:
        op = by_name(name)
        for part in op.parts():
            apply_operator(part, h, HOOKS[part.module])
    spec = importlib.util.spec_from_file_location(f"{module}_rules_{tmp_path.name}", h / module / "rules.py")
    rules = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(rules)
    return rules, tomllib.loads((h / module / "params.toml").read_text(encoding="utf-8"))["params"]


def _task(rtype: str, said: str, state: str = "RUNNING") -> SimpleNamespace:
    return SimpleNamespace(task_id="T1", version=1, request_type=rtype, utterances=[said], slots={}, state=state, missing=[], updated_t=1.0)


@pytest.fixture
def intake(tmp_path):
    return _edited(tmp_path, "intake", "intake.task_state_reading", "intake.split_clauses")


def test_a_cancel_cue_is_found_with_an_object_inside_and_not_when_negated(intake):
    """The rule carries no cue words: given a vocabulary (as induction grows it), a two-word cue may
    hold a short object between its words, and a negated cue is no cancel."""
    rules, p = intake
    p = {**p, "cancel_phrases": [*p["cancel_phrases"], "call off", "skip"]}
    assert rules._is_cancel("Please call that off.", p)
    assert rules._is_cancel("Actually, skip it.", p)
    assert not rules._is_cancel("Call my sister at 6 pm.", p)  # a call is not a calling off
    assert not rules._is_cancel("No, don't skip it.", p)
    assert not rules._is_cancel("Please call that off.", {**p, "cancel_phrases": ["skip"]})  # no cue, no cancel


def test_a_new_request_after_a_lead_in_sentence_replaces_the_running_task(intake):
    rules, p = intake
    running = _task("shopping_order", "order a coffee grinder for me")
    assert rules._is_replacement("Hmm, I thought about it. Can you translate where is the station to German?", None, running, p)
    # a lead-in that adds ("one more thing") or asks ("are you there?") does not swap anything
    assert not rules._is_replacement("Oh, one more thing. Can you translate where is the station to German?", None, running, p)
    assert not rules._is_replacement("Are you there? Can you translate where is the station to German?", None, running, p)
    # a task already delivered is not replaced
    assert not rules._is_replacement("Hmm, I thought about it. Can you translate hello to German?", None, _task("shopping_order", "order it", "DELIVERED"), p)


def test_a_lead_in_about_the_task_in_hand_sets_it_aside_whatever_its_verb(intake):
    """A lead-in that points back at the task in hand, then a request for other work, replaces it even
    when no rule knows the lead-in's verb; one that puts the new work beside the old adds it."""
    rules, p = intake
    running = _task("shopping_order", "order a coffee grinder for me")
    ask = "Could you translate where is the station to German?"
    assert rules._is_replacement(f"Right, shelve that one and do this: {ask}", None, running, p)  # a colon after a verb of its own
    assert rules._is_replacement(f"Hmm, I'm not bothered about that order any more, fresh idea. {ask}", None, running, p)  # longer, but about that order
    assert not rules._is_replacement(f"Oh, while you're at it: {ask}", None, running, p)  # beside the order, not instead of it
    assert not rules._is_replacement(f"Thanks so much for that. {ask}", None, running, p)  # thanks is no setting aside
    assert not rules._is_replacement(f"Shelve that one and do this: {ask} I'd like the grinder too.", None, running, p)  # "too" adds
    # a long lead-in that does not point back is no lead-in
    assert not rules._is_replacement(f"Hmm, so I was chatting with my neighbour earlier over the fence about holidays. {ask}", None, running, p)


def test_a_verb_that_moves_the_task_in_hand_to_something_refines_it_whatever_the_verb(intake):
    rules, p = intake
    running = _task("shopping_order", "order a coffee grinder for me")
    for said in ("Could you shunt that to the stainless steel kettle?", "Would you switch the request over to the cordless one, please?"):
        assert rules._moves_task_to(said, p), said
        assert rules._is_refinement(said, None, running, p) and not rules._is_status(said, p), said
    # a change cue ending on a pointer also takes "the request" (a general noun for what was asked) as its pointer
    head = next(c for c in p["refine_phrases"] if c.endswith(" it")).rsplit(" ", 1)[0]
    assert rules._change_cue(f"Sorry, I'd like to {head} the request, the steel one.", p)
    assert not rules._change_cue(f"Sorry, I'd like to {head} the kettle.", p)  # not said of the task in hand
    # said to someone, asked about, or a question of timing: no change of the task
    assert not rules._moves_task_to("Could you read it to me?", p)
    assert not rules._moves_task_to("Is it going to take long?", p)
    assert rules._is_status("Is it going to take long?", p)


def test_a_request_that_names_someone_is_not_asked_who_even_when_the_extractor_missed_it(tmp_path):
    rules, p = _edited(tmp_path, "intake", "intake.task_state_reading", "intake.required_slot_table")
    # the required-slot table wants a recipient for a message; the user named one in words the extractor does not take
    assert rules._names_someone("Could you write an email to my landlord about the broken boiler?")
    assert "recipient" not in rules._new_op("Could you write an email to my landlord about the broken boiler?", p).missing
    # naming nobody, the message still waits for its recipient
    assert "recipient" in rules._new_op("could you write an email about the broken boiler?", p).missing
    assert not rules._names_someone("could you write an email about the broken boiler?")


def test_a_question_about_the_users_own_plans_asks_for_nothing_it_lacks(tmp_path):
    rules, p = _edited(tmp_path, "intake", "intake.task_state_reading", "intake.ask_missing_slots")
    # a flight is named only as the user's own; the question asks whether a plan works, not for a booking
    plan = "If my plane gets into Madrid at a quarter to four and the coach to Toledo goes at six, will I make it?"
    assert rules._asks_own_plan(plan)
    assert rules._new_op(plan, p).missing == []
    assert rules._new_op("Should we fly to Porto or just drive down?", p).missing == []
    # the same said as a wh-question about the user's own timing
    assert rules._new_op("If we set off from Leeds at seven and fly out of Manchester, what time would we land in Nice?", p).missing == []
    # a request, or a request beside a question of the user's own, still waits for the day it lacks
    assert "day" in rules._new_op("Could you find me a flight to Madrid?", p).missing
    assert "day" in rules._new_op("Find me a flight to Madrid. Do I need a visa for Spain?", p).missing


def test_a_name_said_in_answer_fills_the_one_named_slot_a_task_waits_on(tmp_path):
    rules, p = _edited(tmp_path, "intake", "intake.task_state_reading", "intake.required_slot_table")
    waiting = _task("email_draft", "could you write an email about the leaking roof", state="NEEDS_INPUT")
    waiting.missing = ["recipient"]
    assert rules._named_answer("Hmm, let's say Farah, I suppose.", waiting, {}, p) == {"recipient": "Farah"}
    assert rules._named_answer("Oh, send it to Tom Price.", waiting, {}, p) == {"recipient": "Tom Price"}
    assert rules._named_answer("um, my brother I guess", waiting, {}, p) == {}  # no name said: still waiting
    # a task waiting on a time takes no name for it
    timed = _task("reminder", "remind me to ring the garage", state="NEEDS_INPUT")
    timed.missing = ["time"]
    assert rules._named_answer("Hmm, let's say Farah, I suppose.", timed, {}, p) == {}


def test_a_short_statement_about_a_running_task_refines_it_even_with_a_lowercase_value(intake):
    rules, p = intake
    running = _task("shopping_order", "order a coffee grinder for me")
    assert rules._is_refinement("Hmm, a yoga mat would be better.", None, running, p)
    assert not rules._is_refinement("Can you tell me how tides work?", None, running, p)  # a request of its own
    assert not rules._is_refinement("Hmm, a yoga mat would be better.", None, _task("shopping_order", "order it", "DELIVERED"), p)


def test_a_question_with_a_change_cue_is_not_a_status_query(intake):
    rules, p = intake
    assert not rules._is_status("Could you do the other one instead?", p)
    assert rules._is_status("Is it ready?", p)


def test_values_after_a_colon_and_clauses_that_point_back(intake):
    rules, p = intake
    assert "Set" not in rules._slot_like("One more time: Set a reminder for 6 am.")
    assert rules._split_batch("Put wireless headphones in my cart and order it.", p) == ["Put wireless headphones in my cart and order it."]
    assert len(rules._split_batch("Order a yoga mat and translate hello to German.", p)) == 2


def test_policy_delegates_turns_about_a_running_task_and_keeps_stop_for_speech(tmp_path):
    rules, p = _edited(tmp_path, "policy", "bundle.task_state_turns")
    running = [_task("coding_task", "build a script in Rust")]

    def view(t: str, speaking: bool, tasks=running, action="RESPOND", conf=0.6):
        turn = SimpleNamespace(text=t, native_action=action, native_confidence=conf, agent_speaking=speaking)
        return SimpleNamespace(turn=turn, tasks=tasks, history=[SimpleNamespace(who="agent", text="On it.", t=1.0, task_id="T1", purpose="ack")], agent_speaking=speaking)

    assert rules._task_turn(view("Hmm, Kotlin would be better.", False), p) == "about the task in hand"
    assert rules._task_turn(view("Hmm, Kotlin would be better.", False, tasks=[]), p) is None
    assert rules._task_turn(view("Is it sunny in Oslo?", False), p) is None  # a question is not a detail
    # "stop" while nothing is being said, pointing at the task in hand, is about the task
    assert rules._is_control(view("You can stop working on that.", False), p) is None
    assert rules._is_control(view("You can stop working on that.", True), p) == "stop"
    assert rules._is_control(view("Please stop.", False), p) == "stop"


def test_deliver_holds_a_stopped_answer_until_resume(tmp_path):
    rules, p = _edited(tmp_path, "deliver", "deliver.hold_after_stop")
    answer = SimpleNamespace(created_t=5.0, replay=True, kind="answer", task_id="T1", version=1, option_id="A")

    def view(now: float, said: str, control="stop", silence=3.0, options=(answer,)):
        history = [SimpleNamespace(who="user", text="order a yoga mat", t=0.5), SimpleNamespace(who="user", text=said, t=9.0)]
        return SimpleNamespace(
            now=now, user_speaking=False, silence_s=silence, last_control=control, last_control_t=10.0, options=list(options), history=history
        )

    assert rules._should_wait(view(30.0, "Okay, enough, stop."), p)  # a stop holds the old answer
    assert rules._should_wait(view(90.0, "Okay, enough, stop."), p)  # however long the silence
    assert not rules._should_wait(view(30.0, "Okay, go on.", control="resume"), p)
    news = SimpleNamespace(created_t=12.0, replay=False, kind="answer", task_id="T2", version=1, option_id="B")
    assert not rules._should_wait(view(13.0, "Okay, enough, stop.", options=(answer, news)), p)  # news after the stop
    assert rules._should_wait(view(30.0, "Okay, go on.", control="resume", silence=0.3), p)  # the user's turn may not be over


def test_a_price_said_like_a_clock_time_is_the_same_amount_again(intake):
    rules, p = intake
    asked = _task("calculation", "How much is fifteen percent off two hundred and forty-five dollars?")
    asked.slots = {"percent": "15%", "amount": "245 USD"}
    # "two forty-five" reads as a time, but said of an amount the task holds, it is that amount again
    again = "Sorry, are you there? Fifteen percent off two forty-five."
    assert rules._is_duplicate(again, "calculation", [asked], p) is asked
    # another amount said the same way is not the same request
    assert rules._is_duplicate("Fifteen percent off two fifty-five.", "calculation", [asked], p) is None


def test_a_statement_beside_a_status_question_does_not_make_it_a_new_request(intake):
    rules, p = intake
    # the question points back and asks how the work goes; the statement after it names a domain
    # word as a reason, and asks for nothing
    assert rules._is_status("Is it stuck? Those scores are always on the news by now.", p)
    # a question that itself names a request is still not a status question
    assert not rules._is_status("Is it stuck? What's the news in Leeds today?", p)
