"""The structural Intake operators read turns by form, values and pointing back, so they decide right
on wording no split uses. Each test applies one operator to a copy of the shipped g0 harness, plays a
turn written from general English against a task in hand, and checks the ledger operation a user
would notice (g0 itself decides otherwise on the same turn)."""

from __future__ import annotations

import importlib.util
import shutil
import tomllib
from pathlib import Path
from types import SimpleNamespace

from duplexagent.loader import HOOKS
from rsi.repairs import by_name
from rsi.repairs._base import apply_operator

ROOT = Path(__file__).resolve().parent.parent


def _harness(tmp_path: Path, *operators: str, detail: bool = False):
    """g0 with the operators applied; ``decide(turn, *tasks)`` gives each op as (op, task id, text), or
    with ``detail`` as (op, request type, slots, slots still asked for)."""
    h = tmp_path / ("h-" + "-".join(operators) if operators else "g0")
    if not h.exists():
        shutil.copytree(ROOT / "modules", h, ignore=shutil.ignore_patterns("__pycache__"))
        for name in operators:
            for part in by_name(name).parts():
                apply_operator(part, h, HOOKS[part.module])
    spec = importlib.util.spec_from_file_location(f"intake_rules_{h.name}", h / "intake" / "rules.py")
    rules = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(rules)
    params = tomllib.loads((h / "intake" / "params.toml").read_text(encoding="utf-8"))["params"]

    def decide(turn: str, *tasks: SimpleNamespace) -> list[tuple]:
        view = SimpleNamespace(turn=SimpleNamespace(text=turn), tasks=list(tasks), params=params, history=[], now=20.0)
        ops = rules.interpret(view).ops
        if detail:
            return [(op.op, op.request_type, dict(op.slots), list(op.missing)) for op in ops]
        return [(op.op, op.task_id, op.text) for op in ops]

    return decide


def _task(said: str, state: str = "RUNNING", rtype: str | None = None, task_id: str = "T1", t: float = 1.0) -> SimpleNamespace:
    return SimpleNamespace(
        task_id=task_id, version=1, request_type=rtype, utterances=[said], slots={}, state=state, missing=[], updated_t=t,
        conditions={}, result=None, delivered=False,
    )


def test_the_same_request_with_its_values_said_another_way_is_a_status_query(tmp_path):
    asked = _task("Could you figure out eighteen percent of $450 for me?", rtype="calculation")
    again = "Sorry, once more, what's 18 per cent of four hundred and fifty dollars?"
    g0 = _harness(tmp_path)
    assert g0(again, asked)[0][0] == "new"  # g0 starts the sum a second time
    decide = _harness(tmp_path, "intake.same_request_values")
    assert decide(again, asked)[0][:2] == ("status", "T1")
    # another amount is another sum, not the same one again
    assert decide("What's 18 per cent of five hundred dollars?", asked)[0][0] != "status"


def test_a_batch_is_cut_at_request_clauses_not_at_statements(tmp_path):
    turn = "I'm packing tonight. Could you check the weather in Rome for Friday, and can you set an alarm for 6:15 am?"
    g0 = _harness(tmp_path)
    assert len(g0(turn)) == 1  # g0 merges the two requests into one task
    decide = _harness(tmp_path, "intake.split_request_clauses")
    ops = decide(turn)
    assert [op for op, _, _ in ops] == ["new", "new"]
    assert "Rome" in ops[0][2] and "6:15 am" in ops[1][2]  # the time is kept whole in its own request
    # a statement around one request is no second request
    assert len(decide("I'm running late, so could you book a taxi to the station for 7 pm? Thanks a lot, I owe you.")) == 1


