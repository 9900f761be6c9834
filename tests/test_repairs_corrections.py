"""Corrections inside one turn and stops that mean "no more": the toolkit readings behind them
(``text.restates``, ``text.stop_sense``) and the operators that use them.

The turns are general English written for these tests, not text of any catalogue family.
"""

from __future__ import annotations

from pathlib import Path
from types import SimpleNamespace

import pytest

from duplexagent.contract import DeliverChooseView, SpeakOption, Utterance, text
from tests._operators import harness_with as _harness, load_rules as _load


def _intake(h: Path):
    rules, params = _load(h, "intake")

    def decide(turn: str, *tasks: SimpleNamespace) -> list[tuple[str, str]]:
        view = SimpleNamespace(turn=SimpleNamespace(text=turn), tasks=list(tasks), params=params, history=[], now=20.0)
        return [(op.op, op.task_id or op.text) for op in rules.interpret(view).ops]

    return decide


@pytest.mark.parametrize(
    ("earlier", "later", "corrects"),
    [
        ("Could you wake me at half past five", "no, six o'clock", True),  # another time
        ("Order a pizza for three people", "sorry, make that four people", True),  # another count
        ("Can you read me my library card number", "I mean my gym membership number", True),  # the same noun, another word before it
        ("Set the alarm for 7 am", "for 7 am, yes", False),  # the same value said again
        ("Could you check the weather in Lisbon for Sunday", "can you also put the kettle on", False),  # nothing of the earlier restated
        ("Find out when the post office closes today", "the post office on Main Street", False),  # the same noun with the same word before it
    ],
)
def test_the_toolkit_reads_a_later_part_that_puts_something_else_in_place_of_an_earlier_one(earlier, later, corrects):
    assert text.restates(earlier, later) is corrects


def test_a_turn_that_corrects_itself_is_one_task_not_two(tmp_path):
    decide = _intake(_harness(tmp_path, "intake.split_request_clauses"))
    for turn in (
        "Could you wake me at half past five tomorrow, oh no, hmm, six o'clock tomorrow.",
        "Can you read me my library card number, ugh, not that, I want the gym membership number?",
        "Please write me a summary of the lease in five bullet points, no, hmm, in two short paragraphs?",
    ):
        ops = decide(turn)
        assert [op for op, _ in ops] == ["new"], turn
        assert ops[0][1] == turn  # the later wording is in the task's text, so it wins
    # two requests of different kinds, each with its own time, are still two tasks
    assert len(decide("Could you set an alarm for 6 am, and can you book a taxi to the airport for 7 am?")) == 2
    # a lead-in that counts the requests is not what a later count corrects
    assert len(decide("Okay, two questions. When does the swimming pool open on Sunday, and what is a third of ninety?")) == 2


def test_a_value_cut_by_a_hesitation_stays_in_its_request(tmp_path):
    # a comma after a preposition ("at, um,") leaves the clause open: the time belongs to the reminder
    turn = "Remind me to water the plants at, um, quarter to nine, thanks."
    assert len(text.clauses(turn)) <= 2 and any("quarter to nine" in c and "plants" in c for c in text.clauses(turn))
    decide = _intake(_harness(tmp_path, "intake.split_request_clauses"))
    assert [op for op, _ in decide(turn)] == ["new"]


@pytest.mark.parametrize(
    ("said", "sense"),
    [
        ("Okay, that's plenty, thank you.", "final"),
        ("Alright, I don't need the rest of it.", "final"),
        ("Please just stop there.", "final"),
        ("Right, I've got the gist.", "final"),
        ("Skip the rest, I have to run.", "final"),  # ceasing on the remainder outweighs what the user is about to do
        ("Stop for a minute, the doorbell rang.", "pause"),  # a span of time outweighs the verb of ceasing
        ("Hang on, let me find a pen.", "pause"),
        ("Sorry, I didn't hear that last bit.", "pause"),
        ("Wait, wait.", "pause"),
        ("Be quiet.", "final"),  # a word of silence that is all the turn says
        ("Oh, pipe down.", "final"),
        ("Keep quiet about it, will you?", None),  # quiet about something: no stop
        ("Shut the door, would you?", None),
        ("No, don't stop, keep going.", None),  # a negated verb of ceasing asks to go on
        ("Hmm, carry on with it after all.", None),
    ],
)
def test_the_toolkit_tells_a_final_stop_from_a_pause_by_form(said, sense):
    assert text.stop_sense(said) == sense