def test_a_negated_turn_about_the_task_with_no_new_request_cancels_it(tmp_path):
    running = _task("Please draft a note to the landlord about the heating.", rtype="email_draft")
    turn = "Honestly, we won't be needing that any more."
    g0 = _harness(tmp_path)
    assert g0(turn, running)[0][0] != "cancel"  # g0 keeps drafting
    decide = _harness(tmp_path, "intake.cancel_by_discard")
    assert decide(turn, running)[0][:2] == ("cancel", "T1")
    assert decide("Hmm, I no longer want what I asked you for.", running)[0][0] == "cancel"
    # a cancel called off is no cancel
    assert decide("No no, please don't cancel it, I still want that note.", running)[0][0] != "cancel"
    # a change asked politely is no calling off
    assert decide("Make it a shorter one, if you don't mind.", running)[0][0] != "cancel"


def test_a_discard_is_read_past_padding_pointers_by_noun_and_conditions(tmp_path):
    running = _task("Could you put together a packing list for the camping trip?")
    decide = _harness(tmp_path, "intake.task_state_reading", "intake.cancel_by_discard")
    # a request that only points back at the task (by a general noun for it) asks for the calling off
    assert decide("Hmm, would you scrap the request for now? I don't need it any more.", running)[0][:2] == ("cancel", "T1")
    # a contracted pointer turns the task down, and an interjection before it changes nothing
    assert decide("Look, honestly, it's not worth the bother.", running)[0][:2] == ("cancel", "T1")
    # a negation in a condition said after the clause is politeness, not a discard
    assert decide("Go with the one I picked, if you don't mind.", running)[0][0] != "cancel"
    # a relative "that" describes a new request's object; it does not point back at the task
    assert decide("Could you draft a note to Sam about the lease that doesn't sound pushy?", running)[0][0] != "cancel"


def test_calling_the_task_off_then_asking_for_something_else_replaces_it(tmp_path):
    running = _task("Can you order a desk lamp for the study?", rtype="shopping_order")
    turn = "I don't want that any more. Could you look up train times from Leeds to York for Sunday?"
    g0 = _harness(tmp_path)
    assert g0(turn, running)[0][0] != "replace"
    decide = _harness(tmp_path, "intake.replace_after_discard")
    ops = decide(turn, running)
    assert ops[0][:2] == ("replace", "T1") and len(ops) == 1
    # one more thing is an addition, not a change of mind
    assert decide("Also, one more thing: could you look up train times from Leeds to York?", running)[0][0] != "replace"


def test_pointing_back_at_the_cancelled_task_restores_it(tmp_path):
    dropped = _task("Book a table for four at the Thai place at 8 pm.", state="CANCELLED", rtype="restaurant_booking")
    turn = "Hmm, you know what, I'd like the one I mentioned earlier after all."
    g0 = _harness(tmp_path)
    assert g0(turn, dropped)[0][0] != "restore"
    decide = _harness(tmp_path, "intake.restore_points_back")
    assert decide(turn, dropped)[0][:2] == ("restore", "T1")
    # a value the cancelled task never had is a new request, and so is a request of its own
    assert decide("I'd like the one I mentioned, but for six people at 9 pm.", dropped)[0][0] != "restore"
    assert decide("Could you tell me how far away the moon is?", dropped)[0][0] != "restore"


def test_a_request_clause_that_names_nothing_of_its_own_stays_with_its_request(tmp_path):
    decide = _harness(tmp_path, "intake.split_request_clauses")
    # the second clause says where to look, not a second request: one task
    assert len(decide("Could you find the flight to Oslo for Friday, and can you look it over carefully for me?")) == 1
    # two requests that each name something are still two
    assert len(decide("Could you find a flight to Oslo for Friday, and can you set an alarm for 6:15 am?")) == 2


def test_request_clauses_that_each_ask_something_of_their_own_are_separate_tasks(tmp_path):
    # the first request names no kind the lexicon knows; g0 keeps one task
    turn = "Could you tell me a bit about how volcanoes form, and could you also put my dentist visit in the calendar for Thursday at 3 pm?"
    assert len(_harness(tmp_path)(turn)) == 1
    for names in (("intake.requests_apart",), ("intake.split_request_clauses",)):
        parts = [text for _, _, text in _harness(tmp_path, *names)(turn)]
        assert len(parts) == 2 and "volcanoes" in parts[0] and "dentist" in parts[1], names
    decide = _harness(tmp_path, "intake.split_request_clauses", "intake.requests_apart")
    # a count said up front and a negated lead-in ask for no task of their own: two tasks, not three or four
    counted = "I've got two things. Don't let me forget, remind me to call the bank at 9 am. And could you suggest a good podcast about history?"
    parts = [text for _, _, text in decide(counted)]
    assert len(parts) == 2 and "bank" in parts[0] and "podcast" in parts[1]