def _choose(h: Path, stop_said: str, silence_s: float = 3.0, then: str | None = None):
    rules, p = _load(h, "deliver")
    history = [
        Utterance(who="user", text="Could you look up when the museum opens on Sunday?", t=1.0),
        Utterance(who="agent", text="The museum opens at", t=8.0, purpose="answer", task_id="T1"),
        Utterance(who="user", text=stop_said, t=9.0),
    ]
    if then is not None:  # a later turn Policy did not take for a resume
        history += [Utterance(who="user", text=then, t=11.0), Utterance(who="agent", text="Sure.", t=12.0, purpose="reply")]
    replay = SpeakOption(option_id="o1", kind="answer", task_id="T1", version=1, text="The museum opens at ten on Sunday.", created_t=5.0, replay=True)
    view = DeliverChooseView(
        now=13.0, options=[replay], user_speaking=False, silence_s=silence_s, last_turn_final=True, epoch=2, history=history,
        last_control="stop", last_control_t=9.5, params=p,
    )
    return rules.choose(view).action


def test_after_a_final_stop_the_answer_is_not_replayed_but_after_a_pause_it_is(tmp_path):
    g0 = _harness(tmp_path)
    fixed = _harness(tmp_path, "deliver.replay_after_turn")
    final, pause = "Okay, that's plenty, thank you.", "Hang on, let me find a pen."
    assert _choose(g0, final) == "speak"  # g0 says again what the user stopped
    assert _choose(fixed, final) == "wait"
    assert _choose(fixed, pause) == "speak"  # a pause: the answer comes back without a resume
    # not before the user's turn is judged over, even after a pause
    assert _choose(fixed, pause, silence_s=0.3) == "wait"


def test_a_fresh_answer_waits_until_the_user_has_finished_the_turn_that_may_change_it(tmp_path):
    g0 = _harness(tmp_path)
    fixed = _harness(tmp_path, "deliver.replay_after_turn")
    rules_g0, p_g0 = _load(g0, "deliver")
    rules, p = _load(fixed, "deliver")
    history = [Utterance(who="user", text="Could you look up when the museum opens on Sunday?", t=1.0),
               Utterance(who="user", text="Actually, scrap that and find me a bike shop nearby instead.", t=9.0)]
    answer = SpeakOption(option_id="o1", kind="answer", task_id="T1", version=1, text="The museum opens at ten on Sunday.", created_t=9.8)

    def choose(rules, p, silence_s: float) -> str:
        view = DeliverChooseView(now=10.0, options=[answer], user_speaking=False, silence_s=silence_s, last_turn_final=True, epoch=1, history=history, params=p)
        return rules.choose(view).action

    # an answer that lands as the user falls silent: g0 speaks it at once, before the turn is judged
    assert choose(rules_g0, p_g0, 0.2) == "speak"
    assert choose(rules, p, 0.2) == "wait"
    assert choose(rules, p, p["turn_gap_s"] + 0.5) == "speak"  # once the turn is over, it is said


def test_after_a_final_stop_asking_to_go_on_in_any_words_brings_the_answer_back(tmp_path):
    fixed = _harness(tmp_path, "deliver.replay_after_turn")
    final = "Okay, that's plenty, thank you."
    assert _choose(fixed, final, then="Right, you can carry on now.") == "speak"
    assert _choose(fixed, final, then="Hmm, so where were we?") == "speak"
    # thanks, or a request for something else, is no asking for the rest
    assert _choose(fixed, final, then="Okay, thanks a lot.") == "wait"
    assert _choose(fixed, final, then="Can you tell me a joke instead?") == "wait"


def _running(said: str, rtype: str) -> SimpleNamespace:
    return SimpleNamespace(
        task_id="T1", version=1, request_type=rtype, utterances=[said], slots={}, state="RUNNING", missing=[], updated_t=1.0,
        conditions={}, result=None, delivered=False,
    )