def test_a_request_with_where_to_look_or_a_false_start_stays_one_task(tmp_path):
    decide = _harness(tmp_path, "intake.split_request_clauses", "intake.requests_apart")
    # what is wanted, then where to look: two request clauses, neither of a known kind, one task
    assert len(decide("Hey, I need my insurance policy number, can you look through my saved files?")) == 1
    # a question with no verb after a request says more about it
    assert len(decide("Could you recommend a board game for four players? Something for a rainy evening, maybe?")) == 1
    # a false start ("could you, um") is the request still to come
    assert len(decide("So, listen, could you, um, put a haircut on my calendar for Saturday at 10 am, if you can?")) == 1
    # the same kind of value said twice, differently, is a correction, not a second request
    assert len(decide("Could you find me a flight to Lisbon on Friday, could you check Saturday for me instead?")) == 1
    # after a request, a request of no known kind and no value says how or where: one task
    assert len(decide("Please book me a flight to Rome for the 3rd, and could you have a good look at what's on offer?")) == 1
    assert len(decide("Book a table for four at Nando's at 7 pm, and would you double check everything carefully?")) == 1


def test_a_cancel_verb_aimed_at_the_task_in_hand_calls_it_off_or_replaces_it(tmp_path):
    asked = _task("Could you look up train times to Leeds for Sunday morning?", rtype="web_search")
    switch = "Hmm, forget the one I asked for earlier, could you recommend a good thriller to read?"
    drop = "Okay, just drop this one, I'm running late."
    reading = _harness(tmp_path, "intake.task_state_reading")
    assert reading(switch, asked)[0][0] != "replace"  # the other object than the cue's hides the discard
    # the reading takes a cancel cue said with another pointer back ("drop it" -> "drop this one")
    assert reading(drop, asked)[0][:2] == ("cancel", "T1")
    decide = _harness(tmp_path, "intake.task_state_reading", "intake.discard_aimed_back")
    assert decide(switch, asked)[0][:2] == ("replace", "T1")
    assert decide(drop, asked)[0][:2] == ("cancel", "T1")
    # asking to remember it is no discard: a cancel cue (with another pointer) called off
    keep = "Please don't forget that one, it matters to me."
    assert reading(keep, asked)[0][0] not in ("cancel", "replace")
    assert decide(keep, asked)[0][0] not in ("cancel", "replace")


def test_a_long_question_aimed_back_at_what_was_asked_is_a_status_query(tmp_path):
    asked = _task("Can you book me a haircut for Saturday at 10 am?", rtype="calendar_event")
    turn = "Sorry to bother you again, but have you got any idea at all how things are going with the thing I asked you about before?"
    reading = _harness(tmp_path, "intake.task_state_reading")
    assert reading(turn, asked)[0][0] == "new"  # too long even for the reading of a question aimed back: a second task
    # up to twice the short-question length, a question aimed back is read as status by the structural reading itself
    assert reading("Sorry, any idea how things are going with the thing I asked you about before?", asked)[0][:2] == ("status", "T1")
    assert reading("Any news at all on that request of mine from earlier?", asked)[0][:2] == ("status", "T1")
    assert reading("Sorry to nag, but how close to finished would you say you are with that one?", asked)[0][:2] == ("status", "T1")
    decide = _harness(tmp_path, "intake.task_state_reading", "intake.status_points_back")
    assert decide(turn, asked)[0][:2] == ("status", "T1")
    # a question aimed back that asks for something new is no status query
    assert decide("Could you email the one I asked you about to Priya on Monday?", asked)[0][0] != "status"


def test_a_part_with_only_its_when_or_only_its_kind_of_work_stays_with_its_request(tmp_path):
    decide = _harness(tmp_path, "intake.split_request_clauses", "intake.requests_apart")
    # the day and time said after the request, with a polite condition, are when it is for
    assert len(decide("Could you put a slot in my calendar for my physio appointment, this Friday at four in the afternoon, if you can?")) == 1
    assert len(decide("Could you book the room for the team meeting, this Friday at three, if possible?")) == 1
    # a request that states its values but no kind of work, then one that names only the kind
    assert len(decide("Make sure I ring the vet at nine tomorrow morning, set a reminder, ta.")) == 1
    assert len(decide("Shorts or jeans in Leeds on Sunday? What's the forecast looking like?")) == 1
    # a kind of work with something of its own, or said as an addition, is a second request
    assert len(decide("Make sure I ring the vet at nine tomorrow morning, and also set a reminder to buy stamps.")) == 2
    assert len(decide("Make sure I ring the vet at nine tomorrow morning, set a reminder to buy stamps too.")) == 2
    assert len(decide("Could you work out fifteen percent of eighty pounds, and then recommend a sci-fi novel?")) == 2
    # the same kind of request said again with a value of a kind it did not state is more of it
    assert len(decide("Could you summarize the council letter, sum up the key points in a few lines?")) == 1


def test_work_asked_for_after_the_task_in_hand_is_called_off_replaces_it(tmp_path):
    asked = _task("Could you look up bike shops that are open on Sunday?", rtype="web_search")
    decide = _harness(tmp_path, "intake.task_state_reading")
    # the new request names no kind the lexicon knows: before, the discard alone was read (a cancel)
    op = decide("Oh, forget that one, could you find me a decent locksmith nearby?", asked)[0]
    assert op[:2] == ("replace", "T1")
    # it names a place the earlier request did not, and one it did: still the replacement, not the same request again
    turn = "Never mind the bike shops, can you check the opening times of the Sunday market instead?"
    assert decide(turn, asked)[0][:2] == ("replace", "T1")
    # a discard with a reason, or with a request too short to ask for anything, is a cancel
    assert decide("Never mind, I'll sort it out myself.", asked)[0][:2] == ("cancel", "T1")
    assert decide("Cancel it, would you?", asked)[0][:2] == ("cancel", "T1")


def test_what_the_task_in_hand_must_be_refines_it(tmp_path):
    asked = _task("Could you look for a two-bed flat to rent near the park?", rtype="web_search")
    decide = _harness(tmp_path, "intake.task_state_reading")
    # the task's own noun as the subject: before, the same request said again (a status query)
    assert decide("Oh, the flat needs a garden, remember.", asked)[0][:2] == ("refine", "T1")
    assert decide("And it has to allow pets.", asked)[0][:2] == ("refine", "T1")


def test_asking_to_stop_the_work_of_the_task_in_hand_cancels_it(tmp_path):
    asked = _task("Could you look for a two-bed flat to rent near the park?", rtype="web_search")
    decide = _harness(tmp_path, "intake.task_state_reading")
    # a verb of ceasing before an -ing form, or before words the request said
    assert decide("Please quit searching, I've found one myself.", asked)[0][:2] == ("cancel", "T1")
    assert decide("Okay, stop the flat hunt, we're staying put.", asked)[0][:2] == ("cancel", "T1")
    # negated, it asks to go on; and once the answer is in, there is no work left to stop
    assert decide("Don't stop looking, I still need somewhere.", asked)[0][0] != "cancel"
    done = _task("Could you look for a two-bed flat to rent near the park?", state="READY", rtype="web_search")
    assert decide("Please quit searching, I've found one myself.", done)[0][0] != "cancel"