def test_a_cue_said_with_another_pointer_back_is_the_same_cue(tmp_path):
    g0 = _intake(_harness(tmp_path))
    h = _harness(tmp_path, "intake.task_state_reading")
    decide = _intake(h)
    _, p = _load(h, "intake")
    # the harness's own cues that end on a pointer back ("<verb> it"), said with another pointer
    cancel = " ".join(text.words(next(c for c in p["cancel_phrases"] if text.words(c)[-1] == "it"))[:-1])
    refine = " ".join(text.words(next(c for c in p["refine_phrases"] if text.words(c)[-1] == "it"))[:-1])
    visit = _running("Could you put a dentist visit in my calendar for Tuesday at 4 pm?", "calendar_event")
    said = f"Hmm, {cancel} that one, please."
    assert g0(said, visit)[0][0] != "cancel"
    assert decide(said, visit)[0] == ("cancel", "T1")
    # a "no" said before it is an interjection, not a negation of the verb; "don't" is one
    assert decide(f"Um, no, {cancel} that one.", visit)[0] == ("cancel", "T1")
    assert decide(f"No, don't {cancel} that, it matters.", visit)[0][0] != "cancel"
    # a lone "no" with a pointer back just after it turns the task down, whatever the verb
    assert decide("Argh, no, wait, ditch that. My brother already grabbed one.", visit)[0] == ("cancel", "T1")
    assert decide("No, no, don't forget that one.", visit)[0][0] != "cancel"
    # unless the piece with the pointer goes on to say what the task should be: the "no" corrects
    assert decide("Hmm, no, actually, shift it to half past five.", visit)[0][:2] == ("refine", "T1")
    # a "no" before a noun does negate: no need for the task is calling it off
    assert decide("Honestly, there's no need for that one now.", visit)[0] == ("cancel", "T1")
    note = _running("Please draft a note to Priya about the budget.", "email_draft")
    said = f"Could you {refine} this Omar?"
    assert g0(said, note)[0][0] != "refine"
    assert decide(said, note)[0] == ("refine", "T1")


def test_a_new_request_after_a_lead_in_ended_by_a_colon_replaces_the_task_in_hand(tmp_path):
    g0 = _intake(_harness(tmp_path))
    decide = _intake(_harness(tmp_path, "intake.task_state_reading"))
    essay = _running("Could you write me a short poem about autumn leaves?", "coding_task")
    said = "Right, um, new idea, sorry: could you find me a cheap flight to Porto for Friday?"
    assert g0(said, essay)[0][0] != "replace"
    assert decide(said, essay)[0] == ("replace", "T1")
    # the same lead-in while the answer is ready but not heard yet
    ready = _running("Could you write me a short poem about autumn leaves?", "coding_task")
    ready.state = "READY"
    assert decide(said, ready)[0] == ("replace", "T1")
    # a lead-in clause with a verb of its own is no change of mind: an additional task
    assert decide("Oh, and while you're on it: could you find me a cheap flight to Porto for Friday?", essay)[0][0] == "new"
    # once the answer was heard, a request after a lead-in is a new task
    ready.delivered, ready.state = True, "DELIVERED"
    assert decide(said, ready)[0][0] == "new"


def test_a_cancel_with_a_statement_that_names_the_kind_of_work_is_still_a_cancel(tmp_path):
    decide = _intake(_harness(tmp_path, "intake.task_state_reading"))
    _, p = _load(_harness(tmp_path / "p", "intake.task_state_reading"), "intake")
    cue = next(c for c in p["cancel_phrases"] if text.words(c)[-1] == "it")
    tea = _running("Please order a box of green tea, the usual brand.", "shopping_order")
    # the statement says a word of the request type's lexicon (inflected: "bought")
    assert "buy" in p["lexicon"]["shopping_order"]
    said = f"Oh, hold on, {cue}. My brother already bought some for us. Thanks anyway."
    assert decide(said, tea)[0] == ("cancel", "T1")
    # a request of that kind after the cue is no plain cancel, nor is one said as a statement with a modal
    assert decide(f"Oh, hold on, {cue}. Could you buy some coffee beans instead?", tea)[0][0] != "cancel"
    assert decide(f"Oh, hold on, {cue}. An order of coffee beans would be better.", tea)[0][0] != "cancel"