def test_a_request_joined_on_by_a_word_of_addition_is_a_task_of_its_own(tmp_path):
    # neither request names a kind the lexicon knows: without the word of addition read, one task
    turn = "Could you find out when the last bus to Bath leaves, and also, would you tell me how tides work?"
    assert len(_harness(tmp_path)(turn)) == 1
    decide = _harness(tmp_path, "intake.split_request_clauses", "intake.requests_apart")
    parts = [said for _, _, said in decide(turn)]
    assert len(parts) == 2 and "Bath" in parts[0] and "tides" in parts[1]
    # a sentence of its own opened by "and" joins a request on too
    parts = [said for _, _, said in decide("Would you look into wisdom teeth removal costs? And can you dig out my gym membership number?")]
    assert len(parts) == 2 and "teeth" in parts[0] and "gym" in parts[1]
    # an addition that points back at the request before says more of it: one task
    assert len(decide("Could you find me a hotel in Rome for next weekend, and also make sure it has parking?")) == 1


def test_a_question_about_the_task_in_hand_stays_a_question_with_a_remark_after_it(tmp_path):
    decide = _harness(tmp_path, "intake.task_state_reading")
    asked = _task("Could you dig out the cheapest train to Bath on Friday?")
    assert decide("Getting anywhere with that one? Take your time.", asked)[0][:2] == ("status", "T1")


def test_the_values_after_a_call_off_belong_to_the_new_request(tmp_path):
    decide = _harness(tmp_path, "intake.task_state_reading", detail=True)
    asked = _task("Could you look up the opening hours of the Tate?", rtype="web_search")
    (op,) = decide("Scrap that one and do this instead: the recycling always slips my mind, so buzz me at 7 pm, then remind me again.", asked)
    assert op[0] == "replace" and op[1] == "reminder" and op[2].get("time") == "19:00" and op[3] == []


def test_turning_the_task_down_by_its_own_noun_or_telling_the_agent_not_to_go_on(tmp_path):
    decide = _harness(tmp_path, "intake.task_state_reading")
    asked = _task("Could you find me a cheap guesthouse in Porto for next weekend?")
    # the task's own noun after any determiner, with nothing said of it after
    assert decide("Change of plan, I don't want a guesthouse after all.", asked)[0][:2] == ("cancel", "T1")
    # told not to go on: no subject, or "you", and the task named in what the agent need not do
    assert decide("No need to carry on hunting for that guesthouse.", asked)[0][:2] == ("cancel", "T1")
    # a noun with more said of it is a kind not wanted: a change, not a turn-down
    assert decide("I don't want a guesthouse near the station.", asked)[0][0] != "cancel"
    # the user's own plans are no turn-down
    assert decide("I don't need to check in at the guesthouse until six.", asked)[0][0] != "cancel"


def test_an_addition_with_no_verb_of_its_own_said_politely_changes_the_task_in_hand(tmp_path):
    decide = _harness(tmp_path, "intake.task_state_reading")
    asked = _task("Could you find me a cheap guesthouse in Porto for next weekend?")
    assert decide("Oh, and towels provided if possible.", asked)[0][:2] == ("refine", "T1")
    assert decide("Ah, and somewhere with a garden, please.", asked)[0][:2] == ("refine", "T1")
    # an addition with a verb of its own is a request of its own
    assert decide("Oh, and also order me a taxi to the airport, please.", asked)[0][0] == "new"


def test_a_request_saying_what_the_task_in_hand_must_be_refines_it(tmp_path):
    decide = _harness(tmp_path, "intake.task_state_reading")
    asked = _task("Could you find me a cheap guesthouse in Porto for next weekend?")
    assert decide("Oh, and make sure it has a lift.", asked)[0][:2] == ("refine", "T1")
    # when to speak is no detail of the task
    assert decide("Give me a shout when it's sorted.", asked)[0][0] != "refine"


def test_a_cancel_cue_with_the_task_named_in_the_pointers_place_cancels_it(tmp_path):
    decide = _harness(tmp_path, "intake.task_state_reading")
    asked = _task("Could you find me a cheap guesthouse in Porto for next weekend?")
    assert decide("Oh, forget the guesthouse, my cousin's putting us up.", asked)[0][:2] == ("cancel", "T1")
    # the cue negated, or the named thing not the task in hand, is no cancel
    assert decide("Don't forget the guesthouse has to take dogs.", asked)[0][0] != "cancel"
